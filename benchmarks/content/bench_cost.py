"""What the content cues cost: whole-process `trackgrade analyze` of the
5-minute speed track, before (trackgrade at REV, from a snapshot) and after
(this tree), alternated in the same rounds.

    python benchmarks/content/bench_cost.py [--before main] [--rounds 7]

Reported: each side's median wall time and median CPU time (user + system of
the process, from wait4: what a busy machine inflates least), and the ratio
of the medians.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(HERE))

from evaluate import snapshot  # noqa: E402


def run(tree: Path, track: Path) -> tuple[float, float]:
    """(wall s, cpu s) of `python -m trackgrade analyze TRACK --json` from `tree`."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "trackgrade", "analyze", str(track), "--json"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=str(tree), env=env)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        raise SystemExit(f"analyze failed in {tree}")
    return wall, usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="main")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    from truth import render_grid

    speed_dir, tracks = render_grid("speed")
    track = speed_dir / tracks[0]["file"]
    with tempfile.TemporaryDirectory() as tmp:
        before = snapshot(args.before, Path(tmp))
        for tree in (before, ROOT):          # both start from compiled bytecode
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "trackgrade")],
                           check=True, env={k: v for k, v in os.environ.items()
                                            if k != "PYTHONDONTWRITEBYTECODE"})
        runs = {"before": [], "after": []}
        for i in range(args.rounds):
            for side, tree in ((("before", before), ("after", ROOT)) if i % 2 == 0
                               else (("after", ROOT), ("before", before))):
                runs[side].append(run(tree, track))
    load = os.getloadavg()[0]
    for side, got in runs.items():
        print(f"{side}: wall median {statistics.median(w for w, _ in got):.3f} s, "
              f"cpu median {statistics.median(c for _, c in got):.3f} s ({len(got)} runs)")
    for i, name in ((0, "wall"), (1, "cpu")):
        ratio = (statistics.median(x[i] for x in runs["after"])
                 / statistics.median(x[i] for x in runs["before"]))
        print(f"after / before ({name}): {ratio:.3f}")
    print(f"load average at the end: {load:.1f}")


if __name__ == "__main__":
    main()
