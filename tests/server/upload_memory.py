"""What one upload costs a real `trackgrade serve` in memory (issue 29 item 7):
a WAV of `mib` MiB uploaded whole to a live analysis; the server process's
peak RSS (VmHWM) growth over its RSS just before the upload, read once the
analysis is done (the worker processes are not counted: they decode the
bytes within the bounded work of CONTRACT section 5). Used by the test in test_server_upload_memory.py
and by benchmarks/conn_attacks.py upload_memory (which runs it on another
tree's code too)."""

from __future__ import annotations

import http.client
import json
import time
import uuid
from urllib.parse import urlsplit

from tests.server.hostile_http import vm_kb
from tests.server.serve_process import ServeProcess, make_key
from tests.server.server_harness import multipart, request, wav_bytes

MiB = 1024 * 1024


def upload_peak(data_dir, mib: int, *, env: dict | None = None, cwd=None
                ) -> tuple[float, float, int]:
    """(RSS before in MB, peak growth in MB, upload body bytes)."""
    rate = 44100
    seconds = (mib * MiB - 1024) / (rate * 4)     # the file just under `mib` MiB
    body, ctype = multipart({"file": ("big.wav", wav_bytes(seconds, rate, channels=2))})
    serve = ServeProcess(data_dir, env={"TRACKGRADE_WORKERS": "1",
                                        "TRACKGRADE_RATE_PER_MINUTE": "100000", **(env or {})},
                         require=True, cwd=cwd)
    try:
        key, _ = make_key("live", data_dir=str(data_dir))
        parts = urlsplit(serve.url)
        conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
        reply = request(serve.url, "POST", "/v1/analyses", key=key, idem=str(uuid.uuid4()),
                        body={"file_name": "big.wav"})
        assert reply.status == 202, reply.body
        accepted = reply.json
        time.sleep(0.5)
        pid = serve.proc.pid
        before = vm_kb(pid, "VmRSS")
        with open(f"/proc/{pid}/clear_refs", "w") as refs:
            refs.write("5")                     # reset VmHWM to the current RSS
        conn.request("POST", urlsplit(accepted["upload"]["url"]).path, body=body, headers={
            "Authorization": f"Bearer {accepted['upload']['token']}", "Content-Type": ctype})
        resp = conn.getresponse()
        answer = resp.read()
        assert resp.status == 200, answer
        deadline = time.monotonic() + 120       # until the analysis is done: the job's
        while time.monotonic() < deadline:      # bytes are held until then
            conn.request("GET", f"/v1/analyses/{accepted['id']}",
                         headers={"Authorization": f"Bearer {key}"})
            if json.loads(conn.getresponse().read())["status"] != "processing":
                break
            time.sleep(0.5)
        peak = vm_kb(pid, "VmHWM")
        conn.close()
        return before / 1024, (peak - before) / 1024, len(body)
    finally:
        serve.kill()
