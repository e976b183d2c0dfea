"""Benchmark the durable store at 100,000 stored analyses.

    python benchmarks/bench_store.py [--count 100000] [--dir DIR] [--keep]

Fills a data directory through the store's own API (batches of 1,000 puts
per transaction, then one compaction), adds a journal tail of ordinary
single-analysis transactions, then measures in a fresh process (so memory
is what a server would hold): open time, get p50/p99, list p99 (first pages
and deep cursors), write-transaction p50/p99 (fsync included) and RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

from trackgrade.server.store import new_event, open_store
from trackgrade.server import queries

ACCOUNTS = 200
WORDS = ("kick", "sub", "hats", "snare", "pad", "lead", "vocal", "bass", "riser", "drop",
         "groove", "stereo", "headroom", "punch", "clarity", "energy", "warmth", "air")


def analysis_row(i: int, rng: random.Random) -> dict:
    """A realistic completed analysis row (~4 KB of JSON)."""
    account = f"acct_{i % ACCOUNTS:04d}" if i % 5 else "acct_big"
    live = i % 7 != 0
    created = f"2026-{1 + i % 12:02d}-{1 + i % 28:02d}T{i % 24:02d}:{i % 60:02d}:{(i * 7) % 60:02d}.{i % 1_000_000:06d}Z"

    def sentence(n: int) -> str:
        return " ".join(rng.choice(WORDS) for _ in range(n)).capitalize() + "."

    bands = [rng.uniform(2, 30) for _ in range(7)]
    total = sum(bands)
    names = ("sub_bass", "bass", "low_mid", "mid", "upper_mid", "high", "air")
    score = rng.randint(20, 99)
    result = {
        "score": score, "grade": {"letter": "B+", "label": "Strong"},
        "scores": {k: rng.randint(0, 100) for k in ("hit_potential", "danceability", "mix_quality",
                                                    "frequency_balance", "energy", "structure")},
        "tempo": {"bpm": round(rng.uniform(90, 175), 2), "regularity": round(rng.random(), 3)},
        "key": {"key": "A", "scale": "minor", "camelot": "8A", "confidence": round(rng.random(), 3)},
        "genre": {"detected": "techno", "name": "Techno", "confidence": round(rng.random(), 3)},
        "frequency": {"bands": {n: round(100 * b / total, 2) for n, b in zip(names, bands)},
                      "ideal": {n: round(100 / 7, 2) for n in names},
                      "centroid_hz": round(rng.uniform(800, 4000), 1), "score": rng.randint(0, 100)},
        "mix": {"loudness_lufs": round(rng.uniform(-16, -6), 2), "dynamic_range_db": 6.5,
                "dynamic_complexity": 3.1, "crest_factor_db": 11.2, "peak_dbfs": -0.4,
                "stereo_width": 0.42, "stereo_correlation": 0.71, "clipping_pct": 0.0,
                "score": rng.randint(0, 100)},
        "structure": {"sections": [{"start": 30.0 * s, "end": 30.0 * (s + 1),
                                    "label": ("intro", "buildup", "drop", "breakdown", "outro")[s % 5],
                                    "energy": rng.randint(0, 100)} for s in range(9)],
                      "score": rng.randint(0, 100)},
        "danceability": {"breakdown": {k: rng.randint(0, 100) for k in (
            "tempo_fitness", "beat_strength", "rhythmic_energy", "bass_presence",
            "groove_clarity", "engine_dance")}, "score": rng.randint(0, 100)},
        "energy": {"score": rng.randint(0, 100), "rms_mean": 0.21, "onset_rate": 3.9},
        "diagnosis": {"status": "ready", "summary": sentence(40), "frequency": sentence(30),
                      "mix": sentence(30), "danceability": sentence(30)},
        "feedback": [{"type": ("warn", "tip", "pass")[f % 3], "category": "frequency",
                      "text": sentence(18)} for f in range(8)],
        "duration_seconds": round(rng.uniform(120, 420), 2),
    }
    return {"id": str(uuid.UUID(int=rng.getrandbits(128), version=4)), "account_id": account,
            "key_id": f"key_{account}_{'live' if live else 'test'}", "livemode": live,
            "created_at": created, "status": "complete", "diagnosis_status": "ready",
            "external_id": f"ext-{i}", "file_name": f"track_{i}.wav", "mastering_status": "master",
            "completed_at": created, "embed": False, "credit_spent": live, "result": result,
            "error": None}


def fill(root: Path, count: int) -> dict:
    rng = random.Random(42)
    started = time.perf_counter()
    store = open_store(root, compact_bytes=1 << 40)
    ids, size = [], 0
    for start in range(0, count, 1000):
        with store.transaction() as txn:
            for i in range(start, min(count, start + 1000)):
                row = analysis_row(i, rng)
                size += len(json.dumps(row, separators=(",", ":")))
                txn.put("analyses", row)
                ids.append(row["id"])
    filled = time.perf_counter() - started
    store.compact(wait=True)
    compacted = time.perf_counter() - started - filled
    # an ordinary journal tail: analyses updated one transaction at a time, with an event
    for n in range(2000):
        row = store.get("analyses", ids[n * 37 % len(ids)])
        row["embed"] = not row["embed"]
        with store.transaction() as txn:
            txn.put("analyses", row)
            txn.put("events", new_event("analysis.completed", {"object": row["result"]},
                                        account_id=row["account_id"], livemode=row["livemode"],
                                        created=1_763_856_000 + n))
    journal = store.journal_bytes
    store.close()
    (root / "ids.json").write_text(json.dumps(ids))
    return {"fill_s": round(filled, 1), "compact_s": round(compacted, 1),
            "avg_doc_bytes": round(size / count), "journal_tail_mb": round(journal / 2**20, 1),
            "snapshot_mb": round(sum(p.stat().st_size for p in root.glob("snapshot-*")) / 2**20)}


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def rss_mb() -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return (int(fields["VmRSS"].split()[0]) / 1024, int(fields["VmHWM"].split()[0]) / 1024)


def measure(root: Path) -> dict:
    ids = json.loads((root / "ids.json").read_text())
    started, cpu = time.perf_counter(), time.process_time()
    store = open_store(root)
    opened, opened_cpu = time.perf_counter() - started, time.process_time() - cpu
    rss_open, peak_open = rss_mb()
    rng = random.Random(1)
    gets = []
    for doc_id in rng.sample(ids, 5000):
        t = time.perf_counter()
        store.get("analyses", doc_id)
        gets.append(time.perf_counter() - t)
    lists, deep = [], []
    for n in range(500):
        account = "acct_big" if n % 2 else f"acct_{n % ACCOUNTS:04d}"
        t = time.perf_counter()
        rows, _ = queries.list_analyses(store, account, True, 20)
        lists.append(time.perf_counter() - t)
        if rows:
            cursor = rng.choice(ids)
            row = store.get("analyses", cursor)
            t = time.perf_counter()
            queries.list_analyses(store, row["account_id"], row["livemode"], 100, starting_after=cursor)
            deep.append(time.perf_counter() - t)
    writes = []
    for n in range(300):
        row = store.get("analyses", rng.choice(ids))
        row["status"] = "complete"
        t = time.perf_counter()
        with store.transaction() as txn:
            txn.put("analyses", row)
            txn.put("events", new_event("analysis.scores_ready", {"id": row["id"]},
                                        account_id=row["account_id"], livemode=True, created=n))
        writes.append(time.perf_counter() - t)
    rss_end, peak = rss_mb()
    store.close()
    load = os.getloadavg()[0]
    ms = lambda s: round(1000 * s, 3)  # noqa: E731
    return {"analyses": len(ids), "open_s": round(opened, 2), "open_cpu_s": round(opened_cpu, 2),
            "get_p50_ms": ms(percentile(gets, 0.5)), "get_p99_ms": ms(percentile(gets, 0.99)),
            "list20_p50_ms": ms(percentile(lists, 0.5)),
            "list20_p99_ms": ms(percentile(lists, 0.99)),
            "list100_cursor_p50_ms": ms(percentile(deep, 0.5)),
            "list100_cursor_p99_ms": ms(percentile(deep, 0.99)),
            "write_txn_p50_ms": ms(percentile(writes, 0.5)),
            "write_txn_p99_ms": ms(percentile(writes, 0.99)),
            "write_txn_mean_ms": ms(statistics.mean(writes)),
            "rss_after_open_mb": round(rss_open), "rss_end_mb": round(rss_end),
            "rss_peak_mb": round(max(peak, peak_open)), "load_average": round(load, 1)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=100_000)
    parser.add_argument("--dir", type=Path, default=None, help="data directory (default: a temp dir)")
    parser.add_argument("--keep", action="store_true", help="keep the filled directory")
    parser.add_argument("--measure-only", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure_only:
        print(json.dumps(measure(args.dir)))
        return
    root = args.dir or Path(tempfile.mkdtemp(prefix="trackgrade-bench-store-"))
    try:
        if not (root / "ids.json").exists():
            print(json.dumps({"fill": fill(root, args.count)}), flush=True)
        done = subprocess.run([sys.executable, __file__, "--measure-only", "--dir", str(root)],
                              capture_output=True, text=True, check=True)
        print(json.dumps({"measure": json.loads(done.stdout)}, indent=1))
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
