"""The README's webhook handlers, run as written: the Flask one through a
real waitress server on loopback with real deliveries from the dispatcher,
the Django one through a configured Django (request.body, CSRF exemption,
require_POST) fed by Django's own request factory and a real delivery."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from trackgrade import signing
from trackgrade.server.clock import SystemClock
from trackgrade.server.serve import start_in_thread
from trackgrade.config import load_settings
from trackgrade.server.webhooks import HttpSender, signed_headers
from trackgrade.server.webhooks.state import Job

from tests.server.server_harness import request

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


def example(marker: str) -> str:
    blocks = re.findall(r"```python\n(.*?)```", README, re.S)
    (found,) = [block for block in blocks if marker in block]
    return found


def job(secret: str, body: bytes, url: str, event_id="evt_readme") -> Job:
    return Job("d", event_id, "we_1", url, (secret,), body, 1)


@pytest.fixture
def secret(monkeypatch):
    value = signing.new_secret()
    monkeypatch.setenv("TRACKGRADE_WEBHOOK_SECRET", value)
    return value


def test_the_flask_handler_verifies_real_deliveries(secret, capsys):
    namespace: dict = {"__name__": "readme_flask"}
    exec(compile(example("from flask import"), "README-flask", "exec"), namespace)
    running = start_in_thread(namespace["app"], load_settings({}))
    try:
        url = running.url + "/hooks/trackgrade"
        body = (b'{"id":"evt_readme","object":"event","type":"analysis.completed","created":1,'
                b'"livemode":false,"data":{"id":"an_1","score":81}}')
        sender = HttpSender()
        now = int(SystemClock().time())
        result = sender.send(url, body, signed_headers(job(secret, body, url), now))
        assert result.status == 204
        assert "graded an_1 81" in capsys.readouterr().out
        again = sender.send(url, body, signed_headers(job(secret, body, url), now + 1))
        assert again.status == 204 and "graded" not in capsys.readouterr().out   # deduped
        forged = sender.send(url, body, signed_headers(job(signing.new_secret(), body, url), now))
        assert forged.status == 400
        stale = sender.send(url, body, signed_headers(job(secret, body, url), now - 3600))
        assert stale.status == 400
        bare = request(running.url, "POST", "/hooks/trackgrade", raw=body)
        assert bare.status == 400 and bare.json == {"error": "malformed_header"}
    finally:
        running.stop()


def django_configured():
    import django
    from django.conf import settings

    if not settings.configured:
        settings.configure(DEBUG=False, SECRET_KEY="readme-test", ALLOWED_HOSTS=["testserver"],
                           ROOT_URLCONF=__name__, MIDDLEWARE=[
                               "django.middleware.csrf.CsrfViewMiddleware"],
                           INSTALLED_APPS=[], USE_TZ=True)
        django.setup()


urlpatterns: list = []


def test_the_django_view_verifies_the_raw_body(secret, capsys):
    django_configured()
    from django.test import RequestFactory

    namespace: dict = {"__name__": "readme_django"}
    exec(compile(example("from django"), "README-django", "exec"), namespace)
    view = namespace["trackgrade_hook"]
    body = (b'{"id":"evt_d","object":"event","type":"analysis.failed","created":1,'
            b'"livemode":true,"data":{"id":"an_2","status":"failed","external_id":null,'
            b'"error":{"code":"unprocessable_audio"}}}')
    factory = RequestFactory(enforce_csrf_checks=True)

    def post(header, data=body):
        return view(factory.post("/hooks", data=data, content_type="application/json",
                                 HTTP_SERVICE_SIGNATURE=header))

    now = int(time.time())
    assert post(signing.sign(secret, body, now)).status_code == 204
    assert "failed an_2 unprocessable_audio" in capsys.readouterr().out
    wrong = post(signing.sign(secret, body, now), data=body.replace(b"an_2", b"an_3"))
    assert wrong.status_code == 400 and b"signature_mismatch" in wrong.content
    assert post(signing.sign(secret, body, now - 900)).status_code == 400
    assert view(factory.get("/hooks")).status_code == 405
    # the headers a real delivery carries, as the dispatcher builds them
    headers = signed_headers(job(secret, body, "http://x/"), now)
    assert post(headers["Service-Signature"]).status_code == 204
