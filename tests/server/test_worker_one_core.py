"""Each analysis worker process analyzes on one core: native thread pools
capped at one thread, no second engine thread (benchmarks/bench_hardening.py
measures `--workers 2` throughput before and after)."""

from __future__ import annotations

import io
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import soundfile as sf

from trackgrade.pool import THREAD_ENV_VARS, native_threads
from trackgrade.server.worker import ProcessExecutor, score_stage

from tests.server import worker_probe


def flac_bytes(seconds: float = 65.0, rate: int = 22050) -> bytes:
    """A FLAC long enough for the decoder's two-thread path (60 s and more)."""
    t = np.arange(int(seconds * rate)) / rate
    beat = (np.sin(2 * np.pi * 55 * t) * np.exp(-8 * (t % 0.5))).astype(np.float32)
    out = io.BytesIO()
    sf.write(out, np.stack([beat, beat * 0.8], axis=1), rate, format="FLAC")
    return out.getvalue()


def test_native_pools_are_capped_in_the_workers_only(monkeypatch):
    for name in THREAD_ENV_VARS:            # tests/conftest.py caps the suite's own processes
        monkeypatch.delenv(name, raising=False)
    executor = ProcessExecutor(1, queue_size=1)
    try:
        assert executor._pool().submit(native_threads).result(120) == 1
    finally:
        executor.shutdown()
    if multiprocessing.cpu_count() > 1:     # the same probe without the cap sees the cores
        uncapped = ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
        try:
            assert uncapped.submit(native_threads).result(120) > 1
        finally:
            uncapped.shutdown()


def test_the_score_stage_starts_no_second_thread():
    data = flac_bytes()
    executor = ProcessExecutor(1, queue_size=1)
    try:
        started, outcome = executor._pool().submit(
            worker_probe.threads_started_by, score_stage, data, "long.flac",
            "pre-master").result(300)
    finally:
        executor.shutdown()
    assert outcome[0] == "ok", outcome
    assert started == 0
    # the library's default (the CLI's `analyze`) still uses its second thread
    started, _ = worker_probe.threads_started_by(
        lambda: __import__("trackgrade.pipeline").pipeline.measure(data, file_name="a.flac"))
    assert started >= 1
