"""Let a short-lived process reuse the memory an analysis frees.

An analysis allocates and frees a few hundred MB of large arrays. glibc hands
every block over 128 kB-32 MB straight back to the kernel when it is freed,
so the next array of that size is fresh memory that the kernel zeroes page
by page: on a 5-minute track that is ~40,000 page faults and ~0.5 s of
system time, a third of a `trackgrade analyze` run. `reuse_freed_memory()`
raises glibc's mmap and trim thresholds so freed blocks stay in the heap and
are reused (peak memory is unchanged: the same blocks are reused rather than
returned and requested again). The CLI calls it once; elsewhere (libraries,
non-glibc platforms) nothing changes.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys
from functools import lru_cache

_M_TRIM_THRESHOLD, _M_TOP_PAD, _M_MMAP_THRESHOLD = -1, -2, -3


@lru_cache(maxsize=1)
def reuse_freed_memory() -> bool:
    """True when glibc took the settings (Linux), False where it does not apply."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    ok = mallopt(_M_MMAP_THRESHOLD, 1 << 30)
    ok &= mallopt(_M_TRIM_THRESHOLD, 2**31 - 1)
    ok &= mallopt(_M_TOP_PAD, 64 << 20)
    return bool(ok)
