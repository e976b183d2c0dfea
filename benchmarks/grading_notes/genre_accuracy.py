"""Genre detection and score spread on the synthetic `visible` grid, through
the real engine.

    python benchmarks/grading_notes/genre_accuracy.py [--dir RENDERED_GRID_DIR]

Prints one row per track (truth family, detected family, confidence, headline
and pillars) and the family accuracy. Without --dir the grid is rendered
(cached) through tests/truth.py.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--dir", type=Path)
    parser.add_argument("--status", default="master")
    args = parser.parse_args()
    from trackgrade.grading import build_analysis
    from trackgrade.pipeline import measure
    if args.dir:
        out, tracks = args.dir, json.loads((args.dir / "truth.json").read_text())["tracks"]
    else:
        from truth import render_grid
        out, tracks = render_grid("visible")
    hits = rows = 0
    t0 = time.time()
    for t in tracks:
        features = measure((out / t["file"]).read_bytes(), file_name=t["file"])
        a = build_analysis(features, file_name=t["file"], mastering_status=args.status)
        s = a.scores
        ok = a.genre.detected == t["genre_family"]
        hits += ok
        rows += 1
        defects = ",".join(d["type"] for d in t["defects"]) or "-"
        print(f"{t['name'][:30]:30} {t['genre_family']:14} {a.genre.detected:14} {'ok ' if ok else 'MISS'} "
              f"conf {a.genre.confidence:.2f} bpm {a.tempo.bpm:6.1f}/{t['bpm']:<6} score {a.score:3} "
              f"d{s.danceability:3} m{s.mix_quality:3} f{s.frequency_balance:3} e{s.energy:3} "
              f"s{s.structure:3}  {defects}")
    print(f"family accuracy {hits}/{rows} = {hits / rows:.2f}  ({time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
