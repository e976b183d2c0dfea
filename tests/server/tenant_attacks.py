"""A key holder against everyone else, on a real `trackgrade serve` (issue 29
item 1): shared by the proof (tests/server/test_proof_tenant_budget.py) and
its benchmark (benchmarks/tenant_attacks.py, which runs it on another tree's
code too, for the before/after figures).

`body_budget_attack`: one tenant submits three `.wav` analyses and opens
their uploads declaring sizes that add up to exactly the server's body budget
(scaled down by configuration: 1 MiB uploads, a 2.5 MiB budget), then
trickles each body at twice the minimum body rate. Meanwhile another tenant
sends its 26-byte `POST /v1/analyses` every `victim_every` seconds; each
answer's status and latency is recorded. The upload token lives
`token_ttl` seconds: then the attacker's connections should be closed."""

from __future__ import annotations

import json
import socket
import threading
import time
import uuid
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from tests.server.serve_process import ServeProcess, make_key
from tests.server.server_harness import request

KiB = 1024
MiB = 1024 * KiB
MAX_UPLOAD = 1 * MiB
BUDGET = 5 * MiB // 2
ATTACK_SIZES = (MAX_UPLOAD, MAX_UPLOAD, BUDGET - 2 * MAX_UPLOAD)   # 200+200+112 MiB, scaled
MIN_RATE = 1 * KiB
TRICKLE_RATE = 2 * KiB                                             # bytes/s on each upload


def attack_env(token_ttl: int) -> dict:
    return {"TRACKGRADE_MAX_UPLOAD_BYTES": str(MAX_UPLOAD),
            "TRACKGRADE_MAX_BODY_BYTES_IN_FLIGHT": str(BUDGET),
            "TRACKGRADE_MIN_BODY_RATE": str(MIN_RATE),
            "TRACKGRADE_UPLOAD_TOKEN_TTL": str(token_ttl),
            "TRACKGRADE_SWEEP_INTERVAL": "1",
            "TRACKGRADE_TEST_IN_FLIGHT": "1000", "TRACKGRADE_TEST_RATE_PER_MINUTE": "10000"}


@dataclass
class Trickle:
    """One attacking upload: its head's answer (if the server refused it at
    once) and when the server ended the connection."""
    declared: int
    refused: int | None = None
    refusal: dict | None = None
    closed_after: float | None = None        # seconds after the head was sent
    sent: int = 0


@dataclass
class AttackResult:
    victim: list[tuple[float, int, str]] = field(default_factory=list)  # (at s, status, code)
    latencies_ms: list[float] = field(default_factory=list)
    trickles: list[Trickle] = field(default_factory=list)
    token_ttl: float = 0.0
    log: str = ""

    def statuses(self) -> dict[int, int]:
        counts: dict[int, int] = {}
        for _, status, _ in self.victim:
            counts[status] = counts.get(status, 0) + 1
        return counts

    def summary(self) -> str:
        lat = sorted(self.latencies_ms)
        p50 = lat[len(lat) // 2] if lat else float("nan")
        worst = lat[-1] if lat else float("nan")
        trickles = ", ".join(
            f"{t.declared // KiB} KiB: " + (f"refused {t.refused} {t.refusal['code']}"
                                            if t.refused else
                                            f"held, closed by the server after "
                                            f"{t.closed_after:.1f} s" if t.closed_after else
                                            f"held, still open at the end ({t.sent} B sent)")
            for t in self.trickles)
        return (f"victim: {len(self.victim)} POST /v1/analyses, answers {self.statuses()}, "
                f"latency p50 {p50:.0f} ms, worst {worst:.0f} ms; attacker (token "
                f"{self.token_ttl:.0f} s): {trickles}")


def _post_analysis(url: str, key: str, file_name: str = "victim.wav"):
    """(reply, milliseconds) of one `POST /v1/analyses` (26 bytes for the victim)."""
    started = time.perf_counter()
    reply = request(url, "POST", "/v1/analyses", key=key, idem=str(uuid.uuid4()),
                    raw=b'{"file_name":"%s"}' % file_name.encode(),
                    headers={"Content-Type": "application/json"})
    return reply, (time.perf_counter() - started) * 1e3


def _rest_of_answer(sock: socket.socket, data: bytes) -> dict:
    """The envelope error of an answer whose first bytes are `data`."""
    sock.settimeout(5)
    while b"\r\n\r\n" not in data:
        data += sock.recv(65536)
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(next(line.split(b":", 1)[1] for line in head.split(b"\r\n")
                      if line.lower().startswith(b"content-length:")))
    while len(body) < length:
        body += sock.recv(65536)
    return json.loads(body)["error"]


def _trickle(url: str, accepted: dict, trickle: Trickle, stop: threading.Event) -> None:
    parts = urlsplit(url)
    path = urlsplit(accepted["upload"]["url"]).path
    head = (f"POST {path} HTTP/1.1\r\nHost: {parts.netloc}\r\n"
            f"Authorization: Bearer {accepted['upload']['token']}\r\n"
            "Content-Type: multipart/form-data; boundary=b\r\n"
            f"Content-Length: {trickle.declared}\r\n\r\n").encode()
    sock = socket.create_connection((parts.hostname, parts.port), timeout=0.25)
    started = time.monotonic()
    try:
        sock.sendall(head)
        step = TRICKLE_RATE // 4
        while not stop.is_set() and trickle.sent < trickle.declared:
            try:
                data = sock.recv(65536)
                if not data:
                    trickle.closed_after = time.monotonic() - started
                    return
                status = int(data.split(b" ", 2)[1])
                if status >= 400 and trickle.refused is None:
                    trickle.refused = status
                    trickle.refusal = _rest_of_answer(sock, data)
                    return
            except socket.timeout:
                pass
            except (OSError, ValueError, IndexError):
                trickle.closed_after = time.monotonic() - started
                return
            try:
                sock.sendall(b"x" * step)
                trickle.sent += step
            except OSError:
                trickle.closed_after = time.monotonic() - started
                return
    finally:
        sock.close()


def body_budget_attack(data_dir, *, token_ttl: int = 8, victim_for: float = 12.0,
                       victim_every: float = 0.25, env: dict | None = None,
                       cwd=None) -> AttackResult:
    """Run the attack on a fresh `serve` over `data_dir` (env laid over
    `attack_env`; another tree's code: PYTHONPATH and cwd that tree)."""
    serve = ServeProcess(data_dir, env={**attack_env(token_ttl), **(env or {})}, require=True,
                         cwd=cwd)
    result = AttackResult(token_ttl=token_ttl)
    stop = threading.Event()
    threads = []
    try:
        attacker, _ = make_key("test", data_dir=str(data_dir))
        victim, _ = make_key("test", data_dir=str(data_dir))
        accepted = []
        for _ in ATTACK_SIZES:
            reply, _ = _post_analysis(serve.url, attacker, "big.wav")
            assert reply.status == 202, reply.body
            accepted.append(reply.json)
        for doc, size in zip(accepted, ATTACK_SIZES):
            trickle = Trickle(size)
            result.trickles.append(trickle)
            thread = threading.Thread(target=_trickle, args=(serve.url, doc, trickle, stop),
                                      daemon=True)
            thread.start()
            threads.append(thread)
            time.sleep(0.3)               # each head admitted before the next
        time.sleep(1.0)
        begun = time.monotonic()
        while time.monotonic() - begun < victim_for:
            reply, ms = _post_analysis(serve.url, victim)
            result.victim.append((time.monotonic() - begun, reply.status,
                                  reply.error["code"] if reply.status >= 400 else ""))
            result.latencies_ms.append(ms)
            time.sleep(victim_every)
        for thread in threads:
            thread.join(timeout=max(1.0, token_ttl + 4 - (time.monotonic() - begun)))
    finally:
        stop.set()
        for thread in threads:
            thread.join(timeout=2)
        serve.stop()
        result.log = serve.output
    return result
