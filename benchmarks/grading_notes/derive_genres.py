"""Regenerate trackgrade/grading/genres.json: the genre profiles as data.

    python benchmarks/grading_notes/derive_genres.py

Where every number comes from (benchmarks/GENRES.md has the table and the
references; ../shared/research/spectral-balance.md the measurements):

* ideal_bands: one measured basis for every family, the long-term average
  spectrum of 12,345 popular-music tracks (Elowsson & Friberg 2017: the
  quadratic fit in dB per Hz on x = 1 + 60 log2(f / 30 Hz)) plus the offsets
  the 13 recent commercial tracks (electronic, pop, country, metal) show against
  it (+7.1 dB at 63-160 Hz, +1.1 at 200-500 Hz, +0.4 at 630 Hz-1.6 kHz, +0.9 at
  2-5 kHz, +4.4 at 6.3-12.5 kHz; interpolated on log frequency between the
  region centres). Below 94 Hz the sub region is the least certain number (the
  lower fit continues to 1 % sub, the upper one to 19 %): the basis takes the
  mean in dB of the two continuations. Integrated per Hz over the CONTRACT
  band edges (`BASE`).
* per-family adjustments (`ADJUST_DB`, at most 3 dB per band): the direction
  the sources give - more percussive / electronic music carries more energy
  below 150 Hz and above 5 kHz (Elowsson & Friberg; Pestana et al. 2013; Hove
  et al. 2019: the low end grew), music without a strong beat or bass
  instrument less (up to 10 dB less below 100 Hz per Elowsson & Friberg).
  The labels are their family tilted by a few dB in the direction of the
  usual description of the subgenre (`LABELS`).
* band tolerances live in trackgrade/grading/limits.py (BAND_TOLERANCE_DB),
  from the between-track spread the same research measures.
* bpm ranges: the published genre tempo conventions (Beatport genre pages,
  Ishkur's Guide, Butler "Unlocking the Groove" 2006).
* loudness, crest and LRA targets: published club/streaming practice (club
  masters -10..-6 LUFS integrated, heavier genres louder; pre-masters
  -23..-14 LUFS with >= 3 dB true-peak headroom; PLR/crest 6-12 dB, LRA 3-8 LU
  for mastered EDM; ambient and downtempo wider).

The synthetic grid is not a source of any ideal: it only tests the mechanics.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
BANDS = ("sub_bass", "bass", "low_mid", "mid", "upper_mid", "high", "air")
EDGES_HZ = (20, 60, 250, 500, 2000, 4000, 8000, 20000)

FAMILIES = [
    # key, name, bpm_range, master LUFS, crest dB, LRA LU, half_time, danceable, structure
    ("house", "House", [115, 130], [-10.0, -6.5], [6.0, 13.0], [2.0, 8.0], False, True, "club"),
    ("techno", "Techno", [124, 150], [-9.5, -6.0], [6.0, 12.0], [2.0, 7.0], False, True, "club"),
    ("trance", "Trance", [128, 150], [-9.5, -6.0], [6.5, 12.0], [3.0, 9.0], False, True, "trance"),
    ("drum_and_bass", "Drum & Bass", [160, 180], [-8.5, -5.0], [6.0, 11.0], [2.0, 7.0], False, True, "club"),
    ("dubstep", "Dubstep", [136, 150], [-8.0, -4.5], [5.5, 10.0], [2.0, 6.0], True, True, "dubstep"),
    ("hardstyle", "Hardstyle", [145, 165], [-7.0, -3.5], [5.5, 10.0], [2.0, 6.0], False, True, "club"),
    ("breakbeat", "Breakbeat", [120, 140], [-10.0, -6.5], [7.0, 13.0], [2.0, 8.0], False, True, "breaks"),
    ("uk_garage", "UK Garage", [128, 140], [-9.5, -6.5], [6.5, 12.0], [2.0, 7.0], False, True, "club"),
    ("electro", "Electro", [120, 135], [-10.0, -6.5], [6.5, 12.0], [2.0, 7.0], False, True, "breaks"),
    ("downtempo", "Downtempo", [70, 110], [-14.0, -9.0], [8.0, 16.0], [4.0, 12.0], False, True, "chill"),
    ("ambient", "Ambient", [50, 100], [-18.0, -12.0], [10.0, 20.0], [4.0, 15.0], False, False, "ambient"),
]
PRE_MASTER_LUFS = [-23.0, -14.0]
STRUCTURES = {
    "club": ["intro", "buildup", "drop", "breakdown", "buildup", "drop", "outro"],
    "trance": ["intro", "buildup", "drop", "breakdown", "buildup", "drop", "outro"],
    "dubstep": ["intro", "buildup", "drop", "breakdown", "buildup", "drop", "outro"],
    "breaks": ["intro", "drop", "breakdown", "buildup", "drop", "outro"],
    "chill": ["intro", "drop", "breakdown", "drop", "outro"],
    "ambient": ["intro", "buildup", "drop", "breakdown", "drop", "outro"],
}
# dB per band (sub, bass, low_mid, mid, upper_mid, high, air) against BASE, and why
ADJUST_DB = {
    "house": ([0, 0, 0, 0, 0, 0, 0], "the basis (recent electronic/pop masters)"),
    "techno": ([1, 1, -1, -1, 0, 1, 1], "harder kick, drier mids, more hats: more percussive"),
    "trance": ([-1, 0, 1, 1, 1, 0, 0], "pads and leads: fuller mids, a little less sub"),
    "drum_and_bass": ([2, 0, -1, -1, 0, 1, 1], "sub bass and bright breaks: both ends up"),
    "dubstep": ([3, 1, -1, -1, 0, 0, 0], "sub-heavy, half-time"),
    "hardstyle": ([1, 1, -1, 0, 1, 1, 0], "distorted kick: low end and upper mids up"),
    "breakbeat": ([-1, 0, 0, 0, 1, 1, 1], "sampled breaks: cymbals and snare up, less sub"),
    "uk_garage": ([2, 0, -1, 0, 0, 1, 0], "sub bass and shuffled hats"),
    "electro": ([0, 0, -1, 0, 1, 1, 1], "808s and bright synths"),
    "downtempo": ([-2, -1, 1, 1, 0, -1, -1], "less percussive: toward the all-genre mean"),
    "ambient": ([-3, -3, 2, 2, 0, -1, -1], "no strong beat or bass instrument (up to 10 dB less "
                "below 100 Hz per Elowsson & Friberg; 3 dB here, the tolerance covers more)"),
}
# label layer: key, name, family, bpm_range, tilt in dB per band against the family
LABELS = [
    ("deep_house", "Deep House", "house", [115, 125], [0, 0, 1, 1, 0, -1, -1]),
    ("tech_house", "Tech House", "house", [120, 128], [1, 1, -1, -1, 0, 1, 1]),
    ("progressive_house", "Progressive House", "house", [122, 130], [-1, 0, 1, 1, 1, 1, 1]),
    ("afro_house", "Afro House", "house", [118, 125], [0, 0, 0, 1, 1, 1, 0]),
    ("melodic_techno", "Melodic Techno", "techno", [120, 128], [-1, 0, 2, 2, 1, 0, 0]),
    ("hard_techno", "Hard Techno", "techno", [140, 155], [1, 1, 0, 0, 1, 1, 1]),
    ("minimal_techno", "Minimal Techno", "techno", [122, 130], [0, 0, -1, -1, 0, 1, 1]),
    ("uplifting_trance", "Uplifting Trance", "trance", [136, 142], [0, 0, 0, 1, 1, 1, 1]),
    ("psytrance", "Psytrance", "trance", [138, 148], [2, 1, -1, -1, 0, 1, 1]),
    ("liquid_dnb", "Liquid Drum & Bass", "drum_and_bass", [170, 176], [0, 0, 1, 1, 1, 0, 0]),
    ("neurofunk", "Neurofunk", "drum_and_bass", [170, 178], [0, 1, 1, 1, 1, 1, 0]),
    ("jungle", "Jungle", "drum_and_bass", [160, 170], [1, 0, 0, 0, 1, 1, 0]),
    ("riddim", "Riddim", "dubstep", [140, 150], [1, 0, -1, 1, 1, 0, 0]),
    ("rawstyle", "Rawstyle", "hardstyle", [150, 160], [0, 1, 1, 1, 1, 0, 0]),
    ("big_beat", "Big Beat", "breakbeat", [120, 140], [0, 0, 0, 1, 1, 1, 0]),
    ("two_step", "2-Step Garage", "uk_garage", [130, 138], [0, 0, 0, 1, 1, 0, 0]),
    ("electro_house", "Electro House", "electro", [125, 132], [0, 1, 0, 0, 1, 1, 1]),
    ("trip_hop", "Trip-Hop", "downtempo", [70, 100], [0, 0, 1, 1, 0, -1, -1]),
    ("chillout", "Chillout", "downtempo", [80, 110], [-1, 0, 1, 1, 1, 0, 0]),
    ("drone", "Drone", "ambient", [50, 90], [1, 1, 0, -1, -1, -1, 0]),
]
# 13 recent tracks against the Elowsson mean: (from Hz, to Hz, dB)
RECENT_OFFSETS = ((63, 160, 7.1), (200, 500, 1.1), (630, 1600, 0.4), (2000, 5000, 0.9),
                  (6300, 12500, 4.4))


def elowsson_db(f: np.ndarray) -> np.ndarray:
    """Elowsson & Friberg's mean LTAS (dB per Hz), the sub region the mean of both fits."""
    x = 1 + 60 * np.log2(f / 30.0)
    lower = -0.000907 * x ** 2 + 0.256 * x - 32.942
    upper = -0.000183 * x ** 2 + 0.0213 * x - 16.735
    return np.where(x < 100, 0.5 * (lower + upper), upper)


def recent_offset_db(f: np.ndarray) -> np.ndarray:
    centres = [np.log2(np.sqrt(a * b)) for a, b, _ in RECENT_OFFSETS]
    return np.interp(np.log2(f), centres, [v for *_, v in RECENT_OFFSETS])


def base_shares() -> np.ndarray:
    """Percent of 20 Hz-20 kHz power per band of the measured basis."""
    f = np.geomspace(20, 20000, 8000)
    p = 10 ** ((elowsson_db(f) + recent_offset_db(f)) / 10)
    out = [np.trapezoid(p[(f >= a) & (f <= b)], f[(f >= a) & (f <= b)])
           for a, b in zip(EDGES_HZ[:-1], EDGES_HZ[1:])]
    return 100 * np.array(out) / np.sum(out)


def tilted(shares, tilt_db) -> list[float]:
    return [v * 10 ** (t / 10) for v, t in zip(shares, tilt_db)]


def rounded_pct(values: list[float]) -> dict:
    """Percentages rounded to 0.1 that sum to exactly 100.0 (the largest absorbs the rest)."""
    values = [float(v) for v in values]
    total = sum(values)
    pct = [round(100.0 * v / total, 1) for v in values]
    big = max(range(len(pct)), key=lambda i: pct[i])
    pct[big] = round(pct[big] + 100.0 - sum(pct), 1)
    return dict(zip(BANDS, pct))


def build() -> dict:
    base = base_shares()
    families, bands = [], {}
    for key, name, bpm, master, crest, lra, half, dance, structure in FAMILIES:
        tilt, why = ADJUST_DB[key]
        bands[key] = tilted(base, tilt)
        families.append({
            "key": key, "name": name, "bpm_range": bpm, "ideal_bands": rounded_pct(bands[key]),
            "loudness_lufs": {"master": master, "pre-master": PRE_MASTER_LUFS},
            "crest_db": crest, "lra_lu": lra, "half_time": half, "danceable": dance,
            "structure": STRUCTURES[structure],
            "bands_source": f"research basis tilted by {tilt} dB per band: {why}",
        })
    labels = []
    for key, name, family, bpm, tilt in LABELS:
        labels.append({"key": key, "name": name, "family": family, "bpm_range": bpm,
                       "ideal_bands": rounded_pct(tilted(bands[family], tilt)),
                       "bands_source": f"{family} tilted by {tilt} dB per band"})
    return {"families": families, "labels": labels}


def markdown_tables(data: dict) -> str:
    """The family and label tables of benchmarks/GENRES.md."""
    def row(g: dict, extra: list[str]) -> str:
        b = g["ideal_bands"]
        cells = [f"`{g['key']}`", g["name"], *extra[:1], f"{g['bpm_range'][0]}-{g['bpm_range'][1]}",
                 *(f"{b[k]:.1f}" for k in BANDS), *extra[1:], g["bands_source"]]
        return "| " + " | ".join(cells) + " |"
    head = "| sub | bass | low_mid | mid | up_mid | high | air |"
    lines = ["| key | name | BPM " + head + " master LUFS | crest dB | LRA LU | bands from |",
             "|" + "---|" * 14]
    for g in data["families"]:
        lo, hi = g["loudness_lufs"]["master"]
        lines.append(row(g, ["", f"{lo:g} to {hi:g}", f"{g['crest_db'][0]:g}-{g['crest_db'][1]:g}",
                             f"{g['lra_lu'][0]:g}-{g['lra_lu'][1]:g}"])
                     .replace(" |  | ", " | ", 1))
    lines += ["", "## Label layer", "", "| key | name | family | BPM " + head + " bands from |",
              "|" + "---|" * 12]
    lines += [row(g, [f"`{g['family']}`"]) for g in data["labels"]]
    return "\n".join(lines)


def write_markdown(data: dict) -> None:
    md = ROOT / "benchmarks" / "GENRES.md"
    text = md.read_text()
    start, end = "<!-- tables: derive_genres.py -->", "<!-- /tables -->"
    if start in text and end in text:
        head, rest = text.split(start, 1)
        _, tail = rest.split(end, 1)
        md.write_text(head + start + "\n" + markdown_tables(data) + "\n" + end + tail)


def main() -> None:
    target = ROOT / "trackgrade" / "grading" / "genres.json"
    data = build()
    target.write_text(json.dumps(data, indent=1) + "\n")
    write_markdown(data)
    print("basis:", dict(zip(BANDS, np.round(base_shares(), 1))))
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
