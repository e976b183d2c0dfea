"""Band advice before and after (issue 26, the pillar's frame): every real clip
of 5 s or more (../shared/truth/real, read in place, the manifest's originals)
and the balanced real mix of tests/grading/test_defects_never_help.py through
real EQs (low shelves, mids dips, high-passes), graded by main's code (from
`git archive main` in a temporary folder) and by this tree, on the same
features (extracted once, by this tree's engine, in this process).

    python benchmarks/eval_band_advice.py            # the table for hearing.md
    python benchmarks/eval_band_advice.py --agreement  # advice against the pillar, this tree

Prints, per item: its kind, the frequency pillar, and the frequency advice
(warn/tip feedback) before and after; then how many items judged as mixes
changed their advice. With --agreement: every real mix of 5 s or more through
`AGREEMENT_EQS` too, this tree only, and the items whose advice disagrees with
the pillar (a pillar of 95 or more with EQ advice, one of 70 or less without).
"""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

WORKER = r"""
import json, pickle, sys
from trackgrade.grading import build_analysis
from trackgrade.grading.diagnosis import enhanced_diagnosis
out = {}
for name, f in pickle.load(open(sys.argv[1], "rb")).items():
    a = build_analysis(f, file_name=name.split("|")[0], mastering_status="master")
    a = a.with_diagnosis(enhanced_diagnosis(a))
    out[name] = {"kind": a.content.kind, "pillar": a.scores.frequency_balance,
                 "advice": [i.text for i in a.feedback if i.category == "frequency" and i.type != "pass"],
                 "pass": [i.text for i in a.feedback if i.category == "frequency" and i.type == "pass"],
                 "diagnosis": a.diagnosis.frequency}
json.dump(out, sys.stdout)
"""


def items() -> dict:
    """name|treatment -> Features, extracted by this tree's engine."""
    from trackgrade.engine.extract import extract
    from tests.grading.real_audio import _originals, load
    from tests.grading.test_band_frame import TREATMENTS
    from tests.grading.test_defects_never_help import BALANCED

    out = {}
    for row in _originals():
        if float(row["duration_s"] or 0) < 5.0:
            continue
        clip = row["file"]
        for treatment in (TREATMENTS if clip in BALANCED else ["clean"]):
            out[f"{clip.rsplit('/', 1)[-1]}|{treatment}"] = extract(TREATMENTS[treatment](load(clip)),
                                                                    parallel=False)
    return out


def agreement() -> None:
    """Every real mix of 5 s or more, clean and through `AGREEMENT_EQS`: does
    the advice agree with the pillar?"""
    from scipy.signal import butter, sosfilt

    from trackgrade.engine.extract import extract
    from trackgrade.grading import build_analysis
    from tests.grading.real_audio import _originals, _with, load, low_shelf, peaking

    def high_pass(audio, hz):
        sos = butter(4, hz, "highpass", fs=audio.sample_rate, output="sos")
        return _with(audio, sosfilt(sos, audio.samples.astype("float64"), axis=0))

    eqs = {"clean": lambda a: a, "shelf+12": lambda a: low_shelf(a, 12.0),
           "shelf+6": lambda a: low_shelf(a, 6.0), "shelf-6": lambda a: low_shelf(a, -6.0),
           "mids-6": lambda a: peaking(a, -6.0), "mids+6": lambda a: peaking(a, 6.0),
           "highs-6": lambda a: peaking(a, -6.0, 4000.0, 16000.0),
           "hp100": lambda a: high_pass(a, 100.0)}
    n = bad = 0
    for row in _originals():
        if float(row["duration_s"] or 0) < 5.0:
            continue
        def grade(audio):
            return build_analysis(extract(audio, parallel=False), file_name=row["file"],
                                  mastering_status="master")

        if grade(load(row["file"])).content.kind != "mix":
            continue
        for name, eq in eqs.items():
            a = grade(eq(load(row["file"])))
            if a.content.kind != "mix":
                continue
            n += 1
            told = [i for i in a.feedback if i.category == "frequency" and i.type != "pass"]
            pillar = a.scores.frequency_balance
            if (pillar >= 95 and told) or (pillar <= 70 and not told):
                bad += 1
                print(f"disagrees: {row['file']} {name} pillar {pillar}: {[i.text for i in told]}")
    print(f"{n} items judged as mixes, {bad} whose advice disagrees with the pillar")


def graded(tree: Path, features: Path) -> dict:
    env = dict(os.environ, PYTHONPATH=str(tree))
    run = subprocess.run([sys.executable, "-c", WORKER, str(features)], env=env, cwd=tree,
                         capture_output=True, text=True, check=True)
    return json.loads(run.stdout)


def short(texts: list[str]) -> str:
    """"Sub-bass (20-60 Hz) +11.5 dB: cut 7" for each item ("Low cut" for the low-cut warning)."""
    def one(t: str) -> str:
        if t.startswith("Low cut"):
            return "Low cut"
        size = t.split("about ")[1].split(" dB")[0] if "about " in t else ""
        return t.split(" against ")[0] + (f": cut {size}" if "cut about" in t else f": boost {size}")
    return " / ".join(one(t) for t in texts) or "(no EQ advice)"


def main() -> None:
    if "--agreement" in sys.argv:
        return agreement()
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "archive", "main", "trackgrade"], cwd=ROOT, capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        features = Path(tmp) / "features.pkl"
        features.write_bytes(pickle.dumps(items()))
        before, after = graded(Path(tmp), features), graded(ROOT, features)
    count = {}                      # (clean?, mix?) -> [items, advice changed, EQ named changed]
    print("| item | kind | pillar | main's advice | this branch's advice |\n|---|---|---|---|---|")
    for name in sorted(before, key=lambda n: (not n.endswith("|clean"), n)):
        b, a = before[name], after[name]
        row = count.setdefault((name.endswith("|clean"), a["kind"] == "mix"), [0, 0, 0])
        row[0] += 1
        row[1] += b["advice"] != a["advice"]
        row[2] += short(b["advice"]).split(" / ") != short(a["advice"]).split(" / ")
        print(f"| {name} | {a['kind']} | {a['pillar']} | {short(b['advice'])} | {short(a['advice'])} |")
    for (clean, mix), (n, changed, named) in sorted(count.items(), reverse=True):
        print(f"{'real clips' if clean else 'balanced mix, treated'}, {'mix' if mix else 'other kinds'}: "
              f"{n} items, advice text changed on {changed}, bands or sizes advised changed on {named}")
    if "--full" in sys.argv:
        print(json.dumps({"main": before, "branch": after}, indent=1))


if __name__ == "__main__":
    main()
