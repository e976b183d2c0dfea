"""The conventions every loudness module shares: samples as (frames, channels)
float32, and BLAS pinned to one thread for the many mid-sized products."""

from __future__ import annotations

import contextlib

import numpy as np

try:                                   # optional: pin BLAS to one thread (see single_thread_blas)
    from threadpoolctl import threadpool_limits
except ImportError:                    # pragma: no cover - threadpoolctl ships with most stacks
    threadpool_limits = None


def single_thread_blas():
    """Context pinning BLAS to one thread. The many mid-sized products here run
    10x slower with a 2-thread OpenBLAS on a busy 2-core machine (threads
    spin-waiting for each other) and gain little when it is idle."""
    if threadpool_limits is None:
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


def as_2d(samples: np.ndarray) -> np.ndarray:
    """(frames,) mono -> (frames, 1); (frames, channels) unchanged (a view)."""
    return samples[:, None] if samples.ndim == 1 else samples
