"""The developer console (/console, CONTRACT.md section 6) driven in a real
headless Chromium against a real waitress server: sign-in by a one-time link
(used twice: 403), a key created (shown once), used against the API and
revoked in the console (401 at once), a webhook endpoint added and its
delivery log after real deliveries to `trackgrade listen` (and a resend), the
analyses (newest first, paged, a report, the badge on and off with its
snippet, a cancel), a hostile file name shown as text, another account's ids
(404), a POST without its CSRF token (403, nothing changed), the security
headers on every answer and no CSP violation. Screenshots of every page at
1200 and 390 px wide go to tests/_artifacts/console/ (the page must not be
wider than the window at 390 px)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from trackgrade.server import admin, accounts
from trackgrade.server.clock import SystemClock
from trackgrade.server.store import new_event
from trackgrade.server.webhooks import endpoints

from tests.browser import Browser
from tests.server.server_harness import request, start
from tests.server.serve_process import free_port

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts" / "console"
HOSTILE = "<script>alert(1)</script>.wav"
HEADERS = {"x-frame-options": "DENY", "referrer-policy": "no-referrer",
           "x-content-type-options": "nosniff", "cache-control": "no-store"}


@pytest.fixture(scope="module")
def world():
    server = start(clock=SystemClock(), webhook_schedule="0,0.3,0.3", test_in_flight=60,
                   test_rate_per_minute=10_000, rate_per_minute=10_000)
    mine, mine_account = server.key("test")
    theirs, their_account = server.key("test")
    browser = Browser()
    try:
        yield {"server": server, "key": mine, "account": mine_account, "their_key": theirs,
               "their_account": their_account, "browser": browser}
    finally:
        browser.close()
        server.stop()


def sign_in_link(world) -> str:
    return admin.console_link(world["server"].store, world["account"], world["server"].url)["url"]


def status_of(page, path: str) -> int:
    """The status of the last document response for `path`."""
    hits = [status for url, status in page.responses if urlsplit(url).path == path]
    assert hits, (path, page.responses[-5:])
    return hits[-1]


def form_post(world, path: str, fields: dict, cookie: str | None) -> object:
    from urllib.parse import urlencode
    headers = {"Content-Type": "application/x-www-form-urlencoded"}
    if cookie:
        headers["Cookie"] = cookie
    return world["server"].request("POST", path, raw=urlencode(fields).encode(), headers=headers)


def shoot(page, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    for width in (1200, 390):
        page.call("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 500})
        page.settle(0.15)
        wide = page.evaluate("document.documentElement.scrollWidth")
        assert wide <= width, f"{name} is {wide} px wide in a {width} px window"
        page.screenshot(ARTIFACTS / f"{name}-{width}.png")
    page.call("Emulation.setDeviceMetricsOverride",
              {"width": 1200, "height": 900, "deviceScaleFactor": 1, "mobile": False})


@pytest.fixture(scope="module")
def page(world):
    """A signed-in Chromium page (the link followed once)."""
    page = world["browser"].open("about:blank", width=1200)
    link = sign_in_link(world)
    page.navigate(link)
    world["link"] = link
    yield page
    page.close()


def test_sign_in_by_link_then_the_link_is_spent(world, page):
    assert page.evaluate("location.pathname") == "/console"
    text = page.evaluate("document.body.textContent")
    assert world["account"] in text and "Today's usage" in text
    # the session cookie is HttpOnly: no script of the page can read it
    assert "tg_console" not in page.evaluate("document.cookie")
    # the same link again: 403, a page that says so, and no cookie
    second = world["browser"].open("about:blank", width=1200)
    try:
        second.navigate(world["link"])
        assert status_of(second, "/console/login") == 403
        assert "has been used" in second.evaluate("document.body.innerText")
    finally:
        second.close()
    again = request(world["server"].url, "GET", urlsplit(world["link"]).path + "?"
                    + urlsplit(world["link"]).query)
    assert again.status == 403 and "set-cookie" not in again.headers
    # a fresh link sets the cookie with its attributes; no session: to the signed-out page
    fresh = urlsplit(sign_in_link(world))
    answer = request(world["server"].url, "GET", f"{fresh.path}?{fresh.query}")
    assert answer.status == 303 and answer.header("location") == "/console"
    cookie = answer.header("set-cookie")
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Max-Age=43200" in cookie
    assert "Secure" not in cookie                       # plain http on loopback
    nobody = request(world["server"].url, "GET", "/console/keys")
    assert nobody.status == 303 and nobody.header("location") == "/console/signed-out"
    page.navigate(world["server"].url + "/console/signed-out")
    assert "admin console-link" in page.evaluate("document.body.innerText")
    shoot(page, "signed-out")
    page.navigate(world["server"].url + "/console")
    shoot(page, "overview")


def test_a_key_is_shown_once_works_and_revoked_answers_401_at_once(world, page):
    server = world["server"]
    page.navigate(server.url + "/console/keys")
    page.click("#create button[type=submit]")            # live is checked
    secret = page.evaluate("document.getElementById('new-key-value').value")
    assert secret.startswith("svc_live_")
    assert page.evaluate("document.querySelector('button.copy[data-copy=new-key-value]') !== null")
    shoot(page, "keys-created")
    # a copy button copies (the clipboard of a secure context: 127.0.0.1)
    page.call("Browser.grantPermissions", {"permissions": ["clipboardReadWrite",
                                                           "clipboardSanitizedWrite"]})
    page.evaluate("document.querySelector('button.copy').click()")
    page.settle(0.3)
    assert page.evaluate("document.querySelector('button.copy').textContent") == "Copied"
    assert page.evaluate("navigator.clipboard.readText()", await_promise=True) == secret
    # the API takes it, with this account
    answer = server.request("GET", "/v1/account", key=secret)
    assert answer.status == 200 and answer.json["id"] == world["account"]
    # shown once: the list has its hint, never the key again
    page.navigate(server.url + "/console/keys")
    html = page.evaluate("document.documentElement.outerHTML")
    assert secret not in html and accounts.key_hint(secret) in html
    (row,) = [r for r in admin.list_keys(server.store, world["account"])
              if r["hint"] == accounts.key_hint(secret)]
    assert row["last_used_at"] is not None
    assert "never" not in page.evaluate(f"document.getElementById('{row['key_id']}').innerText")
    shoot(page, "keys")
    # revoke through the two-step control; the API refuses it at once
    page.evaluate(f"document.querySelector('#{row['key_id']} details summary').click()")
    page.click(f"#{row['key_id']} details button[type=submit]")
    assert page.evaluate("location.pathname") == "/console/keys"
    assert "is revoked" in page.evaluate("document.querySelector('.notice').innerText")
    assert server.request("GET", "/v1/account", key=secret).status == 401


def test_endpoint_added_and_its_delivery_log_after_real_deliveries_to_listen(world, page):
    server = world["server"]
    page.navigate(server.url + "/console/webhooks")
    # the URL rules of admin: credentials refused, nothing stored, the URL shown as text
    page.evaluate("document.querySelector('input[name=url]').value = "
                  "'https://user:pw@example.com/<b>x</b>'")
    page.click("#add button[type=submit]")
    assert status_of(page, "/console/webhooks") == 400
    assert page.evaluate("document.querySelector('.problem') !== null")
    assert page.evaluate("document.querySelector('#add b')") is None
    assert "pw" not in page.evaluate("document.querySelector('input[name=url]').value")
    assert endpoints.list_endpoints(server.store, world["account"]) == []
    port = free_port()
    url = f"http://127.0.0.1:{port}/hooks"
    page.evaluate(f"document.querySelector('input[name=url]').value = '{url}'")
    page.click("#add button[type=submit]")
    secret = page.evaluate("document.getElementById('new-secret-value').value")
    assert secret.startswith("whsec_")
    shoot(page, "webhooks-added")
    listening = subprocess.Popen([sys.executable, "-m", "trackgrade", "listen", "--secret", secret,
                                  "--port", str(port)], stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        assert "Listening on" in listening.stderr.readline()
        accepted = server.submit(world["key"], file_name="kick.wav").json
        server.upload(accepted, b"x")
        lines = [listening.stdout.readline() for _ in range(2)]
        assert all("signature ok" in line and accepted["id"] in line for line in lines), lines
        (hook,) = endpoints.list_endpoints(server.store, world["account"])
        log = wait_for_log(server, hook["id"], 2)
        page.navigate(f"{server.url}/console/webhooks/{hook['id']}")
        rows = page.evaluate("[...document.querySelectorAll('tr.delivery')].map(r => r.innerText)")
        assert len(rows) == 2, rows
        for delivery in log:
            (shown,) = [r for r in rows if delivery["event_id"] in r]
            assert "delivered" in shown and "200" in shown and "analysis." in shown
        shoot(page, "endpoint")
        # resend the first event: delivered again to the listener, the log says so
        page.click("tr.delivery form button[type=submit]")
        assert "queued for delivery again" in page.evaluate("document.body.innerText")
        again = listening.stdout.readline()
        assert "signature ok" in again
        # rotate: a new secret shown once on the answer, never on a later page
        page.click("form[action$='/rotate'] button")
        rotated = page.evaluate("document.getElementById('new-secret-value').value")
        assert rotated.startswith("whsec_") and rotated != secret
        page.navigate(f"{server.url}/console/webhooks/{hook['id']}")
        html = page.evaluate("document.documentElement.outerHTML")
        assert rotated not in html and secret not in html
        page.navigate(server.url + "/console/webhooks")
        shoot(page, "webhooks")
    finally:
        listening.send_signal(signal.SIGINT)
        try:
            listening.wait(10)
        except subprocess.TimeoutExpired:
            listening.kill()


def wait_for_log(server, endpoint_id: str, count: int) -> list[dict]:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        rows = server.store.select("deliveries.by_webhook", (endpoint_id,))
        if len(rows) >= count and all(r["state"] == "delivered" for r in rows):
            return rows
        time.sleep(0.05)
    raise AssertionError(f"deliveries not recorded: {rows}")


def test_analyses_newest_first_paged_report_badge_cancel_and_a_hostile_name(world, page):
    server, key = world["server"], world["key"]
    hostile = server.submit(key, file_name=HOSTILE).json
    server.upload(hostile, b"x")
    server.wait(hostile["id"], key, until=lambda d: d["status"] == "complete")
    waiting = [server.submit(key, file_name=f"waiting-{n:02}.wav").json for n in range(21)]
    page.navigate(server.url + "/console/analyses?mode=test")
    names = page.evaluate("[...document.querySelectorAll('li.analysis .name')]"
                          ".map(e => e.textContent)")
    assert len(names) == 20 and names[0] == "waiting-20.wav" and names[1] == "waiting-19.wav"
    # the hostile name is text: no script element but the console's own, no alert
    assert page.evaluate("document.scripts.length") == 1
    page.click(".pager a[href*=after]")
    older = page.evaluate("[...document.querySelectorAll('li.analysis .name')]"
                          ".map(e => e.textContent)")
    assert HOSTILE in older and "waiting-00.wav" in older and len(set(older) & set(names)) == 0
    assert page.evaluate("document.scripts.length") == 1
    shoot(page, "analyses-older")
    page.click(".pager a[href*=before]")
    assert page.evaluate("document.querySelector('li.analysis .name').textContent") \
        == "waiting-20.wav"
    shoot(page, "analyses")
    # cancel one that awaits its bytes
    target = waiting[-1]["id"]
    page.click(f"#a-{target} form[action$='/cancel'] button")
    doc = server.request("GET", f"/v1/analyses/{target}", key=key).json
    assert doc["status"] == "failed" and doc["error"]["code"] == "analysis_canceled"
    assert "canceled" in page.evaluate("document.querySelector('.notice').innerText")
    # the badge: on shows the snippet and the public badge answers; off: 404
    page.navigate(f"{server.url}/console/analyses?mode=test&after={waiting[0]['id']}")
    page.click(f"#a-{hostile['id']} form[action$='/embed'] button")
    snippet = page.evaluate(f"document.getElementById('snippet-{hostile['id']}').value")
    assert snippet.startswith("<iframe src=\"") and f"/v1/embed/{hostile['id']}" in snippet
    badge = urlsplit(re.search(r'src="([^"]+)"', snippet).group(1)).path
    assert request(server.url, "GET", badge).status == 200
    shoot(page, "analyses-badge")
    page.click(f"#a-{hostile['id']} form[action$='/embed'] button")
    assert request(server.url, "GET", badge).status == 404
    # a complete one opens its HTML report, the name as text there too
    page.navigate(f"{server.url}/console/analyses/{hostile['id']}")
    assert page.evaluate("document.getElementById('file-name').textContent") == HOSTILE
    assert page.evaluate("document.scripts.length") == 0
    shoot(page, "report")
    page.navigate(f"{server.url}/console/analyses/{waiting[0]['id']}")
    assert "waiting for its audio" in page.evaluate("document.body.innerText")
    shoot(page, "analysis-waiting")
    assert not [p for p in page.problems if "Content Security Policy" in p], page.problems


def session_cookie(world) -> tuple[str, str]:
    """(Cookie header, csrf value) of a fresh session of the test's account."""
    link = urlsplit(sign_in_link(world))
    answer = request(world["server"].url, "GET", f"{link.path}?{link.query}")
    cookie = answer.header("set-cookie").split(";")[0]
    html = request(world["server"].url, "GET", "/console/keys",
                   headers={"Cookie": cookie}).body.decode()
    return cookie, re.search(r'name="csrf" value="([^"]+)"', html).group(1)


def test_another_accounts_ids_are_404_and_nothing_changes(world, page):
    server = world["server"]
    their_key_id = admin.list_keys(server.store, world["their_account"])[0]["key_id"]
    theirs = server.submit(world["their_key"], file_name="theirs.wav").json
    hook = endpoints.add_endpoint(server.store, "https://example.com/theirs",
                                  world["their_account"])
    their_secret = server.store.get("webhooks", hook["id"])["secret"]
    page.navigate(f"{server.url}/console/analyses/{theirs['id']}")
    assert status_of(page, f"/console/analyses/{theirs['id']}") == 404
    shoot(page, "not-found")
    page.navigate(f"{server.url}/console/webhooks/{hook['id']}")
    assert status_of(page, f"/console/webhooks/{hook['id']}") == 404
    their_event = new_event("analysis.completed", {"id": theirs["id"]},
                            account_id=world["their_account"], livemode=False,
                            created=time.time())
    with server.store.transaction() as txn:
        txn.put("events", {**their_event, "state": "dispatched"})
    cookie, csrf = session_cookie(world)
    for path in (f"/console/keys/{their_key_id}/revoke", f"/console/webhooks/{hook['id']}/remove",
                 f"/console/events/{their_event['id']}/resend",
                 f"/console/webhooks/{hook['id']}/rotate", f"/console/analyses/{theirs['id']}/cancel",
                 f"/console/analyses/{theirs['id']}/embed"):
        answer = form_post(world, path, {"csrf": csrf, "on": "1"}, cookie)
        assert answer.status == 404, (path, answer.status)
    assert server.store.get("keys", their_key_id)["revoked_at"] is None
    assert server.store.get("webhooks", hook["id"])["secret"] == their_secret
    assert server.store.select("deliveries.by_event", (their_event["id"],)) == []
    assert server.store.get("analyses", theirs["id"])["status"] == "processing"
    assert not server.store.get("analyses", theirs["id"]).get("embed")


def test_a_post_without_its_csrf_token_is_403_and_changes_nothing(world, page):
    server = world["server"]
    before = len(admin.list_keys(server.store, world["account"]))
    # in the browser: the form without its hidden field
    page.navigate(server.url + "/console/keys")
    page.evaluate("document.querySelector('#create input[name=csrf]').remove()")
    page.click("#create button[type=submit]")
    assert status_of(page, "/console/keys") == 403
    assert "nothing was changed" in page.evaluate("document.body.innerText")
    shoot(page, "refused")
    cookie, csrf = session_cookie(world)
    assert form_post(world, "/console/keys", {"mode": "live"}, cookie).status == 403
    assert form_post(world, "/console/keys", {"mode": "live", "csrf": csrf + "x"},
                     cookie).status == 403
    assert form_post(world, "/console/keys", {"mode": "live", "csrf": csrf}, None).status == 403
    assert form_post(world, "/console/logout", {}, cookie).status == 403
    assert len(admin.list_keys(server.store, world["account"])) == before
    # with it, the same POST works (the 403s were the token, not the form)
    assert form_post(world, "/console/keys", {"mode": "test", "csrf": csrf}, cookie).status == 200
    assert len(admin.list_keys(server.store, world["account"])) == before + 1


def test_every_answer_carries_the_headers_and_a_csp_without_inline_script(world, page):
    server = world["server"]
    cookie, csrf = session_cookie(world)
    paths = ["/console", "/console/keys", "/console/webhooks", "/console/analyses",
             "/console/signed-out", "/console/static/console.js", "/console/report.css",
             "/console/analyses/00000000-0000-4000-8000-000000000000"]
    for path in paths:
        answer = server.request("GET", path, headers={"Cookie": cookie})
        assert answer.status in (200, 404), (path, answer.status)
        for name, value in HEADERS.items():
            assert answer.header(name) == value, (path, name, answer.header(name))
        csp = answer.header("content-security-policy")
        assert "script-src 'self'" in csp and "unsafe-inline' " not in csp.split("script-src")[1]
        assert "frame-ancestors 'none'" in csp
        if answer.header("content-type").startswith("text/html"):
            assert not re.search(rb"<script(?![^>]*\bsrc=)", answer.body), path
            assert b" on" + b"click=" not in answer.body
    # logging out ends the session on the server
    assert form_post(world, "/console/logout", {"csrf": csrf}, cookie).status == 303
    assert server.request("GET", "/console", headers={"Cookie": cookie}).status == 303


def test_no_console_turns_it_off():
    server = start(console=False)
    try:
        assert server.request("GET", "/console").status == 404
        assert server.request("GET", "/console/login?token=x").status == 404
        assert server.request("GET", "/v1/openapi.json").status == 200
    finally:
        server.stop()


def test_in_maintenance_the_console_answers_a_503_page():
    server = start()
    try:
        _, account = server.key("test")
        link = urlsplit(admin.console_link(server.store, account, server.url,
                                           clock=server.clock)["url"])
        admin.set_maintenance(server.store, True)
        answer = server.request("GET", f"{link.path}?{link.query}")
        assert answer.status == 503 and answer.header("retry-after")
        assert answer.header("content-type").startswith("text/html")
        assert answer.header("x-frame-options") == "DENY" and b"maintenance" in answer.body
        admin.set_maintenance(server.store, False)          # the link was not spent
        assert server.request("GET", f"{link.path}?{link.query}").status == 303
    finally:
        server.stop()
