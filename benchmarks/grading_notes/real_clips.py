"""Grade every real clip (read in place from ../shared/truth/real), check each
document with the validator and time the grading + narrative stage.

    python benchmarks/grading_notes/real_clips.py [--limit N]
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tests"))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--limit", type=int, default=0)
    args = parser.parse_args()
    from truth import real_manifest

    from trackgrade.errors import TrackgradeError
    from trackgrade.grading import build_analysis
    from trackgrade.grading.diagnosis import enhanced_diagnosis
    from tests.document_check import validate_document
    from trackgrade.pipeline import measure
    rows = real_manifest()[: args.limit or None]
    graded = invalid = refused = 0
    seconds = 0.0
    for row in rows:
        try:
            features = measure(Path(row["path"]).read_bytes(), file_name=row["file"])
        except TrackgradeError as exc:
            refused += 1
            print(f"{row['file'][:50]:50} refused: {exc.code}")
            continue
        start = time.perf_counter()
        a = build_analysis(features, file_name=row["file"], mastering_status="master")
        a = a.with_diagnosis(enhanced_diagnosis(a))
        seconds += time.perf_counter() - start
        problems = validate_document(a.to_dict())
        graded += 1
        invalid += bool(problems)
        print(f"{row['file'][:50]:50} {row.get('genre_truth', '')[:14]:14} {a.genre.detected:14} "
              f"{a.score:3} {a.grade.letter:2} {problems[:2] if problems else ''}")
    print(f"graded {graded}, invalid {invalid}, refused by the decoder {refused}; "
          f"grading + narrative {1000 * seconds / max(graded, 1):.1f} ms per track")


if __name__ == "__main__":
    main()
