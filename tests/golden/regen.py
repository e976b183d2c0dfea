"""Regenerate the golden canned analyses (test mode) in this directory.

    python -m tests.golden.regen        (from the repository root)

For each (file_name, mastering_status) in CASES it writes
`canned_<n>.json` = {"file_name", "mastering_status", "analysis": the pending
document (`Analysis.to_dict()`), "extras": `Analysis.extras`, "enhanced": the
`canned_diagnosis` fields (the enhanced narrative, still saying it is canned)}. tests/golden/test_golden.py compares fresh
canned analyses with these files (exact key sets, exact values). Regenerate
only after an intended change to grading or test mode, and review the diff.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
CASES = (
    ("kick.wav", "pre-master"),
    ("kick.wav", "master"),
    ("my track (final v3).mp3", "master"),
    ("club_edit.flac", "pre-master"),
    ("sunrise.aiff", "master"),
    ("Ünïcødé ☃ mix.wav", "pre-master"),
)


def golden_case(file_name: str, mastering_status: str) -> dict:
    from trackgrade.testmode import canned_analysis, canned_diagnosis
    a = canned_analysis(file_name, mastering_status)
    return json.loads(json.dumps({
        "file_name": file_name, "mastering_status": mastering_status,
        "analysis": a.to_dict(), "extras": a.extras.to_dict(),
        "enhanced": asdict(canned_diagnosis(a)),
    }))


def golden_path(index: int) -> Path:
    return HERE / f"canned_{index}.json"


def main() -> None:
    for old in HERE.glob("canned_*.json"):
        old.unlink()
    for i, (name, status) in enumerate(CASES):
        golden_path(i).write_text(json.dumps(golden_case(name, status), indent=1, ensure_ascii=False)
                                  + "\n", encoding="utf-8")
        print(f"wrote {golden_path(i).name}: {name!r} {status}")


if __name__ == "__main__":
    main()
