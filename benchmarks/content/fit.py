"""Fit trackgrade/grading/content_model.json: the content-kind model.

    python benchmarks/content/fit.py [--write]

Sources (a drum kit, a GM program, a real collection) are split once, by a
hash of their name, into FIT (two thirds) and HELD-OUT (one third): whole
sources are left out, never single files. On FIT, a grouped 4-fold cross-
validation gives each item a probability from a model that never saw its
source; the temperature is the smallest that makes those probabilities
calibrated (at 0.6 or more, right at least CALIBRATED_AT of the time; then
the log loss decides). The shipped model is fitted on all of FIT with that
temperature; benchmarks/content/evaluate.py reports it on HELD-OUT.
Real clips weigh REAL_WEIGHT renders each (there are few of them).

The first model is fitted on specs.content_specs and the real clips; the
second (`drums_or_mix`, grading/content.py `split_drums_mix`) on their drum
loops and mixes plus specs.drums_or_mix_specs (grooves whose kit stands 0 to
+12 dB over the parts), the same FIT sources only.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import corpus  # noqa: E402

from trackgrade.grading.content import KINDS, MODEL_PATH, inputs, probabilities  # noqa: E402

REAL_WEIGHT = 3.0
L2 = 0.002
CALIBRATED_AT = 0.92          # a margin over the contract's 9 in 10
CONTRACT_AT = 0.9             # CONTRACT.md section 6: right 9 times in 10 at 0.6
HELD_OUT_SHARE = 1 / 3
# the temperatures tried (the last one when none is calibrated: the second
# pass's out-of-fold readings needed more than the first pass's 4.0)
TEMPERATURES = np.round(np.arange(0.5, 8.01, 0.1), 2)


def held_out(source: str) -> bool:
    """Whether a source is in the held-out third (a fixed hash of its name)."""
    return int(hashlib.sha256(source.encode()).hexdigest()[:8], 16) / 0xFFFFFFFF < HELD_OUT_SHARE


def table(rows: list[dict]) -> tuple[list[str], np.ndarray, np.ndarray, np.ndarray, list[str]]:
    names = None
    xs, ys, ws, groups = [], [], [], []
    for r in rows:
        values = inputs(corpus.features_of(r))
        names = names or list(values)
        xs.append([values[n] for n in names])
        ys.append(KINDS.index(r["kind"]))
        ws.append(REAL_WEIGHT if r.get("real") else 1.0)
        groups.append(r["source"])
    return names, np.array(xs), np.array(ys), np.array(ws), groups


def fit(x: np.ndarray, y: np.ndarray, w: np.ndarray, iters: int = 4000) -> dict:
    """Weighted multinomial logistic regression, L2, plain gradient descent."""
    mean, scale = x.mean(axis=0), x.std(axis=0) + 1e-9
    z = (x - mean) / scale
    k, d = len(KINDS), z.shape[1]
    W, b = np.zeros((k, d)), np.zeros(k)
    onehot = np.eye(k)[y]
    wn = w / w.sum()
    lr = 0.5
    for _ in range(iters):
        logits = z @ W.T + b
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        g = (p - onehot) * wn[:, None]
        W -= lr * (g.T @ z + L2 * W)
        b -= lr * g.sum(axis=0)
    return {"mean": mean.tolist(), "scale": scale.tolist(), "weights": W.tolist(),
            "bias": b.tolist(), "temperature": 1.0}


def predict(model: dict, names: list[str], x: np.ndarray) -> np.ndarray:
    m = {**model, "inputs": names}
    return np.array([probabilities(dict(zip(names, row)), m) for row in x])


def choose_temperature(p_logit_model: list[tuple[dict, np.ndarray]], names, y) -> float:
    """The temperature (from a grid) whose out-of-fold confidences are
    calibrated at 0.6 and have the lowest log loss among those."""
    best, best_loss = TEMPERATURES[-1], np.inf
    for t in TEMPERATURES:
        probs = np.zeros((len(y), len(KINDS)))
        for model, idx, x in p_logit_model:
            probs[idx] = predict({**model, "temperature": float(t)}, names, x)
        conf, kind = probs.max(axis=1), probs.argmax(axis=1)
        sure = conf >= 0.6
        ok = (kind[sure] == y[sure]).mean() if sure.any() else 1.0
        loss = -np.log(probs[np.arange(len(y)), y] + 1e-12).mean()
        if ok >= CALIBRATED_AT and loss < best_loss:
            best, best_loss = float(t), loss
    return round(best, 2)


def generator(row: dict) -> str:
    """Which generator made a row: a real clip, specs.py's corpus, its
    loud-drum grooves or the groove-style renders (specs.drums_or_mix_specs)."""
    if row.get("real"):
        return "real"
    return row["id"].split("_", 1)[0] if row["id"].startswith(("loud_", "gs_")) else "corpus"


def style(row: dict) -> str:
    """The groove style of a groove-style render (specs.groove_style_specs:
    `gs_STYLE_i`), else ""."""
    return row["id"][3:].rsplit("_", 1)[0] if row["id"].startswith("gs_") else ""


def fit_drums_or_mix(train: list[dict], names: list[str]) -> dict:
    """grading/content.py's second model (mix or drums, on the first model's
    inputs `names`) on the fitted sources' drum loops and mixes. Its
    temperature is calibrated like the first's, on readings of models that
    never saw the item: out of fold by source (4 folds) and, harder, out of
    generator (fitted without the item's generator: a drum loop of specs.py
    read by a model that never heard a groove of tests/groove_specs.py's kind,
    and the other way round) and out of style (a groove-style render read by
    a model fitted without its style's). Pooled, those readings must be right
    CALIBRATED_AT of the time at 0.6 or more, and each generator's left out
    alone CONTRACT_AT: pooled, the easy generators hid that a model which
    never heard a generator's material is sure and wrong of it (the groove-
    style renders read out of generator: 25 of 30 at the pooled temperature,
    2.2), as the groove set's styles never rendered for fitting were read."""
    rows = [r for r in train if r["kind"] in ("mix", "drums")]
    x = np.array([[inputs(corpus.features_of(r))[n] for n in names] for r in rows])
    y = np.array([0 if r["kind"] == "mix" else 1 for r in rows])     # KINDS order: mix, drums
    w = np.array([REAL_WEIGHT if r.get("real") else 1.0 for r in rows])
    folds = np.array([int(hashlib.sha256(r["source"].encode()).hexdigest()[8:12], 16) % 4 for r in rows])
    gens = np.array([generator(r) for r in rows])

    def two_kinds(keep: np.ndarray) -> dict:
        m = fit(x[keep], y[keep], w[keep])
        W, b = np.asarray(m["weights"]), np.asarray(m["bias"])
        return {"mean": m["mean"], "scale": m["scale"], "weight": (W[0] - W[1]).tolist(),
                "bias": float(b[0] - b[1])}

    def mix_prob(m: dict, xx: np.ndarray, t: float) -> np.ndarray:
        z = (xx - np.asarray(m["mean"])) / np.asarray(m["scale"])
        return 1.0 / (1.0 + np.exp(-(z @ np.asarray(m["weight"]) + m["bias"]) / t))

    by_fold = [(two_kinds(folds != f), folds == f) for f in range(4) if (folds == f).any()]
    by_generator = [(two_kinds(gens != g), gens == g) for g in sorted(set(gens))]
    styles = np.array([style(r) for r in rows])
    by_style = [(two_kinds(styles != s), styles == s) for s in sorted(set(styles) - {""})]
    unseen = by_fold + by_generator + by_style
    gen_out = range(len(by_fold), len(by_fold) + len(by_generator))

    def right_when_sure(q: np.ndarray, truth: np.ndarray) -> float:
        sure = np.maximum(q, 1 - q) >= 0.6
        return ((q >= 0.5) == (truth == 0))[sure].mean() if sure.any() else 1.0

    best, best_loss = TEMPERATURES[-1], np.inf
    for t in TEMPERATURES:
        qs = [mix_prob(m, x[te], float(t)) for m, te in unseen]
        q = np.concatenate(qs)
        truth = np.concatenate([y[te] for _, te in unseen])
        ok = right_when_sure(q, truth)
        # each generator left out alone, too: material of a kind the model
        # never heard (the groove set's styles) at the contract's 9 in 10
        each = min(right_when_sure(qs[i], y[unseen[i][1]]) for i in gen_out)
        loss = -np.log(np.where(truth == 0, q, 1 - q) + 1e-12).mean()
        if ok >= CALIBRATED_AT and each >= CONTRACT_AT and loss < best_loss:
            best, best_loss = float(t), loss
    return {"inputs": list(names), **two_kinds(np.ones(len(y), bool)), "temperature": round(float(best), 2),
            "fitted_on": {"mix": int((y == 0).sum()), "drums": int((y == 1).sum())}}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--write", action="store_true", help="write content_model.json")
    args = parser.parse_args()
    rows = corpus.rendered() + [{**r, "real": True} for r in corpus.real()]
    both = [r for r in rows if not held_out(r["source"])]
    train = [r for r in both if not r.get("second")]       # the second model's rows: its own fit
    names, x, y, w, groups = table(train)
    sources = sorted(set(groups))
    fold_of = {s: int(hashlib.sha256(s.encode()).hexdigest()[8:12], 16) % 4 for s in sources}
    folds = np.array([fold_of[g] for g in groups])
    oof = []
    for f in range(4):
        tr, te = folds != f, folds == f
        if te.any():
            oof.append((fit(x[tr], y[tr], w[tr]), np.flatnonzero(te), x[te]))
    temperature = choose_temperature(oof, names, y)
    model = {"inputs": names, **fit(x, y, w), "temperature": temperature,
             "fitted_on": {"rendered": int(sum(1 for r in train if not r.get("real"))),
                           "real": int(sum(1 for r in train if r.get("real"))),
                           "sources": len(sources)},
             "drums_or_mix": fit_drums_or_mix(both, names)}
    print(f"{len(train)} fit items from {len(sources)} sources; temperature {temperature}; "
          f"drums or mix: temperature {model['drums_or_mix']['temperature']}")
    if args.write:
        MODEL_PATH.write_text(json.dumps(model, indent=1) + "\n")
        print("wrote", MODEL_PATH)


if __name__ == "__main__":
    main()
