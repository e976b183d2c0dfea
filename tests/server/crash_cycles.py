"""Crash cycles against a real `trackgrade serve` process on loopback.

Each cycle starts the server on the same data directory, checks what the
previous cycles were told (every 202 and every accepted upload is there, the
credits balance exactly), runs concurrent clients (live and test
submissions, uploads) while webhook deliveries are pending (the receiver
answers 503 to each event's first attempt, so retries are always due), and
SIGKILLs the whole process group (server and analysis worker) at a random
moment. After each kill the store is opened directly and checked. A last
start runs until every event the store recorded has been acknowledged by the
receiver, each with a valid signature.

Used by tests/server/test_proof_crash.py (bounded) and
benchmarks/bench_hardening.py (more cycles)."""

from __future__ import annotations

import http.client
import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit


from trackgrade import signing
from trackgrade.server import accounts
from trackgrade.server.store import open_store
from trackgrade.server.webhooks import endpoints

from tests.webhooks.receiver import Receiver
from tests.server.serve_process import ServeProcess
from tests.server.server_harness import multipart, request, wav_bytes

LIVE_CREDITS = 100_000
ENV = {"TRACKGRADE_IN_FLIGHT": "100000", "TRACKGRADE_RATE_PER_MINUTE": "1000000",
       "TRACKGRADE_DAILY_QUOTA": "1000000", "TRACKGRADE_TEST_IN_FLIGHT": "100000",
       "TRACKGRADE_TEST_RATE_PER_MINUTE": "1000000", "TRACKGRADE_QUEUE_SIZE": "64",
       "TRACKGRADE_WEBHOOK_SCHEDULE": ",".join(["0"] + ["0.3"] * 30)}


@dataclass
class Ledger:
    """What the clients were told, across all cycles (thread-safe appends)."""
    accepted: dict = field(default_factory=dict)      # analysis id -> key
    uploaded: set = field(default_factory=set)        # analysis ids whose upload got 200
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass
class CrashReport:
    cycles: int = 0
    accepted: int = 0
    uploaded: int = 0
    kill_after_s: list = field(default_factory=list)
    events: int = 0
    events_delivered: int = 0
    attempts: int = 0
    bad_signatures: int = 0
    cut_by_kill: int = 0
    problems: list = field(default_factory=list)


class FirstAttemptFails:
    """Receiver behaviour: 503 to each event's first attempt, then 200 (only
    for a whole body)."""

    def __init__(self) -> None:
        self.seen: set = set()
        self.acked: set = set()
        self.lock = threading.Lock()

    def __call__(self, delivery, n):
        event_id = delivery.headers.get("webhook-id")
        if len(delivery.body) != int(delivery.headers.get("content-length", -1)):
            return 400, {}                  # cut short by a kill: not acknowledged
        with self.lock:
            if event_id not in self.seen:
                self.seen.add(event_id)
                return 503, {}
            self.acked.add(event_id)
        return 200, {}


def setup(data: Path, hook_url: str) -> dict:
    store = open_store(data)
    try:
        live_account = accounts.create_account(store, plan="pro", credits=LIVE_CREDITS)
        live, _ = accounts.create_key(store, live_account["id"], mode="live")
        test_account = accounts.create_account(store, plan="pro")
        test, _ = accounts.create_key(store, test_account["id"], mode="test")
        secrets = [endpoints.add_endpoint(store, hook_url, account["id"])["secret"]
                   for account in (live_account, test_account)]
    finally:
        store.close()
    return {"live": live, "test": test, "live_account": live_account["id"], "secrets": secrets}


def check_deliveries(data: Path, receiver: Receiver, behaviour: FirstAttemptFails,
                     secrets: list, report: CrashReport, settle: float) -> None:
    """Every recorded event acknowledged after the restart; every attempt signed."""
    store = open_store(data)
    try:
        expected = {e["id"] for e in store.select("events.by_created")}
    finally:
        store.close()
    deadline = time.monotonic() + settle
    while time.monotonic() < deadline and not expected <= behaviour.acked:
        time.sleep(0.05)
    report.events = len(expected)
    report.events_delivered = len(expected & behaviour.acked)
    missing = expected - behaviour.acked
    if missing:
        report.problems.append(f"{len(missing)} of {len(expected)} events never delivered")
    report.attempts = len(receiver.deliveries)
    for delivery in list(receiver.deliveries):
        if len(delivery.body) != int(delivery.headers.get("content-length", -1)):
            report.cut_by_kill += 1         # the sender died mid-body: not a signed whole
            continue
        header = delivery.headers.get("service-signature", "")
        try:
            t = signing.parse_header(header)[0]
            signing.verify(secrets, header, delivery.body, now=t)
            signing.verify_standard(secrets, delivery.headers, delivery.body, now=t)
        except signing.SignatureError:
            report.bad_signatures += 1
    if report.bad_signatures:
        report.problems.append(f"{report.bad_signatures} deliveries with a bad signature")


def client(url: str, keys: dict, ledger: Ledger, stop: threading.Event, rng: random.Random,
           audio: bytes) -> None:
    """Submit and upload until the server dies (or `stop`)."""
    while not stop.is_set():
        mode = rng.choice(("live", "test", "test"))
        key = keys[mode]
        try:
            reply = request(url, "POST", "/v1/analyses", key=key, idem=str(uuid.uuid4()),
                            body={"file_name": f"crash_{rng.randrange(10**6)}.wav"}, timeout=10)
            if reply.status != 202:
                continue
            accepted = reply.json
            with ledger.lock:
                ledger.accepted[accepted["id"]] = key
            if rng.random() < 0.2:          # some stay waiting for their bytes
                continue
            body, ctype = multipart({"file": ("a.wav", audio)})
            up = request(url, "POST", urlsplit(accepted["upload"]["url"]).path, raw=body,
                         headers={"Content-Type": ctype,
                                  "Authorization": f"Bearer {accepted['upload']['token']}"},
                         timeout=10)
            if up.status == 200:
                with ledger.lock:
                    ledger.uploaded.add(accepted["id"])
        except (OSError, http.client.HTTPException, ValueError):
            return                          # the server is gone


def check_store(data: Path, keys: dict, ledger: Ledger) -> list[str]:
    """The store loads; every acknowledged analysis is there; credits balance."""
    problems = []
    store = open_store(data)
    try:
        for analysis_id in ledger.accepted:
            row = store.get("analyses", analysis_id)
            if row is None:
                problems.append(f"acknowledged analysis {analysis_id} is missing")
            elif analysis_id in ledger.uploaded and row.get("phase") == "awaiting_upload":
                problems.append(f"acknowledged upload of {analysis_id} is missing")
        rows = [r for r in store.scan("analyses") if r["account_id"] == keys["live_account"]]
        spent = sum(1 for r in rows if r.get("credit_spent"))
        restored = sum(1 for r in rows if r.get("credit_restored"))
        balance = store.get("accounts", keys["live_account"])["credits"]
        if spent + restored != len(rows):
            problems.append(f"{len(rows)} live analyses but {spent} spent + {restored} restored")
        if balance != LIVE_CREDITS - spent or balance < 0:
            problems.append(f"balance {balance} != {LIVE_CREDITS} - {spent} spent")
        for r in rows:
            if r["status"] == "failed" and not r.get("credit_restored"):
                problems.append(f"failed analysis {r['id']} kept its credit")
    finally:
        store.close()
    return problems


def check_served(url: str, ledger: Ledger) -> list[str]:
    problems = []
    for analysis_id, key in list(ledger.accepted.items()):
        reply = request(url, "GET", f"/v1/analyses/{analysis_id}", key=key, timeout=10)
        if reply.status != 200:
            problems.append(f"GET {analysis_id} after restart: {reply.status}")
    return problems


def run(data: Path, cycles: int, *, seed: int = 1, clients: int = 4,
        kill_window: tuple[float, float] = (0.0, 1.5), settle: float = 60.0) -> CrashReport:
    behaviour = FirstAttemptFails()
    receiver = Receiver(behaviour)
    try:
        return _run(data, cycles, seed, clients, kill_window, settle, receiver, behaviour)
    finally:
        receiver.close()


def _run(data: Path, cycles: int, seed: int, clients: int, kill_window: tuple[float, float],
         settle: float, receiver: Receiver, behaviour: FirstAttemptFails) -> CrashReport:
    rng = random.Random(seed)
    keys = setup(data, receiver.url)
    ledger = Ledger()
    report = CrashReport()
    audio = wav_bytes(2.5, rate=8000)
    for cycle in range(cycles):
        served = ServeProcess(data, "--workers", "1", env=ENV)
        if served.url is None:
            served.kill()
            report.problems.append(f"cycle {cycle}: the server did not start: {served.output}")
            break
        report.problems += [f"cycle {cycle}: {p}" for p in check_served(served.url, ledger)]
        stop = threading.Event()
        threads = [threading.Thread(target=client, args=(served.url, keys, ledger, stop,
                                                         random.Random(rng.random()), audio),
                                    daemon=True) for _ in range(clients)]
        for thread in threads:
            thread.start()
        delay = rng.uniform(*kill_window)
        time.sleep(delay)
        served.kill()                       # SIGKILL: server and worker, mid-whatever
        stop.set()
        for thread in threads:
            thread.join(15)
        report.kill_after_s.append(round(delay, 3))
        report.problems += [f"cycle {cycle}: {p}" for p in check_store(data, keys, ledger)]
        report.cycles += 1
    final = ServeProcess(data, "--workers", "1", env=ENV)       # recovery after the last kill
    try:
        if final.url is None:
            report.problems.append(f"the final restart failed: {final.output}")
        else:
            report.problems += [f"final: {p}" for p in check_served(final.url, ledger)]
            check_deliveries(data, receiver, behaviour, keys["secrets"], report, settle)
    finally:
        final.stop()
    report.problems += [f"final: {p}" for p in check_store(data, keys, ledger)]
    report.accepted, report.uploaded = len(ledger.accepted), len(ledger.uploaded)
    return report
