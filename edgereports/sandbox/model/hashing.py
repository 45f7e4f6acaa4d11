"""A counter-based random generator: every value is a pure function of integer keys.

The synthetic network never keeps a random state. A value for (seed, device, hour) is the
MurmurHash3 finaliser (``fmix64``) of a key mixed from those integers, so any window of any
device can be computed on demand, in any order, with numpy, and always gives the same numbers.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

__all__ = ["EXPONENTIAL", "FMIX_M1", "FMIX_M2", "GOLDEN", "U64", "fmix64", "key_of"]

U64 = npt.NDArray[np.uint64]

GOLDEN = np.uint64(0x9E3779B97F4A7C15)
#: A 12-bit uniform ``u`` -> an exponential draw of mean about 1: ``EXPONENTIAL[u]``.
EXPONENTIAL = -np.log((np.arange(4096) + 0.5) / 4096.0)
FMIX_M1 = np.uint64(0xFF51AFD7ED558CCD)
FMIX_M2 = np.uint64(0xC4CEB9FE1A85EC53)
_S33 = np.uint64(33)


def fmix64(x: U64) -> U64:
    """Return the MurmurHash3 64-bit finaliser of every element (a bijection on uint64).

    Args:
        x: an array of uint64 keys (it is not modified).

    Returns:
        A new uint64 array of well-mixed bits.
    """
    with np.errstate(over="ignore"):
        y = x ^ (x >> _S33)
        y *= FMIX_M1
        y ^= y >> _S33
        y *= FMIX_M2
        y ^= y >> _S33
    return y


def key_of(*parts: int) -> int:
    """Return a 64-bit key mixed from integer parts (stable across runs and platforms).

    Args:
        *parts: non-negative integers (seed, stream number, index...).

    Returns:
        The key as a Python int in ``[0, 2**64)``.
    """
    acc = np.array([0x243F6A8885A308D3], dtype=np.uint64)
    for part in parts:
        with np.errstate(over="ignore"):
            acc = fmix64(acc ^ np.array([part % (1 << 64)], dtype=np.uint64)) + GOLDEN
    return int(fmix64(acc)[0])
