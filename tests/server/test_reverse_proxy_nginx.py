"""The README's nginx configuration ("Behind a reverse proxy"), run through
Debian's real nginx in front of a real `trackgrade serve`: TLS at the proxy,
an upload through it completes and is analysed, the upload URL comes from
`public_base_url`, and a body the server refuses from its head is refused
through the proxy too, at once. nginx runs as a throwaway (its own prefix,
configuration and temp directories under tmp_path, on free loopback ports);
without nginx (or openssl) the tests are skipped naming the package
(tests/system.py; .ci/run installs both, and a skip fails the run there)."""

from __future__ import annotations

import http.client
import json
import os
import re
import socket
import ssl
import subprocess
import time
import uuid
from pathlib import Path

import pytest

from tests.server.server_harness import multipart, wav_bytes
from tests.server.serve_process import ServeProcess, free_port, make_key
from tests.system import need_tool

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_server_block() -> str:
    section = README.read_text(encoding="utf-8").split("### Behind a reverse proxy", 1)[1]
    return re.search(r"```nginx\n(.*?)```", section, re.S).group(1)


def proxy_config(tmp: Path, proxy_port: int, app_port: int, cert: Path, key: Path) -> Path:
    block = readme_server_block()
    block = block.replace("listen 443 ssl;", f"listen 127.0.0.1:{proxy_port} ssl;")
    block = re.sub(r"ssl_certificate\s+\S+;", f"ssl_certificate {cert};", block)
    block = re.sub(r"ssl_certificate_key\s+\S+;", f"ssl_certificate_key {key};", block)
    block = block.replace("http://127.0.0.1:8080", f"http://127.0.0.1:{app_port}")
    temps = "\n".join(f"    {name}_temp_path {tmp / name};"
                      for name in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi"))
    conf = tmp / "nginx.conf"
    conf.write_text(f"""
{"user root;" if os.geteuid() == 0 else ""}
worker_processes 1;
daemon off;
pid {tmp / "nginx.pid"};
error_log {tmp / "error.log"} info;
events {{ worker_connections 64; }}
http {{
    access_log off;
{temps}
{block}
}}
""")
    return conf


@pytest.fixture
def proxied(tmp_path):
    nginx = need_tool("nginx")
    openssl = need_tool("openssl")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True,
                   timeout=60)
    proxy_port, app_port = free_port(), free_port()
    public = f"https://localhost:{proxy_port}"
    data = tmp_path / "data"
    serve = ServeProcess(data, env={"TRACKGRADE_PUBLIC_BASE_URL": public,
                                    "TRACKGRADE_MAX_CONNECTIONS_PER_ADDRESS": "1000"},
                         port=app_port, require=True)
    conf = proxy_config(tmp_path, proxy_port, app_port, cert, key)
    proc = subprocess.Popen([nginx, "-p", str(tmp_path), "-c", str(conf),
                             "-e", str(tmp_path / "error.log")],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 10
    while True:
        try:
            socket.create_connection(("127.0.0.1", proxy_port), timeout=1).close()
            break
        except OSError as error:
            if proc.poll() is not None or time.monotonic() > deadline:
                log = (tmp_path / "error.log").read_text() if (tmp_path / "error.log").exists() \
                    else ""
                serve.stop()
                raise AssertionError(f"nginx did not start: {proc.stdout.read()!r}\n{log}") from error
            time.sleep(0.05)
    context = ssl.create_default_context(cafile=str(cert))
    try:
        yield {"port": proxy_port, "public": public, "context": context, "data": data,
               "serve": serve}
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
        serve.stop()


def call(proxied, method, path, *, key=None, body=None, headers=None, timeout=30):
    conn = http.client.HTTPSConnection("localhost", proxied["port"], timeout=timeout,
                                       context=proxied["context"])
    hdrs = dict(headers or {})
    if key:
        hdrs["Authorization"] = f"Bearer {key}"
    if isinstance(body, dict):
        body = json.dumps(body).encode()
        hdrs["Content-Type"] = "application/json"
    try:
        conn.request(method, path, body=body, headers=hdrs)
        resp = conn.getresponse()
        return resp.status, json.loads(resp.read() or b"null")
    finally:
        conn.close()


def test_an_upload_through_the_readme_nginx_configuration_completes(proxied):
    key, _ = make_key("live", data_dir=str(proxied["data"]))
    status, accepted = call(proxied, "POST", "/v1/analyses", key=key,
                            body={"file_name": "through-proxy.wav"},
                            headers={"Idempotency-Key": str(uuid.uuid4())})
    assert status == 202, accepted
    upload_url = accepted["upload"]["url"]
    assert upload_url.startswith(proxied["public"] + "/v1/uploads/")
    audio = wav_bytes(12, rate=44100, channels=2)                 # about 2 MB
    form, ctype = multipart({"file": ("through-proxy.wav", audio)})
    path = upload_url[len(proxied["public"]):]
    status, uploaded = call(proxied, "POST", path, key=accepted["upload"]["token"], body=form,
                            headers={"Content-Type": ctype})
    assert status == 200 and uploaded["bytes_received"] == len(audio), uploaded
    deadline = time.monotonic() + 120
    doc = {"status": "processing"}
    while doc["status"] == "processing" and time.monotonic() < deadline:
        time.sleep(0.5)
        status, doc = call(proxied, "GET", f"/v1/analyses/{accepted['id']}/status", key=key)
    assert doc["status"] == "complete", doc


def test_a_body_refused_from_its_head_is_refused_through_the_proxy_at_once(proxied):
    """nginx streams the body (proxy_request_buffering off): the server's
    413 comes back before the client has sent its 150 MiB."""
    raw = socket.create_connection(("127.0.0.1", proxied["port"]), timeout=10)
    sock = proxied["context"].wrap_socket(raw, server_hostname="localhost")
    try:
        sock.sendall(b"POST /v1/analyses HTTP/1.1\r\nHost: localhost\r\n"
                     b"Content-Type: application/json\r\n"
                     b"Content-Length: %d\r\n\r\n" % (150 * 1024 * 1024) + b"{" * 65536)
        started = time.monotonic()
        answer = sock.recv(65536)
    finally:
        sock.close()
    assert answer.startswith(b"HTTP/1.1 413"), answer[:200]
    assert time.monotonic() - started < 5


def fetch(proxied, method, path, *, headers=None, body=None):
    """(status, headers, body bytes) of one request through the proxy."""
    conn = http.client.HTTPSConnection("localhost", proxied["port"], timeout=30,
                                       context=proxied["context"])
    try:
        conn.request(method, path, body=body, headers=dict(headers or {}))
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def test_the_console_through_the_readme_nginx_configuration(proxied):
    """Sign-in link, Secure session cookie, a page and a form with its CSRF token,
    all through TLS at the proxy; links point at the public https address."""
    from urllib.parse import urlencode, urlsplit

    import sys

    _, account = make_key("test", data_dir=str(proxied["data"]))
    # the operator's shell has the server's environment: public_base_url makes the link
    made = subprocess.run([sys.executable, "-m", "trackgrade", "admin", "console-link",
                           "--account", account, "--data", str(proxied["data"]), "--json"],
                          env={**os.environ, "TRACKGRADE_PUBLIC_BASE_URL": proxied["public"]},
                          capture_output=True, text=True, timeout=60)
    assert made.returncode == 0, made.stderr
    link = json.loads(made.stdout)["url"]
    assert link.startswith(proxied["public"] + "/console/login?token=")   # public_base_url
    target = urlsplit(link)
    status, headers, _ = fetch(proxied, "GET", f"{target.path}?{target.query}")
    assert status == 303 and headers["location"] == "/console"
    cookie = headers["set-cookie"]
    assert "Secure" in cookie and "HttpOnly" in cookie and "SameSite=Strict" in cookie
    session = cookie.split(";")[0]
    status, headers, page = fetch(proxied, "GET", "/console/keys", headers={"Cookie": session})
    assert status == 200 and headers["x-frame-options"] == "DENY"
    assert "script-src 'self'" in headers["content-security-policy"]
    csrf = re.search(rb'name="csrf" value="([^"]+)"', page).group(1).decode()
    form = {"Cookie": session, "Content-Type": "application/x-www-form-urlencoded"}
    status, _, page = fetch(proxied, "POST", "/console/keys", headers=form,
                            body=urlencode({"csrf": csrf, "mode": "test"}).encode())
    assert status == 200 and b'value="svc_test_' in page
    secret = re.search(rb'value="(svc_test_[^"]+)"', page).group(1).decode()
    status, _, _ = fetch(proxied, "POST", "/console/keys", headers=form,
                         body=urlencode({"mode": "test"}).encode())
    assert status == 403
    # the link is spent
    assert fetch(proxied, "GET", f"{target.path}?{target.query}")[0] == 403
    # no secret in the server's log: not the key, the link's token or the session's
    logged = proxied["serve"].output
    for value in (secret, target.query.split("=", 1)[1], session.split("=", 1)[1]):
        assert value not in logged
