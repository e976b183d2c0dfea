"""waitress internals the connection layer relies on, pinned (issue 30).

`trackgrade/server/connections/` and `serve.py` subclass waitress's
`HTTPChannel`, `HTTPRequestParser` and `ErrorTask`, replace the server's
`maintenance` and `channel_class`, and read or write private state
(`body_rcv`, `outbufs`, `total_outbufs_len`, `active_channels`, `_map`, ...).
pyproject pins `waitress>=3.0.2,<3.1`; this test fails when an installed
waitress no longer has one of those names, changes a signature we call, or
changes the body of a method we override (a fix there, a security fix
included, must be looked at and carried into our override by hand: then
update the digest below)."""

from __future__ import annotations

import hashlib
import inspect
import socket
from importlib.metadata import version

import pytest
from waitress.adjustments import Adjustments
from waitress.channel import HTTPChannel
from waitress.parser import HTTPRequestParser
from waitress.server import BaseWSGIServer, create_server
from waitress.task import ErrorTask
from waitress.utilities import Error

from trackgrade.server.connections import channel as guarded
from trackgrade.server.serve import adjustments

# methods we override: (class, name) -> (signature, sha256 of waitress's source, 16 hex)
OVERRIDDEN = {
    (HTTPChannel, "__init__"): ("(self, server, sock, addr, adj, map=None)", "a194769af3fd2e35"),
    (HTTPChannel, "received"): ("(self, data)", "08d6df73fb69da84"),
    (HTTPChannel, "readable"): ("(self)", "e4722238ce60c915"),
    (HTTPChannel, "writable"): ("(self)", "d0cbd4ae1b3ba2a3"),
    (HTTPChannel, "handle_read"): ("(self)", "5f1fb08c95aa00cc"),
    (HTTPChannel, "handle_close"): ("(self)", "8f59b9aaa45566bb"),
    (HTTPChannel, "del_channel"): ("(self, map=None)", "a018ed85e5e518cd"),
    (HTTPRequestParser, "__init__"): ("(self, adj)", "d43d0602efd291cf"),
    (HTTPRequestParser, "received"): ("(self, data)", "b466c02de37d4a01"),
    (HTTPRequestParser, "close"): ("(self)", "a29926ca4e2dd8dd"),
    (ErrorTask, "execute"): ("(self)", "4abe3262db04d291"),
    (BaseWSGIServer, "maintenance"): ("(self, now)", "4ab5b7f595bc4253"),
}
# methods we call: (class, name) -> signature
CALLED = {
    (HTTPChannel, "recv"): "(self, buffer_size)",
    (ErrorTask, "set_close_on_finish"): "(self) -> None",
    (ErrorTask, "write"): "(self, data)",
    (Error, "__init__"): "(self, body)",
    (BaseWSGIServer, "run"): "(self)",
}
# attributes read or written, on a live instance of each
CHANNEL_NAMES = ("error_task_class", "parser_class", "outbuf_lock", "outbufs",
                 "current_outbuf_count", "total_outbufs_len", "close_when_flushed", "will_close",
                 "requests", "request", "connected", "socket", "adj", "server", "last_activity")
PARSER_NAMES = ("body_rcv", "completed", "headers_finished", "error", "content_length",
                "chunked", "empty", "command", "path", "headers", "expect_continue",
                "body_bytes_received", "connection_close")
TASK_NAMES = ("request", "channel", "status", "response_headers", "content_length")
SERVER_NAMES = ("channel_class", "maintenance", "active_channels", "_map", "trigger",
                "task_dispatcher", "effective_host", "effective_port", "adj")
ERROR_NAMES = ("code", "reason", "body")


def _digest(fn) -> str:
    return hashlib.sha256(inspect.getsource(fn).encode()).hexdigest()[:16]


def test_the_installed_waitress_is_the_pinned_range():
    major, minor, patch = (int(p) for p in version("waitress").split(".")[:3])
    assert (major, minor) == (3, 0) and patch >= 2, version("waitress")


@pytest.mark.parametrize("owner,name", OVERRIDDEN, ids=lambda v: getattr(v, "__name__", v))
def test_each_method_we_override_is_unchanged(owner, name):
    signature, digest = OVERRIDDEN[(owner, name)]
    method = getattr(owner, name)
    assert str(inspect.signature(method)) == signature
    assert _digest(method) == digest, (
        f"waitress {version('waitress')} changed {owner.__name__}.{name}: read the change, "
        "carry it into trackgrade/server/connections, then record the new digest")


@pytest.mark.parametrize("owner,name", CALLED, ids=lambda v: getattr(v, "__name__", v))
def test_each_method_we_call_keeps_its_signature(owner, name):
    assert str(inspect.signature(getattr(owner, name))) == CALLED[(owner, name)]


def test_the_private_state_we_touch_exists_on_live_objects():
    from trackgrade.config import Settings

    settings = Settings(port=0)
    server = create_server(lambda environ, start: [], host="127.0.0.1", port=0,
                           **adjustments(settings))
    left, right = socket.socketpair()
    try:
        channel = HTTPChannel(server, left, ("127.0.0.1", 1), server.adj, map={})
        parser = HTTPRequestParser(server.adj)
        parser.received(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\n\r\n")
        parser.error = Error("x")
        channel.request = parser
        task = ErrorTask(channel, parser)
        for obj, names in ((channel, CHANNEL_NAMES), (parser, PARSER_NAMES), (task, TASK_NAMES),
                           (server, SERVER_NAMES), (parser.error, ERROR_NAMES)):
            missing = [n for n in names if not hasattr(obj, n)]
            assert not missing, (type(obj).__name__, missing)
        assert isinstance(server.active_channels, dict) and isinstance(server._map, dict)
        assert hasattr(server.trigger, "pull_trigger")
        assert "cancel_pending" in inspect.signature(server.task_dispatcher.shutdown).parameters
    finally:
        server.close()
        left.close()
        right.close()


def test_every_adjustment_we_set_is_one_waitress_knows():
    known = {name for name, _ in Adjustments._params}
    from trackgrade.config import Settings

    assert set(adjustments(Settings())) <= known


def test_our_subclasses_are_of_the_pinned_classes():
    assert issubclass(guarded.GuardedChannel, HTTPChannel)
    assert issubclass(guarded.GuardedParser, HTTPRequestParser)
    assert issubclass(guarded.EnvelopeErrorTask, ErrorTask)
