"""Server figures: start-up with 100,000 analyses in the store, request
latencies under a bounded load, resident memory, and a 5-minute WAV from
POST /analyses to scores_ready.

    python benchmarks/bench_server.py [--analyses 100000]
        [--requests 2000] [--rate 200] [--post-rate 100] [--connections 8] [--data DIR]

The data directory is filled once (reused when it already holds the count)
through the store API, with complete analysis rows (canned documents, as a
test-mode analysis stores them) spread over 50 keys. The server runs as a
real `trackgrade serve` process; the load generator is a stdlib client with
keep-alive connections (one forked process each, so the client's GIL stays
out of the figures), each paced to its share of `--rate`
(GETs) or `--post-rate` requests per second (open loop: latency counts from
the scheduled send time, so queueing is not hidden). Prints one table; figures are not asserted.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import shutil
import signal
import statistics
import subprocess
import sys
import time
import uuid
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from truth import render_grid  # noqa: E402

KEYS = 50
LAYOUT = 2          # bump when the row layout changes: the data is filled again
TARGETS = {"start_s": 3.0, "get_p50_ms": 3.0, "get_p99_ms": 15.0, "list_p99_ms": 30.0,
           "post_p99_ms": 40.0, "rss_mb": 1024.0, "wav5_scores_s": 2.5}


# --- filling the store ----------------------------------------------------------------

def fill(data: Path, count: int) -> dict:
    """Accounts, keys and `count` complete analyses; returns the keys (cached in keys.json)."""
    from trackgrade.server import accounts, documents
    from trackgrade.server.clock import FixedClock, isoformat
    from trackgrade.server.store import open_store
    from trackgrade.testmode import canned_analysis

    meta = data / "bench-keys.json"
    if meta.exists():
        saved = json.loads(meta.read_text())
        if saved.get("count") == count and saved.get("layout") == LAYOUT:
            return saved
    if data.exists():
        shutil.rmtree(data)
    data.mkdir(parents=True, exist_ok=True)
    store = open_store(data)
    clock = FixedClock(1_790_000_000.0)
    keys = []
    for _ in range(KEYS):
        account = accounts.create_account(store, plan="pro", billing="credits",
                                          credits=1_000_000, clock=clock)
        secret, doc = accounts.create_key(store, account["id"], mode="live", clock=clock)
        keys.append({"key": secret, "key_id": doc["id"], "account_id": account["id"], "ids": []})
    results = [canned_analysis(f"bench track {i}.wav", "master") for i in range(64)]
    docs = [r.with_diagnosis(r.diagnosis.__class__(**{**r.diagnosis.__dict__, "status": "ready"}))
            .to_dict() for r in results]
    started = time.perf_counter()
    batch = 2000
    for start in range(0, count, batch):
        with store.transaction() as txn:
            for i in range(start, min(count, start + batch)):
                owner = keys[i % KEYS]
                created = isoformat(clock.now())
                clock.advance(0.5)
                analysis_id = str(uuid.UUID(int=random.getrandbits(128), version=4))
                doc = docs[i % len(docs)]
                row = {
                    "id": analysis_id, "account_id": owner["account_id"],
                    "key_id": owner["key_id"], "livemode": True, "created_at": created,
                    "status": "complete", "diagnosis_status": "ready", "external_id": f"ext-{i}",
                    "file_name": doc["file_name"], "mastering_status": "master",
                    "completed_at": created, "phase": "done",
                    "upload_expires_at": 0, "credit_spent": True, "embed": False,
                    "error": None}
                documents.render(row, doc)
                txn.put("analyses", row)
                if len(owner["ids"]) < 500:
                    owner["ids"].append(analysis_id)
    store.close()
    saved = {"count": count, "layout": LAYOUT, "keys": keys, "fill_s": round(time.perf_counter() - started, 1)}
    meta.write_text(json.dumps(saved))
    return saved


# --- the server process ------------------------------------------------------------------

class Server:
    def __init__(self, data: Path, port: int, key: str) -> None:
        env = {**os.environ, "TRACKGRADE_RATE_PER_MINUTE": "100000000",
               "TRACKGRADE_IN_FLIGHT": "100000000", "TRACKGRADE_DAILY_QUOTA": "100000000",
               "TRACKGRADE_QUEUE_SIZE": "8"}
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "trackgrade", "serve", "--data", str(data), "--port",
             str(port), "--workers", "1"], env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.host, self.port = "127.0.0.1", port
        self.start_s = self._wait_ready(key)

    def _wait_ready(self, key: str) -> float:
        """Seconds from the command to the first answered authenticated list."""
        while time.perf_counter() - self.started < 120:
            try:
                conn = http.client.HTTPConnection(self.host, self.port, timeout=5)
                conn.request("GET", "/v1/analyses?limit=1",
                             headers={"Authorization": f"Bearer {key}"})
                if conn.getresponse().status == 200:
                    return time.perf_counter() - self.started
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("the server did not start")

    def rss_mb(self) -> tuple[float, float]:
        """(server process, server + worker processes) resident MiB."""
        def rss(pid: int) -> float:
            try:
                text = Path(f"/proc/{pid}/status").read_text()
            except OSError:
                return 0.0
            return int(re.search(r"VmRSS:\s+(\d+)", text).group(1)) / 1024

        children = subprocess.run(["ps", "-o", "pid=", "--ppid", str(self.proc.pid)],
                                  capture_output=True, text=True).stdout.split()
        own = rss(self.proc.pid)
        return own, own + sum(rss(int(c)) for c in children)

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)


# --- the load generator -------------------------------------------------------------------

def paced_load(server: Server, make_request, *, total: int, rate: float,
               connections: int) -> list[float]:
    """`total` requests over `connections` keep-alive connections at `rate`
    requests/s in all; latency (ms) from each request's scheduled time. Each
    connection runs in its own (forked) process, so the client's own GIL does
    not add to the figures."""
    import multiprocessing

    per_conn = total // connections
    interval = connections / rate
    begin = time.perf_counter() + 0.2
    global _MAKE_REQUEST
    _MAKE_REQUEST = make_request            # inherited by the forked clients
    context = multiprocessing.get_context("fork")
    with context.Pool(connections) as pool:
        parts = pool.starmap(_connection, [
            (server.host, server.port, i, per_conn, begin + i * interval / connections,
             interval) for i in range(connections)])
    return [value for part in parts for value in part]


_MAKE_REQUEST = None


def send(conn: http.client.HTTPConnection, request: tuple) -> None:
    """One (method, path, body, headers) request on a kept-alive connection,
    its answer read whole; a 4xx or 5xx stops the benchmark."""
    method, path, body, headers = request
    conn.request(method, path, body=body, headers=headers)
    response = conn.getresponse()
    response.read()
    if response.status >= 400:
        raise RuntimeError(f"{method} {path}: {response.status}")


def _connection(host, port, index, count, start, interval) -> list[float]:
    make_request = _MAKE_REQUEST
    conn = http.client.HTTPConnection(host, port, timeout=30)
    rng = random.Random(index)
    out = []
    for n in range(count):
        scheduled = start + n * interval
        delay = scheduled - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        send(conn, make_request(rng))
        out.append((time.perf_counter() - scheduled) * 1000)
    conn.close()
    return out


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))]


def upload_wav(server: Server, key: str, path: str) -> float:
    """POST /analyses + upload + poll /status until scores are ready: seconds."""
    sys.path.insert(0, str(ROOT / "tests" / "server"))
    from server_harness import multipart

    audio = Path(path).read_bytes()
    conn = http.client.HTTPConnection(server.host, server.port, timeout=120)
    auth = {"Authorization": f"Bearer {key}"}
    started = time.perf_counter()
    conn.request("POST", "/v1/analyses", body=json.dumps({"file_name": Path(path).name}),
                 headers={**auth, "Idempotency-Key": str(uuid.uuid4()),
                          "Content-Type": "application/json"})
    accepted = json.loads(conn.getresponse().read())
    body, ctype = multipart({"file": (Path(path).name, audio)})
    upload_path = "/" + accepted["upload"]["url"].split("/", 3)[3]
    conn.request("POST", upload_path, body=body, headers={
        "Content-Type": ctype, "Authorization": f"Bearer {accepted['upload']['token']}"})
    reply = conn.getresponse()
    reply.read()
    if reply.status != 200:
        raise RuntimeError(f"upload failed: {reply.status}")
    while True:
        conn.request("GET", f"/v1/analyses/{accepted['id']}/status", headers=auth)
        status = json.loads(conn.getresponse().read())
        if status["status"] != "processing":
            elapsed = time.perf_counter() - started
            if status["status"] != "complete":
                raise RuntimeError(f"the analysis {status['status']}")
            return elapsed
        time.sleep(0.01)


class Requests:
    """The benchmark's requests, each by a random account of `keys` (the
    `fill` accounts: key and analysis ids): `fn(rng) -> (method, path, body,
    headers)` for `paced_load` and `throughput`."""

    def __init__(self, keys: list[dict]) -> None:
        self.keys = keys

    def _auth(self, rng) -> tuple[dict, dict]:
        owner = rng.choice(self.keys)
        return owner, {"Authorization": f"Bearer {owner['key']}"}

    def get_one(self, rng):
        owner, headers = self._auth(rng)
        return "GET", f"/v1/analyses/{rng.choice(owner['ids'])}", None, headers

    def get_list(self, rng):
        owner, headers = self._auth(rng)
        cursor = rng.choice(owner["ids"])
        return "GET", f"/v1/analyses?limit=20&starting_after={cursor}", None, headers

    def post(self, rng):
        owner, headers = self._auth(rng)
        return "POST", "/v1/analyses", json.dumps({"file_name": "bench.wav"}), {
            **headers, "Idempotency-Key": uuid.uuid4().hex, "Content-Type": "application/json"}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--analyses", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=200.0,
                        help="paced requests/s for the GET figures")
    parser.add_argument("--post-rate", type=float, default=100.0,
                        help="paced requests/s for POST /analyses: each is one durable "
                             "store commit (an fdatasync, ~4 ms here), so the commit path "
                             "saturates near 1/fsync")
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--repeat", type=int, default=3,
                        help="runs per endpoint; the median run's percentiles are printed")
    parser.add_argument("--port", type=int, default=18765)
    parser.add_argument("--data", type=Path,
                        default=Path.home() / ".cache" / "trackgrade" / "bench-server")
    args = parser.parse_args(argv)

    base = args.data / f"n{args.analyses}"
    saved = fill(base / "pristine", args.analyses)
    keys = saved["keys"]
    run_dir = base / "run"                   # every run starts from the same state
    if run_dir.exists():
        shutil.rmtree(run_dir)
    shutil.copytree(base / "pristine", run_dir)
    server = Server(run_dir, args.port, keys[0]["key"])
    figures = {"start_s": server.start_s}
    try:
        requests = Requests(keys)
        get_one, get_list, post = requests.get_one, requests.get_list, requests.post
        time.sleep(5)      # let the worker process finish importing (it shares the 2 cores)
        paced_load(server, get_one, total=400, rate=args.rate, connections=args.connections)
        for name, fn, rate in (("get", get_one, args.rate), ("list", get_list, args.rate),
                               ("post", post, args.post_rate)):
            runs = [paced_load(server, fn, total=args.requests, rate=rate,
                               connections=args.connections) for _ in range(args.repeat)]
            # the median run: one scheduler stall of a busy shared machine moves a
            # single run's p99, not the median of several
            figures[f"{name}_p50_ms"] = statistics.median(pct(lat, 50) for lat in runs)
            figures[f"{name}_p99_ms"] = statistics.median(pct(lat, 99) for lat in runs)
        own, total = server.rss_mb()
        figures["rss_mb"], figures["rss_with_workers_mb"] = own, total
        speed_dir, speed_tracks = render_grid("speed")
        wavs = [str(speed_dir / speed_tracks[0]["file"])]
        if wavs:
            upload_wav(server, keys[0]["key"], wavs[0])            # warm the worker
            figures["wav5_scores_s"] = min(upload_wav(server, keys[1]["key"], wavs[0])
                                           for _ in range(2))
            figures["rss_after_wav_mb"], figures["rss_after_wav_with_workers_mb"] = \
                server.rss_mb()
    finally:
        server.stop()

    print(f"trackgrade server benchmark: {args.analyses} analyses in the store "
          f"(filled in {saved.get('fill_s', '?')} s), {args.connections} connections, "
          f"GETs paced at {args.rate:.0f} req/s, POSTs at {args.post_rate:.0f} req/s, "
          f"{args.requests} requests per endpoint and run, median of {args.repeat} runs")
    print(f"{'figure':34s} {'measured':>10s} {'target':>10s}")
    for name, value in figures.items():
        target = TARGETS.get(name)
        mark = "" if target is None else ("  ok" if value <= target else "  OVER")
        print(f"{name:34s} {value:10.2f} {'' if target is None else f'{target:10.2f}'}{mark}")


if __name__ == "__main__":
    main()
