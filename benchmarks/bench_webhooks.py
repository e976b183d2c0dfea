"""Webhook figures: latency from `scores_ready` in the store to the receiver's
2xx, events per second one node delivers to a fast receiver, and deliveries
lost across kill -9 cycles with pending events.

    python benchmarks/bench_webhooks.py [--latency 200] [--events 3000] [--cycles 20]

The server is a real `trackgrade serve` process (its own data directory,
its own SystemClock); the receiver is a threaded stdlib HTTP server in this
process on loopback, answering 200 at once.

- latency: test-mode analyses over HTTP (20 keys, paced), each
  `analysis.scores_ready` event's `data.completed_at` (stamped in the same
  store transaction that wrote the event) to the moment the receiver has
  written its 200. Beside it, the floor measured in the same run: a plain
  http.client POST of the same body from this process to the same receiver.
- throughput: `--events` outbox rows (each carrying a ~4 KB canned Analysis)
  committed at once into the running server's store, timed from the commit
  to the last acknowledged delivery.
- kill -9: tests/webhooks/crashes.py with `--cycles` cycles (4 test-mode
  analyses each, every event's first attempt answered 503 so retries are
  pending when the process dies).
"""

from __future__ import annotations

import argparse
import http.client
import json
import shutil
import statistics
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "webhooks"))
sys.path.insert(0, str(ROOT / "tests" / "server"))

from crashes import Serving, run_cycles  # noqa: E402
from receiver import Receiver, answer  # noqa: E402

from trackgrade.server import accounts, documents  # noqa: E402
from trackgrade.server.store import new_event, open_store  # noqa: E402
from trackgrade.server.webhooks import endpoints  # noqa: E402
from trackgrade.testmode import canned_analysis  # noqa: E402


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def floor_latency(url: str, body: bytes, count: int) -> list[float]:
    host, port = url.split("//")[1].split("/")[0].split(":")
    out = []
    for _ in range(count):
        started = time.time()
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("POST", "/hook", body=body, headers={"Content-Type": "application/json",
                                                          "Connection": "close"})
        conn.getresponse().read()
        conn.close()
        out.append(time.time() - started)
        time.sleep(0.01)
    return out


def floor_throughput(url: str, body: bytes, count: int, threads: int = 4) -> float:
    """Events per second 4 plain http.client senders in this process reach."""
    per = count // threads

    def run():
        floor_latency_quiet(url, body, per)
    started = time.monotonic()
    workers = [threading.Thread(target=run) for _ in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return per * threads / (time.monotonic() - started)


def floor_latency_quiet(url: str, body: bytes, count: int) -> None:
    host, port = url.split("//")[1].split("/")[0].split(":")
    for _ in range(count):
        conn = http.client.HTTPConnection(host, int(port), timeout=10)
        conn.request("POST", "/hook", body=body, headers={"Content-Type": "application/json",
                                                          "Connection": "close"})
        conn.getresponse().read()
        conn.close()


def latency_run(work: Path, samples: int) -> dict:
    data = work / "latency"
    rcv = Receiver(answer(200))
    arrivals: dict[str, float] = {}
    original = rcv.behaviour

    def stamp(delivery, n):
        reply = original(delivery, n)
        arrivals[delivery.headers.get("webhook-id", "floor")] = time.time()
        return reply
    rcv.behaviour = stamp
    keys = []
    with open_store(data) as store:
        for _ in range(20):
            account = accounts.create_account(store, plan="pro")
            key, _ = accounts.create_key(store, account["id"], mode="test")
            endpoints.add_endpoint(store, rcv.url, account["id"])
            keys.append(key)
    served = Serving(data, {})
    try:
        for n in range(samples):
            served.analyse(keys[n % len(keys)], f"lat{n}.wav")
            time.sleep(0.05)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            ready = [d for d in list(rcv.deliveries)
                     if d.event["type"] == "analysis.scores_ready"]
            if len(ready) >= samples:
                break
            time.sleep(0.05)
        time.sleep(0.2)
    finally:
        served.kill()
    waits = []
    for delivery in rcv.deliveries:
        event = delivery.event
        if event["type"] != "analysis.scores_ready":
            continue
        stored = datetime.fromisoformat(event["data"]["completed_at"].replace("Z", "+00:00"))
        waits.append(arrivals[event["id"]] - stored.timestamp())
    body = rcv.deliveries[0].body
    floor = floor_latency(rcv.url, body, 100)
    rcv.close()
    return {"samples": len(waits), "median_ms": statistics.median(waits) * 1e3,
            "p90_ms": percentile(waits, 0.90) * 1e3,
            "p99_ms": percentile(waits, 0.99) * 1e3, "max_ms": max(waits) * 1e3,
            "floor_median_ms": statistics.median(floor) * 1e3,
            "floor_p99_ms": percentile(floor, 0.99) * 1e3, "body_bytes": len(body)}


def throughput_run(work: Path, count: int) -> dict:
    data = work / "throughput"
    rcv = Receiver(answer(200))
    with open_store(data) as store:
        account = accounts.create_account(store, plan="pro")
        endpoints.add_endpoint(store, rcv.url, account["id"])
    row = {"id": "x", "livemode": False, "status": "complete", "diagnosis_status": "ready",
           "external_id": "bench", "file_name": "bench.wav", "mastering_status": "pre-master",
           "created_at": "2026-01-01T00:00:00.000000Z", "completed_at": None}
    doc = documents.analysis_document(row, canned_analysis("bench.wav").to_dict())
    served = Serving(data, {})
    try:
        time.sleep(0.5)
        with open_store(data) as store:
            committed = time.time()
            with store.transaction() as txn:
                for _ in range(count):
                    txn.put("events", new_event("analysis.completed", doc,
                                                account_id=account["id"], livemode=False,
                                                created=committed))
            committed_at = time.monotonic()
        rcv.wait_for(count, timeout=600)
        last = max(d.at for d in rcv.deliveries)
    finally:
        served.kill()
    body = rcv.deliveries[0].body
    floor = floor_throughput(rcv.url, body, min(count, 2000))
    rcv.close()
    seconds = last - committed_at
    return {"events": count, "seconds": seconds, "per_second": count / seconds,
            "floor_per_second": floor, "body_bytes": len(body)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=int, default=200)
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--cycles", type=int, default=20)
    args = parser.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="tg-bench-webhooks-"))
    try:
        results = {}
        if args.latency:
            results["latency"] = latency_run(work, args.latency)
            print("latency", json.dumps(results["latency"]), flush=True)
        if args.events:
            results["throughput"] = throughput_run(work, args.events)
            print("throughput", json.dumps(results["throughput"]), flush=True)
        if args.cycles:
            report = run_cycles(work / "crash", cycles=args.cycles, analyses=4, seed=11,
                                settle=120)
            results["kill9"] = report.__dict__
            print("kill9", json.dumps(report.__dict__), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
