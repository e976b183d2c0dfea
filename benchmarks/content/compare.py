"""The content model at a git revision against this tree's, on the same
measurements (benchmarks/content/corpus.py's cache): how many items each
reads right, how many parts it reads as a `mix` and how many mixes as a part.

    python benchmarks/content/compare.py [--before main] [--before-margin 0.1]

`--before-margin` is the revision's MIX_MARGIN (the first pass's was 0.1).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402
from fit import held_out  # noqa: E402

from trackgrade.grading import content  # noqa: E402


def read(model: dict, margin: float, row: dict) -> tuple[int, float]:
    """(the kind's index, its probability) under `model` and `margin`."""
    p = content.probabilities(content.inputs(corpus.features_of(row)), model)
    best = int(np.argmax(p))
    if best and (p[best] - p[0] < margin
                 or row["duration_s"] >= content.PART_MAX_S and p[best] < content.LONG_PART_MIN):
        best = 0
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--before", default="main")
    parser.add_argument("--before-margin", type=float, default=0.1)
    args = parser.parse_args()
    shown = subprocess.run(["git", "-C", str(HERE), "show", f"{args.before}:trackgrade/grading/content_model.json"],
                           capture_output=True, text=True, check=True).stdout
    rows = corpus.rendered() + [{**r, "real": True} for r in corpus.real()]
    sets = {"held-out renders": [r for r in rows if not r.get("real") and held_out(r["source"])],
            "held-out renders, pitched parts": [r for r in rows if not r.get("real") and held_out(r["source"])
                                                and r["kind"] in ("bass", "harmony", "lead", "texture")],
            "held-out real clips": [r for r in rows if r.get("real") and held_out(r["source"])],
            "every labelled real clip": [r for r in rows if r.get("real")]}
    print("| model | set | right | part read as mix | mix read as a part | right at 0.6 or more | per kind |")
    print("|---|---|---|---|---|---|---|")
    for name, model, margin in ((args.before, json.loads(shown), args.before_margin),
                                ("this tree", content.model(), content.MIX_MARGIN)):
        for label, items in sets.items():
            print(f"| {name} | {label} ({len(items)}) | {summary(model, margin, items)} |")


if __name__ == "__main__":
    main()
