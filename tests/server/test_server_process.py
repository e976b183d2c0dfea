"""`trackgrade serve` as a real process: start-up, kill -9 with an analysis in
the worker pool (it fails with engine_error and its credit comes back on the
next start), uploads that outlive a restart, the admin CLI's maintenance
switch and revocation seen by the running server, `--maintenance`."""

from __future__ import annotations

from pathlib import Path

from trackgrade.server import accounts
from trackgrade.server.store import open_store

from tests.server.serve_process import ServeProcess, admin, make_key
from tests.server.server_harness import request, wav_bytes
from tests.server.server_harness import upload as upload_to


class Served(ServeProcess):
    def __init__(self, data: Path, *extra: str) -> None:
        super().__init__(data, "--workers", "1", *extra, timeout=60, require=True,
                         stop_wait=15)

    def __call__(self, method, path, **kw):
        return request(self.url, method, path, **kw)


def upload(served: Served, accepted: dict, data: bytes):
    return upload_to(served.url, accepted, data, field_name="file", part_name="a.wav")


def test_kill_9_mid_analysis_then_restart(tmp_path, track):
    data = tmp_path / "data"
    live, live_account = make_key("live", 3, data_dir=data)
    test_key, _ = make_key("test", 0, data_dir=data)
    first = Served(data)
    try:
        lost = first("POST", "/v1/analyses", key=live, idem="a", body={"file_name": "t.wav"}).json
        waiting = first("POST", "/v1/analyses", key=test_key, idem="b",
                        body={"file_name": "later.wav"}).json
        assert upload(first, lost, track).status == 200
    finally:
        first.kill()                      # the bytes in the pool are gone
    second = Served(data)
    try:
        doc = second("GET", f"/v1/analyses/{lost['id']}", key=live).json
        # the worker process was still starting up: the analysis was lost with it
        assert doc["status"] == "failed" and doc["error"]["code"] == "engine_error"
        again = second("POST", "/v1/analyses", key=live, idem="c", body={"file_name": "b.wav"})
        assert again.json["credits_remaining"] == 2     # 3 - 1: the lost one's credit came back
        # an analysis still waiting for its bytes survives the restart
        assert second("GET", f"/v1/analyses/{waiting['id']}", key=test_key).json["status"] \
            == "processing"
        assert upload(second, waiting, wav_bytes(2)).status == 200
    finally:
        second.stop()
    store = open_store(data)
    try:
        failed = [e for e in store.select("events.by_created") if e["type"] == "analysis.failed"]
        assert [e["envelope"]["data"]["id"] for e in failed] == [lost["id"]]
    finally:
        store.close()


def test_admin_cli_switches_a_running_server(tmp_path):
    data = tmp_path / "data"
    key, _ = make_key("live", 1, data_dir=data)
    store = open_store(data)
    key_id = store.find("keys.hash", accounts.hash_key(key))["id"]
    store.close()
    served = Served(data)
    try:
        assert served("GET", "/v1/genres", key=key).status == 200
        assert admin("maintenance", "on", "--data", str(data)).returncode == 0
        reply = served("GET", "/v1/genres", key=key)
        assert reply.status == 503 and reply.error["code"] == "service_unavailable"
        assert reply.header("Retry-After")
        assert admin("maintenance", "off", "--data", str(data)).returncode == 0
        assert served("GET", "/v1/genres", key=key).status == 200
        assert admin("keys", "revoke", key_id, "--data", str(data)).returncode == 0
        assert served("GET", "/v1/genres", key=key).status == 401
    finally:
        served.stop()


def test_maintenance_flag(tmp_path):
    data = tmp_path / "data"
    key, _ = make_key("test", 0, data_dir=data)
    served = Served(data, "--maintenance")
    try:
        reply = served("POST", "/v1/analyses", key=key, idem="x", body={"file_name": "a.wav"})
        assert reply.status == 503 and reply.error["code"] == "service_unavailable"
        assert served("GET", "/v1/openapi.json").status == 200
    finally:
        served.stop()
