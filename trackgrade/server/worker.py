"""The analysis pool seam: run jobs off the request threads, report back.

An `Executor` takes a `Job` (the upload's bytes, in memory) and a `Sink`, runs
the two stages (the score stage in the pool, the light narrative stage in a
thread of the server) and calls the sink: `scores_ready(id, analysis)` with the
graded Analysis (template diagnosis, `pending`), then `completed(id,
analysis)` with the enhanced narrative (`ready`); or `failed(id, error)` at
any point. Capacity is bounded: `submit` raises 503 `engine_at_capacity`
when `running + queued` would exceed it, and never blocks.

Two implementations share one contract (tests/server/test_server_worker.py):

- `ProcessExecutor`: worker PROCESSES, the library's one analysis pool
  (`trackgrade.pool`, which `trackgrade batch` uses too: forkserver, one core
  per worker, workers that die with the server however it dies); bytes
  travel pickled through the pool's pipe, never through a file. A crashed
  worker (BrokenProcessPool) fails its jobs with `engine_error` and the pool
  is rebuilt. The analysis runs with `parallel=False` (no second engine
  thread, no two-thread FLAC decode), so `--workers N` uses N cores.
- `ThreadExecutor`: the same in threads of this process. Used for test-mode
  jobs (the canned analysis, which never touches the engine) and in tests.

The stage functions (`score_stage`, `canned_score_stage`, `enhance_stage`) are
module-level so they pickle; they return `("ok", value)` or `("error", code,
message)` instead of raising, because a TrackgradeError does not survive
pickling with its code.
"""

from __future__ import annotations

import logging
import threading
from concurrent.futures import Executor as _FuturesExecutor
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass, field
from typing import Callable, Protocol

from trackgrade.errors import TrackgradeError
from trackgrade.model import Analysis
from trackgrade.pool import process_pool, terminate, warm_up

log = logging.getLogger("trackgrade.server.worker")

Outcome = tuple  # ("ok", value) | ("error", code, message)


@dataclass(frozen=True)
class Job:
    analysis_id: str
    file_name: str
    mastering_status: str
    data: bytes = field(repr=False, default=b"")
    test_mode: bool = False
    genre: str | None = None          # grade against this profile (None: the detected family)
    codec_preview: bool = False       # measure delivery.codecs too


class Sink(Protocol):
    def scores_ready(self, analysis_id: str, analysis: Analysis) -> None: ...
    def completed(self, analysis_id: str, analysis: Analysis) -> None: ...
    def failed(self, analysis_id: str, error: TrackgradeError) -> None: ...


class Executor(Protocol):
    capacity: int

    def pending(self) -> int: ...
    def has_room(self) -> bool: ...
    def submit(self, job: Job, sink: Sink) -> None: ...
    def shutdown(self, wait: bool = True) -> None: ...


# --- stage functions (run in the worker) -----------------------------------

def _guard(fn: Callable[[], object]) -> Outcome:
    try:
        return ("ok", fn())
    except TrackgradeError as err:
        return ("error", err.code, err.message)
    except MemoryError:
        return ("error", "engine_error", "the analysis ran out of memory")
    except Exception as exc:  # noqa: BLE001 - the boundary of the worker
        return ("error", "engine_error", f"the analysis engine failed ({type(exc).__name__})")


def score_stage(data: bytes, file_name: str, mastering_status: str,
                genre: str | None = None, codec_preview: bool = False) -> Outcome:
    """bytes -> graded Analysis (template diagnosis)."""
    from trackgrade import pipeline

    return _guard(lambda: pipeline.grade(pipeline.measure(data, file_name=file_name,
                                                          parallel=False,
                                                          codec_preview=codec_preview),
                                         file_name=file_name, mastering_status=mastering_status,
                                         genre=genre))


def enhance_stage(analysis: Analysis) -> Outcome:
    """graded Analysis -> Analysis with the enhanced narrative."""
    from trackgrade import pipeline

    return _guard(lambda: pipeline.enhance(analysis))


def canned_enhance_stage(analysis: Analysis) -> Outcome:
    """Test mode: the enhanced narrative, still opening with the canned note."""
    from trackgrade import testmode

    return _guard(lambda: analysis.with_diagnosis(testmode.canned_diagnosis(analysis)))


def canned_score_stage(data: bytes, file_name: str, mastering_status: str,
                       genre: str | None = None, codec_preview: bool = False) -> Outcome:
    """Test mode: the canned analysis (bytes never decoded), or the `_fail_<code>`."""
    from trackgrade import testmode

    def run() -> Analysis:
        code = testmode.failure_code(file_name)
        if code is not None:
            raise TrackgradeError(code, testmode.FAILURE_MESSAGES.get(
                code, f"test mode: {file_name!r} asks to fail with {code}"))
        return testmode.canned_analysis(file_name, mastering_status, genre, codec_preview)
    return _guard(run)


# --- the shared driver ------------------------------------------------------

class _PoolExecutor:
    """Two stages on a concurrent.futures pool, bounded by `capacity`."""

    def __init__(self, capacity: int) -> None:
        self.capacity = max(1, int(capacity))
        self._lock = threading.Lock()
        self._pending = 0
        self._closed = False
        # reports and the light narrative stage (text from the graded numbers) run
        # in one thread here, not queued behind whole analyses in the pool
        self._light = ThreadPoolExecutor(max_workers=1, thread_name_prefix="trackgrade-enhance")

    # subclasses provide these
    def _pool(self) -> _FuturesExecutor: ...
    def _broken(self) -> None: ...

    def pending(self) -> int:
        with self._lock:
            return self._pending

    def has_room(self) -> bool:
        with self._lock:
            return not self._closed and self._pending < self.capacity

    def submit(self, job: Job, sink: Sink) -> None:
        with self._lock:
            if self._closed or self._pending >= self.capacity:
                raise TrackgradeError(
                    "engine_at_capacity", "the analysis engine is at capacity; retry with "
                    "exponential backoff", headers={"Retry-After": "5"})
            self._pending += 1
        first = canned_score_stage if job.test_mode else score_stage
        # the narrative never touches audio; a canned one keeps saying it is canned
        second = canned_enhance_stage if job.test_mode else enhance_stage
        try:
            future = self._pool().submit(first, job.data, job.file_name, job.mastering_status,
                                         job.genre, job.codec_preview)
        except Exception:
            self._release()
            raise TrackgradeError("engine_at_capacity", "the analysis engine is restarting; "
                                  "retry shortly", headers={"Retry-After": "5"}) from None
        future.add_done_callback(lambda f: self._dispatch(self._after_scores, f, job, sink, second))

    def _dispatch(self, fn, *args) -> None:
        """Report from the light thread: never from the submitting request
        thread (a future may already be done) nor the pool's own thread."""
        try:
            self._light.submit(fn, *args)
        except RuntimeError:  # shutting down
            self._release()

    def _release(self) -> None:
        with self._lock:
            self._pending -= 1

    def _outcome(self, future: Future) -> Outcome:
        try:
            return future.result()
        except BrokenProcessPool:
            self._broken()
            return ("error", "engine_error", "an analysis worker crashed")
        except Exception as exc:  # noqa: BLE001 - cancelled, pool shut down...
            return ("error", "engine_error", f"the analysis did not run ({type(exc).__name__})")

    def _after_scores(self, future: Future, job: Job, sink: Sink, second) -> None:
        outcome = self._outcome(future)
        if outcome[0] != "ok":
            self._finish(lambda: sink.failed(job.analysis_id, TrackgradeError(outcome[1], outcome[2])))
            return
        analysis = outcome[1]
        try:
            sink.scores_ready(job.analysis_id, analysis)
        except Exception:  # noqa: BLE001
            log.exception("recording scores of %s failed", job.analysis_id)
            self._finish(lambda: sink.failed(job.analysis_id, TrackgradeError(
                "engine_error", "the analysis result could not be recorded")))
            return
        self._after_enhance(_guarded_call(second, analysis), job, sink, analysis)

    def _after_enhance(self, outcome: Outcome, job: Job, sink: Sink, graded: Analysis) -> None:
        if outcome[0] == "ok":
            self._finish(lambda: sink.completed(job.analysis_id, outcome[1]))
        else:  # the scores stand; the narrative stays the template
            log.error("enhancing %s failed: %s", job.analysis_id, outcome[2])
            self._finish(lambda: sink.completed(job.analysis_id, _ready(graded)))

    def _finish(self, report: Callable[[], None]) -> None:
        try:
            report()
        except Exception:  # noqa: BLE001
            log.exception("recording an analysis outcome failed")
        finally:
            self._release()


def _guarded_call(fn, *args) -> Outcome:
    try:
        return fn(*args)
    except Exception as exc:  # noqa: BLE001
        return ("error", "engine_error", f"the narrative stage failed ({type(exc).__name__})")


def _ready(analysis: Analysis) -> Analysis:
    from dataclasses import replace
    return analysis.with_diagnosis(replace(analysis.diagnosis, status="ready"))


class ProcessExecutor(_PoolExecutor):
    """Worker processes (`trackgrade.pool.process_pool`), `workers` of them."""

    def __init__(self, workers: int = 1, *, queue_size: int = 4) -> None:
        super().__init__(capacity=workers + queue_size)
        self.workers = max(1, int(workers))
        self._pool_lock = threading.Lock()
        self._executor = self._new_pool()

    def _new_pool(self, *, warm: bool = False) -> ProcessPoolExecutor:
        pool = process_pool(self.workers)
        if warm:
            for _ in range(self.workers):
                pool.submit(warm_up)
        return pool

    def warm(self) -> None:
        """Start the worker processes now (they import the engine), rather
        than on the first job; the server calls this once its store is loaded."""
        with self._pool_lock:
            for _ in range(self.workers):
                self._executor.submit(warm_up)

    def _pool(self) -> ProcessPoolExecutor:
        with self._pool_lock:
            return self._executor

    def _broken(self) -> None:
        with self._pool_lock:
            if self._closed:
                return
            old = self._executor
            try:
                old.submit(warm_up).cancel()
            except BrokenProcessPool:
                log.error("an analysis worker died; restarting the pool")
                self._executor = self._new_pool(warm=True)
                old.shutdown(wait=False, cancel_futures=True)
            except RuntimeError:
                pass

    def shutdown(self, wait: bool = True) -> None:
        """Stop taking jobs; with wait=False the worker processes are
        terminated at once (their jobs are recovered on the next start)."""
        with self._lock:
            self._closed = True
        with self._pool_lock:
            if wait:
                self._executor.shutdown(wait=True, cancel_futures=True)
            else:
                terminate(self._executor)
        self._light.shutdown(wait=wait, cancel_futures=True)


class ThreadExecutor(_PoolExecutor):
    """The same contract in threads of this process."""

    def __init__(self, threads: int = 2, *, queue_size: int = 16) -> None:
        super().__init__(capacity=threads + queue_size)
        self._executor = ThreadPoolExecutor(max_workers=max(1, threads),
                                            thread_name_prefix="trackgrade-job")

    def _pool(self) -> ThreadPoolExecutor:
        return self._executor

    def _broken(self) -> None:  # threads do not break
        return None

    def shutdown(self, wait: bool = True) -> None:
        with self._lock:
            self._closed = True
        self._executor.shutdown(wait=wait, cancel_futures=True)
        self._light.shutdown(wait=wait, cancel_futures=True)
