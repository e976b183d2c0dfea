"""The labelled items of the genre evaluation (benchmarks/eval_genre.py) and of
the derivation of the genre model (benchmarks/derive_genre_model.py).

* synthetic: `synthetic_specs()` - every style of the shared generator
  (tests/truth.py renders and caches them), several per style with tempo, key,
  scale, seed, length and arrangement varied: short drop-only parts (6-16 s) and
  full arrangements (30-50 s) with intros and breakdowns.
* real: the clips of ../shared/truth/real whose `genre_truth` names an
  electronic family (`REAL_FAMILY`); the other real clips are read too and
  reported as "no family" (a confident reading of one of them is a miss).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from truth import real_manifest, render_grid, render_specs  # noqa: E402

# generator style -> (family, tempo range drawn from)
STYLES = {
    "house": ("house", (118, 130)), "deep_house": ("house", (115, 125)),
    "tech_house": ("house", (120, 128)), "techno": ("techno", (125, 140)),
    "trance": ("trance", (128, 145)), "drum_and_bass": ("drum_and_bass", (160, 180)),
    "dubstep": ("dubstep", (136, 146)), "hardstyle": ("hardstyle", (145, 160)),
    "breakbeat": ("breakbeat", (125, 140)), "downtempo": ("downtempo", (80, 110)),
    "ambient": ("ambient", (60, 100)),
}
KEYS = ("C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B")

# manifest genre_truth (lower case) -> family, for the clips that are music of a family (a
# "trance bass sample" is a sample, not a trance track; "electronic (IDM)" names no family)
REAL_FAMILY = {"breakbeat": "breakbeat", "breaks (electronic; beatport genre)": "breakbeat",
               "trance": "trance", "electronica / downtempo (beatport genre)": "downtempo"}


def synthetic_specs(per_style: int = 8, seed: int = 17) -> list[dict]:
    """`per_style` specs for every style: half short drop-only parts, half full arrangements."""
    rng = np.random.default_rng(seed)
    specs = []
    for style, (_, (lo, hi)) in STYLES.items():
        for i in range(per_style):
            bpm = round(float(rng.uniform(lo, hi)), 1)
            spec = {"name": f"g_{style}_{i}", "style": style, "bpm": bpm,
                    "key": KEYS[int(rng.integers(12))], "scale": ("minor", "major")[int(rng.integers(2))],
                    "seed": int(rng.integers(1, 10_000)), "target_lufs": round(float(rng.uniform(-12, -7)), 1)}
            if i % 2 == 0:                 # a part: the drop only, 4-8 bars
                bars = int(rng.integers(4, 9))
                spec["sections"] = [["drop", bars]]
                spec["seconds"] = round(bars * 4 * 60.0 / bpm, 2)
            else:                          # a whole arrangement
                spec["seconds"] = float(rng.integers(30, 51))
            specs.append(spec)
    return specs


def synthetic_items(per_style: int = 8, jobs: int = 2) -> list[dict]:
    """[{"path", "family", "style", "name", "kind": "synthetic"}] rendered (cached)."""
    specs = synthetic_specs(per_style)
    out, tracks = render_specs(specs, jobs=jobs)
    return [{"path": str(out / t["file"]), "family": STYLES[s["style"]][0], "style": s["style"],
             "name": s["name"], "kind": "synthetic"} for s, t in zip(specs, tracks)]


def grid_items(grid: str = "visible") -> list[dict]:
    """A built-in grid of the generator (its defects included), labelled by style."""
    out, tracks = render_grid(grid)
    return [{"path": str(out / t["file"]), "family": STYLES[t["style"]][0], "style": t["style"],
             "name": t["name"], "kind": "synthetic"} for t in tracks]


def real_family(genre_truth: str) -> str | None:
    return REAL_FAMILY.get((genre_truth or "").strip().lower())


def real_items() -> list[dict]:
    """Every original real clip (not the converted copies, not bad input): family or None."""
    rows = [r for r in real_manifest() if r["file"].startswith("clips/")]
    wav = {r["clip_id"]: r["path"] for r in rows if r["variant"] == "converted-wav44k"}
    out = []
    for row in rows:
        if row["variant"] != "original":
            continue
        path = row["path"]
        if path.endswith(".ogg"):           # no Ogg decoder: its 44.1 kHz WAV copy
            path = wav.get(row["clip_id"], path)
        out.append({"path": path, "family": real_family(row["genre_truth"]),
                    "genre_truth": row["genre_truth"], "name": Path(row["file"]).stem,
                    "kind": "real"})
    return out


if __name__ == "__main__":
    items = synthetic_items(int(sys.argv[1]) if len(sys.argv) > 1 else 8)
    print(len(items), "synthetic items rendered;", len(real_items()), "real clips")
