"""No orphans (CONTRACT.md section 5): the analysis worker processes, the
fork server and multiprocessing's resource tracker end when the process that
started them dies, however it dies: `kill -9` of a real `trackgrade serve`
(idle workers) and of a real `trackgrade batch` (workers mid-analysis).
Both use the one pool, `trackgrade.pool`. Linux (/proc)."""

from __future__ import annotations

import io
import os
import signal
import subprocess
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.server.process_tree import command_line, wait_for_descendants, wait_until_gone
from tests.server.serve_process import CLI, ServeProcess

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
GONE_WITHIN_S = 5.0


def _kill_session(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _left(pids: set[int]) -> list[str]:
    left, _ = wait_until_gone(pids, GONE_WITHIN_S)
    return [f"{pid}: {command_line(pid)[:120]}" for pid in sorted(left)]


def test_kill_9_of_the_server_ends_its_workers(tmp_path):
    server = ServeProcess(tmp_path, "--workers", "2", require=True)
    try:
        # the resource tracker, the fork server and at least one warmed-up worker
        started = wait_for_descendants(server.proc.pid, 3, 60)
        assert len(started) >= 3, [command_line(p) for p in started]
        os.kill(server.proc.pid, signal.SIGKILL)          # the server only, not its session
        server.proc.wait(10)
        assert _left(started) == []
    finally:
        _kill_session(server.proc.pid)


def _track(seconds: float, rate: int = 44100, seed: int = 0) -> bytes:
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    kick = np.sin(2 * np.pi * 50 * t) * np.exp(-12 * (t % 0.5))
    noise = rng.standard_normal(t.size) * 0.05
    mix = (0.6 * kick + noise).astype(np.float32)
    out = io.BytesIO()
    sf.write(out, np.stack([mix, mix], axis=1), rate, format="WAV", subtype="PCM_16")
    return out.getvalue()


def test_kill_9_of_a_batch_ends_its_workers_mid_analysis(tmp_path):
    for i in range(4):
        (tmp_path / f"track{i}.wav").write_bytes(_track(120, seed=i))
    batch = subprocess.Popen(CLI + ["batch", str(tmp_path), "--jobs", "2", "--json"],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                             start_new_session=True)
    try:
        started = wait_for_descendants(batch.pid, 4, 60)   # tracker, fork server, 2 workers
        assert len(started) >= 4, [command_line(p) for p in started]
        assert batch.poll() is None                        # still grading
        os.kill(batch.pid, signal.SIGKILL)
        batch.wait(10)
        assert _left(started) == []
    finally:
        _kill_session(batch.pid)
