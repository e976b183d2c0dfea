"""The content-kind corpus: measured decision inputs of the labelled real clips
(benchmarks/content/real_kinds.csv, read in place from ../shared/truth/real)
and of the recorded-instrument renders (benchmarks/content/specs.py).

    rows(kind="real" | "rendered") -> [{"id", "kind", "source", "inputs", "features"?}]

Renders and their measurements are cached (TRACKGRADE_CACHE/content_corpus,
keyed by the spec, the renderer's source and the engine's content cues), so
a second run is instant.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from tests.truth import CACHE, generator_module, real_manifest  # noqa: E402

LABELS = HERE / "real_kinds.csv"
STORE = CACHE / "content_corpus"


def real_labels() -> dict[str, str]:
    with open(LABELS, newline="", encoding="utf-8") as fh:
        return {r["clip_id"]: r["kind"] for r in csv.DictReader(fh)}


def source_of(row: dict) -> str:
    """The real clip's source (a collection a rule could learn by heart)."""
    cid = row["clip_id"]
    for prefix in ("dirt_breaks", "sonicpi_loop_mehackit", "sonicpi_arovane", "sonicpi_bass",
                   "sonicpi_loop_amen", "librosa", "gtzan", "ballroom", "giantsteps", "beatport",
                   "rwc", "madmom", "sonicpi_loop_perc"):
        if cid.startswith(prefix):
            return prefix
    return cid


def real_files() -> list[dict]:
    """One file per labelled clip (its original)."""
    labels = real_labels()
    chosen = {}
    for row in real_manifest():
        cid = row["clip_id"]
        if cid not in labels or row["category"] == "edge-case":
            continue
        if cid not in chosen or row["variant"] == "original":
            chosen[cid] = row
    return [{"id": cid, "kind": labels[cid], "source": source_of(r), "path": r["path"]}
            for cid, r in sorted(chosen.items())]


def _engine_digest() -> str:
    h = hashlib.sha256()
    for rel in ("trackgrade/engine/content.py", "trackgrade/engine/voicing.py"):
        h.update((ROOT / rel).read_bytes())
    return h.hexdigest()[:12]


def _measure(data: bytes, name: str) -> dict:
    """What the decision reads (the engine's cues, the length and the pulse);
    formats the product refuses (Ogg Vorbis) are decoded with soundfile."""
    from dataclasses import asdict

    from trackgrade.engine.extract import extract
    from trackgrade.engine.features import DecodedAudio
    from trackgrade.errors import TrackgradeError
    from trackgrade.pipeline import measure

    try:
        f = measure(data, file_name=name, parallel=False)
    except TrackgradeError:
        import soundfile as sf

        x, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
        f = extract(DecodedAudio(samples=x, sample_rate=rate, container="ogg", subtype="VORBIS"),
                    parallel=False)
    r = f.rhythm
    return {"cues": asdict(f.content), "duration_s": f.duration_s,
            "rhythm": {"onset_rate": r.onset_rate, "beat_strength": r.beat_strength,
                       "tempo_salient": bool(r.tempo_salient)}}


def features_of(row: dict):
    """A stand-in `Features` carrying what `grading.content.inputs` reads."""
    from types import SimpleNamespace

    from trackgrade.engine.features import ContentCues

    return SimpleNamespace(content=ContentCues(**row["cues"]), duration_s=row["duration_s"],
                           rhythm=SimpleNamespace(**row["rhythm"]))


def _render_and_measure(spec: dict) -> dict:
    import soundfile as sf

    recorded = generator_module("recorded")
    audio, sr = recorded.render(spec)
    buf = io.BytesIO()
    sf.write(buf, audio, sr, format="WAV", subtype="PCM_24")
    return _measure(buf.getvalue(), spec["name"] + ".wav")


def _key(spec: dict) -> str:
    from tests.truth import generator_digest

    text = json.dumps(spec, sort_keys=True) + generator_digest("recorded.py") + _engine_digest()
    return hashlib.sha256(text.encode()).hexdigest()[:20]


def rendered(shard: int = 0, shards: int = 1, fresh: bool = False) -> list[dict]:
    """The renders' measurements; a missing one is made here (`shard` of
    `shards`: run that many processes to share a cold cache). `fresh`: the
    sources no model is fitted on (specs.fresh_specs) instead."""
    from specs import content_specs, drums_or_mix_specs, fresh_specs

    STORE.mkdir(parents=True, exist_ok=True)
    items = fresh_specs() if fresh else content_specs() + drums_or_mix_specs()
    second = set() if fresh else {spec["name"] for spec, _, _ in drums_or_mix_specs()}
    todo = [(spec, STORE / f"{_key(spec)}.json") for spec, _, _ in items]
    missing = [(s, p) for s, p in todo if not p.exists()]
    for spec, path in missing[shard::shards]:
        path.write_text(json.dumps(_render_and_measure(spec)))
    if shards > 1:
        return []
    out = []
    for (spec, kind, source), (_, path) in zip(items, todo):
        got = json.loads(path.read_text())
        out.append({"id": spec["name"], "kind": kind, "source": source, **got}
                   | ({"second": True} if spec["name"] in second else {}))
    return out


def real() -> list[dict]:
    STORE.mkdir(parents=True, exist_ok=True)
    out = []
    for item in real_files():
        data = Path(item["path"]).read_bytes()
        path = STORE / f"real_{hashlib.sha256(data).hexdigest()[:16]}_{_engine_digest()}.json"
        if not path.exists():
            path.write_text(json.dumps(_measure(data, Path(item["path"]).name)))
        out.append({k: v for k, v in item.items() if k != "path"} | json.loads(path.read_text())
                   | {"path": item["path"]})
    return out


if __name__ == "__main__":
    if len(sys.argv) == 3:                  # corpus.py SHARD SHARDS: fill the cache
        rendered(int(sys.argv[1]), int(sys.argv[2]))
        rendered(int(sys.argv[1]), int(sys.argv[2]), fresh=True)
    else:
        print(len(rendered()), "rendered;", len(rendered(fresh=True)), "fresh;", len(real()), "real")
