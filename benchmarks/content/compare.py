"""The content model at a git revision against this tree's, on the same
measurements (benchmarks/content/corpus.py's cache): how many items each
reads right, how many parts it reads as a `mix` and how many mixes as a part,
on the held-out sources, the real clips and the fresh sources no model is
fitted on (specs.fresh_specs: one-shots and loops of kits and GM programs
the corpus never uses) and the grooves of tests/groove_specs.py (grooves.py).

    python benchmarks/content/compare.py [--before main] [--before-margin 0.1] [--cv]

`--before-margin` is the revision's MIX_MARGIN (the first pass's was 0.1).
`--cv`: on the fitted sources instead, a 4-fold cross-validation by source
(fit.py's folds, each item read by a model that never saw its source, the
plain argmax) with every input and with the revision's inputs only: how many
pitched parts read right and how many read as a mix.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402
import fit  # noqa: E402
import grooves  # noqa: E402
from fit import held_out  # noqa: E402

from trackgrade.grading import content  # noqa: E402


def read(model: dict, margin: float, row: dict) -> tuple[int, float]:
    """(the kind's index, its probability) under `model` and `margin`; the
    one-event rule only for a model that reads its inputs."""
    values = content.inputs(corpus.features_of(row))
    p = content.probabilities(values, model)
    best = content.decide(p, row["duration_s"], values if "ring_share" in model["inputs"] else None, margin)
    return best, float(p[best])


def summary(model: dict, margin: float, rows: list[dict]) -> str:
    kinds = content.KINDS
    table = np.zeros((len(kinds), len(kinds)), int)
    sure = []
    for r in rows:
        k, conf = read(model, margin, r)
        t = kinds.index(r["kind"])
        table[t, k] += 1
        if conf >= 0.6:
            sure.append(k == t)
    per = ", ".join(f"{kinds[i]} {table[i, i]}/{table[i].sum()}" for i in range(len(kinds)) if table[i].sum())
    return (f"{np.trace(table)}/{table.sum()} | {table[1:, 0].sum()} | {table[0, 1:].sum()} | "
            f"{sum(sure)}/{len(sure)} | {per}")


PITCHED = ("bass", "harmony", "lead", "texture")


def cross_validated(rows: list[dict], names: list[str] | None) -> str:
    """Pitched parts right and read as a mix, out of fold (`names`: the inputs kept)."""
    all_names, x, y, w, groups = fit.table(rows)
    keep = [i for i, n in enumerate(all_names) if names is None or n in names]
    x = x[:, keep]
    kept = [all_names[i] for i in keep]
    folds = np.array([int(hashlib.sha256(g.encode()).hexdigest()[8:12], 16) % 4 for g in groups])
    read = np.zeros(len(y), int)
    for f in range(4):
        tr, te = folds != f, folds == f
        if te.any():
            model = {**fit.fit(x[tr], y[tr], w[tr]), "temperature": 1.0}
            read[te] = fit.predict(model, kept, x[te]).argmax(axis=1)
    pitched = np.isin(y, [content.KINDS.index(k) for k in PITCHED])
    return (f"{int((read[pitched] == y[pitched]).sum())}/{int(pitched.sum())} right, "
            f"{int((read[pitched] == 0).sum())} read as a mix")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="main")
    parser.add_argument("--before-margin", type=float, default=0.1)
    parser.add_argument("--cv", action="store_true")
    args = parser.parse_args()
    shown = subprocess.run(["git", "-C", str(HERE), "show", f"{args.before}:trackgrade/grading/content_model.json"],
                           capture_output=True, text=True, check=True).stdout
    rows = corpus.rendered() + [{**r, "real": True} for r in corpus.real()]
    if args.cv:
        train = [r for r in rows if not held_out(r["source"])]
        print(f"pitched parts of the fitted sources, out of fold: every input: {cross_validated(train, None)}; "
              f"{args.before}'s inputs: {cross_validated(train, json.loads(shown)['inputs'])}")
        return
    sets = {"held-out renders": [r for r in rows if not r.get("real") and held_out(r["source"])],
            "held-out renders, pitched parts": [r for r in rows if not r.get("real") and held_out(r["source"])
                                                and r["kind"] in ("bass", "harmony", "lead", "texture")],
            "held-out real clips": [r for r in rows if r.get("real") and held_out(r["source"])],
            "every labelled real clip": [r for r in rows if r.get("real")],
            "fresh sources (specs.fresh_specs)": corpus.rendered(fresh=True),
            "grooves (tests/groove_specs.py, never fitted)": grooves.groove_rows(),
            "grooves of kits never fitted on": [r for r in grooves.groove_rows()
                                                if not grooves.kit_fitted(r["kit"])],
            "grooves of kits and styles never fitted on": [r for r in grooves.groove_rows()
                                                           if grooves.unseen(r)],
            "drum-only twins of the grooves with parts": grooves.twin_rows()}
    print("| model | set | right | part read as mix | mix read as a part | right at 0.6 or more | per kind |")
    print("|---|---|---|---|---|---|---|")
    for name, model, margin in ((args.before, json.loads(shown), args.before_margin),
                                ("this tree", content.model(), content.MIX_MARGIN)):
        for label, items in sets.items():
            print(f"| {name} | {label} ({len(items)}) | {summary(model, margin, items)} |")


if __name__ == "__main__":
    main()
