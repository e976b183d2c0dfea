"""The developer console on BOTH real stores (the durable data directory and
PostgreSQL), over real HTTP: a sign-in link works once (its hash stored, never
the token), an expired one is refused, sessions and CSRF hold, a key created
and revoked through the console, an endpoint's delivery log read through the
`deliveries.by_webhook` index. Also `trackgrade admin console-link` as a real
command beside a real `trackgrade serve` on the same data directory, and the
PostgreSQL migration that gives an existing database that index."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time
from urllib.parse import urlencode, urlsplit

import pytest

from tests.server.backends import BACKENDS
from tests.server.server_harness import request, start
from tests.server.serve_process import ServeProcess, make_key
from trackgrade.server import admin
from trackgrade.server.clock import SystemClock
from trackgrade.server.console import signin
from trackgrade.server.store import new_event, open_store
from trackgrade.server.webhooks import state


@pytest.fixture(params=sorted(BACKENDS))
def served(request, tmp_path):
    store = BACKENDS[request.param](request, tmp_path)()
    server = start(store=store, clock=SystemClock(), test_rate_per_minute=10_000)
    yield server
    server.stop()
    store.close()


def sign_in(server, account: str) -> tuple[str, str, str]:
    """(link path+query, Cookie header, csrf) of a fresh session."""
    link = urlsplit(admin.console_link(server.store, account, server.url)["url"])
    target = f"{link.path}?{link.query}"
    answer = server.request("GET", target)
    assert answer.status == 303, answer.body
    cookie = answer.header("set-cookie").split(";")[0]
    html = server.request("GET", "/console/keys", headers={"Cookie": cookie}).body.decode()
    return target, cookie, re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def post(server, path, fields, cookie):
    return server.request("POST", path, raw=urlencode(fields).encode(), headers={
        "Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"})


def test_sign_in_keys_and_the_delivery_log_on_each_store(served):
    server = served
    key, account = server.key("test")
    peeked = urlsplit(admin.console_link(server.store, account, server.url)["url"])
    # a HEAD (a link checker, a chat preview) never spends a link
    assert server.request("HEAD", f"{peeked.path}?{peeked.query}").status == 200
    assert server.request("GET", f"{peeked.path}?{peeked.query}").status == 303
    link, cookie, csrf = sign_in(server, account)
    token = link.split("token=", 1)[1]
    # the link is spent; only hashes are stored, never a token
    assert server.request("GET", link).status == 403
    rows = [server.store.get("sessions", signin.token_id(token))]
    assert rows == [None]
    session_token = cookie.split("=", 1)[1]
    stored = server.store.get("sessions", signin.token_id(session_token))
    assert stored["kind"] == "session" and stored["account_id"] == account
    assert session_token not in json.dumps(stored) and token not in json.dumps(stored)
    # a key through the console works, then revoked through it: 401 at once
    made = post(server, "/console/keys", {"csrf": csrf, "mode": "test"}, cookie)
    secret = re.search(r'value="(svc_test_[^"]+)"', made.body.decode()).group(1)
    assert server.request("GET", "/v1/account", key=secret).status == 200
    (row,) = [r for r in admin.list_keys(server.store, account) if r["key_id"] != ""
              and r["hint"] == secret[:13] + "…" + secret[-4:]]
    revoked = post(server, f"/console/keys/{row['key_id']}/revoke", {"csrf": csrf}, cookie)
    assert revoked.status == 303 and revoked.header("location").endswith("notice=key_revoked")
    assert server.request("GET", "/v1/account", key=secret).status == 401
    # an endpoint's delivery log through the index, newest first
    hook = admin.add_webhook(server.store, "https://example.com/hooks", account)
    now = time.time()
    for n in range(3):
        event = new_event("analysis.completed", {"n": n}, account_id=account, livemode=False,
                          created=now + n)
        with server.store.transaction() as txn:
            txn.put("events", {**event, "state": "dispatched"})
            txn.put("deliveries", {**state.new_delivery(event, hook["id"], now + 3600),
                                   "attempts": 2, "last_status": 500})
    page = server.request("GET", f"/console/webhooks/{hook['id']}",
                          headers={"Cookie": cookie}).body.decode()
    shown = re.findall(r'<tr class="delivery state-pending"><td class="mono small">([^<]+)', page)
    ordered = [r["event_id"] for r in server.store.select("deliveries.by_webhook",
                                                         (hook["id"],), newest_first=True)]
    assert shown == ordered and len(shown) == 3
    assert page.count(">500<") == 3 and "analysis.completed" in page
    # signing out ends the session on the store
    assert post(server, "/console/logout", {"csrf": csrf}, cookie).status == 303
    assert server.store.get("sessions", signin.token_id(session_token)) is None


def test_an_expired_link_is_refused_and_pruned():
    from trackgrade.server.clock import FixedClock

    clock = FixedClock(1_800_000_000.0)
    server = start(clock=clock)
    try:
        _, account = server.key("test")
        link = urlsplit(admin.console_link(server.store, account, server.url, clock=clock)["url"])
        clock.advance(signin.LINK_TTL_S + 1)
        answer = server.request("GET", f"{link.path}?{link.query}")
        assert answer.status == 403 and "set-cookie" not in answer.headers
        assert server.store.count("sessions.by_expiry") == 0
    finally:
        server.stop()


def test_admin_console_link_beside_a_running_serve(tmp_path):
    data = tmp_path / "data"
    key, account = make_key("test", data_dir=str(data))
    serve = ServeProcess(data, require=True)
    try:
        done = subprocess.run([sys.executable, "-m", "trackgrade", "admin", "console-link",
                               "--account", account, "--data", str(data), "--base-url", serve.url,
                               "--json"], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        link = json.loads(done.stdout)
        assert set(link) == {"url", "expires_at"}
        assert link["url"].startswith(serve.url + "/console/login?token=")
        target = urlsplit(link["url"])
        answer = request(serve.url, "GET", f"{target.path}?{target.query}")
        assert answer.status == 303 and "tg_console=" in answer.header("set-cookie")
        assert request(serve.url, "GET", f"{target.path}?{target.query}").status == 403
        # the token never reaches a log line of the server
        assert target.query.split("=", 1)[1] not in serve.output
        unknown = subprocess.run([sys.executable, "-m", "trackgrade", "admin", "console-link",
                                  "--account", "acct_nope", "--data", str(data)],
                                 capture_output=True, text=True, timeout=60)
        assert unknown.returncode == 1 and "acct_nope" in unknown.stderr
        assert "Traceback" not in unknown.stderr
    finally:
        serve.stop()


def test_an_existing_database_gets_the_delivery_log_index(postgres_url):
    """A database made before the console (schema version 1, no sort columns
    for `created` on deliveries) is migrated on open, its rows backfilled."""
    import psycopg

    from trackgrade.server.store import schema

    store = open_store(database=postgres_url, pool_size=2)
    event = new_event("analysis.completed", {}, account_id="acct_x", livemode=False,
                      created=1_700_000_000)
    with store.transaction() as txn:
        txn.put("deliveries", state.new_delivery(event, "we_x", 1_700_000_000))
    store.close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:      # back to version 1
        conn.execute("DROP INDEX ix_deliveries_by_webhook")
        conn.execute("ALTER TABLE tg_deliveries DROP COLUMN created_t, DROP COLUMN created_n, "
                     "DROP COLUMN created_s")
        conn.execute("DELETE FROM schema_version WHERE version >= 2")
    store = open_store(database=postgres_url, pool_size=2)
    try:
        (row,) = store.select("deliveries.by_webhook", ("we_x",))
        assert row["event_id"] == event["id"]
        assert store.select("deliveries.by_webhook", ("we_x",), since=(1_700_000_001,)) == []
    finally:
        store.close()
    assert schema.SCHEMA_VERSION == 2


def test_serve_no_console_leaves_it_out(tmp_path):
    serve = ServeProcess(tmp_path / "data", "--no-console", require=True)
    try:
        answer = request(serve.url, "GET", "/console")
        assert answer.status == 404 and answer.json["error"]["code"] == "route_not_found"
        assert request(serve.url, "GET", "/v1/openapi.json").status == 200
    finally:
        serve.stop()
    serve = ServeProcess(tmp_path / "data", require=True)       # on by default
    try:
        assert request(serve.url, "GET", "/console").status == 303
    finally:
        serve.stop()


def test_a_full_disk_answers_a_503_page_and_reads_still_work(tmp_path):
    import resource

    data = tmp_path / "data"
    _, account = make_key("test", data_dir=str(data))
    serve = ServeProcess(data, env={"TRACKGRADE_RETRY_AFTER": "7"}, require=True)
    try:
        done = subprocess.run([sys.executable, "-m", "trackgrade", "admin", "console-link",
                               "--account", account, "--data", str(data), "--base-url", serve.url,
                               "--json"], capture_output=True, text=True, timeout=60)
        target = urlsplit(json.loads(done.stdout)["url"])
        cookie = request(serve.url, "GET", f"{target.path}?{target.query}") \
            .header("set-cookie").split(";")[0]
        page = request(serve.url, "GET", "/console/keys", headers={"Cookie": cookie})
        csrf = re.search(r'name="csrf" value="([^"]+)"', page.body.decode()).group(1)
        journal = sorted(data.glob("journal-*.log"))[-1]
        soft, hard = resource.prlimit(serve.proc.pid, resource.RLIMIT_FSIZE)
        resource.prlimit(serve.proc.pid, resource.RLIMIT_FSIZE, (journal.stat().st_size, hard))
        try:
            made = request(serve.url, "POST", "/console/keys", headers={
                "Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"},
                raw=urlencode({"csrf": csrf, "mode": "test"}).encode())
            assert made.status == 503 and made.header("retry-after") == "7"
            assert made.header("content-type").startswith("text/html")
            assert b"svc_test_" not in made.body
            assert request(serve.url, "GET", "/console/keys",
                           headers={"Cookie": cookie}).status == 200     # reads still work
        finally:
            resource.prlimit(serve.proc.pid, resource.RLIMIT_FSIZE, (soft, hard))
    finally:
        serve.stop()


def test_a_data_directory_from_before_the_delivery_log_index(tmp_path):
    """Journal records written before `deliveries.by_webhook` existed carry no
    `created` among their index fields: replayed, they are ordered by the
    document's own `created` all the same."""
    from trackgrade.server.store.journal import encode_line

    data = tmp_path / "data"
    store = open_store(data)
    for n in (2, 0, 1):
        event = new_event("analysis.completed", {}, account_id="acct_x", livemode=False,
                          created=1_700_000_000 + n)
        with store.transaction() as txn:
            txn.put("deliveries", state.new_delivery(event, "we_x", 1_700_000_000))
    store.close()
    journal = sorted(data.glob("journal-*.log"))[-1]
    lines = []
    for line in journal.read_bytes().splitlines():
        ops = json.loads(line[9:])["ops"]
        old = {(op[1], op[2]): ({k: v for k, v in op[3].items() if k != "created"}, op[4])
               for op in ops}                      # the index fields of the version before
        lines.append(encode_line(old))
    journal.write_bytes(b"".join(lines))
    store = open_store(data)
    try:
        rows = store.select("deliveries.by_webhook", ("we_x",), newest_first=True)
        assert [r["created"] for r in rows] == [1_700_000_002, 1_700_000_001, 1_700_000_000]
    finally:
        store.close()
