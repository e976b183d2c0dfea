"""Where the CPU of one `trackgrade analyze FILE --json` process goes, phase
by phase, for this tree and (with --base) another checkout of the code, in
fresh processes alternated round by round (a busy machine slows both alike).

    python benchmarks/bench_process.py                       # the 5-minute track
    python benchmarks/bench_process.py --base /tmp/main-tree --rounds 7
    python benchmarks/bench_process.py --file fixtures/demo.mp3

(`git archive main | tar -x -C /tmp/main-tree` makes a base tree; its
bytecode caches are compiled first, as an installed package has them.)

Phases of the real CLI run (CPU seconds of the whole process, all threads,
`time.process_time` at each boundary, the functions wrapped from outside):
startup and imports until the file is read, the read, the decode, the
engine (`extract`, both its threads), grading and wording, the JSON, and
the interpreter's shutdown (the process's rusage after the last exit hook).
Then the engine's stages on one thread (`extract(parallel=False)`, each
stage's thread CPU), the same run-to-run medians.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

PHASES = """
import atexit, json, runpy, sys, time
marks = [("start", time.process_time())]

def mark(name):
    marks.append((name, time.process_time()))

def wrap(module, attr, name):
    fn = getattr(module, attr)
    def timed(*args, **kwargs):
        out = fn(*args, **kwargs)
        mark(name)
        return out
    setattr(module, attr, timed)

import trackgrade.cli.analyze as cli_analyze
import trackgrade.pipeline as pipeline
mark("imports")
def read_marked(path):
    mark("imports")              # the rest of startup: up to the read
    return read(path)
read = cli_analyze.read_input_file
cli_analyze.read_input_file = read_marked
wrap(cli_analyze, "read_input_file", "read")
wrap(pipeline, "decoded", "decode")
wrap(pipeline, "extract", "engine")
wrap(pipeline, "enhance", "grade")
wrap(cli_analyze, "dump_json", "json")

def report():
    sys.stderr.write("PHASES " + json.dumps(marks) + "\\n")
    sys.stderr.flush()

atexit.register(report)
sys.argv = ["trackgrade", "analyze", sys.argv[1], "--json"]
runpy.run_module("trackgrade", run_name="__main__")
"""

STAGES = """
import json, sys, time
from pathlib import Path
import trackgrade.engine.extract as ex

class ThreadCPU(ex._Stopwatch):
    def __init__(self, timings):
        self.timings, self._last = timings, time.thread_time()
    def lap(self, stage):
        now = time.thread_time()
        self.timings[stage] = now - self._last
        self._last = now

ex._Stopwatch = ThreadCPU
from trackgrade import pipeline
path = Path(sys.argv[1])
audio = pipeline.decoded(path.read_bytes(), file_name=path.name, parallel=False)
runs = []
for _ in range(int(sys.argv[2])):
    runs.append(ex.extract(audio, parallel=False).timings_s)
print(json.dumps(runs))
"""


def _env(tree: Path, capped: bool) -> dict:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env["PYTHONPATH"] = str(tree)
    if capped:           # the CLI's own setting (trackgrade.native_threads), for the in-process stages
        env.setdefault("OPENBLAS_NUM_THREADS", "1")
    return env


def phases(tree: Path, track: Path) -> dict[str, float]:
    """CPU seconds per phase of one fresh `analyze` process of `tree`."""
    child = subprocess.Popen([sys.executable, "-c", PHASES, str(track)], cwd=tree,
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                             env=_env(tree, False))
    err = child.stderr.read().decode()
    _, status, usage = os.wait4(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(err[-1500:])
    marks = json.loads([x for x in err.splitlines() if x.startswith("PHASES ")][-1][7:])
    imports = max(t for name, t in marks if name == "imports")
    out = {"startup_imports": imports}
    last = imports
    for name, t in marks:
        if name not in ("start", "imports"):
            out[name] = out.get(name, 0.0) + t - last
            last = t
    total = usage.ru_utime + usage.ru_stime
    out["shutdown"] = total - last
    out["total"] = total
    return out


def stages(tree: Path, track: Path, runs: int, capped: bool) -> list[dict]:
    done = subprocess.run([sys.executable, "-c", STAGES, str(track), str(runs)], cwd=tree,
                          capture_output=True, text=True, env=_env(tree, capped), check=True)
    return json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base", type=Path, help="another checkout to compare (e.g. main)")
    parser.add_argument("--file", type=Path, help="the track (default: the 5-minute `speed` render)")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    if args.file is None:
        from truth import render_grid
        folder, tracks = render_grid("speed")
        args.file = folder / tracks[0]["file"]
    trees = {"this": ROOT} | ({"base": args.base.resolve()} if args.base else {})
    for tree in trees.values():
        subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "trackgrade")],
                       check=True, stdout=subprocess.DEVNULL)
    load = os.getloadavg()[0]
    seen: dict = {name: [] for name in trees}
    for r in range(args.rounds):
        for name, tree in trees.items():
            seen[name].append(phases(tree, args.file))
        print(f"round {r + 1}: " + "  ".join(f"{n} {seen[n][-1]['total']:.3f}s" for n in trees),
              flush=True)
    staged = {name: stages(tree, args.file, args.rounds, capped=(name == "this"))
              for name, tree in trees.items()}
    print(f"{args.file.name}: CPU seconds, medians of {args.rounds} fresh processes; "
          f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after, {os.cpu_count()} cpus")
    names = list(trees)
    print("| phase | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for phase in seen[names[0]][0]:
        print(f"| {phase} | " + " | ".join(
            f"{statistics.median(run[phase] for run in seen[n]):.3f}" for n in names) + " |")
    print("\nengine stages on one thread (extract(parallel=False), thread CPU, medians):")
    print("| stage | " + " | ".join(names) + " |")
    print("|---|" + "---|" * len(names))
    for stage in staged[names[0]][0]:
        print(f"| {stage} | " + " | ".join(
            f"{statistics.median(run.get(stage, 0.0) for run in staged[n]):.3f}" for n in names)
            + " |")


if __name__ == "__main__":
    main()
