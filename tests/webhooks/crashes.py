"""kill -9 cycles of a real `trackgrade serve` process while webhook
deliveries are pending (used by the test and by benchmarks/bench_webhooks.py).

Each cycle starts the server on the same data directory, submits test-mode
analyses over HTTP (two events each), lets deliveries run for a moment (the
receiver answers 503 to every event's first attempt, so retries are always
pending) and kills the process group with SIGKILL. A last start runs until
every event in the store has been acknowledged. The report compares what the
store holds with what the receiver acknowledged.
"""

from __future__ import annotations

import random
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from trackgrade import signing
from trackgrade.server import accounts
from trackgrade.server.store import open_store
from trackgrade.server.webhooks import endpoints

from tests.webhooks.receiver import Receiver
from tests.server.serve_process import ServeProcess
from tests.server.server_harness import multipart, request

SCHEDULE = ",".join(["0"] + ["0.3"] * 30)


class Serving(ServeProcess):
    """`python -m trackgrade serve` on a free port, in its own process group."""

    def __init__(self, data: Path, env: dict) -> None:
        super().__init__(data, "--workers", "1", env=env, timeout=60, docs_url=None,
                         require=True)

    def analyse(self, key: str, name: str) -> None:
        accepted = request(self.url, "POST", "/v1/analyses", key=key,
                           idem=f"{name}-{time.monotonic_ns()}", body={"file_name": name}).json
        body, ctype = multipart({"file": ("a.wav", b"test mode never decodes")})
        request(self.url, "POST", urlsplit(accepted["upload"]["url"]).path, raw=body,
                headers={"Content-Type": ctype,
                         "Authorization": f"Bearer {accepted['upload']['token']}"})


@dataclass
class CrashReport:
    cycles: int
    events: int
    acknowledged: int
    lost: int
    max_acks_per_event: int
    events_acked_twice: int
    bad_signatures: int
    changed_bodies: int
    attempts: int
    seconds: float


def first_attempt_fails(delivery, n):
    """503 to the first attempt of each event (so retries are pending), then 200."""
    seen = first_attempt_fails.seen
    event_id = delivery.headers.get("webhook-id")
    if event_id not in seen:
        seen.add(event_id)
        return 503, {}
    time.sleep(0.005)
    return 200, {}


def run_cycles(data: Path, *, cycles: int, analyses: int, seed: int = 1,
               settle: float = 30.0) -> CrashReport:
    started = time.monotonic()
    rng = random.Random(seed)
    first_attempt_fails.seen = set()
    rcv = Receiver(first_attempt_fails)
    with open_store(data) as store:
        account = accounts.create_account(store, plan="pro", credits=0)
        key, _ = accounts.create_key(store, account["id"], mode="test")
        secret = endpoints.add_endpoint(store, rcv.url, account["id"])["secret"]
    env = {"TRACKGRADE_WEBHOOK_SCHEDULE": SCHEDULE}
    try:
        for cycle in range(cycles):
            served = Serving(data, env)
            try:
                for n in range(analyses):
                    served.analyse(key, f"c{cycle}_{n}.wav")
                time.sleep(rng.uniform(0.2, 1.2))
            finally:
                served.kill()
        served = Serving(data, env)
        try:
            with open_store(data) as store:
                expected = {e["id"] for e in store.select("events.by_created")}
            deadline = time.monotonic() + settle
            while time.monotonic() < deadline:
                acked = {d.headers.get("webhook-id") for d in _acked(rcv)}
                if expected <= acked:
                    break
                time.sleep(0.05)
            time.sleep(0.5)             # anything sent again late would show up now
        finally:
            served.kill()
        return _report(cycles, expected, rcv, secret, time.monotonic() - started)
    finally:
        rcv.close()


def _acked(rcv: Receiver) -> list:
    seen_first: set = set()
    acked = []
    for delivery in list(rcv.deliveries):
        event_id = delivery.headers.get("webhook-id")
        if event_id in seen_first:
            acked.append(delivery)
        seen_first.add(event_id)
    return acked


def _report(cycles: int, expected: set, rcv: Receiver, secret: str,
            seconds: float) -> CrashReport:
    acked = _acked(rcv)
    acks = Counter(d.headers.get("webhook-id") for d in acked)
    bad = 0
    bodies: dict = {}
    for delivery in rcv.deliveries:
        header = delivery.headers.get("service-signature", "")
        try:
            t = signing.parse_header(header)[0]
            event = signing.verify(secret, header, delivery.body, now=t)
            signing.verify_standard(secret, delivery.headers, delivery.body, now=t)
            if abs(t - time.time()) > 600:
                bad += 1
        except signing.SignatureError:
            bad += 1
            continue
        bodies.setdefault(event["id"], set()).add(delivery.body)
    return CrashReport(
        cycles=cycles, events=len(expected), acknowledged=len(expected & set(acks)),
        lost=len(expected - set(acks)), max_acks_per_event=max(acks.values(), default=0),
        events_acked_twice=sum(1 for n in acks.values() if n > 1), bad_signatures=bad,
        changed_bodies=sum(1 for b in bodies.values() if len(b) > 1),
        attempts=len(rcv.deliveries), seconds=seconds)
