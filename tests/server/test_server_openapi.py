"""GET /v1/openapi.json matches the server: its routes, methods and error codes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import trackgrade.server as server_package
from trackgrade.errors import ERROR_CODES
from trackgrade.testmode import FAILURE_CODES

from tests.server.server_harness import start

IGNORED_METHODS = {"HEAD", "OPTIONS"}


@pytest.fixture(scope="module")
def served():
    s = start()
    reply = s.request("GET", "/v1/openapi.json")
    yield s, reply
    s.stop()


def test_served_without_a_key(served):
    _, reply = served
    assert reply.status == 200 and reply.header("X-Request-Id")
    doc = reply.json
    assert doc["openapi"] == "3.1.0" and doc["servers"] == [{"url": "/v1"}]


def test_paths_and_methods_match_the_url_map(served):
    s, reply = served
    doc = reply.json
    routes: dict[str, set[str]] = {}
    for rule in s.app.url_map.iter_rules():
        if rule.endpoint.startswith("console."):     # the developer console: not part of v1
            assert rule.rule.startswith("/console"), rule.rule
            continue
        assert rule.rule.startswith("/v1/"), rule.rule
        path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule[len("/v1"):])
        routes.setdefault(path, set()).update(m.lower() for m in rule.methods - IGNORED_METHODS)
    documented = {path: set(item) for path, item in doc["paths"].items()}
    assert documented == routes
    for path, item in doc["paths"].items():
        names = set(re.findall(r"{([^}]+)}", path))
        for op in item.values():
            declared = {p["name"] for p in op.get("parameters", []) if p["in"] == "path"}
            assert declared == names, path


def test_operations_list_their_statuses(served):
    _, reply = served
    for path, item in reply.json["paths"].items():
        for method, op in item.items():
            assert op["operationId"] and op["responses"]
            for code in op["x-error-codes"]:
                assert str(ERROR_CODES[code][0]) in op["responses"], (path, method, code)


def codes_raised_by_the_server() -> set[str]:
    """Every error code literal in the server's source (plus the engine's
    header checks, accounts and test mode, which the server passes on)."""
    root = Path(server_package.__file__).parent
    text = "\n".join(p.read_text() for p in root.rglob("*.py")
                     if "store" not in p.relative_to(root).parts)
    literals = set(re.findall(r'"([a-z_]+)"', text))
    used = {code for code in ERROR_CODES if code in literals}
    used |= {"unprocessable_audio", "file_rejected", "file_too_large"}   # engine.decode.probe
    used |= set(FAILURE_CODES)
    return used


def test_every_error_code_the_server_uses_is_documented(served):
    _, reply = served
    doc = reply.json
    documented = set(doc["x-all-error-codes"])
    enum = set(doc["components"]["schemas"]["ErrorObject"]["properties"]["code"]["enum"])
    used = codes_raised_by_the_server()
    assert used <= documented, used - documented
    assert used <= enum
    assert {"route_not_found", "method_not_allowed", "invalid_api_key", "not_found",
            "idempotency_key_reused", "engine_at_capacity"} <= used
