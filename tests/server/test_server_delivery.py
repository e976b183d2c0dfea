"""`delivery` in served documents and `codec_preview` on POST /analyses
(CONTRACT.md section 5): test mode (canned) and a live key (the real engine)."""

from __future__ import annotations

import sys
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from server_harness import start, wav_bytes  # noqa: E402

from trackgrade.grading.validate import validate_document  # noqa: E402


@pytest.fixture(scope="module")
def server():
    s = start(in_flight=50, test_in_flight=50, rate_per_minute=10_000,
              test_rate_per_minute=10_000)
    yield s
    s.stop()


@pytest.mark.parametrize("value", ["yes", 1, None, [True]])
def test_codec_preview_must_be_a_boolean(server, value):
    key, _ = server.key("test")
    reply = server.request("POST", "/v1/analyses", key=key, idem=str(uuid.uuid4()),
                           body={"file_name": "a.wav", "codec_preview": value})
    assert reply.status == 400, reply.body
    assert reply.error["code"] == "parameter_invalid" and reply.error["param"] == "codec_preview"


@pytest.mark.parametrize("mode", ["test", "live"])
def test_codecs_only_when_asked(server, mode):
    key, _ = server.key(mode)
    docs = {}
    for preview in (False, True):
        accepted = server.submit(key, "delivery.wav", codec_preview=preview).json
        assert server.upload(accepted, wav_bytes(2, 44100, channels=2)).status == 200
        docs[preview] = server.wait(accepted["id"], key,
                                    until=lambda d: d["diagnosis_status"] == "ready", timeout=60)
    for doc in docs.values():
        assert doc["status"] == "complete" and validate_document(doc) == []
        assert [p["platform"] for p in doc["delivery"]["platforms"]][0] == "spotify"
        assert set(doc["delivery"]["mono"]["bands"]) >= {"sub_bass", "air"}
    assert docs[False]["delivery"]["codecs"] is None
    assert [c["codec"] for c in docs[True]["delivery"]["codecs"]] == ["mp3", "aac", "opus"]


def test_codec_preview_is_part_of_the_idempotency_fingerprint(server):
    key, _ = server.key("test")
    idem = str(uuid.uuid4())
    first = server.request("POST", "/v1/analyses", key=key, idem=idem, body={"file_name": "a.wav"})
    assert first.status == 202
    other = server.request("POST", "/v1/analyses", key=key, idem=idem,
                           body={"file_name": "a.wav", "codec_preview": True})
    assert other.status == 409 and other.error["code"] == "idempotency_key_reused"
