"""The executor seam: one contract for ThreadExecutor and ProcessExecutor
(worker processes, 'spawn'), the live pipeline end to end through the real
process pool, engine failures, a crashed worker."""

from __future__ import annotations

import os
import threading
import time

import pytest

from trackgrade.errors import TrackgradeError
from trackgrade.server.worker import Job, ProcessExecutor, ThreadExecutor

from tests.server.server_harness import start, wav_bytes


class Recorder:
    """Collects what an executor reports; `hold` blocks the first report."""

    def __init__(self, hold: threading.Event | None = None) -> None:
        self.calls: list[tuple] = []
        self.hold = hold
        self.done = threading.Event()

    def _wait(self):
        if self.hold is not None:
            self.hold.wait(30)

    def scores_ready(self, analysis_id, analysis):
        self._wait()
        self.calls.append(("scores_ready", analysis_id, analysis))

    def completed(self, analysis_id, analysis):
        self.calls.append(("completed", analysis_id, analysis))
        self.done.set()

    def failed(self, analysis_id, error):
        self._wait()
        self.calls.append(("failed", analysis_id, error))
        self.done.set()


@pytest.fixture(scope="module")
def process_executor():
    executor = ProcessExecutor(1, queue_size=1)
    yield executor
    executor.shutdown(wait=False)


@pytest.fixture(params=["threads", "processes"])
def executor(request, process_executor):
    if request.param == "processes":
        yield process_executor
    else:
        pool = ThreadExecutor(1, queue_size=1)
        yield pool
        pool.shutdown()


def wait_idle(executor, timeout=30):
    deadline = time.monotonic() + timeout
    while executor.pending() and time.monotonic() < deadline:
        time.sleep(0.01)
    return executor.pending() == 0


def test_two_stages_in_order(executor):
    sink = Recorder()
    executor.submit(Job("a1", "loop.wav", "master", b"\x00" * 10, test_mode=True), sink)
    assert sink.done.wait(30)
    assert [c[0] for c in sink.calls] == ["scores_ready", "completed"]
    assert sink.calls[0][2].diagnosis.status == "pending"
    assert sink.calls[1][2].diagnosis.status == "ready"
    assert sink.calls[0][2].score == sink.calls[1][2].score
    assert wait_idle(executor)


def test_failures_arrive_as_error_codes(executor):
    sink = Recorder()
    executor.submit(Job("a2", "x_fail_engine_error.wav", "pre-master", b"", test_mode=True), sink)
    assert sink.done.wait(30)
    (kind, analysis_id, error), = sink.calls
    assert kind == "failed" and analysis_id == "a2"
    assert isinstance(error, TrackgradeError) and error.code == "engine_error"
    assert wait_idle(executor)


def test_capacity_is_bounded_and_never_blocks(executor):
    hold = threading.Event()
    sinks = [Recorder(hold) for _ in range(executor.capacity)]
    try:
        for i, sink in enumerate(sinks):
            executor.submit(Job(f"c{i}", "x_fail_engine_error.wav", "pre-master", b"",
                                test_mode=True), sink)
        assert not executor.has_room()
        started = time.monotonic()
        with pytest.raises(TrackgradeError) as info:
            executor.submit(Job("over", "a.wav", "pre-master", b"", test_mode=True), Recorder())
        assert time.monotonic() - started < 1
        assert info.value.code == "engine_at_capacity" and "Retry-After" in info.value.headers
    finally:
        hold.set()
    assert all(s.done.wait(30) for s in sinks)
    assert wait_idle(executor) and executor.has_room()


def test_live_job_runs_the_engine_in_a_worker_process(process_executor, track):
    sink = Recorder()
    process_executor.submit(Job("live1", "techno.wav", "pre-master", track), sink)
    assert sink.done.wait(120)
    kinds = [c[0] for c in sink.calls]
    assert kinds == ["scores_ready", "completed"], sink.calls
    analysis = sink.calls[0][2]
    assert 0 <= analysis.score <= 100 and 10 < analysis.duration_seconds < 14


def test_a_crashed_worker_fails_its_job_and_the_pool_recovers(track):
    executor = ProcessExecutor(1, queue_size=1)
    try:
        sink = Recorder()
        # killed while it starts up or analyses: either way the job is lost
        executor.submit(Job("crash", "techno.wav", "pre-master", track), sink)
        deadline = time.monotonic() + 30
        pids = []
        while not pids and time.monotonic() < deadline:
            pids = list(executor._pool()._processes or {})
            time.sleep(0.01)
        for pid in pids:
            os.kill(pid, 9)
        assert sink.done.wait(60)
        kind, _, error = sink.calls[-1]
        assert kind == "failed" and error.code == "engine_error"
        after = Recorder()
        executor.submit(Job("next", "loop.wav", "master", b"", test_mode=True), after)
        assert after.done.wait(60)
        assert [c[0] for c in after.calls] == ["scores_ready", "completed"]
    finally:
        executor.shutdown(wait=False)


# --- through HTTP, with the real process pool ----------------------------------------------

def test_live_analysis_end_to_end(process_executor, track):
    s = start(executor=process_executor)
    try:
        key, account = s.key("live", credits=3)
        accepted = s.submit(key, "techno.wav", external_id="e2e").json
        assert s.upload(accepted, track).json["bytes_received"] == len(track)
        scores = s.wait(accepted["id"], key, until=lambda d: d["status"] != "processing",
                        timeout=120)
        assert scores["status"] == "complete", scores
        assert 0 <= scores["score"] <= 100 and scores["grade"]["letter"]
        done = s.wait(accepted["id"], key, until=lambda d: d["diagnosis_status"] == "ready")
        assert done["diagnosis"]["status"] == "ready"
        assert s.credits(account) == 2                      # one credit spent and kept
        types = sorted(e["type"] for e in s.events(accepted["id"]))
        assert types == ["analysis.completed", "analysis.scores_ready"]
        event = next(e for e in s.events(accepted["id"]) if e["type"] == "analysis.completed")
        assert event["envelope"]["data"]["external_id"] == "e2e"
        assert event["envelope"]["data"]["score"] == done["score"]
        status = s.request("GET", f"/v1/analyses/{accepted['id']}/status", key=key).json
        assert status["status"] == "complete" and status["diagnosis_status"] == "ready"
    finally:
        s.stop()


def test_live_silence_fails_in_the_engine_and_restores_the_credit(process_executor):
    s = start(executor=process_executor)
    try:
        key, account = s.key("live", credits=3)
        assert wait_idle(process_executor)
        reply = s.submit(key, "silence.wav")
        assert reply.status == 202, reply.body
        accepted = reply.json
        silent = wav_bytes(4, rate=22050, pattern=b"\x00\x00")
        assert s.upload(accepted, silent).status == 200       # the header is fine
        doc = s.wait(accepted["id"], key, timeout=120)
        assert doc["status"] == "failed" and doc["error"]["code"] == "unprocessable_audio"
        assert s.credits(account) == 3
    finally:
        s.stop()


def test_live_near_silence_fails_naming_its_peak(process_executor):
    """CONTRACT.md section 6: a -80 dBFS hum is refused like digital silence."""
    import io

    import numpy as np
    import soundfile as sf

    s = start(executor=process_executor)
    try:
        key, account = s.key("live", credits=3)
        assert wait_idle(process_executor)
        accepted = s.submit(key, "hum.wav").json
        t = np.arange(4 * 22050) / 22050
        buf = io.BytesIO()
        sf.write(buf, 10 ** (-80 / 20) * np.sin(2 * np.pi * 50 * t), 22050, format="WAV",
                 subtype="PCM_24")
        assert s.upload(accepted, buf.getvalue()).status == 200
        doc = s.wait(accepted["id"], key, timeout=120)
        assert doc["status"] == "failed" and doc["error"]["code"] == "unprocessable_audio"
        assert "near-silence (peak -80.0 dBFS" in doc["error"]["message"]
        assert s.credits(account) == 3
    finally:
        s.stop()
