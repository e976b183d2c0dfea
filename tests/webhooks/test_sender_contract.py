"""The WebhookSender seam's contract, run against every sender (today the
real HttpSender) over real loopback receivers: what each receiver answer
becomes, and that the sender never raises nor outlives its timeout."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from trackgrade.server.webhooks import HttpSender, SendResult, WebhookSender

from tests.system import need_tool
from tests.webhooks.receiver import Receiver, answer

BODY = b'{"id":"evt_1","type":"analysis.completed"}'
SENDERS = {"http": HttpSender}


@pytest.fixture(params=sorted(SENDERS))
def sender(request) -> WebhookSender:
    made = SENDERS[request.param]()
    assert isinstance(made, WebhookSender)
    return made


@pytest.fixture
def receiver():
    made = []
    yield lambda behaviour: made.append(Receiver(behaviour)) or made[-1]
    for rcv in made:
        rcv.close()


@pytest.mark.parametrize("status, acknowledged", [(200, True), (202, True), (204, True),
                                                  (299, True), (301, False), (400, False),
                                                  (410, False), (500, False)])
def test_status_codes(sender, receiver, status, acknowledged):
    rcv = receiver(answer(status, {"Location": "http://127.0.0.1:9/"} if status == 301 else {}))
    result = sender.send(rcv.url, BODY, {"X-Test": "1"})
    assert result.status == status and result.acknowledged is acknowledged
    assert len(rcv.deliveries) == 1                               # no redirect followed
    got = rcv.deliveries[0]
    assert got.body == BODY and got.headers["x-test"] == "1"
    assert got.headers["content-type"] == "application/json"


def test_retry_after_seconds_and_dates(sender, receiver):
    rcv = receiver(answer(429, {"Retry-After": "42"}))
    assert sender.send(rcv.url, BODY, {}).retry_after == 42
    rcv = receiver(answer(503, {"Retry-After": "Thu, 01 Jan 2099 00:00:00 GMT"}))
    assert sender.send(rcv.url, BODY, {}).retry_after > 86400


def test_no_answer_is_a_result_not_an_exception(sender, receiver):
    refused = sender.send("http://127.0.0.1:9/hook", BODY, {})
    assert refused == SendResult(None, None, refused.error, refused.seconds) and refused.error
    hang = receiver(lambda delivery, n: "hang")
    started = time.monotonic()
    result = sender.send(hang.url, BODY, {}, timeout=0.5)
    assert result.status is None and "timed out" in result.error
    assert time.monotonic() - started < 2.0
    bad = sender.send("http://[::1", BODY, {})
    assert bad.status is None and bad.error


def test_https_is_verified(tmp_path, receiver):
    """A receiver with a certificate the sender trusts gets the delivery; with
    an untrusted (self-signed) one the attempt fails with a certificate error.
    (The receiver is on loopback: an https:// endpoint there is one added
    with --allow-private; without it the sender never connects, see
    test_webhook_urls.py.)"""
    import ssl
    import subprocess

    openssl = need_tool("openssl")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run([openssl, "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                    "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                    "-keyout", str(key), "-out", str(cert)], check=True, capture_output=True,
                   timeout=60)
    rcv = receiver(answer(200))
    served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    served.load_cert_chain(cert, key)
    rcv.server.socket = served.wrap_socket(rcv.server.socket, server_side=True)
    url = rcv.url.replace("http://", "https://")
    trusting = ssl.create_default_context(cafile=str(cert))
    assert HttpSender(ssl_context=trusting).send(url, BODY, {}, allow_private=True).status == 200
    refused = HttpSender().send(url, BODY, {}, allow_private=True)
    assert refused.status is None and "CERTIFICATE_VERIFY_FAILED" in refused.error
    assert len(rcv.deliveries) == 1


def test_a_receiver_trickling_its_head_is_cut_off_at_the_total_deadline():
    """A status line, then a header byte every 0.3 s: each read is quick, so
    only a total deadline ends the attempt (issue 29, item 2)."""
    server = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()

    def trickle():
        conn, _ = server.accept()
        with conn:
            conn.recv(65536)
            conn.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            try:
                for _ in range(20):             # then give up: 6 s, not for ever
                    if stop.wait(0.3):
                        break
                    conn.sendall(b"a")
            except OSError:
                pass

    threading.Thread(target=trickle, daemon=True).start()
    try:
        started = time.monotonic()
        result = HttpSender().send(f"http://127.0.0.1:{server.getsockname()[1]}/hook", b"{}", {},
                                   timeout=1.0)
        took = time.monotonic() - started
    finally:
        stop.set()
        server.close()
    assert result.status is None and not result.acknowledged
    assert result.error == "timed out after 1 s"
    assert took < 1.5, took
