"""`genre` on POST /analyses (CONTRACT.md section 4): the caller chooses the
profile the scores are computed against; `genre.target` says which one was used."""

from __future__ import annotations

import uuid

import pytest

from trackgrade.grading.genres import BROAD_PROFILE, CLEAR_FAMILY_MIN, ELECTRONIC, GENRES

from tests.server.server_harness import start, wav_bytes


@pytest.fixture(scope="module")
def server():
    s = start(in_flight=50, test_in_flight=50, rate_per_minute=10_000,
              test_rate_per_minute=10_000)
    yield s
    s.stop()


def run(server, key: str, **fields) -> dict:
    accepted = server.submit(key, "mix.wav", **fields)
    assert accepted.status == 202, accepted.body
    assert server.upload(accepted.json, wav_bytes(seconds=4.0)).status == 200
    return server.wait(accepted.json["id"], key, until=lambda d: d["status"] == "complete")


@pytest.mark.parametrize("mode", ["test", "live"])
def test_the_chosen_profile_is_the_target(server, mode):
    key, _ = server.key(mode)
    chosen = run(server, key, genre="deep_house", mastering_status="master")
    assert chosen["genre"]["target"] == "deep_house"
    assert chosen["frequency"]["ideal"] == GENRES["deep_house"]["ideal_bands"]
    assert chosen["genre"]["detected"] in GENRES
    plain = run(server, key, mastering_status="master")
    # the detected family, or (no clear family: confidence under 0.5) the broad targets
    if plain["genre"]["confidence"] < CLEAR_FAMILY_MIN:
        assert plain["genre"]["target"] == ELECTRONIC
        assert plain["frequency"]["ideal"] == BROAD_PROFILE["ideal_bands"]
    else:
        assert plain["genre"]["target"] == plain["genre"]["detected"]
        assert plain["frequency"]["ideal"] == GENRES[plain["genre"]["detected"]]["ideal_bands"]


def test_null_genre_means_detect(server):
    key, _ = server.key("test")
    assert run(server, key, genre=None)["genre"]["target"] in GENRES


def test_genre_is_part_of_the_idempotency_fingerprint(server):
    key, _ = server.key("test")
    idem = str(uuid.uuid4())
    first = server.submit(key, "a.wav", idem=idem, genre="techno")
    assert first.status == 202
    again = server.submit(key, "a.wav", idem=idem, genre="techno")
    assert again.status == 202 and again.headers.get("idempotent-replayed") == "true"
    other = server.submit(key, "a.wav", idem=idem, genre="house")
    assert other.status == 409 and other.error["code"] == "idempotency_key_reused"


def test_openapi_documents_genre(server):
    doc = server.request("GET", "/v1/openapi.json").json
    schemas = doc["components"]["schemas"]
    assert set(GENRES) <= set(schemas["AnalysisCreate"]["properties"]["genre"]["enum"])
    target = schemas["Analysis"]["properties"]["genre"]["properties"]["target"]
    assert "reference" in target["enum"] and "house" in target["enum"]
