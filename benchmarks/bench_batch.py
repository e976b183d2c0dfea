"""Benchmark: `trackgrade batch` with --jobs 1 against --jobs 2 (not a test).

Target: grading 100 one-minute files with --jobs 2 takes < 60 % of the time
with --jobs 1. The 100 files are rendered once by the shared synth generator
(tests/truth.render_specs, cached under ~/.cache/trackgrade, outside git:
eleven styles, varied tempo, key, seed and format), then each run is timed as
a whole process (`python -m trackgrade batch DIR --jobs N --json`). The
machine is shared, so `--repeat N` interleaves the runs and keeps the fastest
of each, and the load average before each run is printed.

What to expect on a 2-vCPU machine: each batch worker analyzes on one core
(`pipeline.analyze(parallel=False)`, BLAS/OpenMP capped at one thread), so
--jobs N is N cores' worth of work and two workers gain ~1.8x over one. Other
processes on a shared machine move the figures by tens of percent: compare
runs with similar load.

    python benchmarks/bench_batch.py                # 100 files x 60 s, jobs 1 then 2
    python benchmarks/bench_batch.py --count 20 --seconds 30 --jobs 1 2 --repeat 2
    python benchmarks/bench_batch.py --generate-only
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from truth import render_specs  # noqa: E402

STYLES = (("house", 118, 130), ("deep_house", 115, 125), ("tech_house", 120, 128),
          ("techno", 125, 140), ("trance", 128, 145), ("drum_and_bass", 170, 176),
          ("dubstep", 138, 143), ("hardstyle", 145, 160), ("breakbeat", 125, 140),
          ("downtempo", 80, 110), ("ambient", 60, 100))
KEYS = ("A", "C", "D", "E", "F#", "G", "Bb", "Eb", "B", "F", "Ab", "C#")


def batch_specs(count: int, seconds: float) -> list[dict]:
    """`count` varied tracks: styles round-robin, tempo spread over each style's
    range, keys and scales rotating, every tenth file FLAC and every tenth MP3."""
    specs = []
    for i in range(count):
        style, low, high = STYLES[i % len(STYLES)]
        step = (i // len(STYLES)) % 5
        spec = {"name": f"b{i:03d}_{style}", "style": style,
                "bpm": round(low + (high - low) * step / 4, 1),
                "key": KEYS[i % len(KEYS)], "scale": "minor" if i % 3 else "major",
                "seconds": seconds, "seed": 1000 + i}
        if i % 10 == 3:
            spec["format"] = "FLAC"
        elif i % 10 == 7:
            spec["format"] = "MP3"
        specs.append(spec)
    return specs


def time_batch(directory: Path, jobs: int, out: Path) -> tuple[float, dict]:
    """Wall time of one whole `trackgrade batch` process, and its summary."""
    command = [sys.executable, "-m", "trackgrade", "batch", str(directory), "--jobs", str(jobs),
               "--out", str(out), "--json"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT)
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"batch --jobs {jobs} failed ({done.returncode}): {done.stderr.strip()}")
    return wall, json.loads(done.stdout)["summary"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--repeat", type=int, default=1,
                        help="runs per --jobs value, interleaved; the fastest counts")
    parser.add_argument("--render-jobs", type=int, default=2)
    parser.add_argument("--generate-only", action="store_true")
    args = parser.parse_args()

    start = time.perf_counter()
    directory, _ = render_specs(batch_specs(args.count, args.seconds), jobs=args.render_jobs)
    print(f"files: {args.count} x {args.seconds:g} s in {directory} "
          f"(ready in {time.perf_counter() - start:.1f} s)", flush=True)
    if args.generate_only:
        return
    print(f"cpus: {os.cpu_count()}", flush=True)
    results: dict[int, float] = {}
    for attempt in range(args.repeat):
        for jobs in args.jobs:
            load = os.getloadavg()[0]
            wall, summary = time_batch(directory, jobs, Path(f"/tmp/bench_batch_j{jobs}.csv"))
            results[jobs] = min(wall, results.get(jobs, wall))
            print(f"--jobs {jobs} (run {attempt + 1}): {wall:7.1f} s wall  "
                  f"({args.count / wall:.2f} files/s, ok {summary['ok']}, "
                  f"failed {summary['failed']}, mean score {summary['mean_score']}; "
                  f"load before {load:.1f})", flush=True)
    for jobs, wall in results.items():
        print(f"best --jobs {jobs}: {wall:.1f} s")
    if 1 in results:
        for jobs, wall in results.items():
            if jobs != 1:
                ratio = wall / results[1]
                verdict = "PASS" if ratio < 0.60 else "FAIL"
                print(f"ratio jobs {jobs} / jobs 1: {ratio:.2f}  (target < 0.60: {verdict}; "
                      f"speed-up {1 / ratio:.2f}x)")


if __name__ == "__main__":
    main()
