"""`trackgrade verify-webhook` (CliRunner and a real subprocess), `trackgrade
listen` as a real process between a real server and the developer's own
handler, and the admin webhook commands."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest
from typer.testing import CliRunner

from trackgrade import signing
from trackgrade.cli import app
from trackgrade.server import accounts
from trackgrade.server.clock import SystemClock
from trackgrade.server.store import new_event, open_store
from trackgrade.server.webhooks import endpoints

from tests.webhooks.receiver import Receiver, answer
from tests.server.server_harness import request, start

SECRET = "whsec_test_secret_123"
BODY = b'{"id":"evt_1","type":"analysis.completed","data":{"object":{"id":"an_1"}}}'
CLI = [sys.executable, "-m", "trackgrade"]


def invoke(*args, stdin=None):
    return CliRunner().invoke(app, [str(a) for a in args], input=stdin)


def fresh_header(body=BODY, secret=SECRET, skew=0):
    return "Service-Signature: " + signing.sign(secret, body, int(time.time()) + skew)


def test_verify_webhook_valid_from_a_file_and_from_stdin(tmp_path):
    body_file = tmp_path / "body.json"
    body_file.write_bytes(BODY)
    result = invoke("verify-webhook", "--secret", SECRET, "--header", fresh_header(),
                    "--body-file", body_file)
    assert result.exit_code == 0 and result.stdout.strip() == "analysis.completed"
    result = invoke("verify-webhook", "--secret", SECRET, "--header",
                    signing.sign(SECRET, BODY, int(time.time())), "--json", stdin=BODY)
    assert result.exit_code == 0
    assert json.loads(result.stdout) == {"valid": True, "type": "analysis.completed",
                                         "id": "evt_1"}


@pytest.mark.parametrize("header, extra, reason", [
    ("Service-Signature: t=1700000000,v1=96ffd04f7af3af3397018e24cea8feff036b9a7ce4bb08847d4acf09"
     "d465c05b", [], "timestamp_too_old"),
    (None, [], "signature_mismatch"),
    ("Service-Signature: nonsense", [], "malformed_header"),
    ("Service-Signature: t=1700000000", [], "no_v1_signature"),
    ("future", [], "timestamp_too_new"),
])
def test_verify_webhook_invalid_exits_1_with_the_reason(header, extra, reason):
    if header is None:
        header = fresh_header(secret="whsec_other")
    elif header == "future":
        header = fresh_header(skew=3600)
    result = invoke("verify-webhook", "--secret", SECRET, "--header", header, *extra, stdin=BODY)
    assert result.exit_code == 1
    assert result.stdout == "" and f"({reason})" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "Traceback" not in result.stderr


def test_verify_webhook_tolerance_and_the_check_vector():
    header = "t=1700000000,v1=96ffd04f7af3af3397018e24cea8feff036b9a7ce4bb08847d4acf09d465c05b"
    skew = time.time() - 1700000000 + 60
    result = invoke("verify-webhook", "--secret", SECRET, "--header", header,
                    "--tolerance", int(skew), stdin=BODY)
    assert result.exit_code == 0 and result.stdout.strip() == "analysis.completed"


def test_verify_webhook_takes_the_standard_webhooks_headers():
    secret = signing.new_secret()
    headers = signing.standard_headers(secret, "evt_1", int(time.time()), BODY)
    args = [a for name, value in headers.items() for a in ("--header", f"{name}: {value}")]
    assert invoke("verify-webhook", "--secret", secret, *args, stdin=BODY).exit_code == 0
    result = invoke("verify-webhook", "--secret", signing.new_secret(), *args, stdin=BODY)
    assert result.exit_code == 1 and "signature_mismatch" in result.stderr


def test_verify_webhook_as_a_real_process_and_its_usage_errors(tmp_path):
    run = subprocess.run(CLI + ["verify-webhook", "--secret", SECRET, "--header",
                                fresh_header()], input=BODY, capture_output=True, timeout=60)
    assert run.returncode == 0 and run.stdout.decode().strip() == "analysis.completed"
    run = subprocess.run(CLI + ["verify-webhook", "--secret", SECRET, "--header", "t=1,v1=00",
                                "--body-file", str(tmp_path / "missing.json")],
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and "cannot read" in run.stderr and "Traceback" not in run.stderr
    run = subprocess.run(CLI + ["verify-webhook", "--header", "t=1,v1=00"], input="",
                         capture_output=True, text=True, timeout=60,
                         env={k: v for k, v in os.environ.items()
                              if k != "TRACKGRADE_WEBHOOK_SECRET"})
    assert run.returncode == 2 and "--secret" in run.stderr


@pytest.mark.parametrize("command", ["listen", "verify-webhook"])
def test_a_secret_without_whsec_is_a_usage_error(command):
    """A secret that is not the endpoint's whsec_… can never verify a delivery:
    refused up front (exit 2) instead of rejecting every delivery later."""
    result = invoke(command, "--secret", "test_secret_123", "--header", "t=1,v1=00", stdin=BODY) \
        if command == "verify-webhook" else invoke(command, "--secret", "test_secret_123")
    assert result.exit_code == 2
    assert "whsec_" in result.stderr and "admin webhooks add" in result.stderr


def default_ctrl_c() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Listening:
    def __init__(self, *args: str) -> None:
        # Ctrl-C (SIGINT) stops it, even when the suite itself runs where SIGINT is
        # ignored (a background job of a script: `pytest ... &`), which a child inherits
        self.proc = subprocess.Popen(CLI + ["listen", "--port", "0", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                     start_new_session=True, preexec_fn=default_ctrl_c)
        line = self.proc.stderr.readline()
        match = re.search(r"Listening on (http://\S+?)(?:;| and)", line)
        assert match, line + self.proc.stderr.read()
        self.url = match.group(1)

    def lines(self, count: int) -> list[str]:
        return [self.proc.stdout.readline().rstrip("\n") for _ in range(count)]

    def stop(self) -> tuple[int, str]:
        self.proc.send_signal(signal.SIGINT)
        try:
            self.proc.wait(10)
        finally:
            if self.proc.poll() is None:
                os.killpg(self.proc.pid, signal.SIGKILL)
        return self.proc.returncode, self.proc.stderr.read()


def test_listen_between_a_real_server_and_the_developers_handler():
    handler = Receiver(answer(202, {"X-Handler": "mine"}))
    server = start(clock=SystemClock(), webhook_schedule="0,0.2,0.2")
    key, account = server.key("test")
    secret = signing.new_secret()
    listening = Listening("--secret", secret, "--forward", handler.url)
    try:
        hook = endpoints.add_endpoint(server.store, listening.url + "/hooks", account)
        # the listener verifies with the secret it was given: use the endpoint's
        with server.store.transaction() as txn:
            doc = txn.get("webhooks", hook["id"])
            doc["secret"] = secret
            txn.put("webhooks", doc)
        accepted = server.submit(key, file_name="kick.wav", external_id="ref-9").json
        server.upload(accepted, b"x")
        lines = listening.lines(2)            # attempts run in parallel: in either order
        first, second = sorted(lines, key=lambda line: "analysis.completed" in line)
        assert "analysis.scores_ready" in first and "analysis.completed" in second
        for line in (first, second):
            assert accepted["id"] in line and "signature ok" in line and "-> 202" in line
            assert "external_id ref-9" in line and " test " in line
            assert re.search(r"score \d+ \(", line)
        got = handler.wait_for(2)
        # the handler saw the raw body and the signature headers, and can verify them itself
        for delivery in got:
            assert signing.verify(secret, delivery.headers["service-signature"], delivery.body)
        deadline = time.monotonic() + 5          # the answer is recorded just after it came
        while time.monotonic() < deadline:
            (row,) = server.store.select("deliveries.by_event", (got[0].event["id"],))
            if row["state"] != "pending":
                break
            time.sleep(0.02)
        assert row["state"] == "delivered" and row["last_status"] == 202
        # a forged delivery is refused with 400 and never forwarded
        forged = request(listening.url, "POST", "/hooks", raw=BODY, headers={
            "Service-Signature": signing.sign("whsec_wrong", BODY, int(time.time())),
            "Content-Type": "application/json"})
        assert forged.status == 400 and forged.json["error"]["reason"] == "signature_mismatch"
        assert "REJECTED" in listening.lines(1)[0] and len(handler.deliveries) == 2
    finally:
        code, err = listening.stop()
        server.stop()
        handler.close()
    assert "Traceback" not in err


def test_listen_json_lines_and_an_unreachable_forward_target():
    secret = signing.new_secret()
    listening = Listening("--secret", secret, "--json", "--forward", "http://127.0.0.1:9/x")
    try:
        header = signing.sign(secret, BODY, int(time.time()))
        reply = request(listening.url, "POST", "/", raw=BODY,
                        headers={"Service-Signature": header})
        assert reply.status == 502
        line = json.loads(listening.lines(1)[0])
        assert line["verified"] is True and line["body"] == BODY.decode()
        assert line["answer_status"] == 502 and line["forward_error"]
    finally:
        listening.stop()


def test_listen_refuses_a_port_in_use():
    holder = Receiver()
    try:
        port = holder.server.server_address[1]
        run = subprocess.run(CLI + ["listen", "--secret", SECRET, "--port", str(port)],
                             capture_output=True, text=True, timeout=30)
        assert run.returncode == 2 and "cannot listen" in run.stderr
    finally:
        holder.close()


def test_admin_webhooks_list_rotate_remove_and_events_resend(tmp_path):
    data = tmp_path / "data"
    with open_store(data) as store:
        account = accounts.create_account(store, plan="pro", credits=1)
        event = new_event("credit.balance.low", {"credits_remaining": 1, "threshold": 5},
                          account_id=account["id"], livemode=True, created=time.time())
        with store.transaction() as txn:
            txn.put("events", event)
    added = invoke("admin", "webhooks", "add", "https://hooks.example.test/tg", "--account",
                   account["id"], "--data", data, "--json")
    assert added.exit_code == 0, added.stderr
    made = json.loads(added.stdout)
    assert made["secret"].startswith("whsec_")
    listed = invoke("admin", "webhooks", "list", "--account", account["id"], "--data", data,
                    "--json")
    (row,) = json.loads(listed.stdout)
    assert row["id"] == made["id"] and row["enabled"] is True and row["last_status"] is None
    assert "secret" not in listed.stdout
    human = invoke("admin", "webhooks", "list", "--data", data)
    assert made["id"] in human.stdout and "never" in human.stdout
    rotated = invoke("admin", "webhooks", "rotate", made["id"], "--overlap", "60", "--data", data)
    assert rotated.exit_code == 0
    new_secret = rotated.stdout.splitlines()[1]
    assert new_secret.startswith("whsec_") and new_secret != made["secret"]
    with open_store(data) as store:
        doc = store.get("webhooks", made["id"])
        assert doc["secret"] == new_secret
        assert [old["secret"] for old in doc["previous_secrets"]] == [made["secret"]]
    # the event was not fanned out yet: resend has nothing to add
    resent = invoke("admin", "events", "resend", event["id"], "--data", data, "--json")
    assert resent.exit_code == 0 and json.loads(resent.stdout)["endpoints"] == []
    missing = invoke("admin", "events", "resend", "evt_nope", "--data", data)
    assert missing.exit_code == 1 and "no event" in missing.stderr
    removed = invoke("admin", "webhooks", "remove", made["id"], "--data", data)
    assert removed.exit_code == 0 and "Removed" in removed.stdout
    again = invoke("admin", "webhooks", "remove", made["id"], "--data", data)
    assert again.exit_code == 1 and "no webhook endpoint" in again.stderr
    bad = invoke("admin", "webhooks", "rotate", "we_x", "--overlap", "-1", "--data", data)
    assert bad.exit_code == 2


@pytest.mark.parametrize("url", ["http://[::1", "https://x:99999/", "ftp://example.com/h",
                                 "http://example.com/h"])
def test_admin_webhooks_add_refuses_bad_urls_in_one_line(tmp_path, url):
    data = tmp_path / "data"
    with open_store(data) as store:
        account = accounts.create_account(store, plan="pro")
    result = invoke("admin", "webhooks", "add", url, "--account", account["id"], "--data", data)
    assert result.exit_code == 2 and "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and "webhook URL" in result.stderr


@pytest.mark.parametrize("value", ["nan", "inf", "NaN", "Infinity"])
def test_a_tolerance_that_is_not_finite_is_a_usage_error(value):
    """NaN makes every comparison false (a 3-year-old signature would pass),
    infinity turns the window off: both refused, exit 2, one line."""
    old = signing.sign(SECRET, BODY, int(time.time()) - 3 * 365 * 86400)
    result = invoke("verify-webhook", "--secret", SECRET, "--header", old,
                    "--tolerance", value, stdin=BODY)
    assert result.exit_code == 2 and "finite" in result.stderr, result.output
    assert "analysis.completed" not in result.stdout
    result = invoke("listen", "--secret", SECRET, "--port", "0", "--tolerance", value)
    assert result.exit_code == 2 and "finite" in result.stderr, result.output


def test_listen_prints_event_text_escaped():
    """A validly signed delivery whose external_id (and type) carry an escape
    sequence and a right-to-left override: the printed line shows them
    escaped, never raw."""
    secret = signing.new_secret()
    body = json.dumps({"id": "evt_1", "type": "analysis.completed\x1b[2J", "livemode": False,
                       "data": {"id": "an_1", "external_id": "ref\x1b[31m\u202e9-fer\x9b1m"}}
                      ).encode()
    listening = Listening("--secret", secret)
    try:
        reply = request(listening.url, "POST", "/", raw=body, headers={
            "Service-Signature": signing.sign(secret, body, int(time.time()))})
        assert reply.status == 200
        (line,) = listening.lines(1)
    finally:
        listening.stop()
    assert "external_id ref\\x1b[31m\\u202e9-fer\\x9b1m" in line, line
    assert "analysis.completed\\x1b[2J" in line
    assert not any(ch in line for ch in "\x1b\u202e\x9b")
