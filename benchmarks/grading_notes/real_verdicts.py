"""The verdict on real music, as markdown tables for benchmarks/RESULTS.md:

1. defects: every real electronic clip of 8 s or more, clean and with each
   defect of tests/grading/real_audio.py (graded as a master);
2. non-electronic clips: electronic fit, genre confidence, verdict;
3. before/after: every real clip the product decodes, graded as a master,
   against `before_i10.json` (main before issue 10).

    python benchmarks/grading_notes/real_verdicts.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

PILLARS = ("mix_quality", "frequency_balance", "danceability", "energy", "structure")
SHORT = {"mix_quality": "mix", "frequency_balance": "freq", "danceability": "dance",
         "energy": "energy", "structure": "struct"}


def name(file: str) -> str:
    return file.split("/", 1)[-1].split("__", 1)[-1]


def defect_table(before: dict) -> list[str]:
    from grading.real_audio import DEFECTS, electronic_clips, features

    from trackgrade.grading import build_analysis
    lines = ["| clip | condition | headline | " + " | ".join(SHORT[p] for p in PILLARS)
             + " | warn naming it | headline before |", "|" + "---|" * (5 + len(PILLARS))]
    words = {"clipping": "clipped", "low_cut": "low cut", "polarity": "out of phase",
             "noise": "noise", "quiet": "quieter than"}
    for clip in electronic_clips():
        clean = None
        for defect in (None, *DEFECTS):
            a = build_analysis(features(clip, defect), file_name=name(clip), mastering_status="master")
            clean = clean or a
            delta = "" if defect is None else f" ({a.score - clean.score:+d})"
            cells = [f"{getattr(a.scores, p)}" + ("" if defect is None else
                                                  f" ({getattr(a.scores, p) - getattr(clean.scores, p):+d})")
                     for p in PILLARS]
            named = ("-" if defect is None else
                     "yes" if any(words[defect] in i.text.lower() for i in a.feedback if i.type == "warn")
                     else "NO")
            old = before.get("defects", {}).get(clip, {}).get(defect or "clean", {}).get("hit_potential", "")
            lines.append(f"| {name(clip)} | {defect or 'clean'} | {a.score}{delta} | "
                         + " | ".join(cells) + f" | {named} | {old} |")
    return lines


def acoustic_table(before: dict) -> list[str]:
    from grading.real_audio import features, genre_truth, non_electronic_clips

    from trackgrade.grading import build_analysis
    lines = ["| clip | genre (manifest) | electronic fit | says so | nearest family | confidence "
             "| verdict | danceability | before: genre, confidence, verdict |", "|" + "---|" * 9]
    for clip in non_electronic_clips():
        a = build_analysis(features(clip), file_name=name(clip), mastering_status="master")
        said = any(i.category == "genre" and i.type == "warn" for i in a.feedback)
        b = before.get("non_electronic", {}).get(clip, {})
        old = f"{b.get('genre')}, {b.get('confidence')}, {b.get('score')} {b.get('grade')}" if b else "-"
        lines.append(f"| {name(clip)} | {genre_truth(clip)[:24]} | {a.extras['electronic_fit']:.2f} | "
                     f"{'yes' if said else 'no'} | {a.genre.detected} | {a.genre.confidence:.2f} | "
                     f"{a.score} {a.grade.letter} | {a.scores.danceability} | {old} |")
    return lines


def before_after_table(before: dict) -> list[str]:
    from truth import real_manifest

    from trackgrade.errors import TrackgradeError
    from trackgrade.pipeline import analyze
    lines = ["| clip | genre (manifest) | before: score, genre | after: score, genre (fit) "
             "| after: mix, freq, dance, energy, struct |", "|" + "---|" * 5]
    for row in real_manifest():
        if row["category"] == "edge-case":
            continue
        b = before["clips"].get(row["file"], {})
        old = f"{b['score']} {b['grade']}, {b['genre']}" if "score" in b else b.get("error", "-")
        try:
            a = analyze(Path(row["path"]).read_bytes(), file_name=name(row["file"]),
                        mastering_status="master", enhanced=False)
        except TrackgradeError as exc:
            new, pillars = f"refused: {exc.code}", ""
        else:
            flag = "" if a.extras["electronic"] else ", not electronic"
            new = f"{a.score} {a.grade.letter}, {a.genre.detected} ({a.extras['electronic_fit']:.2f}{flag})"
            pillars = ", ".join(str(getattr(a.scores, p)) for p in PILLARS)
        lines.append(f"| {name(row['file'])} | {row['genre_truth'][:22]} | {old} | {new} | {pillars} |")
    return lines


def main() -> None:
    before = json.loads((Path(__file__).parent / "before_i10.json").read_text())
    for title, table in (("defects", defect_table), ("non-electronic", acoustic_table),
                         ("before/after", before_after_table)):
        print(f"\n### {title}\n")
        print("\n".join(table(before)))


if __name__ == "__main__":
    main()
