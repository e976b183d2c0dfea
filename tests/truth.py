"""Access to ../shared/truth for tests and benchmarks.

The real clips are read in place (their licences forbid copying them into the
project). Synthetic tracks are rendered with the shared generator on first use
and cached outside the repository (`TRACKGRADE_CACHE`, default
~/.cache/trackgrade), keyed by a hash of the spec, so a second run is instant.
"""

from __future__ import annotations

import csv
import hashlib
import importlib.util
import json
import os
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TRACKGRADE_SHARED", ROOT.parent / "shared")).resolve()
TRUTH = SHARED / "truth"
REAL = TRUTH / "real"
CACHE = Path(os.environ.get("TRACKGRADE_CACHE", Path.home() / ".cache" / "trackgrade")).resolve()


@lru_cache(maxsize=None)
def synth_module():
    """The shared generator `synth_edm.py`, imported as a module."""
    path = TRUTH / "synth" / "synth_edm.py"
    spec = importlib.util.spec_from_file_location("synth_edm", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["synth_edm"] = module
    spec.loader.exec_module(module)
    return module


def _spec_dir(specs: list[dict]) -> Path:
    digest = hashlib.sha256(json.dumps(specs, sort_keys=True).encode()).hexdigest()[:16]
    return CACHE / "synth" / digest


def render_specs(specs: list[dict], jobs: int = 2) -> tuple[Path, list[dict]]:
    """Render track specs (cached); returns (directory, truth entries in spec order)."""
    out = _spec_dir(specs)
    truth_file = out / "truth.json"
    if not truth_file.exists():
        out.mkdir(parents=True, exist_ok=True)
        spec_file = out / "specs.json"
        spec_file.write_text(json.dumps(specs))
        subprocess.run([sys.executable, str(TRUTH / "synth" / "synth_edm.py"), "--out", str(out),
                        "--spec", str(spec_file), "--jobs", str(jobs)], check=True,
                       stdout=subprocess.DEVNULL)
    tracks = json.loads(truth_file.read_text())["tracks"]
    by_name = {t["name"]: t for t in tracks}
    names = [s.get("name") for s in specs]
    if all(names):
        tracks = [by_name[n] for n in names]
    return out, tracks


def render_grid(grid: str, jobs: int = 2) -> tuple[Path, list[dict]]:
    """Render a built-in grid (visible, defects, speed, long), cached."""
    specs = json.loads((TRUTH / "synth" / "grids" / f"{grid}.json").read_text())["tracks"]
    return render_specs(specs, jobs=jobs)


def real_manifest() -> list[dict]:
    """Rows of ../shared/truth/real/manifest.csv with an absolute `path`."""
    with open(REAL / "manifest.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row["path"] = str(REAL / row["file"])
    return rows


def ebu_signals(rate: int = 48000) -> tuple[Path, dict]:
    """Generate the EBU Tech 3341/3342 signals (cached); returns (dir, expected.json)."""
    out = CACHE / "ebu" / str(rate)
    expected = out / "expected.json"
    if not expected.exists():
        out.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, str(TRUTH / "ebu" / "gen_ebu.py"), str(out),
                        "--rate", str(rate)], check=True, stdout=subprocess.DEVNULL)
    return out, json.loads(expected.read_text())
