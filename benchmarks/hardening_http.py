"""The longer runs of the HTTP proofs (tests/server/test_proof_http_bodies.py and
test_proof_http_slow_clients.py), against a real `trackgrade serve` process
built from a source tree: this one, or a git ref (`--before main`) extracted
to a temporary directory, so the same run gives the figures before and after.

- `slow_clients`: `--slow` connections (from `--addresses` loopback addresses)
  that each send a partial request head and then a header line every
  `--trickle` seconds; a connection the server closes is opened again at
  once (a persistent attacker). Meanwhile a fresh client (127.0.0.1) sends
  GET /v1/genres every 0.25 s for `--seconds`; each answer's latency is
  recorded (no answer within 5 s counts as unanswered).
- `bodies`: `--concurrent` unauthenticated 150 MiB bodies at once (half
  `POST /v1/analyses`, half the upload step with no valid token), sent whole
  by the clients, for `--rounds` rounds; the server's peak RSS growth
  (VmHWM from /proc) and the answers.
"""

from __future__ import annotations

import http.client
import socket
import statistics
import subprocess
import tempfile
import threading
import time
import uuid
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

from hostile_http import MiB, send_body, vm_kb

ROOT = Path(__file__).resolve().parents[1]
FRESH_TIMEOUT_S = 5.0


@contextmanager
def source_tree(ref: str | None):
    """ROOT for None, else `ref`'s trackgrade/ extracted to a temporary directory."""
    if ref is None:
        yield ROOT
        return
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", ref, "trackgrade"],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        yield Path(tmp)


@contextmanager
def served(src: Path, env: dict | None = None):
    from serve_process import ServeProcess, make_key

    with tempfile.TemporaryDirectory() as tmp:
        data = Path(tmp) / "data"
        key, _ = make_key("live", data_dir=str(data))
        serve = ServeProcess(data, env={"PYTHONPATH": str(src),
                                        "TRACKGRADE_RATE_PER_MINUTE": "1000000", **(env or {})},
                             cwd=src, require=True)
        try:
            yield serve, key
        finally:
            serve.stop()


def fresh_request(url: str, key: str) -> float | None:
    parts = urlsplit(url)
    started = time.monotonic()
    try:
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=FRESH_TIMEOUT_S)
        conn.request("GET", "/v1/genres", headers={"Authorization": f"Bearer {key}"})
        resp = conn.getresponse()
        resp.read()
        conn.close()
        return time.monotonic() - started if resp.status == 200 else None
    except OSError:
        return None


def before_and_after(args, run) -> dict:
    """`run(serve, key, args)` on the `--before` ref (if given), then this tree."""
    out = {}
    for name, ref in (("before", args.before), ("after", None)):
        if name == "before" and not ref:
            continue
        with source_tree(ref) as src, served(src) as (serve, key):
            out[name] = run(serve, key, args)
            print(name, out[name], flush=True)
    return out


def slow_clients(args) -> dict:
    return {"slow_connections": args.slow, "addresses": args.addresses,
            "trickle_s": args.trickle, "seconds": args.seconds,
            **before_and_after(args, _slow_run)}


def _slow_run(serve, key: str, args) -> dict:
    url = serve.url
    parts = urlsplit(url)
    stop = threading.Event()
    reopened = [0]

    def attacker(i: int) -> None:
        source = f"127.0.0.{2 + i % args.addresses}"
        sock = None
        line = 0
        while not stop.is_set():
            try:
                if sock is None:
                    sock = socket.create_connection((parts.hostname, parts.port), timeout=10,
                                                    source_address=(source, 0))
                    sock.sendall(b"GET /v1/genres HTTP/1.1\r\nHost: x\r\n")
                else:
                    sock.sendall(f"X-Slow-{line}: {i}\r\n".encode())
                    line += 1
            except OSError:
                if sock is not None:
                    sock.close()
                    reopened[0] += 1
                sock = None
                stop.wait(0.05)
                continue
            stop.wait(args.trickle)
        if sock is not None:
            sock.close()

    threads = [threading.Thread(target=attacker, args=(i,), daemon=True)
               for i in range(args.slow)]
    for thread in threads:
        thread.start()
    time.sleep(1.0)
    latencies: list[float | None] = []
    started = time.monotonic()
    while time.monotonic() - started < args.seconds:
        latencies.append(fresh_request(url, key))
        time.sleep(0.25)
    stop.set()
    for thread in threads:
        thread.join(15)
    answered = sorted(x for x in latencies if x is not None)
    return {"fresh_requests": len(latencies), "answered": len(answered),
            "answered_within_1s": sum(1 for x in answered if x < 1.0),
            "unanswered_in_5s": len(latencies) - len(answered),
            "p50_ms": round(statistics.median(answered) * 1e3, 1) if answered else None,
            "p95_ms": round(answered[int(0.95 * (len(answered) - 1))] * 1e3, 1)
            if answered else None,
            "max_ms": round(answered[-1] * 1e3, 1) if answered else None,
            "slow_connections_closed_by_server": reopened[0]}


def bodies(args) -> dict:
    return {"concurrent": args.concurrent, "body_mib": args.mib, "rounds": args.rounds,
            **before_and_after(args, _bodies_run)}


def _bodies_run(serve, key: str, args) -> dict:
    size = args.mib * MiB
    pid = serve.proc.pid
    assert fresh_request(serve.url, key) is not None
    rss_start = vm_kb(pid, "VmRSS")
    hwm_start = vm_kb(pid, "VmHWM")
    answers: list = []
    seconds = []
    for _ in range(args.rounds):
        heads = [b"POST /v1/analyses HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % size if i % 2 == 0 else
                 b"POST /v1/uploads/%s HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n"
                 % (str(uuid.uuid4()).encode(), size) for i in range(args.concurrent)]
        started = time.monotonic()
        threads = [threading.Thread(target=send_body, args=(serve.url, head, size, answers))
                   for head in heads]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        seconds.append(round(time.monotonic() - started, 2))
    counts: dict = {}
    for answer in answers:
        counts[str(answer)] = counts.get(str(answer), 0) + 1
    return {"rss_start_mb": round(rss_start / 1024, 1),
            "peak_growth_mb": round((vm_kb(pid, "VmHWM") - hwm_start) / 1024, 1),
            "rss_after_mb": round(vm_kb(pid, "VmRSS") / 1024, 1),
            "answers": counts, "round_seconds": seconds,
            "still_serving": fresh_request(serve.url, key) is not None}


def add_parsers(sub) -> None:
    p = sub.add_parser("slow_clients", help="fresh-client latency with slow connections open")
    p.add_argument("--slow", type=int, default=100)
    p.add_argument("--addresses", type=int, default=4)
    p.add_argument("--trickle", type=float, default=2.0)
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--before", default=None, help="a git ref to measure too (e.g. main)")
    p = sub.add_parser("bodies", help="server memory under unauthenticated bodies")
    p.add_argument("--concurrent", type=int, default=4)
    p.add_argument("--mib", type=int, default=150)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--before", default=None, help="a git ref to measure too (e.g. main)")


COMMANDS = {"slow_clients": slow_clients, "bodies": bodies}
