"""Regenerate trackgrade/grading/genres.json: the genre profiles as data.

    python benchmarks/grading_notes/derive_genres.py [TRUTH_JSON]

Where every number comes from (see benchmarks/GENRES.md for the table):

* ideal_bands of the nine families the synthetic generator renders (house,
  techno, trance, drum_and_bass, dubstep, hardstyle, breakbeat, downtempo,
  ambient) and of the labels deep_house / tech_house: the mean
  `band_energy_pct` of the clean tracks of that style in the `visible` grid
  (../shared/truth/synth, truth measured on the decoded file with the same band
  edges as CONTRACT.md), plus the defect tracks whose defect leaves the
  spectrum alone (tempo_drift, clip_db, noise_db, mono, silence_gap_s).
  The house family averages house, deep_house and tech_house tracks.
* uk_garage and electro (not rendered by the generator) and the other label
  entries: a documented blend or tilt of measured profiles (BLENDS / LABELS);
  ambient is 0.9 synth ambient + 0.1 downtempo (ADJUST: the synthetic pads
  have no energy below 60 Hz, real ambient does).
* bpm ranges: the published genre tempo conventions (Beatport genre pages,
  Ishkur's Guide, Butler "Unlocking the Groove" 2006), kept wide enough to
  contain the generator's style range.
* loudness, crest and LRA targets: the synthetic clean tracks (crest = sample
  peak - RMS; LRA per Tech 3342) widened to published club/streaming practice
  (club masters -9..-6 LUFS integrated, heavier genres louder; pre-masters
  -23..-14 LUFS with >= 3 dB true-peak headroom).
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
BANDS = ("sub_bass", "bass", "low_mid", "mid", "upper_mid", "high", "air")
SPECTRUM_SAFE_DEFECTS = {"tempo_drift", "clip_db", "noise_db", "mono", "silence_gap_s"}

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
# families the generator does not render: weighted blends of measured ones
BLENDS = {
    "uk_garage": {"house": 0.5, "dubstep": 0.25, "breakbeat": 0.25},
    "electro": {"breakbeat": 0.5, "techno": 0.3, "trance": 0.2},
}
# measured families adjusted where the generator is more extreme than real music:
# its ambient pads have no energy below 60 Hz at all; real ambient carries drones there
ADJUST = {"ambient": {"ambient": 0.9, "downtempo": 0.1}}
# label layer: key, name, family, bpm_range, source of bands, tilt in dB per band
LABELS = [
    ("deep_house", "Deep House", "house", [115, 125], "deep_house", None),
    ("tech_house", "Tech House", "house", [120, 128], "tech_house", None),
    ("progressive_house", "Progressive House", "house", [122, 130], "house", [-1, 0, 1, 1, 1, 1, 1]),
    ("afro_house", "Afro House", "house", [118, 125], "house", [0, 0, 0, 1, 1, 1, 0]),
    ("melodic_techno", "Melodic Techno", "techno", [120, 128], "techno", [-1, 0, 2, 2, 1, 0, 0]),
    ("hard_techno", "Hard Techno", "techno", [140, 155], "techno", [1, 1, 0, 0, 1, 1, 1]),
    ("minimal_techno", "Minimal Techno", "techno", [122, 130], "techno", [0, 0, -1, -1, 0, 1, 1]),
    ("uplifting_trance", "Uplifting Trance", "trance", [136, 142], "trance", [0, 0, 0, 1, 1, 1, 1]),
    ("psytrance", "Psytrance", "trance", [138, 148], "trance", [2, 1, -1, -1, 0, 1, 1]),
    ("liquid_dnb", "Liquid Drum & Bass", "drum_and_bass", [170, 176], "drum_and_bass", [0, 0, 1, 1, 1, 0, 0]),
    ("neurofunk", "Neurofunk", "drum_and_bass", [170, 178], "drum_and_bass", [0, 1, 1, 1, 1, 1, 0]),
    ("jungle", "Jungle", "drum_and_bass", [160, 170], "drum_and_bass", [1, 0, 0, 0, 1, 1, 0]),
    ("riddim", "Riddim", "dubstep", [140, 150], "dubstep", [1, 0, -1, 1, 1, 0, 0]),
    ("rawstyle", "Rawstyle", "hardstyle", [150, 160], "hardstyle", [0, 1, 1, 1, 1, 0, 0]),
    ("big_beat", "Big Beat", "breakbeat", [120, 140], "breakbeat", [0, 0, 0, 1, 1, 1, 0]),
    ("two_step", "2-Step Garage", "uk_garage", [130, 138], "uk_garage", [0, 0, 0, 1, 1, 0, 0]),
    ("electro_house", "Electro House", "electro", [125, 132], "electro", [0, 1, 0, 0, 1, 1, 1]),
    ("trip_hop", "Trip-Hop", "downtempo", [70, 100], "downtempo", [0, 0, 1, 1, 0, -1, -1]),
    ("chillout", "Chillout", "downtempo", [80, 110], "downtempo", [-1, 0, 1, 1, 1, 0, 0]),
    ("drone", "Drone", "ambient", [50, 90], "ambient", [1, 1, 0, -1, -1, -1, 0]),
]


def rounded_pct(values: list[float]) -> dict:
    """Percentages rounded to 0.1 that sum to exactly 100.0 (the largest absorbs the rest)."""
    total = sum(values)
    pct = [round(100.0 * v / total, 1) for v in values]
    big = max(range(len(pct)), key=lambda i: pct[i])
    pct[big] = round(pct[big] + 100.0 - sum(pct), 1)
    return dict(zip(BANDS, pct))


def measured_styles(truth: dict) -> dict[str, list[float]]:
    groups = defaultdict(list)
    for entry in truth["tracks"]:
        if {d["type"] for d in entry["defects"]} - SPECTRUM_SAFE_DEFECTS:
            continue
        groups[entry["style"]].append([entry["band_energy_pct"][b] for b in BANDS])
    groups["house_family"] = groups["house"] + groups["deep_house"] + groups["tech_house"]
    return {k: [sum(col) / len(v) for col in zip(*v)] for k, v in groups.items()}


def build(truth: dict) -> dict:
    styles = measured_styles(truth)
    bands = {key: styles["house_family" if key == "house" else key]
             for key, *_ in FAMILIES if key not in BLENDS}
    for key, weights in {**BLENDS, **ADJUST}.items():
        bands[key] = [sum(w * bands[src][i] for src, w in weights.items()) for i in range(7)]
    bands["deep_house"], bands["tech_house"] = styles["deep_house"], styles["tech_house"]
    families = []
    for key, name, bpm, master, crest, lra, half, dance, structure in FAMILIES:
        families.append({
            "key": key, "name": name, "bpm_range": bpm, "ideal_bands": rounded_pct(bands[key]),
            "loudness_lufs": {"master": master, "pre-master": PRE_MASTER_LUFS},
            "crest_db": crest, "lra_lu": lra, "half_time": half, "danceable": dance,
            "structure": STRUCTURES[structure],
            "bands_source": ("synth visible grid, style mean" if key not in {**BLENDS, **ADJUST}
                             else "blend " + ", ".join(f"{w:g} {s}" for s, w in
                                                       {**BLENDS, **ADJUST}[key].items())),
        })
    labels = []
    for key, name, family, bpm, source, tilt in LABELS:
        base = bands[source]
        values = base if tilt is None else [v * 10 ** (t / 10) for v, t in zip(base, tilt)]
        labels.append({"key": key, "name": name, "family": family, "bpm_range": bpm,
                       "ideal_bands": rounded_pct(values),
                       "bands_source": ("synth visible grid, style mean" if tilt is None
                                        else f"{source} tilted by {tilt} dB per band")})
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


def main(argv: list[str]) -> None:
    if argv:
        truth = json.loads(Path(argv[0]).read_text())
    else:
        from truth import render_grid
        out, _ = render_grid("visible")
        truth = json.loads((out / "truth.json").read_text())
    target = ROOT / "trackgrade" / "grading" / "genres.json"
    data = build(truth)
    target.write_text(json.dumps(data, indent=1) + "\n")
    write_markdown(data)
    print(f"wrote {target}")


if __name__ == "__main__":
    main(sys.argv[1:])
