"""Electronic or not, on every real clip with a genre annotation: the
confusion table of `genres.electronic_fit` and the evidence behind it.

    python benchmarks/grading_notes/electronic_split.py

Electronic: the manifest genre names an electronic style (tests/grading/
real_audio.ELECTRONIC), every clip the product decodes (2 s or more).
Not electronic: `real_audio.non_electronic_clips()` (the nine acoustic
clips of 5 s or more). Prints one row per clip (fit, how it sounds, the
micro-timing spread and its onsets, flagged or not), then the counts and the
gap between the two classes' timing spreads (each clip left out in turn).
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

MIN_DECODED_S = 2.0


def clips() -> list[tuple[str, str]]:
    from grading.real_audio import ELECTRONIC, non_electronic_clips
    from truth import real_manifest
    acoustic = set(non_electronic_clips())
    out = []
    for r in real_manifest():
        if r["variant"] != "original" or r["category"] == "edge-case":
            continue
        if float(r["duration_s"] or 0) < MIN_DECODED_S:
            continue
        if ELECTRONIC.search(r["genre_truth"]):
            out.append((r["file"], "electronic"))
        elif r["file"] in acoustic:
            out.append((r["file"], "not"))
    return out


def main() -> None:
    from grading.real_audio import features

    from trackgrade.grading import genres as G
    from trackgrade.grading.analysis import judge
    rows = []
    print("| clip | class | s | fit | salient | timing spread ms (onsets) | grid | flagged |")
    print("|---|---|---|---|---|---|---|---|")
    for file, cls in clips():
        f = features(file)
        r = f.rhythm
        fit = judge(f, "master").guess.electronic
        grid = G.grid_timing(r.timing_spread_ms, r.timed_onsets, tempo_salient=r.tempo_salient)
        spread = "-" if r.timing_spread_ms is None else f"{r.timing_spread_ms:.1f}"
        rows.append((file, cls, fit, r))
        print(f"| {Path(file).name.split('__', 1)[-1]} | {cls} | {f.duration_s:.1f} | {fit:.2f} | "
              f"{'yes' if r.tempo_salient else 'no'} | {spread} ({r.timed_onsets}) | {grid:.2f} | "
              f"{'yes' if fit < G.ELECTRONIC_MIN else 'no'} |")
    n_e = sum(c == "electronic" for _, c, _, _ in rows)
    n_a = len(rows) - n_e
    caught = sum(c == "not" and fit < G.ELECTRONIC_MIN for _, c, fit, _ in rows)
    wrong = sum(c == "electronic" and fit < G.ELECTRONIC_MIN for _, c, fit, _ in rows)
    print(f"\nnot electronic caught: {caught} of {n_a}; electronic flagged: {wrong} of {n_e}")
    counted = [(f, c, r.timing_spread_ms) for f, c, _, r in rows
               if r.timing_spread_ms is not None and r.tempo_salient and r.timed_onsets >= G.TIMING_MIN_ONSETS]
    print(f"\ntiming counted on {len(counted)} clips; the gap with each clip left out, and the "
          "counts with the ramp (same width) centred there:")
    width = G.TIMING_PLAYED_MS - G.TIMING_GRID_MS
    for left in [None] + [f for f, _, _ in counted]:
        e = [s for f, c, s in counted if c == "electronic" and f != left]
        a = [s for f, c, s in counted if c == "not" and f != left and s > max(e)]   # played ones
        middle = (max(e) + min(a)) / 2
        print(f"  left out {Path(left).name.split('__', 1)[-1] if left else '-':48} electronic max "
              f"{max(e):4.1f} ms, played min {min(a):4.1f} ms, middle {middle:4.1f} ms: "
              f"{counts(rows, middle - width / 2, middle + width / 2)}")


def counts(rows, grid_ms: float, played_ms: float) -> str:
    """Caught / flagged with the timing ramp moved to [grid_ms, played_ms]."""
    from trackgrade.grading import genres as G
    keep = (G.TIMING_GRID_MS, G.TIMING_PLAYED_MS)
    G.TIMING_GRID_MS, G.TIMING_PLAYED_MS = grid_ms, played_ms
    try:
        from grading.real_audio import features

        from trackgrade.grading.analysis import judge
        fits = [(c, judge(features(f), "master").guess.electronic) for f, c, _, _ in rows]
    finally:
        G.TIMING_GRID_MS, G.TIMING_PLAYED_MS = keep
    caught = sum(c == "not" and x < G.ELECTRONIC_MIN for c, x in fits)
    wrong = sum(c == "electronic" and x < G.ELECTRONIC_MIN for c, x in fits)
    return f"caught {caught}, flagged {wrong}"

if __name__ == "__main__":
    main()
