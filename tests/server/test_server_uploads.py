"""The upload step: tokens, multipart, header checks, broken transfers, the
expiry sweeper, and the proof that audio never touches a file."""

from __future__ import annotations

import socket
import time
from urllib.parse import urlsplit

import pytest

from trackgrade.server.store import open_store

from tests.poll import wait_for
from tests.server.server_harness import hold_executor, multipart, start, wav_bytes


@pytest.fixture(scope="module")
def server():
    s = start(in_flight=100, test_in_flight=100, rate_per_minute=10_000,
              test_rate_per_minute=10_000)
    yield s
    s.stop()


def row(server, analysis_id):
    return server.store.get("analyses", analysis_id)


def assert_failed_with(server, accepted, code, account=None, credits=None):
    """The analysis failed with `code` embedded, the credit is back, the event is out."""
    doc = server.request("GET", f"/v1/analyses/{accepted['id']}",
                         key=server.keys.get(accepted["id"])).json
    assert doc["status"] == "failed" and doc["error"]["code"] == code
    events = [e for e in server.events(accepted["id"]) if e["type"] == "analysis.failed"]
    assert len(events) == 1
    data = events[0]["envelope"]["data"]
    assert data["id"] == accepted["id"] and data["status"] == "failed"
    assert data["error"]["code"] == code and data["external_id"] == accepted["external_id"]
    if account is not None:
        assert server.credits(account) == credits


def submit(server, mode="live", name="track.wav", credits=5):
    key, account = server.key(mode, credits=credits)
    accepted = server.submit(key, name, external_id="ext").json
    server.keys[accepted["id"]] = key
    return key, account, accepted


# --- success -------------------------------------------------------------------------

def test_upload_success_shape_and_single_use(server):
    key, account, accepted = submit(server, "test")
    data = wav_bytes(2)
    reply = server.upload(accepted, data)
    assert reply.status == 200
    assert reply.json == {"object": "upload", "analysis_id": accepted["id"],
                          "status": "processing", "bytes_received": len(data)}
    assert reply.header("X-Request-Id")
    again = server.upload(accepted, data)
    assert again.status == 401 and again.error["code"] == "upload_token_invalid"
    assert again.error["type"] == "authentication_error"


def test_test_mode_never_decodes_the_bytes(server):
    key, account, accepted = submit(server, "test", "noise.wav")
    assert server.upload(accepted, b"definitely not audio").status == 200
    doc = server.wait(accepted["id"], key, until=lambda d: d["diagnosis_status"] == "ready")
    assert doc["status"] == "complete" and doc["livemode"] is False
    assert server.credits(account) == 5
    assert sorted(e["type"] for e in server.events(accepted["id"])) == [
        "analysis.completed", "analysis.scores_ready"]


# --- tokens ----------------------------------------------------------------------------

def test_bad_tokens_change_nothing(server):
    key, account, accepted = submit(server)
    other = submit(server)[2]
    for token in ("upt_wrong", other["upload"]["token"], ""):
        reply = server.upload(accepted, wav_bytes(2), token=token or " ")
        assert reply.status == 401 and reply.error["code"] == "upload_token_invalid"
    path = urlsplit(accepted["upload"]["url"]).path
    body, ctype = multipart({"file": ("a.wav", wav_bytes(2))})
    reply = server.request("POST", path, raw=body, headers={"Content-Type": ctype})
    assert reply.status == 401
    reply = server.request("POST", "/v1/uploads/nonsense", raw=body,
                           headers={"Content-Type": ctype,
                                    "Authorization": f"Bearer {accepted['upload']['token']}"})
    assert reply.status == 401
    assert row(server, accepted["id"])["status"] == "processing"
    assert server.credits(account) == 4


def test_expired_token_is_401(server):
    key, account, accepted = submit(server, "test")
    server.clock.advance(accepted["upload"]["expires_in"] + 1)
    try:
        reply = server.upload(accepted, wav_bytes(2))
        assert reply.status == 401 and reply.error["code"] == "upload_token_invalid"
    finally:
        server.clock.advance(-(accepted["upload"]["expires_in"] + 1))


# --- broken uploads ----------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["wrong_field", "not_multipart", "truncated_form", "empty_form",
                                  "too_many_parts", "no_boundary", "empty_file", "no_type"])
def test_malformed_upload_attempts_leave_the_token_valid(server, kind):
    key, account, accepted = submit(server)
    target = accepted["upload"]
    auth = {"Authorization": f"Bearer {target['token']}"}
    path = urlsplit(target["url"]).path
    if kind == "wrong_field":
        body, ctype = multipart({"audio": ("a.wav", wav_bytes(2))})
    elif kind == "not_multipart":
        body, ctype = wav_bytes(2), "audio/wav"
    elif kind == "truncated_form":
        full, ctype = multipart({"file": ("a.wav", wav_bytes(2))})
        body = full[: len(full) // 2]
    elif kind == "too_many_parts":
        body, ctype = multipart({f"f{i}": "x" for i in range(40)})
    elif kind == "no_boundary":
        body, ctype = multipart({"file": ("a.wav", wav_bytes(2))})[0], "multipart/form-data"
    elif kind == "empty_file":
        body, ctype = multipart({"file": ("a.wav", b"")})
    elif kind == "no_type":
        body, ctype = multipart({"file": ("a.wav", wav_bytes(2))})[0], None
    else:
        body, ctype = multipart({"note": "hello"})
    headers = {**auth, **({"Content-Type": ctype} if ctype else {})}
    reply = server.request("POST", path, raw=body, headers=headers)
    assert reply.status == 400, reply.body
    assert reply.error["code"] == "upload_incomplete"
    assert row(server, accepted["id"])["phase"] == "awaiting_upload"
    assert server.credits(account) == 4 and server.events(accepted["id"]) == []
    # the correct upload that follows is accepted with the same token
    assert server.upload(accepted, wav_bytes(3)).status == 200


def test_body_shorter_than_content_length_then_retry(server):
    key, account, accepted = submit(server)
    target = accepted["upload"]
    body, ctype = multipart({"file": ("a.wav", wav_bytes(2))})
    parts = urlsplit(target["url"])
    channels = server.running.server.active_channels

    def open_here(address):
        return [c for c in list(channels.values()) if c.addr == address]

    with socket.create_connection((parts.hostname, parts.port), timeout=10) as sock:
        sock.sendall(f"POST {parts.path} HTTP/1.1\r\nHost: x\r\nContent-Type: {ctype}\r\n"
                     f"Authorization: Bearer {target['token']}\r\n"
                     f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:1000])
        address = sock.getsockname()
        wait_for(lambda: open_here(address), what="the server holds the connection")
    # the client went away mid-body: once the server has dropped the connection,
    # nothing was accepted and the token still works
    wait_for(lambda: not open_here(address), what="the server dropped the connection")
    assert row(server, accepted["id"])["phase"] == "awaiting_upload"
    assert server.upload(accepted, wav_bytes(2)).status in (200, 422)


def sweeps_after(s):
    """True once the sweeper has begun two passes since the call: the first
    of them, which began after it, has finished."""
    first = s.ctx._next_sweep
    seen = {first}

    def done() -> bool:
        seen.add(s.ctx._next_sweep)
        return len(seen) >= 3
    return done


def test_upload_that_never_comes_fails_when_the_token_expires():
    s = start(sweep_interval=0.02, in_flight=5)
    try:
        key, account = s.key("live", credits=3)
        accepted = s.submit(key, external_id="late").json
        assert s.credits(account) == 2
        s.clock.advance(899)
        wait_for(sweeps_after(s), what="a sweep after the clock moved")
        assert s.store.get("analyses", accepted["id"])["status"] == "processing"
        s.clock.advance(2)                         # past expires_in: the sweeper acts
        doc = s.wait(accepted["id"], key, timeout=5)
        assert doc["status"] == "failed" and doc["error"]["code"] == "upload_incomplete"
        assert s.credits(account) == 3
        assert [e["type"] for e in s.events(accepted["id"])] == ["analysis.failed"]
    finally:
        s.stop()


# --- header checks (live) ------------------------------------------------------------------

@pytest.mark.parametrize("data,code", [
    (wav_bytes(3, fmt_tag=0x55), "unprocessable_audio"),       # MP3 inside WAV
    (wav_bytes(3, fmt_tag=0x0002, bits=4), "unprocessable_audio"),  # MS ADPCM
    (b"OggS" + bytes(5000), "unprocessable_audio"),
    (b"hello, this is not audio at all" * 100, "unprocessable_audio"),
    (wav_bytes(0.5), "unprocessable_audio"),                    # too short
])
def test_undecodable_uploads_are_422(server, data, code):
    key, account, accepted = submit(server)
    reply = server.upload(accepted, data)
    assert reply.status == 422, reply.body
    assert reply.error["code"] == code
    assert_failed_with(server, accepted, code, account, 5)


def test_a_one_bar_break_is_analysed_live(server):
    """Audio from 1 s up is accepted (CONTRACT.md section 5, parts): a 1.5 s
    break cut to one bar at 160 BPM completes with its tempo and as a part."""
    from tests.one_bar import one_bar_wav

    key, account, accepted = submit(server)
    assert server.upload(accepted, one_bar_wav(160)).status == 200
    doc = server.wait(accepted["id"], key, until=lambda d: d["diagnosis_status"] == "ready")
    assert doc["status"] == "complete", doc.get("error")
    assert abs(doc["duration_seconds"] - 1.5) < 0.01
    assert abs(doc["tempo"]["bpm"] - 160) <= 3.2
    assert doc["structure"]["judged"] is False


def test_over_twenty_minutes_is_413_file_rejected(server):
    key, account, accepted = submit(server)
    reply = server.upload(accepted, wav_bytes(21 * 60, rate=8000, bits=8))
    assert reply.status == 413 and reply.error["code"] == "file_rejected"
    assert_failed_with(server, accepted, "file_rejected", account, 5)


def test_mp3_over_its_size_limit_is_413_file_too_large(server):
    key, account, accepted = submit(server, name="big.mp3")
    frame = b"\xff\xfb\x90\x00" + bytes(413)
    data = frame * (49 * 1024 * 1024 // len(frame) + 1)
    reply = server.upload(accepted, data)
    assert reply.status == 413 and reply.error["code"] == "file_too_large"
    assert "48" in reply.error["message"]
    assert_failed_with(server, accepted, "file_too_large", account, 5)


@pytest.mark.parametrize("name,mib,limit", [("big.mp3", 49, 48), ("big.flac", 141, 140)])
def test_the_declared_format_limit_applies_before_sniffing(server, name, mib, limit):
    """Bytes that are not audio at all: the size, from the declared name, decides first."""
    key, account, accepted = submit(server, name=name)
    reply = server.upload(accepted, bytes(mib * 1024 * 1024))
    assert reply.status == 413 and reply.error["code"] == "file_too_large", reply.body
    assert f"{limit} MiB" in reply.error["message"]
    assert_failed_with(server, accepted, "file_too_large", account, 5)


def test_configured_upload_limit():
    """Bodies a little over the limit reach the app and fail the analysis;
    far bigger ones are refused by waitress itself (test_server_envelope)."""
    s = start(max_upload_bytes=300_000, in_flight=5)
    try:
        key, account = s.key("live", credits=2)
        accepted = s.submit(key).json
        s.keys[accepted["id"]] = key
        reply = s.upload(accepted, wav_bytes(20, rate=8000, bits=16))   # 320 kB
        assert reply.status == 413 and reply.error["code"] == "file_too_large"
        assert_failed_with(s, accepted, "file_too_large", account, 2)
    finally:
        s.stop()


# --- test-mode failures by name ----------------------------------------------------------------

@pytest.mark.parametrize("code,status", [("unprocessable_audio", 422), ("file_rejected", 413),
                                         ("upload_incomplete", 400)])
def test_test_mode_fail_names_at_the_upload_step(server, code, status):
    key, account, accepted = submit(server, "test", f"kick_fail_{code}.wav")
    reply = server.upload(accepted, wav_bytes(2))
    assert reply.status == status and reply.error["code"] == code
    assert_failed_with(server, accepted, code)


def test_test_mode_engine_error_fails_after_the_upload(server):
    key, account, accepted = submit(server, "test", "kick_fail_engine_error.flac")
    assert server.upload(accepted, b"x").status == 200
    doc = server.wait(accepted["id"], key)
    assert doc["status"] == "failed" and doc["error"]["code"] == "engine_error"
    assert_failed_with(server, accepted, "engine_error")


# --- audio stays in memory ----------------------------------------------------------------------

def test_uploads_never_touch_a_file(tmp_path, empty_tmpdir):
    """TMPDIR and tempfile.tempdir point at an empty directory; several-MB
    uploads (test mode, and live through the worker process pool) leave no
    file in it, and no audio bytes appear anywhere in the data directory."""
    from trackgrade.server.worker import ProcessExecutor

    spool = empty_tmpdir
    data_dir = tmp_path / "data"
    store = open_store(data_dir)
    executor = ProcessExecutor(1, queue_size=2)
    s = start(store=store, executor=executor, in_flight=5)
    marker = b"\x13\x37TRACKGRADE-AUDIO-MARKER\x42\x24"
    try:
        audio = wav_bytes(40, rate=44100, channels=2, pattern=marker)   # ~7 MB
        assert len(audio) > 6_000_000
        for mode in ("test", "live"):
            key, account = s.key(mode, credits=2)
            accepted = s.submit(key, f"{mode}.wav").json
            reply = s.upload(accepted, audio)
            assert reply.status == 200, reply.body
            assert reply.json["bytes_received"] == len(audio)
            s.wait(accepted["id"], key, timeout=60)
        # nothing but the fork server's listening socket (trackgrade.pool), which
        # multiprocessing keeps in a pymp-* directory of its own: no bytes, no audio
        assert [p for p in spool.rglob("*") if not (p.is_socket() or p.name.startswith("pymp-"))] == []
        for path in data_dir.rglob("*"):
            if path.is_file():
                assert marker not in path.read_bytes(), path
                assert marker[2:20] not in path.read_bytes(), path
    finally:
        s.stop()
        store.close()


def test_engine_at_capacity_at_upload_keeps_the_token():
    from trackgrade.server.worker import ThreadExecutor

    executor = ThreadExecutor(1, queue_size=0)
    s = start(executor=executor, in_flight=5)
    release = None
    try:
        key, account = s.key("live", credits=2)
        accepted = s.submit(key).json
        release = hold_executor(executor)
        reply = s.upload(accepted, wav_bytes(2))
        assert reply.status == 503 and reply.error["code"] == "engine_at_capacity"
        assert reply.header("Retry-After")
        assert s.store.get("analyses", accepted["id"])["phase"] == "awaiting_upload"
        release.set()
        deadline = time.monotonic() + 10
        while not executor.has_room() and time.monotonic() < deadline:
            time.sleep(0.01)
        assert s.upload(accepted, wav_bytes(2)).status == 200      # the same token
        assert s.credits(account) == 1
    finally:
        if release is not None:
            release.set()
        s.stop()
        executor.shutdown(wait=False)
