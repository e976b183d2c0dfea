"""What the genre model reads of every item of benchmarks/genre_corpus.py,
measured once and cached in benchmarks/out/genre_features.json (keyed by the
file's path, size and mtime; `--fresh` measures again).

    python benchmarks/genre_features.py [--per-style N] [--fresh]
"""

from __future__ import annotations

import argparse
import hashlib
import inspect
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from genre_corpus import grid_items, real_items, synthetic_items  # noqa: E402
from groove_specs import groove_items  # noqa: E402  (tests/groove_specs.py)

import soundfile as sf  # noqa: E402

from trackgrade.engine.extract import extract  # noqa: E402
from trackgrade.engine.features import DecodedAudio  # noqa: E402
from trackgrade.errors import TrackgradeError  # noqa: E402
from trackgrade.grading.genre_model import genre_inputs  # noqa: E402
from trackgrade.pipeline import measure  # noqa: E402

CACHE = ROOT / "benchmarks" / "out" / "genre_features.json"


def _code() -> str:
    """What the measurements depend on: the groove and rhythm modules and `genre_inputs`."""
    engine = ROOT / "trackgrade" / "engine"
    text = "".join(p.read_text() for p in [engine / "groove.py", *sorted((engine / "rhythm").glob("*.py"))])
    text += inspect.getsource(genre_inputs)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _key(path: str) -> str:
    st = os.stat(path)
    return f"{path}|{st.st_size}|{int(st.st_mtime)}|{_code()}"


def _measure_part(path: str):
    """A clip the decoder refuses (under its minimum length, Ogg), read with soundfile
    (what the engine reads once parts from 1 s are accepted: issue 17)."""
    samples, rate = sf.read(path, dtype="float32", always_2d=True)
    audio = DecodedAudio(samples=samples, sample_rate=rate, container=Path(path).suffix[1:].lower(),
                         subtype="PCM_16")
    return extract(audio)


def measured(items: list[dict], *, fresh: bool = False) -> list[dict]:
    """Each item with `inputs` (genres.genre_inputs of its Features) or `error`."""
    cache = {} if fresh or not CACHE.exists() else json.loads(CACHE.read_text())
    out = []
    for item in items:
        key = _key(item["path"])
        if key not in cache or "error" in cache[key]:
            t = time.perf_counter()
            try:
                f = measure(Path(item["path"]).read_bytes(), file_name=Path(item["path"]).name)
                cache[key] = {"inputs": genre_inputs(f)}
            except TrackgradeError as exc:
                cache[key] = {"error": exc.code, "message": str(exc)}
                if "too short" in str(exc) or "Ogg Vorbis" in str(exc):
                    cache[key] = {"inputs": genre_inputs(_measure_part(item["path"])), "part": True}
            print(f"  {item['name'][:50]:50s} {time.perf_counter() - t:5.2f} s", file=sys.stderr)
        out.append({**item, **cache[key]})
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    CACHE.write_text(json.dumps(cache))
    return out


def corpus(per_style: int = 8, *, fresh: bool = False, grid: str | None = None,
           grooves: int = 6) -> list[dict]:
    """The measured items: `per_style` renders per style (or a built-in `grid`),
    the real clips and `grooves` recorded-instrument grooves per groove style."""
    synth = grid_items(grid) if grid else synthetic_items(per_style)
    return measured(synth + real_items() + (groove_items(grooves) if grooves else []), fresh=fresh)


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--per-style", type=int, default=8)
    ap.add_argument("--fresh", action="store_true")
    args = ap.parse_args()
    items = corpus(args.per_style, fresh=args.fresh)
    print(len(items), "items,", sum("error" in i for i in items), "refused")
