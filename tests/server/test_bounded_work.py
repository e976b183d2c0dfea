"""Bounded work (CONTRACT.md section 5): the decode bomb of issue 18, a FLAC
of 20 minutes at 192 kHz stereo in constant blocks (under 1 MB of bytes,
1.8 GB as float32 samples), is analysed within 1.5 GB of peak memory, both
as a server worker analyses it (`score_stage` with one core, in its own
process) and by `trackgrade analyze`, and the document is complete. Peak
memory is the child process's own (`os.wait4`'s rusage); the time is in
benchmarks/bench_hardening.py (`bomb`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.server.decode_bomb import analyze_command, finish, flac_constant_blocks, start, worker_command

from tests.document_check import validate_document  # noqa: E402

PEAK_LIMIT_BYTES = 1.5e9


@pytest.fixture(scope="module")
def bomb(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("bomb") / "bomb.flac"
    path.write_bytes(flac_constant_blocks(1200, 192000, 2))
    assert path.stat().st_size < 1 << 20
    return path


@pytest.mark.slow(seconds=48)
def test_the_decode_bomb_is_analysed_in_bounded_memory_by_a_worker_and_by_analyze(bomb):
    # both at once: the two children are measured separately (each its own rusage)
    worker = start(worker_command(str(bomb)))
    analyze = start(analyze_command(str(bomb)))
    for name, run in {"worker": finish(worker), "analyze": finish(analyze)}.items():
        assert run.code == 0, (name, run.err[-2000:])
        document = json.loads(run.out)
        assert validate_document(document) == [], name
        assert document["duration_seconds"] == pytest.approx(1200, abs=0.5)
        assert run.peak_bytes <= PEAK_LIMIT_BYTES, f"{name}: {run.peak_bytes / 1e9:.2f} GB"
