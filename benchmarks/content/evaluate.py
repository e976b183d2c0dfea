"""content.kind on sources the model never saw, and each real clip's verdict
before and after: writes benchmarks/results/content.md.

    python benchmarks/content/evaluate.py [--before REV] [--out FILE]

* Confusion matrices of `content.kind`, real clips and recorded-instrument
  renders apart, on the HELD-OUT sources of benchmarks/content/fit.py (whole
  sources left out: a drum kit, a GM program, a real collection), on all
  real clips (the ones in FIT marked), since there are few, and on the fresh
  sources (specs.fresh_specs: one-shots and loops no model is fitted on).
* The calibration table of `content.confidence` (bins of the confidence: how
  many, how many right), held-out real and rendered together and apart.
* Each labelled real clip's verdict before (trackgrade at REV, default
  `main`, run from a snapshot in a temporary folder) and after (this tree):
  kind, genre, score and grade, and the warnings and tips it gets.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path


HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402
import grooves  # noqa: E402
from fit import held_out  # noqa: E402

from trackgrade.grading.content import KINDS, decide, inputs, probabilities  # noqa: E402

VERDICT = r'''
import io, json, sys
import soundfile as sf
from trackgrade.engine.extract import extract
from trackgrade.engine.features import DecodedAudio
from trackgrade.engine.decode import decode
from trackgrade.pipeline import enhance, grade
out = []
for path in sys.argv[1:]:
    data = open(path, "rb").read()
    try:
        audio = decode(data, file_name=path.rsplit("/", 1)[-1])
    except Exception:
        x, sr = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
        audio = DecodedAudio(samples=x, sample_rate=sr, container="ogg", subtype="VORBIS")
    a = enhance(grade(extract(audio, parallel=False), file_name=path.rsplit("/", 1)[-1],
                      mastering_status="pre-master"))
    content = getattr(a, "content", None)
    out.append({"kind": content.kind if content else None,
                "kind_confidence": content.confidence if content else None,
                "genre": a.genre.name, "genre_confidence": a.genre.confidence,
                "score": a.score, "grade": f"{a.grade.letter} {a.grade.label}",
                "sections": [s.label for s in a.structure.sections],
                "advice": [f"{i.category}: {i.text}" for i in a.feedback if i.type != "pass"]})
print(json.dumps(out))
'''


def verdicts(paths: list[str], tree: Path) -> list[dict]:
    """The verdicts of trackgrade as it is in `tree`, in a fresh process."""
    env = {"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", VERDICT, *paths], capture_output=True, text=True,
                          env=env, cwd=str(tree), check=True)
    return json.loads(done.stdout)


def snapshot(rev: str, into: Path) -> Path:
    """trackgrade at git revision `rev`, extracted into `into`."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", rev, "trackgrade"],
                             capture_output=True, check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def predict(rows: list[dict], model: dict | None = None) -> list[tuple[str, str, float]]:
    """(truth, kind, confidence) of each row with the shipped model (or
    `model`) and the decision table."""
    out = []
    for r in rows:
        values = inputs(corpus.features_of(r))
        p = probabilities(values, model)
        best = decide(p, r["duration_s"], values)
        out.append((r["kind"], KINDS[best], float(p[best])))
    return out


def confusion(pred: list[tuple[str, str, float]]) -> str:
    counts = Counter((t, k) for t, k, _ in pred)
    kinds = [k for k in KINDS if any(t == k or g == k for t, g, _ in pred)]
    head = "| truth \\ read | " + " | ".join(kinds) + " | right |\n|---|" + "---|" * (len(kinds) + 1)
    lines = [head]
    for t in kinds:
        n = sum(counts[(t, k)] for k in KINDS)
        if not n:
            continue
        lines.append(f"| {t} | " + " | ".join(str(counts[(t, k)] or "") for k in kinds)
                     + f" | {counts[(t, t)]}/{n} |")
    right = sum(1 for t, k, _ in pred if t == k)
    lines.append(f"\n{right} of {len(pred)} right.")
    return "\n".join(lines)


def calibration(pred: list[tuple[str, str, float]]) -> str:
    bins = ((0.0, 0.3), (0.3, 0.5), (0.5, 0.6), (0.6, 0.8), (0.8, 0.9), (0.9, 1.01))
    lines = ["| confidence | items | right | share right |", "|---|---|---|---|"]
    for lo, hi in bins:
        inside = [(t, k) for t, k, c in pred if lo <= c < hi]
        right = sum(1 for t, k in inside if t == k)
        share = f"{right / len(inside):.2f}" if inside else "-"
        lines.append(f"| {lo:.1f}-{min(hi, 1.0):.1f} | {len(inside)} | {right} | {share} |")
    sure = [(t, k) for t, k, c in pred if c >= 0.6]
    right = sum(1 for t, k in sure if t == k)
    lines.append(f"\nAt 0.6 or more: {right} of {len(sure)} right"
                 + (f" ({right / len(sure):.2f})." if sure else "."))
    return "\n".join(lines)


def _advice(items: list[str]) -> str:
    if not items:
        return "none"
    return "<br>".join(i[:110].replace("|", "/") + ("…" if len(i) > 110 else "") for i in items)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="main")
    parser.add_argument("--out", default=str(ROOT / "benchmarks" / "results" / "content.md"))
    args = parser.parse_args()
    rendered, real = corpus.rendered(), corpus.real()
    held_rendered = [r for r in rendered if held_out(r["source"]) and not r.get("second")]
    held_second = [r for r in rendered if held_out(r["source"]) and r.get("second")]
    shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{args.before}:trackgrade/grading/content_model.json"],
                           capture_output=True, text=True, check=True).stdout
    groove_rows = grooves.groove_rows()
    groove_sets = (("every groove", groove_rows),
                   ("grooves of kits never fitted on", [r for r in groove_rows if not grooves.kit_fitted(r["kit"])]),
                   ("grooves of kits and styles never fitted on", [r for r in groove_rows if grooves.unseen(r)]),
                   ("drum-only twins of the grooves with parts", grooves.twin_rows()))
    groove_doc = []
    for label, rows in groove_sets:
        for name, model in ((args.before, json.loads(shown)), ("this tree", None)):
            pred = predict(rows, model)
            groove_doc += [f"### {label} ({len(rows)}), {name}", "", confusion(pred), "", calibration(pred), ""]
    held_real = [r for r in real if held_out(r["source"])]
    fresh = corpus.rendered(fresh=True)
    p_rendered, p_real_held, p_real_all = predict(held_rendered), predict(held_real), predict(real)
    p_fresh = predict(fresh)
    with tempfile.TemporaryDirectory() as tmp:
        before = verdicts([r["path"] for r in real], snapshot(args.before, Path(tmp)))
    after = verdicts([r["path"] for r in real], ROOT)
    doc = [
        "# Issue 26, part A: what the audio is (`content`) and parts judged as parts",
        "",
        "Reproduce: `python benchmarks/content/fit.py --write` (the model), then "
        "`python benchmarks/content/evaluate.py` (this file). Renders: "
        "benchmarks/content/specs.py through tests/truth_gen/recorded.py (FluidR3 GM, Hydrogen "
        "kits); real clips: ../shared/truth/real, labelled in benchmarks/content/real_kinds.csv. "
        "Sources (kit, GM program, real collection) are split by a hash of their name: one third "
        "held out, never fitted or calibrated on. No peer classifies content kinds (Essentia and "
        "librosa have no such reading), so the table has none; the plain baseline is in the text.",
        "",
        f"## Confusion matrix of content.kind: held-out rendered sources ({len(held_rendered)} renders)",
        "", confusion(p_rendered), "",
        f"## Confusion matrix of content.kind: held-out real sources ({len(held_real)} clips)",
        "", confusion(p_real_held), "",
        f"## Confusion matrix of content.kind: every labelled real clip ({len(real)}; "
        f"{len(real) - len(held_real)} of them from fitted sources)",
        "", confusion(p_real_all), "",
        f"## Confusion matrix of content.kind: fresh sources ({len(fresh)} renders of kits and GM programs "
        "no model is fitted or calibrated on, specs.fresh_specs)",
        "", confusion(p_fresh), "",
        f"## Confusion matrix of content.kind: held-out loud-drum grooves ({len(held_second)} renders of "
        "specs.drums_or_mix_specs, the second model's material, of held-out kits)",
        "", confusion(predict(held_second)), "",
        "## The grooves of tests/groove_specs.py (benchmarks/content/grooves.py; never fitted on), "
        f"{args.before} and this tree", "",
        "Truth: `mix` when the groove has a bass line or chords (a kit at 0 dB, ~10 dB over them), "
        "`drums` when it has none.", "", *groove_doc,
        "## Calibration of content.confidence (held-out sources)", "",
        "Rendered and real together:", "", calibration(p_rendered + p_real_held), "",
        "Rendered:", "", calibration(p_rendered), "", "Real:", "", calibration(p_real_held), "",
        "Fresh sources:", "", calibration(p_fresh), "",
        "Held-out loud-drum grooves (specs.drums_or_mix_specs):", "", calibration(predict(held_second)), "",
        f"## Each real clip's verdict before ({args.before}) and after", "",
        "| clip | kind (truth) | before: genre · grade · sections | before: warnings and tips "
        "| after: kind · genre · grade · sections | after: warnings and tips |",
        "|---|---|---|---|---|---|",
    ]
    for r, b, a in zip(real, before, after):
        doc.append(
            f"| {r['id']} | {r['kind']} | {b['genre']} {b['genre_confidence']:.2f} · {b['score']} "
            f"{b['grade']} · {' '.join(b['sections'])} | {_advice(b['advice'])} | "
            f"{a['kind']} {a['kind_confidence']:.2f} · {a['genre']} {a['genre_confidence']:.2f} · "
            f"{a['score']} {a['grade']} · {' '.join(a['sections'])} | {_advice(a['advice'])} |")
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text("\n".join(doc) + "\n", encoding="utf-8")
    print("wrote", args.out)


if __name__ == "__main__":
    main()
