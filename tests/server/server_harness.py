"""A real trackgrade server on a free port, in a background thread, and a
small stdlib HTTP client (http.client, keep-alive) for the server tests."""

from __future__ import annotations

import http.client
import io
import json
import random
import struct
import threading
import time
import uuid
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from trackgrade.config import load_settings
from trackgrade.server import accounts
from trackgrade.server.app import context, create_app
from trackgrade.server.clock import FixedClock
from trackgrade.server.serve import start_in_thread
from trackgrade.server.store import MemoryStore
from trackgrade.server.worker import Job, ThreadExecutor


@dataclass
class Reply:
    status: int
    headers: dict
    body: bytes

    @property
    def json(self):
        return json.loads(self.body)

    @property
    def error(self) -> dict:
        return self.json["error"]

    def header(self, name: str) -> str | None:
        return self.headers.get(name.lower())


@dataclass
class Server:
    url: str
    app: object
    running: object
    clock: FixedClock
    keys: dict = field(default_factory=dict)
    owned: tuple = ()

    @property
    def ctx(self):
        return context(self.app)

    @property
    def store(self):
        return self.ctx.store

    def request(self, method: str, path: str, *, body=None, headers=None, key=None,
                raw: bytes | None = None, idem: str | None = None) -> Reply:
        return request(self.url, method, path, body=body, headers=headers, key=key, raw=raw,
                       idem=idem)

    def key(self, mode="live", *, plan="pro", billing="credits", credits=10) -> tuple[str, str]:
        """A fresh account + key: (secret, account_id)."""
        account = accounts.create_account(self.store, plan=plan, billing=billing,
                                          credits=credits, clock=self.clock)
        secret, _doc = accounts.create_key(self.store, account["id"], mode=mode,
                                           clock=self.clock)
        return secret, account["id"]

    def submit(self, key: str, file_name="track.wav", idem=None, **fields) -> Reply:
        return self.request("POST", "/v1/analyses", key=key, idem=idem or str(uuid.uuid4()),
                            body={"file_name": file_name, **fields})

    def upload(self, accepted: dict, data: bytes, *, field_name=None, token=None) -> Reply:
        return upload(self.url, accepted, data, field_name=field_name, token=token)

    def wait(self, analysis_id: str, key: str, until=lambda d: d["status"] != "processing",
             timeout=30.0) -> dict:
        """Poll the stored row (no HTTP: no rate window) until `until`, then GET it."""
        from trackgrade.server.documents import document

        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if until(document(self.store.get("analyses", analysis_id))):
                break
            time.sleep(0.02)
        return self.request("GET", f"/v1/analyses/{analysis_id}", key=key).json

    def events(self, analysis_id: str | None = None) -> list[dict]:
        """Every outbox event (delivered or not), oldest first."""
        rows = self.store.select("events.by_created")
        return [r for r in rows if analysis_id is None
                or r["envelope"]["data"].get("id") == analysis_id]

    def credits(self, account_id: str) -> int:
        return self.store.get("accounts", account_id)["credits"]

    def stop(self) -> None:
        """Stop serving; shut down only the executors this harness created."""
        self.running.stop()
        ctx = self.ctx
        ctx._stop.set()
        if ctx.webhooks is not None:
            ctx.webhooks.stop()
        for executor in self.owned:
            executor.shutdown(wait=False)


def start(*, store=None, executor=None, clock=None, start_ctx=True, sender=None,
          **overrides) -> Server:
    settings = load_settings({}, **{"threads": 8, **overrides})
    clock = clock or FixedClock(1_800_000_000.0)
    test_executor = ThreadExecutor(2, queue_size=32)
    owned = (test_executor,) if executor else (test_executor, ThreadExecutor(2, queue_size=8))
    app = create_app(settings, store=store or MemoryStore(), clock=clock,
                     executor=executor or owned[1], test_executor=test_executor, sender=sender)
    if start_ctx:
        context(app).start()
    running = start_in_thread(app, settings)
    return Server(running.url, app, running, clock, owned=owned)


def request(url: str, method: str, path: str, *, body=None, headers=None, key=None,
            raw: bytes | None = None, idem: str | None = None, timeout=30) -> Reply:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=timeout)
    hdrs = dict(headers or {})
    if key is not None:
        hdrs["Authorization"] = f"Bearer {key}"
    if idem is not None:
        hdrs["Idempotency-Key"] = idem
    data = raw
    if body is not None:
        data = json.dumps(body).encode()
        hdrs.setdefault("Content-Type", "application/json")
    try:
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        return Reply(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


def upload(url: str, accepted: dict, data: bytes, *, field_name=None, token=None,
           part_name: str = "audio.bin") -> Reply:
    """POST the bytes to the upload step of `accepted` on the server at `url`
    (whatever server issued the upload URL: only its path is used)."""
    target = accepted["upload"]
    body, ctype = multipart({field_name or target["field"]: (part_name, data)})
    return request(url, "POST", urlsplit(target["url"]).path, raw=body, headers={
        "Content-Type": ctype, "Authorization": f"Bearer {token or target['token']}"})


def multipart(fields: dict) -> tuple[bytes, str]:
    boundary = "tgboundary" + uuid.uuid4().hex
    out = io.BytesIO()
    for name, value in fields.items():
        out.write(f"--{boundary}\r\n".encode())
        if isinstance(value, tuple):
            filename, data = value
            out.write(f'Content-Disposition: form-data; name="{name}"; filename="{filename}"\r\n'
                      "Content-Type: application/octet-stream\r\n\r\n".encode())
            out.write(data)
        else:
            out.write(f'Content-Disposition: form-data; name="{name}"\r\n\r\n{value}'.encode())
        out.write(b"\r\n")
    out.write(f"--{boundary}--\r\n".encode())
    return out.getvalue(), f"multipart/form-data; boundary={boundary}"


def wav_bytes(seconds: float = 3.0, rate: int = 8000, *, channels: int = 1,
              fmt_tag: int = 1, bits: int = 16, pattern: bytes = b"") -> bytes:
    """A PCM WAV (noise-like ramp), or a header with another format tag."""
    frames = int(seconds * rate)
    block = channels * bits // 8
    if pattern:
        payload = (pattern * (frames * block // len(pattern) + 1))[:frames * block]
    else:
        noise = random.Random(frames).randbytes(65536)
        payload = (noise * (frames * block // len(noise) + 1))[:frames * block]
    fmt = struct.pack("<HHIIHH", fmt_tag, channels, rate, rate * block, block, bits)
    return (b"RIFF" + struct.pack("<I", 4 + 8 + len(fmt) + 8 + len(payload)) + b"WAVE"
            + b"fmt " + struct.pack("<I", len(fmt)) + fmt
            + b"data" + struct.pack("<I", len(payload)) + payload)


def hold_executor(executor) -> threading.Event:
    """Occupy the executor's only slot with a test-mode job whose callbacks
    block until the returned event is set (to provoke engine_at_capacity)."""
    release = threading.Event()

    class Holding:
        def scores_ready(self, analysis_id, analysis):
            release.wait(10)

        def completed(self, analysis_id, analysis):
            pass

        def failed(self, analysis_id, error):
            release.wait(10)

    executor.submit(Job("hold", "hold.wav", "pre-master", b"", test_mode=True), Holding())
    return release
