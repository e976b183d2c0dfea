"""The recorded-instrument grooves of tests/groove_specs.py as a content-kind
set (issue 26's finding: drums ~10 dB over a bass line and chords read
`drums`): truth `mix` when the groove has a bass line or chords, else `drums`.

    python benchmarks/content/grooves.py        # prints the confusion table

The grooves are never fitted on (benchmarks/content/fit.py reads only
corpus.py's rows): they are scored as a fresh source. `kit_fitted` says
whether the groove's Hydrogen kit is a source the model was fitted on (a
drum loop or a mix of specs.py in the fitted two thirds of the sources); the
GM programs of its parts are among specs.py's. Measurements are cached like
corpus.py's (keyed by the file and the engine's content cues).
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT / "tests"))

import corpus  # noqa: E402


def groove_rows(per_style: int = 6) -> list[dict]:
    """One row per groove: corpus.py's measurement, its truth and its kit."""
    from groove_specs import groove_items, groove_specs

    specs = {s["name"]: s for s in groove_specs(per_style)}
    corpus.STORE.mkdir(parents=True, exist_ok=True)
    out = []
    for item in groove_items(per_style):
        spec = specs[item["name"]]
        data = Path(item["path"]).read_bytes()
        path = corpus.STORE / f"groove_{hashlib.sha256(data).hexdigest()[:16]}_{corpus._engine_digest()}.json"
        if not path.exists():
            path.write_text(json.dumps(corpus._measure(data, item["name"] + ".wav")))
        kit = spec["tracks"][0]["kit"]
        out.append({"id": item["name"], "style": item["style"], "kit": kit,
                    "kind": "mix" if len(spec["tracks"]) > 1 else "drums",
                    "source": f"kit:{kit}", **json.loads(path.read_text())})
    return out


def twin_rows(per_style: int = 6) -> list[dict]:
    """The drum-only twin of every groove with parts (the same hits, the parts
    taken out; truth `drums`), rendered and measured like groove_rows."""
    from groove_specs import groove_specs

    from tests.truth import render_recorded

    twins = [{**s, "name": s["name"] + "_drums_only", "tracks": s["tracks"][:1]}
             for s in groove_specs(per_style) if len(s["tracks"]) > 1]
    out = []
    for spec, wav in zip(twins, render_recorded(twins, skip=False)):
        data = Path(wav).read_bytes()
        path = corpus.STORE / f"groove_{hashlib.sha256(data).hexdigest()[:16]}_{corpus._engine_digest()}.json"
        if not path.exists():
            path.write_text(json.dumps(corpus._measure(data, spec["name"] + ".wav")))
        kit = spec["tracks"][0]["kit"]
        style = spec["name"].split("_", 1)[1].rsplit("_", 1)[0]
        out.append({"id": spec["name"], "style": style, "kit": kit, "kind": "drums",
                    "source": f"kit:{kit}", **json.loads(path.read_text())})
    return out


def kit_fitted(kit: str) -> bool:
    """Whether a model of fit.py saw this kit (a fitted specs.py source)."""
    from fit import held_out
    from specs import KITS

    return kit in KITS and not held_out(f"kit:{kit}")


def style_fitted(style: str) -> bool:
    """Whether specs.groove_style_specs renders this style for fitting."""
    from fit import held_out

    return not held_out(f"style:{style}")


def unseen(row: dict) -> bool:
    """A groove whose kit and style no model was fitted on."""
    return not kit_fitted(row["kit"]) and not style_fitted(row["style"])


def read(rows: list[dict], fitted: dict | None = None) -> list[tuple[dict, str, float]]:
    """(row, kind read, confidence) with the shipped model or `fitted`."""
    from trackgrade.grading.content import KINDS, decide, inputs, probabilities

    out = []
    for r in rows:
        values = inputs(corpus.features_of(r))
        p = probabilities(values, fitted)
        best = decide(p, r["duration_s"], values)
        out.append((r, KINDS[best], float(p[best])))
    return out


if __name__ == "__main__":
    readings = read(groove_rows())
    for subset, keep in (("every groove", lambda r: True),
                         ("kit never fitted on", lambda r: not kit_fitted(r["kit"]))):
        c = Counter((r["kind"], k) for r, k, _ in readings if keep(r))
        print(subset, dict(c))
    for r, k, conf in readings:
        print(r["id"], r["kit"], r["kind"], k, round(conf, 2))
