"""The instance serves its own error reference (GET /v1/errors, /v1/errors/{code}),
made from the one error table, and every error's doc_url opens its entry there:
absolute, from `public_base_url` when set, else from the request's accepted Host."""

from __future__ import annotations

import html
import re
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from trackgrade.errors import ERROR_CODES, ERROR_HELP
from trackgrade.server.openapi import document as openapi_document

from tests.server.server_harness import start

README = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def server():
    s = start()
    yield s
    s.stop()


def fetch(url: str, host: str | None = None) -> tuple[int, str, str]:
    req = urllib.request.Request(url, headers={"Host": host} if host else {})
    with urllib.request.urlopen(req, timeout=30) as reply:
        return reply.status, reply.headers["Content-Type"], reply.read().decode("utf-8")


def test_every_code_of_the_table_has_an_entry():
    assert set(ERROR_HELP) == set(ERROR_CODES)
    for code, (means, todo) in ERROR_HELP.items():
        assert len(means) > 20 and len(todo) > 15, code
    paths = openapi_document()["paths"]
    assert "/errors" in paths and "/errors/{code}" in paths
    assert "`GET /v1/errors`" in README and "/v1/errors/<code>" in README


def test_the_reference_lists_every_code_with_what_it_means_and_what_to_do(server):
    status, kind, page = fetch(server.url + "/v1/errors")
    assert status == 200 and kind.startswith("text/html")
    for code, (means, todo) in ERROR_HELP.items():
        assert f'id="{code}"' in page, code
        text = html.unescape(re.sub(r"<[^>]+>", "", page))
        assert means.replace("`", "") in text and todo.replace("`", "") in text, code


def test_a_real_errors_doc_url_opens_that_codes_entry(server):
    reply = server.request("GET", "/v1/nothing-here")
    doc_url = reply.error["doc_url"]
    assert doc_url == f"{server.url}/v1/errors/route_not_found"
    status, kind, page = fetch(doc_url)
    assert status == 200 and kind.startswith("text/html")
    text = html.unescape(re.sub(r"<[^>]+>", "", page))
    assert "route_not_found" in text and ERROR_HELP["route_not_found"][0] in text
    assert "docs.trackgrade.dev" not in reply.body.decode()


def test_every_codes_entry_answers(server):
    for code, (means, _todo) in ERROR_HELP.items():
        status, _kind, page = fetch(f"{server.url}/v1/errors/{code}")
        assert status == 200 and f'id="{code}"' in page and html.escape(means.split("`")[0]) in page
    unknown = server.request("GET", "/v1/errors/no_such_code")
    assert unknown.status == 404 and unknown.error["code"] == "not_found"
    assert unknown.error["param"] == "code"


def test_a_failed_analysis_carries_a_doc_url_that_opens(server):
    key, _account = server.key("live", credits=3)
    accepted = server.submit(key).json
    server.upload(accepted, b"hello, this is not audio at all" * 100)
    doc = server.wait(accepted["id"], key)
    error = doc["error"]
    assert doc["status"] == "failed" and error["code"] == "unprocessable_audio"
    assert urlsplit(error["doc_url"]).path == "/v1/errors/unprocessable_audio"
    assert fetch(error["doc_url"])[0] == 200


def test_a_forged_host_never_becomes_the_doc_url(server):
    reply = server.request("GET", "/v1/nothing-here", headers={"Host": "evil.example"})
    assert "evil.example" not in reply.error["doc_url"]
    assert fetch(reply.error["doc_url"])[0] == 200          # the server's own address


def test_public_base_url_makes_the_doc_url():
    s = start(public_base_url="https://api.example.test/")
    try:
        reply = s.request("GET", "/v1/nothing-here")
        assert reply.error["doc_url"] == "https://api.example.test/v1/errors/route_not_found"
        path = urlsplit(reply.error["doc_url"]).path       # what the proxy passes on
        assert fetch(s.url + path)[0] == 200
    finally:
        s.stop()
