"""Issue 29's small holes, tried on a real `trackgrade serve` on a real port:
forged log lines, a revoked key's upload token, controls in names, the data
directory's mode."""

from __future__ import annotations

import os
import re
import socket
import stat
import subprocess
import time

import pytest

from trackgrade.server import accounts
from trackgrade.server.store import open_store

from tests.server.serve_process import CLI, ServeProcess, admin, make_key
from tests.server.server_harness import request, upload


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    data = tmp_path_factory.mktemp("holes") / "data"
    data.mkdir(mode=0o755)
    os.chmod(data, 0o755)               # a directory that already exists, world-readable
    key, _ = make_key("live", 5, data_dir=data)
    server = ServeProcess(data, "--workers", "1", timeout=60, require=True, stop_wait=15)
    server.key = key
    yield server
    server.stop()


def raw_request(url: str, request_line: bytes, headers: bytes = b"") -> bytes:
    host, port = url.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(request_line + b"\r\nHost: " + f"{host}:{port}".encode() + b"\r\n"
                     + headers + b"Connection: close\r\n\r\n")
        answer = b""
        while chunk := sock.recv(65536):
            answer += chunk
    return answer


def test_the_data_directory_is_tightened_to_0700_at_start(served):
    assert stat.S_IMODE(os.stat(served.data).st_mode) == 0o700


FORGED = ("\n2026-11-27 22:00:00,000 INFO trackgrade.server admin key revoked "
          "\x1b[2J\x1b[31mby root\u202e")


def test_a_request_cannot_forge_a_log_line(served):
    """A path with %0a, %1b and a right-to-left override, answered by a route
    (a 404) and refused from its head (a GET with a body): one request, one
    log line each, no raw control."""
    mark = len(served.log)
    encoded = "".join(ch if ch.isalnum() else "".join(f"%{b:02X}" for b in ch.encode())
                      for ch in FORGED)
    answer = raw_request(served.url, f"GET /v1/analyses/x{encoded} HTTP/1.1".encode())
    assert answer.startswith(b"HTTP/1.1 4")
    answer = raw_request(served.url, f"GET /v1/genres/y{encoded} HTTP/1.1".encode(),
                         b"Content-Length: 5\r\n")
    assert answer.startswith(b"HTTP/1.1 4")
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline and "".join(served.log[mark:]).count("key revoked") < 2:
        time.sleep(0.05)
    lines = "".join(served.log[mark:]).splitlines()
    hits = [line for line in lines if "admin key revoked" in line]
    assert len(hits) == 2, lines
    for hit, prefix in zip(hits, ("/v1/analyses/x", "/v1/genres/y")):
        assert re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d+ INFO trackgrade\.access GET "
                        + re.escape(prefix), hit), hit
        assert "\\n2026-11-27 22:00:00,000 INFO" in hit and "\\x1b[2J\\x1b[31m" in hit, hit
    assert not any(ch in "".join(lines) for ch in "\x1b\u202e\r")


def test_a_revoked_keys_upload_token_is_dead_at_once(served, track):
    data = served.data
    key, _ = make_key("live", 2, data_dir=data)
    store = open_store(data)
    key_id = store.find("keys.hash", accounts.hash_key(key))["id"]
    store.close()
    accepted = request(served.url, "POST", "/v1/analyses", key=key, idem="revoked-upload",
                       body={"file_name": "t.wav"}).json
    assert admin("keys", "revoke", key_id, "--data", str(data)).returncode == 0
    reply = upload(served.url, accepted, track, field_name="file", part_name="t.wav")
    assert reply.status == 401 and reply.error["code"] == "upload_token_invalid", reply.json
    store = open_store(data)
    try:
        doc = store.get("analyses", accepted["id"])
    finally:
        store.close()
    assert doc["phase"] == "awaiting_upload" and doc["bytes_received"] is None  # nothing runs


@pytest.mark.parametrize("field, value", [
    ("file_name", "evil\u202eav.wav"), ("file_name", "a\u009b31m.wav"),
    ("file_name", "a\u2066b.wav"), ("file_name", "a\u200fb.wav"), ("file_name", "a\u061cb.wav"),
    ("external_id", "ref-\u202e9"), ("external_id", "ref\u009b2J"), ("external_id", "r\u200e1"),
    ("external_id", "r\u2069"), ("external_id", "tab\there")])
def test_names_refuse_c0_c1_and_bidi_controls(served, field, value):
    body = {"file_name": "ok.wav", field: value}
    reply = request(served.url, "POST", "/v1/analyses", key=served.key,
                    idem=f"controls-{field}-{value.encode().hex()}", body=body)
    assert reply.status == 400, reply.json
    assert reply.error["code"] == "parameter_invalid" and reply.error["param"] == field
    assert field in reply.error["message"]


PASSWORD = "pg-s3cr3t-pw"
DSNS = ["postgresql://tg:{pw}@127.0.0.1:{port}/tg?connect_timeout=2",
        "postgresql://tg@127.0.0.1:{port}/tg?connect_timeout=2&password={pw}",
        "postgres://tg@127.0.0.1:{port}/tg?password={pw}&connect_timeout=2",
        "host=127.0.0.1 port={port} user=tg password={pw} dbname=tg connect_timeout=2",
        "host=127.0.0.1 port={port} user=tg password = '{pw} with space' dbname=tg"]


@pytest.mark.parametrize("dsn", DSNS)
def test_a_database_password_is_never_printed_in_any_connection_string_form(dsn):
    """A database that cannot be reached: `serve` and an admin command each
    say so in one line that names the connection string without its password."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]            # closed once the block ends
    dsn = dsn.format(pw=PASSWORD, port=port)
    for args in (["serve", "--database", dsn, "--port", "0"],
                 ["admin", "keys", "list", "--database", dsn]):
        run = subprocess.run(CLI + args, capture_output=True, text=True, timeout=60)
        assert run.returncode == 2, run.stderr
        assert "pg-s3cr3t" not in run.stdout + run.stderr, run.stderr
        assert "***" in run.stderr and "127.0.0.1" in run.stderr, run.stderr


def test_the_start_line_shows_a_key_value_connection_string_without_its_password(
        postgres_server, tmp_path):
    url = postgres_server.create_database()
    name = url.rsplit("/", 1)[1]
    dsn = (f"host=127.0.0.1 port={postgres_server.port} user=postgres dbname={name} "
           f"password={PASSWORD}")     # trust authentication: the password is not checked
    server = ServeProcess(None, database=dsn, timeout=60, require=True, stop_wait=15)
    try:
        assert f"dbname={name} password=***" in server.output, server.output
    finally:
        server.stop()
    assert "pg-s3cr3t" not in server.output


def test_a_drivers_message_quoting_the_password_is_scrubbed_too():
    """libpq quotes pieces of a malformed connection string in its messages;
    whatever it quotes, the password never reaches a message."""
    from trackgrade.server.store.postgres import _scrubbed, redact

    for dsn in ("postgresql://tg:p%40ss-9@127.0.0.1/tg",
                "host=127.0.0.1 password='p%40ss-9' junk"):
        message = f'missing "=" after "junk p%40ss-9" in connection info string ({dsn})'
        assert "p%40ss-9" not in _scrubbed(message, dsn) and "***" in _scrubbed(message, dsn)
        assert "p%40ss-9" not in redact(dsn)
