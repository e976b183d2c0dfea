"""What the `trackgrade` process itself does around an analysis (see
trackgrade/native_threads.py and `trackgrade.cli.main`): its native thread
pools (BLAS) start one thread unless the user set a count, and it ends
without the interpreter's shutdown walking every object for cycles. Checked
in a real `analyze` process, from an exit hook that runs after the command."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from trackgrade.native_threads import THREAD_ENV_VARS

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "fixtures" / "demo.mp3"

# runs `python -m trackgrade analyze DEMO --json`; at exit (after the command,
# before the interpreter's shutdown) reports its BLAS pools and the frozen objects
PROBE = """
import atexit, gc, json, runpy, sys

def report():
    from threadpoolctl import threadpool_info
    sys.stderr.write("PROBE " + json.dumps({
        "blas_threads": [p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"],
        "frozen": gc.get_freeze_count()}) + "\\n")

atexit.register(report)
sys.argv = ["trackgrade", "analyze", sys.argv[1], "--json"]
runpy.run_module("trackgrade", run_name="__main__")
"""


def probe(**env_extra: str) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in THREAD_ENV_VARS}
    env.update(PYTHONPATH=str(ROOT), **env_extra)
    done = subprocess.run([sys.executable, "-c", PROBE, str(DEMO)], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout)["file_name"] == "demo.mp3"
    line = [x for x in done.stderr.splitlines() if x.startswith("PROBE ")][-1]
    return json.loads(line[len("PROBE "):])


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: BLAS starts one thread anyway")
def test_analyze_runs_blas_on_one_thread_and_skips_the_exit_collection():
    seen = probe()
    assert seen["blas_threads"] and set(seen["blas_threads"]) == {1}
    assert seen["frozen"] > 10000              # the imports' objects, frozen before the exit


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2, reason="one core: BLAS starts one thread anyway")
def test_the_users_own_thread_count_wins():
    assert set(probe(OPENBLAS_NUM_THREADS="2")["blas_threads"]) == {2}


# imports `trackgrade.cli` (every command's modules; the package's own light
# `__init__` first) and reports the collector
GC_PROBE = """
import gc, json, sys
import trackgrade
if sys.argv[1] == "off":
    gc.disable()
before = sum(s["collections"] for s in gc.get_stats())
import trackgrade.cli
print(json.dumps({"enabled": gc.isenabled(), "frozen": gc.get_freeze_count(),
                  "collections": sum(s["collections"] for s in gc.get_stats()) - before}))
"""


def gc_after_import(state: str) -> dict:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", GC_PROBE, state], capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def test_the_imports_run_no_collection_and_are_frozen_for_the_command():
    seen = gc_after_import("on")
    assert seen["collections"] == 0            # without the pause: dozens while the modules load
    assert seen["frozen"] > 10000              # later collections do not walk the imports' objects
    assert seen["enabled"]                     # the command (serve, batch) collects as usual


def test_a_collector_the_caller_turned_off_stays_off():
    assert not gc_after_import("off")["enabled"]
