"""Whole-process speed of `trackgrade analyze` (start to exit, JSON written),
with the peers run as whole processes in the same rounds.

    python benchmarks/bench_cli.py                 # 5-minute track + demo, 7 rounds
    python benchmarks/bench_cli.py --rounds 11 --no-librosa
    python benchmarks/bench_cli.py --no-librosa --base /tmp/main-tree   # before/after, same rounds

Each round runs, one after the other (alternated, so a busy machine slows
every contender alike; each round starts with the next contender, so none
always follows the same process): `python -m trackgrade analyze FILE --json > out.json`,
then the Essentia pipeline of bench_engine.py (AudioLoader + LoudnessEBUR128 +
RhythmExtractor2013 multifeature + KeyExtractor edma) as a fresh
`python` process that writes its JSON, then librosa's (load + beat_track +
chroma_cqt) likewise, for the 5-minute stereo 44.1 kHz `speed` track and for
fixtures/demo.mp3 (31 s). Reported: medians, the ratio of medians and the
median of the per-round ratios, each process's CPU time (user + system, from
wait4: what a busy machine does not inflate), and the load average before
and after.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

PEER = """
import json, sys
sys.path.insert(0, {bench!r})
from pathlib import Path
import bench_engine
result = bench_engine.{fn}(Path(sys.argv[1]))
Path(sys.argv[2]).write_text(json.dumps(result, default=float))
"""


BASE: Path | None = None      # --base: another checkout of trackgrade, run as a contender too


def _env(root: Path = ROOT) -> dict:
    env = dict(os.environ)
    # the warm-up round writes the bytecode caches an installed package has
    # (pip compiles them); a machine that sets PYTHONDONTWRITEBYTECODE (this
    # one does) otherwise has every round compile trackgrade from source
    # (~0.2-0.3 s of CPU) while the peers' installed caches are used
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(root) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def command(who: str, track: Path, out: Path) -> list[str]:
    if who in ("trackgrade", "base"):
        return [sys.executable, "-m", "trackgrade", "analyze", str(track), "--json"]
    fn = {"essentia": "essentia_pipeline", "librosa": "librosa_pipeline"}[who]
    code = PEER.format(bench=str(ROOT / "benchmarks"), fn=fn)
    return [sys.executable, "-c", code, str(track), str(out)]


def run_once(who: str, track: Path, workdir: Path) -> tuple[float, float]:
    """(seconds from process start to exit, CPU seconds the process used);
    the JSON lands in a file."""
    out = workdir / f"{who}.json"
    cmd = command(who, track, out)
    with open(out, "wb") as sink, open(workdir / "stderr.txt", "wb") as err:
        t0 = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=sink, stderr=err, cwd=workdir,
                                 env=_env(BASE if who == "base" else ROOT))
        _, status, usage = os.wait4(child.pid, 0)
        seconds = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{who} failed on {track.name}: "
                           f"{(workdir / 'stderr.txt').read_text(errors='replace')[-800:]}")
    json.loads(out.read_text())            # the JSON was written and is whole
    return seconds, usage.ru_utime + usage.ru_stime


def load_average() -> float:
    return os.getloadavg()[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--no-librosa", action="store_true")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--base", type=Path,
                        help="another checkout (e.g. `git archive main | tar -x -C DIR`), run as "
                             "'base' in the same rounds: before against after")
    args = parser.parse_args()
    global BASE
    BASE = args.base.resolve() if args.base else None
    from truth import render_grid
    speed_dir, speed_tracks = render_grid("speed")
    tracks = {"5min": speed_dir / speed_tracks[0]["file"], "demo": ROOT / "fixtures" / "demo.mp3"}
    who = (["trackgrade"] + (["base"] if BASE else [])
           + ([] if args.no_peers else ["essentia"] + ([] if args.no_librosa else ["librosa"])))
    times: dict = {t: {w: [] for w in who} for t in tracks}
    cpu: dict = {t: {w: [] for w in who} for t in tracks}
    load_before = load_average()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        for name, track in tracks.items():           # warm the page cache and the .pyc files
            for w in who:
                run_once(w, track, workdir)
        for r in range(args.rounds):
            # each round starts with the next contender: none always follows the
            # same process (one that follows Essentia's pays for the memory it left)
            order = who[r % len(who):] + who[:r % len(who)]
            for name, track in tracks.items():
                for w in order:
                    wall, used = run_once(w, track, workdir)
                    times[name][w].append(wall)
                    cpu[name][w].append(used)
            print(f"round {r + 1}: " + "  ".join(
                f"{n}/{w} {times[n][w][-1]:.2f}s ({cpu[n][w][-1]:.2f})" for n in tracks for w in who),
                flush=True)
    load_after = load_average()
    report = {"rounds": args.rounds, "load_before": load_before, "load_after": load_after,
              "cpus": os.cpu_count(), "tracks": {}}
    for name in tracks:
        row = {w: {"median_s": statistics.median(v), "min_s": min(v), "max_s": max(v),
                   "cpu_median_s": statistics.median(cpu[name][w])}
               for w, v in times[name].items()}
        ours = times[name]["trackgrade"]
        for w in who[1:]:
            row[w]["ratio_of_medians"] = statistics.median(times[name][w]) / statistics.median(ours)
            row[w]["median_pair_ratio"] = statistics.median(p / o for p, o in zip(times[name][w], ours))
            row[w]["cpu_ratio"] = row[w]["cpu_median_s"] / row["trackgrade"]["cpu_median_s"]
        report["tracks"][name] = row
    print(f"load average {load_before:.2f} before, {load_after:.2f} after, {os.cpu_count()} cpus")
    for name, row in report["tracks"].items():
        for w, r in row.items():
            extra = (f"  peer/ours {r['ratio_of_medians']:.2f}x (pairwise {r['median_pair_ratio']:.2f}x,"
                     f" CPU {r['cpu_ratio']:.2f}x)" if "ratio_of_medians" in r else "")
            print(f"{name:5s} {w:10s} median {r['median_s']:.3f} s  [{r['min_s']:.3f}-{r['max_s']:.3f}]"
                  f"  CPU {r['cpu_median_s']:.3f} s{extra}")
    out = ROOT / "benchmarks" / "out"
    out.mkdir(exist_ok=True)
    (out / "cli.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
