"""The one process pool that runs analyses: `trackgrade batch` grades files in
it, the server's `ProcessExecutor` runs its jobs in it.

- **Start method**: forkserver where available (a server process that
  preloads `trackgrade.pipeline`, so a worker starts in milliseconds with the
  engine imported), otherwise spawn; never a plain fork of a process that may
  hold threads (the server's request threads, a batch's progress bar). The
  fork server listens on a Unix socket in multiprocessing's temporary
  directory; under a TMPDIR so long that the socket's path would pass the
  kernel's limit (`UNIX_PATH_MAX`), spawn is used instead of failing.
- **One core per worker**: the native thread pools (BLAS, OpenMP) are capped
  at one thread in each worker (`one_core`); the processes themselves are the
  parallelism, so N workers use N cores instead of oversubscribing them. The
  caller's `pipeline` calls use `parallel=False` for the same reason.
- **No orphans**: a worker ends when the process that made the pool dies,
  however it dies (kill -9 included). On Linux the kernel sends it SIGKILL
  when its parent (the fork server, itself ending when the pool's process
  is gone) dies (`prctl(PR_SET_PDEATHSIG)`); everywhere, a thread in the
  worker notices its parent change and exits. multiprocessing's resource
  tracker then ends too: it exits when the last holder of its pipe is gone.
- **Ctrl-C** is the parent's: workers ignore SIGINT, the parent stops the pool.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import multiprocessing
import os
import signal
import sys
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from contextlib import contextmanager
from typing import Iterator

from trackgrade.native_threads import THREAD_ENV_VARS

PARENT_POLL_S = 0.5            # how often a worker checks that its parent is alive
UNIX_PATH_MAX = 107            # bytes of a Unix socket's path (sun_path, less its NUL)
FORKSERVER_SOCKET = len("/listener-") + 8     # the name multiprocessing gives its socket
_PR_SET_PDEATHSIG = 1


def process_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of `workers` analysis processes (see the module docstring),
    started now: the workers (and the fork server) are launched with the
    native thread pools capped, so nothing in them starts a thread per core."""
    context = pool_context()
    with capped_threads(1):
        pool = ProcessPoolExecutor(max_workers=max(1, int(workers)), mp_context=context,
                                   initializer=start_worker,
                                   initargs=(os.getpid(),
                                             context.get_start_method() == "forkserver"))
        pool.submit(warm_up)                 # launches every worker process
    return pool


def pool_context() -> multiprocessing.context.BaseContext:
    """forkserver where available (fast starts from a preloaded server),
    otherwise spawn; never plain fork from a process that may hold threads."""
    if "forkserver" in multiprocessing.get_all_start_methods() and forkserver_socket_fits():
        context = multiprocessing.get_context("forkserver")
        context.set_forkserver_preload(["trackgrade.pipeline"])
        return context
    return multiprocessing.get_context("spawn")


def forkserver_socket_fits() -> bool:
    """Whether the fork server's socket path (in multiprocessing's temporary
    directory, made under TMPDIR) stays within the kernel's limit."""
    from multiprocessing import util
    return len(os.fsencode(util.get_temp_dir())) + FORKSERVER_SOCKET <= UNIX_PATH_MAX


def terminate(pool: ProcessPoolExecutor) -> None:
    """Cancel queued work and end the pool's worker processes now."""
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()


@contextmanager
def capped_threads(threads: int = 1) -> Iterator[None]:
    """Set the native thread-pool sizes that child processes inherit (the
    user's own settings win)."""
    saved = {name: os.environ.get(name) for name in THREAD_ENV_VARS}
    for name in THREAD_ENV_VARS:
        os.environ.setdefault(name, str(threads))
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


# --- in the worker ----------------------------------------------------------

def start_worker(owner: int, parent_death_signal: bool = False) -> None:
    """Worker process initializer: die with `owner` (the pool's process),
    leave Ctrl-C to it, one core. `parent_death_signal`: the parent is
    single-threaded (the fork server), so the kernel's parent-death signal can
    be asked for (it fires when the parent *thread* ends, which in a threaded
    parent may be early)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    die_with(owner, parent_death_signal)
    one_core()


def die_with(owner: int, parent_death_signal: bool) -> None:
    """End this process when `owner` dies: SIGKILL from the kernel when the
    parent dies (Linux, when asked), and a daemon thread that exits when the
    parent changes or `owner` is gone."""
    parent = os.getppid()
    if parent_death_signal and sys.platform.startswith("linux"):
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
        except (OSError, AttributeError):
            pass
    if not _alive(owner):                    # died before the kernel was asked
        os._exit(1)
    threading.Thread(target=_watch, args=(owner, parent), name="trackgrade-owner-watch",
                     daemon=True).start()


def _watch(owner: int, parent: int) -> None:
    while True:
        time.sleep(PARENT_POLL_S)
        if os.getppid() != parent or not _alive(owner):     # re-parented, or the owner is gone
            os._exit(1)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:                  # exists, another user's
        return True
    return True


def one_core() -> None:
    """One thread in every native pool (those already loaded through
    threadpoolctl, later ones through the environment)."""
    from threadpoolctl import threadpool_limits

    for name in THREAD_ENV_VARS:
        os.environ[name] = "1"
    threadpool_limits(limits=1)


def native_threads() -> int:
    """The largest thread count of the native pools loaded in this process."""
    from threadpoolctl import threadpool_info

    import trackgrade.pipeline  # noqa: F401  (load what an analysis loads)
    return max((pool["num_threads"] for pool in threadpool_info()), default=1)


def warm_up() -> bool:
    """Import the pipeline in a fresh worker so the first job is not slowed."""
    import trackgrade.pipeline  # noqa: F401
    return True
