"""Webhook URL rules (CONTRACT section 5): no credentials in a URL (and never
shown), https:// to private, loopback, link-local or cloud-metadata
addresses only with --allow-private, and the address checked again each
time a delivery connects. Before: `admin webhooks add` stored
`https://user:pass@…` (and `list` showed the password) and any https address."""

from __future__ import annotations

import json
import socket
import threading

import pytest
from typer.testing import CliRunner

from tests.webhooks.receiver import Receiver, answer

from trackgrade.cli import app  # noqa: E402
from trackgrade.errors import TrackgradeError  # noqa: E402
from trackgrade.server import accounts  # noqa: E402
from trackgrade.server.store import open_store  # noqa: E402
from trackgrade.server.webhooks import HttpSender, endpoints  # noqa: E402
from trackgrade.server.webhooks.addresses import check_url, special_kind  # noqa: E402

PRIVATE = ["https://10.0.0.5/h", "https://192.168.1.20:8443/h", "https://172.16.0.1/h",
           "https://127.0.0.1/h", "https://localhost/h", "https://[::1]/h",
           "https://169.254.169.254/latest/meta-data", "https://[fd00:ec2::254]/h",
           "https://100.100.100.200/h", "https://[::ffff:10.1.2.3]/h", "https://0.0.0.0/h"]


def invoke(*args):
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def data(tmp_path):
    data = tmp_path / "data"
    with open_store(data) as store:
        account = accounts.create_account(store, plan="pro")
    return data, account["id"]


def test_credentials_in_a_url_are_refused_and_never_shown(data):
    directory, account = data
    result = invoke("admin", "webhooks", "add", "https://hook-user:s3cr3t-pw@93.184.216.34/h",
                    "--account", account, "--data", directory)
    assert result.exit_code == 2 and "credentials" in result.stderr
    assert "s3cr3t-pw" not in result.stderr + result.stdout
    with open_store(directory) as store:
        assert endpoints.list_endpoints(store) == []


def test_a_url_stored_with_credentials_before_the_rule_is_listed_without_them(data):
    directory, account = data
    with open_store(directory) as store:
        made = endpoints.add_endpoint(store, "https://93.184.216.34/h", account)
        with store.transaction() as txn:
            doc = txn.get("webhooks", made["id"])
            doc["url"] = "https://old:hunter2@93.184.216.34/h"
            txn.put("webhooks", doc)
    listed = invoke("admin", "webhooks", "list", "--data", directory, "--json")
    human = invoke("admin", "webhooks", "list", "--data", directory)
    assert "hunter2" not in listed.stdout + human.stdout
    assert json.loads(listed.stdout)[0]["url"] == "https://***@93.184.216.34/h"


@pytest.mark.parametrize("url", PRIVATE)
def test_https_to_a_private_address_needs_allow_private(data, url):
    directory, account = data
    refused = invoke("admin", "webhooks", "add", url, "--account", account, "--data", directory)
    assert refused.exit_code == 2 and "--allow-private" in refused.stderr, refused.stderr
    allowed = invoke("admin", "webhooks", "add", url, "--account", account, "--data", directory,
                     "--allow-private", "--json")
    assert allowed.exit_code == 0, allowed.stderr
    listed = json.loads(invoke("admin", "webhooks", "list", "--data", directory,
                               "--json").stdout)
    assert [row["allow_private"] for row in listed] == [True]


@pytest.mark.parametrize("url", ["https://93.184.216.34/h", "https://[2606:4700::1111]/h",
                                 "http://127.0.0.1:8080/h", "http://localhost:9000/h"])
def test_public_https_and_loopback_http_need_no_flag(url):
    assert check_url(url) == url


@pytest.mark.parametrize("url", ["https://93.184.216.34/h\x1b[2J", "https://93.184.216.34/a b",
                                 "https://93.184.216.34/\x85"])
def test_control_characters_and_spaces_in_a_url_are_refused(url):
    with pytest.raises(TrackgradeError) as info:
        check_url(url)
    assert "\x1b" not in info.value.message and "control characters" in info.value.message


def test_metadata_addresses_are_named_as_such():
    assert special_kind("169.254.169.254") == "cloud metadata"
    assert special_kind("169.254.1.1") == "link-local"
    assert special_kind("::ffff:192.168.0.1") == "private"
    assert special_kind("93.184.216.34") is None
    with pytest.raises(TrackgradeError) as info:
        check_url("https://169.254.169.254/latest")
    assert info.value.param == "url" and "cloud metadata" in info.value.message


class Listener:
    """A loopback socket that counts the connections made to it."""

    def __init__(self) -> None:
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.connections = 0
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            conn.close()                                    # no TLS: the handshake fails


def test_each_delivery_checks_the_address_it_connects_to():
    """An endpoint whose name resolves to a private address (here `localhost`,
    as a DNS name re-pointed after the endpoint was added would): the
    sender never connects without --allow-private, and connects with it."""
    listener = Listener()
    try:
        url = f"https://localhost:{listener.port}/hook"
        refused = HttpSender().send(url, b"{}", {})
        assert refused.status is None and "--allow-private" in refused.error
        assert listener.connections == 0
        tried = HttpSender().send(url, b"{}", {}, allow_private=True)
        assert tried.status is None and listener.connections == 1
    finally:
        listener.sock.close()
    rcv = Receiver(answer(200))
    try:
        plain = HttpSender().send(rcv.url.replace("127.0.0.1", "localhost"), b"{}", {})
        assert plain.status == 200                                  # http:// to loopback
    finally:
        rcv.close()


def test_a_delivery_url_with_credentials_is_never_sent():
    rcv = Receiver(answer(200))
    try:
        url = rcv.url.replace("http://", "http://u:p@")
        result = HttpSender().send(url, b"{}", {})
        assert result.status is None and "credentials" in result.error
        assert rcv.deliveries == []
    finally:
        rcv.close()


def test_a_urls_query_string_is_never_shown(data):
    """`?token=` is how many receivers authenticate: add, list (both forms),
    rotate and remove show the URL with every query value as ***."""
    directory, account = data
    url = "https://93.184.216.34/h?token=tok-s3cr3t&region=eu-west"
    added = invoke("admin", "webhooks", "add", url, "--account", account, "--data", directory,
                   "--allow-private", "--json")
    assert added.exit_code == 0, added.stderr
    webhook_id = json.loads(added.stdout)["id"]
    shown = [added.stdout,
             invoke("admin", "webhooks", "list", "--data", directory, "--json").stdout,
             invoke("admin", "webhooks", "list", "--data", directory).stdout,
             invoke("admin", "webhooks", "rotate", webhook_id, "--data", directory).stdout,
             invoke("admin", "webhooks", "remove", webhook_id, "--data", directory).stdout]
    for text in shown:
        assert "tok-s3cr3t" not in text and "eu-west" not in text, text
    listed = json.loads(shown[1])[0]["url"]
    assert listed == "https://93.184.216.34/h?token=***&region=***"
