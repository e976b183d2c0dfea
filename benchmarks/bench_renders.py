"""CPU cost of the reference audio the test suite makes on a cold cache.

    python benchmarks/bench_renders.py [--generators DIR] [--only SET,...] [--no-ebu]

Renders, into a temporary directory (never the cache), every spec set the
tests render (the lists are read from the test modules themselves) with
synth_edm.py in this process, one master group after another as
tests/truth.render_specs does, and the EBU Tech 3341/3342 signals at both
rates with gen_ebu.py (one process per rate, as tests/truth.prepare_ebu).
Prints CPU seconds (user + sys) per set: CPU, not wall time, because this
machine is shared. `--generators` points at another copy of tests/truth_gen
(an older commit's, from `git archive`) to compare generators on the same
spec lists.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def suite_renders() -> dict[str, list[dict]]:
    """Every spec list the tests pass to tests/truth.render_specs, by a short name."""
    from tests.cli import conftest as cli
    from tests.client import test_remote_cli
    from tests.engine import (rhythm_specs, test_dynamics_stereo, test_extract, test_frames,
                              test_spectrum, test_tonal)
    from tests.grading import defect_specs, test_genre_real
    from tests.server import conftest as server
    from tests.server import hostile_audio

    return {
        "server e2e": [server.E2E_TRACK],
        "frames": [test_frames.FRAMES_TRACK],
        "extract": test_extract.SPECS,
        "tonal": test_tonal.SPECS,
        "dynamics/stereo": test_dynamics_stereo.SPECS,
        "spectrum": test_spectrum.SPECS,
        "rhythm/structure": rhythm_specs.SPECS,
        "cli": cli.TRACK_SPECS,
        "defects": defect_specs.specs(),
        "genre parts": test_genre_real.SPECS,
        "remote cli": test_remote_cli.TRACKS,
        "client rerun": [{"name": f"rerun_{i}", "style": "techno", "bpm": 126 + i, "seconds": 6,
                          "seed": 70 + i} for i in range(5)],    # inline in tests/client/test_client_process.py
        "hostile seeds (only without ../shared)": hostile_audio.SYNTH_SEEDS,
    }


def _module(path: Path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--generators", type=Path, default=ROOT / "tests" / "truth_gen")
    parser.add_argument("--only", help="comma-separated set names")
    parser.add_argument("--no-ebu", action="store_true")
    args = parser.parse_args()
    synth = _module(args.generators / "synth_edm.py")
    sets = suite_renders()
    if args.only:
        sets = {name: sets[name] for name in args.only.split(",")}
    total_cpu, total_s, total_tracks = 0.0, 0.0, 0
    print(f"{'set':40s} {'tracks':>6s} {'audio s':>8s} {'CPU s':>7s}")
    with tempfile.TemporaryDirectory(prefix="bench-renders-") as scratch:
        for name, specs in sets.items():
            out = Path(scratch) / str(len(os.listdir(scratch)))
            groups = synth.master_groups(specs) if hasattr(synth, "master_groups") else [range(len(specs))]
            start = time.process_time()
            for group in groups:
                synth.run_specs([specs[i] for i in group], str(out), jobs=1, quiet=True)
                getattr(synth, "forget_master", lambda: None)()
            cpu = time.process_time() - start
            seconds = sum(synth.normalize_spec(s)["seconds"] for s in specs)
            total_cpu, total_s, total_tracks = total_cpu + cpu, total_s + seconds, total_tracks + len(specs)
            print(f"{name:40s} {len(specs):6d} {seconds:8.1f} {cpu:7.2f}", flush=True)
        print(f"{'synthetic tracks, all':40s} {total_tracks:6d} {total_s:8.1f} {total_cpu:7.2f}")
        if not args.no_ebu:
            for rate in (48000, 44100):
                before = _children_cpu()
                subprocess.run([sys.executable, str(args.generators / "gen_ebu.py"),
                                str(Path(scratch) / f"ebu{rate}"), "--rate", str(rate)],
                               check=True, stdout=subprocess.DEVNULL)
                print(f"{'EBU signals ' + str(rate):40s} {'69':>6s} {'':8s} "
                      f"{_children_cpu() - before:7.2f}", flush=True)


if __name__ == "__main__":
    main()
