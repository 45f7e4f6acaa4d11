"""The sandbox's synthetic network: inventory, per-device activity and link quality.

Every value is a pure function of (seed, device, hour) and the injected incidents. ``network``
builds the inventory, ``activity`` and ``quality`` document the model, ``kernel`` is its
compiled arithmetic (numba, imported only when sums are first asked for), ``incidents`` changes
it where incidents are injected, and ``accumulate`` sums it over devices and hours. Nothing
here knows about HTTP or report requests.
"""
