"""The native thread pools (BLAS, OpenMP) and how many threads a process lets them start.

Read by a library when it loads (OpenBLAS when numpy is imported), so a cap
set here must come before the first `import numpy`. `trackgrade.pool` caps
its worker processes at one thread each; the command line caps its own
process (`cap_native_threads`, when `trackgrade.cli` loads): the engine
already runs its two stages side by side (`engine.extract`) and the
loudness stage pins BLAS to one thread while it runs, so a second BLAS
thread has no core of its own on a 2-core machine: it spins while idle and
takes turns with the engine's threads.
"""

from __future__ import annotations

import os

# native thread pools a process could start (read when a library loads them)
THREAD_ENV_VARS = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                   "BLIS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS")


def cap_native_threads() -> None:
    """One thread in every native pool loaded from now on, unless the user set
    a count (their setting wins). Call before numpy is imported."""
    for name in THREAD_ENV_VARS:
        os.environ.setdefault(name, "1")
