"""The sandbox's synthetic network: inventory, per-device activity and link quality.

Every value is a pure function of (seed, device, hour) and the injected incidents. Nothing here
knows about HTTP or report requests.
"""
