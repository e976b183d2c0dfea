"""Hostile audio: every real odd file of ../shared/truth/real/bad-input and
hypothesis mutations of the headers and frames of real WAV, AIFF, FLAC and MP3
files. Decoding ends in a document or a clear error (unprocessable_audio,
file_rejected, file_too_large), bounded in time and memory; through a real
server with worker processes, no upload takes the server or its pool down.
benchmarks/bench_hardening.py runs more mutations."""

from __future__ import annotations

import uuid
from urllib.parse import urlsplit

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from trackgrade.engine.decode import decode
from trackgrade.server.worker import ProcessExecutor

from tests.server import hostile_audio as ha
from tests.server.server_harness import multipart, start

SEEDS = ha.seeds()
UPLOAD_CODES = ha.CLEAR_CODES | {"upload_incomplete"}          # an empty file is no file
FAILED_CODES = ha.CLEAR_CODES | {"engine_error"}


def test_the_seeds_are_decodable_audio():
    for fmt, data in SEEDS.items():
        assert decode(data, file_name=f"seed.{fmt}").samples.shape[0] > 0


@pytest.mark.parametrize("fmt", sorted(SEEDS))
def test_mutated_headers_and_frames_decode_or_fail_clearly_within_bounds(fmt):
    seen = set()

    @settings(max_examples=60, deadline=None, database=None, derandomize=True,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def check(draw):
        data = draw.draw(ha.mutation(SEEDS[fmt]))
        result = ha.decode_bounded(data, f"mutated.{fmt}")
        assert result.outcome == "ok" or result.outcome in ha.CLEAR_CODES, result
        assert result.seconds < ha.TIME_LIMIT_S, result
        assert result.peak_bytes <= ha.memory_bound(data), result
        seen.add(result.outcome)
    check()
    assert seen >= {"ok", "unprocessable_audio"}      # the mutations reach both ends


def test_a_tiny_file_claiming_a_long_stream_reserves_little():
    """A FLAC cut to 16 KiB whose STREAMINFO claims 19 minutes (402 MB reserved before)."""
    flac = SEEDS["flac"]
    assert flac[:4] == b"fLaC"
    fields = int.from_bytes(flac[18:26], "big")           # rate, channels, bits, total samples
    rate = fields >> 44
    claimed = (fields & ~((1 << 36) - 1)) | (19 * 60 * rate)
    lying = flac[:18] + claimed.to_bytes(8, "big") + flac[26:16384]
    result = ha.decode_bounded(lying, "cut.flac")
    assert result.outcome in ha.CLEAR_CODES | {"ok"}
    assert result.peak_bytes <= ha.memory_bound(lying), result


@pytest.fixture(scope="module")
def server():
    executor = ProcessExecutor(1, queue_size=64)
    s = start(executor=executor, in_flight=1000, rate_per_minute=100000)
    s.live_key, s.account = s.key("live", credits=10000)
    yield s
    s.stop()
    executor.shutdown(wait=False)


def upload_to(server, name: str, data: bytes) -> tuple[str | None, int, dict]:
    """Submit under `name` (a refused extension is renamed .wav, so the bytes are
    still sniffed) and upload; (analysis id, upload status, upload body)."""
    reply = server.request("POST", "/v1/analyses", key=server.live_key, idem=str(uuid.uuid4()),
                           body={"file_name": name})
    if reply.status == 400 and reply.error["param"] == "file_name":
        reply = server.request("POST", "/v1/analyses", key=server.live_key,
                               idem=str(uuid.uuid4()), body={"file_name": "renamed.wav"})
    assert reply.status == 202, reply.body
    accepted = reply.json
    body, ctype = multipart({"file": (name, data)})
    up = server.request("POST", urlsplit(accepted["upload"]["url"]).path, raw=body, headers={
        "Content-Type": ctype, "Authorization": f"Bearer {accepted['upload']['token']}"})
    return accepted["id"], up.status, up.json


def settle(server, analysis_id: str, status: int, body: dict) -> str:
    """The analysis's end: "complete" or its clear error code."""
    assert status < 500, body
    if status != 200:
        code = body["error"]["code"]
        assert code in UPLOAD_CODES, body
        return code
    doc = server.wait(analysis_id, server.live_key, until=lambda d: d["status"] != "processing"
                      and d["diagnosis_status"] == "ready" or d["status"] == "failed",
                      timeout=120)
    if doc["status"] == "failed":
        assert doc["error"]["code"] in FAILED_CODES and doc["error"]["message"], doc
        return doc["error"]["code"]
    assert doc["status"] == "complete", doc
    return "complete"


def test_every_bad_input_file_gets_a_document_or_a_clear_error(server):
    outcomes = {}
    for path in ha.bad_inputs():
        outcomes[path.name] = settle(server, *upload_to(server, path.name, path.read_bytes()))
    assert len(outcomes) >= 30
    assert "engine_error" not in outcomes.values(), outcomes     # no worker crashed
    assert set(outcomes.values()) >= {"complete", "unprocessable_audio"}
    # the server and its worker pool still work
    assert settle(server, *upload_to(server, "after.wav", SEEDS["wav"])) == "complete"


@settings(max_examples=12, deadline=None, database=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(data=st.data())
def test_mutated_uploads_never_take_the_server_down(server, data):
    fmt = data.draw(st.sampled_from(sorted(SEEDS)))
    mutated = data.draw(ha.mutation(SEEDS[fmt]))
    outcome = settle(server, *upload_to(server, f"mutated.{fmt}", mutated))
    assert outcome != "engine_error"
