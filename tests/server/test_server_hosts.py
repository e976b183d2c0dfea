"""Upload URLs never come from a forged Host header (CONTRACT section 5,
"hosts"): `public_base_url` when set; otherwise the Host must be one of
`allowed_hosts` (default: the bound address, localhost and 127.0.0.1 with
the port), else 400 `parameter_invalid` with `param` `Host`. Before:
`Host: evil.example` became the stored (and replayed) `upload.url`."""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit

import pytest

from tests.server.server_harness import start

from trackgrade.config import load_settings  # noqa: E402
from trackgrade.server.hosts import allowed_hosts, host_allowed  # noqa: E402


@pytest.fixture(scope="module")
def server():
    s = start(test_in_flight=100)
    s.port = urlsplit(s.url).port
    yield s
    s.stop()


def submit(s, host: str, key: str | None = None):
    key = key or s.key("test")[0]
    return s.request("POST", "/v1/analyses", key=key, idem=str(uuid.uuid4()),
                     body={"file_name": "a.wav"}, headers={"Host": host})


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "127.0.0.1:1",
                                  "localhost.evil.example:{port}", "", "[::1]:{port}"])
def test_a_host_that_is_not_allowed_is_400_and_creates_nothing(server, host):
    key, account = server.key("live", credits=3)
    reply = submit(server, host.format(port=server.port), key)
    assert reply.status == 400, reply.body
    assert reply.error["code"] == "parameter_invalid" and reply.error["param"] == "Host"
    assert server.credits(account) == 3
    assert [r for r in server.store.scan("analyses") if r["account_id"] == account] == []


@pytest.mark.parametrize("host", ["127.0.0.1:{port}", "localhost:{port}", "LOCALHOST:{port}"])
def test_the_default_hosts_build_the_upload_url(server, host):
    reply = submit(server, host.format(port=server.port))
    assert reply.status == 202, reply.body
    url = reply.json["upload"]["url"]
    assert url.startswith(f"http://{host.format(port=server.port).lower()}/v1/uploads/")


def test_public_base_url_wins_over_any_host():
    s = start(public_base_url="https://tracks.example.org")
    try:
        reply = submit(s, "evil.example")
        assert reply.status == 202, reply.body
        assert reply.json["upload"]["url"].startswith("https://tracks.example.org/v1/uploads/")
    finally:
        s.stop()


def test_allowed_hosts_replace_the_defaults():
    s = start(allowed_hosts="tracks.example.org, api.example.org:8443")
    try:
        assert submit(s, "tracks.example.org:9999").status == 202
        assert submit(s, "api.example.org:8443").status == 202
        assert submit(s, "api.example.org:8444").error["param"] == "Host"
        assert submit(s, f"127.0.0.1:{urlsplit(s.url).port}").error["param"] == "Host"
    finally:
        s.stop()


def test_the_default_list_names_the_bound_address_with_its_port():
    settings = load_settings({}, host="0.0.0.0", port=8080)
    assert allowed_hosts(settings, ("0.0.0.0", 8080)) == [
        "localhost:8080", "127.0.0.1:8080", "0.0.0.0:8080"]
    assert host_allowed("localhost", ["localhost:80"])          # no port: 80
    assert not host_allowed("localhost", ["localhost:8080"])
    assert host_allowed("anything.example:1", ["*"])
    assert host_allowed("[::1]:8080", allowed_hosts(load_settings({}, host="::1"), ("::1", 8080)))
