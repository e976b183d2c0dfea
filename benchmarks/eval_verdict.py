"""The verdict on every real clip of ../shared/truth/real, before and after a change.

    python benchmarks/eval_verdict.py dump OUT.json      # run the product on every clip
    python benchmarks/eval_verdict.py table BEFORE.json AFTER.json   # markdown tables

`dump` grades every clip of the manifest (bad-input and edge cases too) as a
master with the template diagnosis, and keeps what a producer reads first:
score, grade, genre name, the first feedback line and the summary, tempo and
its confidence/alternatives, the section labels, `structure.judged`, the
pillars, or the refusal code. Run `dump` on the tree before the change (for
example a `git archive` of main) and on the branch, then `table`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
PILLARS = ("mix_quality", "frequency_balance", "danceability", "energy", "structure")


def _name(file: str) -> str:
    return file.split("/", 1)[-1].split("__", 1)[-1]


def verdict(path: Path, name: str) -> dict:
    from trackgrade.errors import TrackgradeError
    from trackgrade.pipeline import analyze
    try:
        a = analyze(path.read_bytes(), file_name=name, mastering_status="master",
                    enhanced=False, parallel=False)
    except TrackgradeError as exc:
        return {"error": exc.code}
    doc = a.to_dict()
    first = next((i for i in doc["feedback"] if i["type"] != "pass"), None)
    return {"score": doc["score"], "grade": doc["grade"]["letter"], "genre": doc["genre"]["name"],
            "first_feedback": f"{first['type']}/{first['category']}: {first['text']}" if first else "",
            "summary": doc["diagnosis"]["summary"], "feedback": [i["text"] for i in doc["feedback"]],
            "bpm": doc["tempo"]["bpm"], "tempo_confidence": doc["tempo"]["confidence"],
            "tempo_alternatives": [(t["bpm"], t["relation"]) for t in doc["tempo"]["alternatives"]],
            "sections": [(s["label"], s["energy"], s["start"], s["end"]) for s in doc["structure"]["sections"]],
            "judged": doc["structure"].get("judged"),
            "pillars": {p: doc["scores"][p] for p in PILLARS}, "duration": doc["duration_seconds"]}


def dump(out: Path) -> None:
    sys.path.insert(0, str(TESTS))
    from truth import real_manifest
    result = {}
    for row in real_manifest():
        result[row["file"]] = {"genre_truth": row["genre_truth"], "bpm_truth": row["bpm_truth"],
                               **verdict(Path(row["path"]), _name(row["file"]))}
        print(row["file"], result[row["file"]].get("score", result[row["file"]].get("error")), flush=True)
    out.write_text(json.dumps(result, indent=1))


def _cell(v: dict) -> str:
    if "error" in v:
        return f"refused: {v['error']}"
    return f"{v['score']} {v['grade']}, {v['genre']}"


def _line(v: dict) -> str:
    return "" if "error" in v else v["first_feedback"].replace("|", "/")[:110]


def table(before: dict, after: dict) -> None:
    print("| clip | genre (manifest) | before: score, genre | after: score, genre | after: first feedback line |")
    print("|---|---|---|---|---|")
    for file, a in after.items():
        b = before.get(file, {"error": "-"})
        print(f"| {_name(file)} | {a['genre_truth'][:22]} | {_cell(b)} | {_cell(a)} | {_line(a)} |")


if __name__ == "__main__":
    if sys.argv[1] == "dump":
        dump(Path(sys.argv[2]))
    else:
        table(json.loads(Path(sys.argv[2]).read_text()), json.loads(Path(sys.argv[3]).read_text()))
