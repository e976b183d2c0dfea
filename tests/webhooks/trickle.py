"""The trickling-receiver attack on a real `trackgrade serve` (issue 29, item 2),
shared by the CI proof and benchmarks/bench_trickle.py.

An attacker account registers ENDPOINTS endpoints on a receiver (a plain
socket server here) that answers `HTTP/1.1 200 OK\\r\\nX-Slow: ` and then one
byte every TRICKLE_S seconds, for ever; its test-mode analyses give it
events to deliver there. A victim account's receiver answers at once. The
report holds the victim's delivery latency during the attack, how long the
server took to exit after SIGTERM (and whether `server.lock` was free while
the process still ran), and whether, after a restart with the receiver
answering normally, every event reached every endpoint.
"""

from __future__ import annotations

import fcntl
import os
import select
import signal
import socket
import statistics
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import urlsplit

from tests.server.hostile_http import read_message
from tests.server.serve_process import ServeProcess, make_key
from tests.server.server_harness import multipart, request
from tests.webhooks.receiver import Receiver
from trackgrade.server.store import open_store
from trackgrade.server.webhooks import endpoints

ENDPOINTS = 16
TRICKLE_S = 2.0
TIMEOUT_S = 3           # TRACKGRADE_WEBHOOK_TIMEOUT, as in the issue
SCHEDULE = ",".join(["0"] + ["1"] * 40)      # the attacker's retries keep coming


class TricklingReceiver:
    """A socket server: in "trickle" mode every request gets a status line
    and then a header byte every TRICKLE_S seconds until the client hangs
    up; in "answer" mode a 200 at once, recorded as (path, event id)."""

    def __init__(self) -> None:
        self.mode = "trickle"
        self.open = 0               # trickling connections right now
        self.peak = 0
        self.acknowledged: set[tuple[str, str]] = set()
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self.sock = socket.create_server(("127.0.0.1", 0), backlog=128)
        threading.Thread(target=self._accept, daemon=True).start()

    def url(self, n: int) -> str:
        return f"http://127.0.0.1:{self.sock.getsockname()[1]}/a{n}"

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            conn.settimeout(10)
            try:
                start, headers, _ = read_message(conn)
                path, event_id = start[1], headers.get("webhook-id", "")
                if self.mode == "answer":
                    conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n"
                                 b"Connection: close\r\n\r\n")
                    with self._lock:
                        self.acknowledged.add((path, event_id))
                    return
                with self._lock:
                    self.open += 1
                    self.peak = max(self.peak, self.open)
                try:
                    conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
                    while not self._stop.is_set():
                        if select.select([conn], [], [], TRICKLE_S)[0]:
                            return          # the client hung up
                        conn.sendall(b"a")
                finally:
                    with self._lock:
                        self.open -= 1
            except OSError:
                return

    def close(self) -> None:
        self._stop.set()
        self.sock.close()


@dataclass
class AttackReport:
    peak_trickling: int
    victim_latencies: list = field(default_factory=list)    # seconds; None: not delivered
    sigterm_exit_s: float | None = None                      # None: still running at the cap
    lock_free_while_running: bool = False
    events_after_restart: int = 0
    acknowledged_after_restart: int = 0
    expected_after_restart: int = 0

    def lines(self) -> list[str]:
        got = [x for x in self.victim_latencies if x is not None]
        lost = len(self.victim_latencies) - len(got)
        return [
            f"attacker attempts held open at once: {self.peak_trickling}",
            "victim delivery latency (s): " + ", ".join(
                "never" if x is None else f"{x:.2f}" for x in self.victim_latencies)
            + (f"  (median {statistics.median(got):.2f}, max {max(got):.2f})" if got else "")
            + (f"  {lost} not delivered within the wait" if lost else ""),
            "SIGTERM to exit: " + ("still running at the cap (killed)"
                                   if self.sigterm_exit_s is None
                                   else f"{self.sigterm_exit_s:.2f} s"),
            f"server.lock free while the process still ran: {self.lock_free_while_running}",
            f"after restart: {self.acknowledged_after_restart} of "
            f"{self.expected_after_restart} attacker deliveries acknowledged",
        ]


def _analyse(url: str, key: str, name: str) -> float:
    """Submit and upload one test-mode analysis; the monotonic time its
    upload was answered (its events exist from then on)."""
    accepted = request(url, "POST", "/v1/analyses", key=key, idem=f"{name}-{time.monotonic_ns()}",
                       body={"file_name": name}).json
    body, ctype = multipart({"file": ("a.wav", b"test mode never decodes")})
    request(url, "POST", urlsplit(accepted["upload"]["url"]).path, raw=body,
            headers={"Content-Type": ctype,
                     "Authorization": f"Bearer {accepted['upload']['token']}"})
    return time.monotonic()


def _wait(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.02)
    return predicate()


def _lock_is_free(data: Path) -> bool:
    fd = os.open(data / "server.lock", os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def run_attack(data: Path, *, env: dict | None = None, cwd: Path | None = None,
               victims: int = 4, victim_wait: float = 15.0, exit_cap: float = 30.0,
               attack: bool = True) -> AttackReport:
    """The whole attack (module docstring). `env` is laid over the server's
    environment; `cwd` set to another checkout runs that one's server;
    `attack=False`: the same run with the attacker's receiver answering at
    once (the victim's latency floor)."""
    attacker_key, attacker = make_key("test", data_dir=data)
    victim_key, victim = make_key("test", data_dir=data)
    trickle, honest = TricklingReceiver(), Receiver()
    trickle.mode = "trickle" if attack else "answer"
    store = open_store(data)
    try:
        for n in range(ENDPOINTS):
            endpoints.add_endpoint(store, trickle.url(n), attacker)
        endpoints.add_endpoint(store, honest.url, victim)
    finally:
        store.close()
    server_env = {"TRACKGRADE_WEBHOOK_TIMEOUT": str(TIMEOUT_S),
                  "TRACKGRADE_WEBHOOK_SCHEDULE": SCHEDULE, **(env or {})}
    server = ServeProcess(data, "--workers", "1", env=server_env, docs_url=None, require=True,
                          stop_wait=exit_cap, cwd=cwd)
    report = AttackReport(0)
    try:
        attacker_events = 0
        for n in range(3):
            _analyse(server.url, attacker_key, f"attack{n}.wav")
            attacker_events += 2
        if attack:
            _wait(lambda: trickle.open >= 12, 10)      # the pool is taken
        for n in range(victims):
            answered = _analyse(server.url, victim_key, f"victim{n}.wav")
            wanted = 2 * (n + 1)                         # scores_ready and completed each
            arrived = _wait(lambda: len(honest.deliveries) >= wanted, victim_wait)
            report.victim_latencies.append(
                max(0.0, honest.deliveries[wanted - 1].at - answered) if arrived else None)
            time.sleep(0.5)
        report.peak_trickling = trickle.peak
        # SIGTERM while attempts are trickling
        started = time.monotonic()
        server.proc.send_signal(signal.SIGTERM)
        while server.proc.poll() is None and time.monotonic() - started < exit_cap:
            if _lock_is_free(data):
                report.lock_free_while_running = True
            time.sleep(0.05)
        if server.proc.poll() is not None:
            report.sigterm_exit_s = time.monotonic() - started
        server.kill()
        # restart with the receiver answering: every abandoned attempt is made again
        trickle.mode = "answer"
        report.expected_after_restart = attacker_events * ENDPOINTS
        server.start()
        assert server.url, server.output
        _wait(lambda: len(trickle.acknowledged) >= report.expected_after_restart, 30)
        report.acknowledged_after_restart = len(trickle.acknowledged)
    finally:
        server.stop()
        trickle.close()
        honest.close()
    return report
