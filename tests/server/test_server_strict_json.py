"""POST /analyses takes only application/json bodies whose strings are text:
the content type, lone surrogate escapes and non-finite numbers, against a
real server on loopback."""

from __future__ import annotations

import uuid

import pytest

from tests.server.server_harness import request, start


@pytest.fixture(scope="module")
def server():
    s = start(test_in_flight=50, test_rate_per_minute=1000)
    s.test_key = s.key("test")[0]
    yield s
    s.stop()


def post(server, raw: bytes, content_type: str | None):
    headers = {"Authorization": f"Bearer {server.test_key}", "Idempotency-Key": str(uuid.uuid4())}
    if content_type is not None:
        headers["Content-Type"] = content_type
    return request(server.url, "POST", "/v1/analyses", raw=raw, headers=headers)


BODY = b'{"file_name": "a.wav"}'


@pytest.mark.parametrize("content_type", [None, "text/plain", "application/x-www-form-urlencoded",
                                          "application/jsonx", "multipart/form-data; boundary=x",
                                          "application/problem+json"])
def test_bodies_not_sent_as_application_json_are_400(server, content_type):
    reply = post(server, BODY, content_type)
    assert reply.status == 400, reply.body
    assert reply.error["code"] == "invalid_json"
    assert "application/json" in reply.error["message"]


@pytest.mark.parametrize("content_type", ["application/json", "application/json; charset=utf-8",
                                          "Application/JSON; charset=UTF-8",
                                          "application/json;charset=latin-1"])
def test_application_json_with_any_charset_is_accepted(server, content_type):
    reply = post(server, BODY, content_type)
    assert reply.status == 202, reply.body


@pytest.mark.parametrize("raw,param", [
    (b'{"file_name": "\\ud800.wav"}', "file_name"),
    (b'{"file_name": "a.wav", "external_id": "x\\udfff"}', "external_id"),
    (b'{"file_name": "a.wav", "external_id": "\\udc00\\ud800"}', "external_id"),
    (b'{"file_name": "a.wav", "mastering_status": "\\ud83d"}', "mastering_status"),
])
def test_a_lone_surrogate_is_400_naming_the_field(server, raw, param):
    reply = post(server, raw, "application/json")
    assert reply.status == 400, reply.body
    assert reply.error["code"] == "parameter_invalid" and reply.error["param"] == param


def test_a_lone_surrogate_in_a_field_name_is_400_not_500(server):
    reply = post(server, b'{"file_name": "a.wav", "\\ud800": 1}', "application/json")
    assert reply.status == 400, reply.body
    assert reply.error["param"] == "\\ud800"


def test_a_paired_surrogate_escape_is_text(server):
    reply = post(server, b'{"file_name": "\\ud83c\\udfb5 beat.wav"}', "application/json")
    assert reply.status == 202, reply.body


@pytest.mark.parametrize("number", [b"1e400", b"-1e999", b"9" * 5000])
def test_numbers_beyond_range_are_invalid_json(server, number):
    reply = post(server, b'{"file_name": "a.wav", "external_id": ' + number + b"}",
                 "application/json")
    assert reply.status == 400, reply.body
    assert reply.error["code"] == "invalid_json"
