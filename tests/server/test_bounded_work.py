"""Bounded work (CONTRACT.md section 5): the decode bomb of issue 18, a FLAC
of 20 minutes at 192 kHz stereo in constant blocks (under 1 MB of bytes,
1.8 GB as float32 samples), is analysed within 1.5 GB of peak memory, both
as a server worker analyses it (`score_stage` with one core, in its own
process) and by `trackgrade analyze`, and the document is complete. Peak
memory is the child process's own (`os.wait4`'s rusage); the time is in
benchmarks/bench_hardening.py (`bomb`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from decode_bomb import flac_constant_blocks  # noqa: E402

from trackgrade.grading.validate import validate_document  # noqa: E402

PEAK_LIMIT_BYTES = 1.5e9
WORKER = """
import json, sys
from trackgrade.pool import one_core
from trackgrade.server.worker import score_stage
one_core()
data = open(sys.argv[1], "rb").read()
outcome = score_stage(data, "bomb.flac", "pre-master")
print(json.dumps(outcome[1].to_dict() if outcome[0] == "ok" else list(outcome)))
"""


def measured(args: list[str]) -> subprocess.Popen:
    return subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})


def finished(child: subprocess.Popen) -> tuple[int, str, str, int]:
    """(exit status, stdout, stderr, peak RSS in bytes) of a child, its rusage its own."""
    out, err = child.stdout.read(), child.stderr.read()
    _, status, usage = os.wait4(child.pid, 0)
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, out.decode(), err.decode(), usage.ru_maxrss * 1024


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bomb") / "bomb.flac"
    path.write_bytes(flac_constant_blocks(1200, 192000, 2))
    assert path.stat().st_size < 1 << 20
    return path


def test_the_decode_bomb_is_analysed_in_bounded_memory_by_a_worker_and_by_analyze(bomb):
    # both at once: the two children are measured separately (each its own rusage)
    worker = measured([sys.executable, "-c", WORKER, str(bomb)])
    analyze = measured([sys.executable, "-m", "trackgrade", "analyze", str(bomb), "--json"])
    results = {"worker": finished(worker), "analyze": finished(analyze)}
    for name, (code, out, err, peak) in results.items():
        assert code == 0, (name, err[-2000:])
        document = json.loads(out)
        assert validate_document(document) == [], name
        assert document["duration_seconds"] == pytest.approx(1200, abs=0.5)
        assert peak <= PEAK_LIMIT_BYTES, f"{name}: {peak / 1e9:.2f} GB"
