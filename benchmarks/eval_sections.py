"""Sections a producer recognises: label agreement on full-length synthetic
tracks with known sections, and the section checks on the real full-length
clips (no truth: runs of identical labels, an outro louder than the rest).

    python benchmarks/eval_sections.py

Synthetic: benchmarks/section_specs.py (8 styles, 120-150 s, the shared
generator's section templates; rendered once and cached). Agreement is the
share of 0.1 s frames whose label matches the truth's. Real: every clip of
../shared/truth/real of 60 s or more (read in place; soundfile for the Ogg
files the product refuses), through the engine's rhythm and structure.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from eval_rhythm import label_acc as agreement  # noqa: E402  (0.1 s frames whose label matches)
from section_specs import SPECS  # noqa: E402
from truth import REAL, render_specs  # noqa: E402

from trackgrade.engine.frames import mono_mix, short_stft  # noqa: E402
from trackgrade.engine.rhythm import measure_rhythm  # noqa: E402
from trackgrade.engine.structure import measure_structure  # noqa: E402


def sections_of(path: Path):
    x, sr = sf.read(str(path), dtype="float32", always_2d=True)
    mono, dur = mono_mix(x), x.shape[0] / sr
    spec = short_stft(mono, sr)
    rh = measure_rhythm(spec, dur)
    st = measure_structure(spec, dur, beat_times=rh.beat_times, bpm=rh.bpm)
    return [(s.start, s.end, s.label, s.energy) for s in st.sections], dur


def runs(secs) -> int:
    return sum(a[2] == b[2] for a, b in zip(secs, secs[1:]))


def loud_outro(secs) -> bool:
    return len(secs) > 1 and secs[-1][2] == "outro" and secs[-1][3] >= max(s[3] for s in secs)


def short(secs) -> str:
    return " ".join(f"{s[2][:2]}{s[3]}" for s in secs)


def main() -> None:
    out, tracks = render_specs(SPECS)
    print("| track | truth | sections | agreement | identical neighbours | loud outro |")
    print("|---|---|---|---|---|---|")
    scores = []
    for t in tracks:
        secs, dur = sections_of(out / t["file"])
        ref = [(s["start"], s["end"], s["label"], 0) for s in t["sections"]]
        a = agreement(secs, ref, dur)
        scores.append(a)
        print(f"| {t['name']} | {' '.join(s[2][:2] for s in ref)} | {short(secs)} | {a:.2f} | "
              f"{runs(secs)} | {'yes' if loud_outro(secs) else 'no'} |")
    print(f"\nsynthetic full-length: n={len(scores)}, mean label agreement {np.mean(scores):.3f}\n")
    with open(REAL / "manifest.csv", newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if float(r["duration_s"] or 0) >= 60
                and r["file"].startswith("clips/")]
    print("| real clip | s | sections | identical neighbours | loud outro |")
    print("|---|---|---|---|---|")
    for r in rows:
        secs, dur = sections_of(REAL / r["file"])
        print(f"| {Path(r['file']).name} | {dur:.0f} | {short(secs)} | {runs(secs)} | "
              f"{'yes' if loud_outro(secs) else 'no'} |")


if __name__ == "__main__":
    main()
