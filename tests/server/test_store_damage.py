"""Store damage (CONTRACT.md 5, "store damage"): one damaged byte anywhere in
the durable store's files never silently drops acknowledged data. The store
refuses to open with one line naming the file and the record's offset,
nothing is ever truncated behind a bad record, snapshots are checksummed
(a mangled document like {"Xtatus": …} is refused, not served), and
`trackgrade admin store check` reports the damage without changing a byte.

The journal and the snapshot come from a real server's work (keys, a
webhook endpoint, analyses submitted, uploaded, completed, failed, the
sweeper and maintenance switch), so every kind of record is covered: a put
and a delete in every collection the server writes.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.server.serve_process import CLI, ServeProcess
from tests.server.server_harness import start, wav_bytes

from trackgrade.server import admin  # noqa: E402
from trackgrade.server.console import signin  # noqa: E402
from trackgrade.server.store import COLLECTIONS, open_store  # noqa: E402
from trackgrade.server.store.base import StoreDamage, StoreError  # noqa: E402
from trackgrade.server.store.check import check_data_dir  # noqa: E402
from trackgrade.server.store.journal import encode_line, read_transactions  # noqa: E402
from trackgrade.server.webhooks.endpoints import add_endpoint  # noqa: E402


def build_store(root: Path) -> None:
    """A data directory written by a real server's requests."""
    store = open_store(root)
    server = start(store=store, webhook_schedule="0,1", in_flight=10)
    try:
        live, account = server.key("live", credits=5)
        test, _ = server.key("test")
        add_endpoint(store, "http://127.0.0.1:9/hook", account)
        done = server.submit(live, "done.wav").json
        server.upload(done, wav_bytes(2))
        test_done = server.submit(test, "t.wav").json
        server.upload(test_done, b"x")
        bad = server.submit(live, "bad.wav").json
        server.upload(bad, b"not audio at all")
        server.submit(live, "waiting.wav")
        server.submit(test, "late.wav")
        server.wait(done["id"], live, until=lambda d: d["diagnosis_status"] == "ready")
        server.wait(test_done["id"], test, until=lambda d: d["diagnosis_status"] == "ready")
        server.clock.advance(3600)                 # the uploads never came: the sweeper fails them
        server.ctx.lifecycle.sweep()
        admin.set_maintenance(store, True)
        admin.set_maintenance(store, False)
        link = admin.console_link(store, account, server.url, clock=server.clock)  # a session
        signin.sign_in(store, link["url"].split("token=", 1)[1], clock=server.clock)
        with store.transaction() as txn:           # a counter (shared stores keep rate windows)
            txn.put("counters", {"id": "rate:x", "window": 1, "count": 1})
        with store.transaction() as txn:
            txn.delete("counters", "rate:x")
    finally:
        server.stop()
        store.close()


@pytest.fixture(scope="module")
def written(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("written") / "data"
    build_store(root)
    return root


def journal_of(root: Path) -> Path:
    return sorted(root.glob("journal-*.log"))[-1]


def records(path: Path) -> list[tuple[int, bytes]]:
    """(offset, line with its newline) of every journal record."""
    out, offset = [], 0
    for line in path.read_bytes().splitlines(keepends=True):
        out.append((offset, line))
        offset += len(line)
    return out


def copy_with(root: Path, target: Path, path: Path, position: int) -> Path:
    """A copy of the data directory with one byte of `path` replaced."""
    shutil.copytree(root, target)
    damaged = target / path.name
    data = bytearray(damaged.read_bytes())
    data[position] = ord("X") if data[position] != ord("X") else ord("Y")
    damaged.write_bytes(bytes(data))
    return damaged


def test_the_journal_holds_every_kind_of_record(written):
    kinds = set()
    for _offset, line in records(journal_of(written)):
        for op in json.loads(line[9:])["ops"]:
            kinds.add((op[0], op[1]))
    written_collections = {c for kind, c in kinds if kind == "p"}
    assert written_collections == set(COLLECTIONS)
    assert {"uploads", "jobs", "counters"} <= {c for kind, c in kinds if kind == "d"}


def test_a_byte_flipped_in_any_journal_record_refuses_to_open_naming_file_and_offset(
        written, tmp_path):
    lines = records(journal_of(written))
    assert len(lines) >= 20
    for n, (offset, line) in enumerate(lines):
        last = n == len(lines) - 1
        # the checksum, the middle of the payload, the newline (not the last one's: see below)
        for position in (offset + 1, offset + len(line) // 2,
                         *(() if last else (offset + len(line) - 1,))):
            copy = tmp_path / f"r{n}_{position}"
            damaged = copy_with(written, copy, journal_of(written), position)
            before = damaged.read_bytes()
            with pytest.raises(StoreDamage) as caught:
                open_store(copy)
            assert str(caught.value).startswith(f"store damaged: {damaged} at offset {offset}:")
            assert "\n" not in str(caught.value)
            [report] = check_data_dir(copy)
            assert report.damage[0]["offset"] == offset
            assert report.records == len(lines) - 1 - (position == offset + len(line) - 1)
            assert damaged.read_bytes() == before           # nothing truncated, nothing written
            shutil.rmtree(copy)


def test_the_last_record_losing_its_newline_is_kept_not_dropped(written, tmp_path):
    with open_store(written) as store:
        intact = {c: store.scan(c) for c in COLLECTIONS}
    path = journal_of(written)
    copy = tmp_path / "copy"
    copy_with(written, copy, path, path.stat().st_size - 1)
    with open_store(copy) as store:
        with store.transaction() as txn:                 # the writer restores the newline
            txn.put("settings", {"id": "after", "on": True})
    with open_store(copy) as store:
        assert store.get("settings", "after") == {"id": "after", "on": True}
        kept = {c: store.scan(c) for c in COLLECTIONS}
        kept["settings"] = [d for d in kept["settings"] if d["id"] != "after"]
        assert kept == intact


def test_damage_a_running_store_meets_is_refused_and_never_truncated(tmp_path):
    """The old failure: a reader stops at the bad record, the next write cut
    the journal there, losing every record behind it."""
    reader, writer = open_store(tmp_path), open_store(tmp_path)
    with reader.transaction() as txn:
        txn.put("accounts", {"id": "a0", "credits": 0})
    for i in range(1, 6):
        with writer.transaction() as txn:
            txn.put("accounts", {"id": f"a{i}", "credits": i})
    path = journal_of(tmp_path)
    lines = records(path)
    data = bytearray(path.read_bytes())
    data[lines[2][0] + 20] ^= 0x01                     # a record the reader has not applied yet
    path.write_bytes(bytes(data))
    with pytest.raises(StoreDamage, match=f"at offset {lines[2][0]}:"):
        with reader.transaction() as txn:
            txn.put("accounts", {"id": "late", "credits": 9})
    with pytest.raises(StoreDamage):
        reader.get("accounts", "a5")
    assert path.read_bytes() == bytes(data)
    reader.close()
    writer.close()


def compacted(written: Path, base: Path) -> Path:
    """A copy of the written data directory, compacted: its snapshot's path."""
    shutil.copytree(written, base)
    with open_store(base) as store:
        store.compact()
    [snapshot] = base.glob("snapshot-*.jsonl")
    return snapshot


def test_a_flipped_byte_in_any_snapshot_line_is_detected(written, tmp_path):
    base = tmp_path / "compacted"
    snapshot = compacted(written, base)
    lines = records(snapshot)
    assert len(lines) > 3 + len(COLLECTIONS)
    for n, (offset, line) in enumerate(lines):
        copy = tmp_path / f"s{n}"
        damaged = copy_with(base, copy, snapshot, offset + len(line) // 2)
        with pytest.raises(StoreDamage, match=f"store damaged: {damaged} at offset "):
            open_store(copy)
        [report] = [r for r in check_data_dir(copy) if r.kind == "snapshot"]
        assert not report.ok
        shutil.rmtree(copy)


def test_a_mangled_snapshot_document_is_refused_not_served(written, tmp_path):
    base = tmp_path / "data"
    snapshot = compacted(written, base)
    data = snapshot.read_bytes()
    assert data.count(b'"status":"complete"') >= 1
    snapshot.write_bytes(data.replace(b'"status":"complete"', b'"Xtatus":"complete"', 1))
    with pytest.raises(StoreDamage, match="documents from here fail their checksum"):
        open_store(base)


def test_serve_refuses_to_start_with_one_line_and_admin_check_reports_without_changing(
        written, tmp_path):
    lines = records(journal_of(written))
    offset, line = lines[len(lines) // 2]
    copy = tmp_path / "data"
    damaged = copy_with(written, copy, journal_of(written), offset + len(line) // 2)
    before = {p.name: p.read_bytes() for p in copy.glob("*-*")}      # snapshots, journals
    server = ServeProcess(copy, timeout=60)
    try:
        assert server.url is None
        assert server.proc.wait(30) == 2
        [message] = [ln for ln in server.output.splitlines() if ln.strip()]
        assert f"{damaged} at offset {offset}" in message
    finally:
        server.stop()
    check = subprocess.run(CLI + ["admin", "store", "check", "--data", str(copy), "--json"],
                           capture_output=True, text=True, timeout=60)
    assert check.returncode == 1, check.stderr
    report = json.loads(check.stdout)
    assert report["ok"] is False
    [journal] = [f for f in report["files"] if f["kind"] == "journal"]
    assert journal["damage"][0]["offset"] == offset
    assert journal["records"] == len(lines) - 1
    write = subprocess.run(CLI + ["admin", "keys", "create", "--data", str(copy)],
                           capture_output=True, text=True, timeout=60)
    assert write.returncode == 2 and f"at offset {offset}" in write.stderr
    assert {p.name: p.read_bytes() for p in copy.glob("*-*")} == before
    intact = subprocess.run(CLI + ["admin", "store", "check", "--data", str(written)],
                            capture_output=True, text=True, timeout=60)
    assert intact.returncode == 0 and "Intact" in intact.stdout


def test_a_torn_tail_is_reported_but_is_not_damage(tmp_path):
    with open_store(tmp_path) as store:
        with store.transaction() as txn:
            txn.put("accounts", {"id": "a1", "credits": 1})
    path = journal_of(tmp_path)
    with open(path, "ab") as journal:
        journal.write(b"0badc0de {\"ops\":[[\"p\"")     # a crashed writer's half line
    [report] = check_data_dir(tmp_path)
    assert report.ok and report.tail == "torn" and report.records == 1
    with pytest.raises(StoreError):
        check_data_dir(tmp_path / "missing")


def test_a_checksum_damaged_into_another_spelling_of_its_value_is_still_damage(tmp_path):
    """int("0X1234ab", 16) == 0x1234ab: a checksum "001234ab" whose second
    digit is damaged into "X" must not pass as the same number."""
    path = tmp_path / "journal-0000000000.log"
    for n in range(100_000):
        line = encode_line({("accounts", f"a{n}"): ({"id": f"a{n}"}, f'{{"id":"a{n}"}}')})
        if line.startswith(b"00"):
            break
    path.write_bytes(b"0X" + line[2:] + line)
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(StoreDamage, match="at offset 0:"):
            list(read_transactions(fd, 0, path=path))
    finally:
        os.close(fd)


def test_a_journal_cut_inside_its_last_acknowledged_record_is_damage(tmp_path):
    """Three acknowledged transactions, then the file cut 10 bytes into its
    last record: it looks like a torn write, but the acknowledged mark says
    those bytes were acknowledged. `admin store check` exits 1 naming the
    offset (it said "Intact"); a torn write after the mark is still not damage."""
    with open_store(tmp_path) as store:
        for n in range(3):
            with store.transaction() as txn:
                txn.put("accounts", {"id": f"a{n}", "credits": n})
    path = journal_of(tmp_path)
    whole = path.read_bytes()
    last = whole.rstrip(b"\n").rfind(b"\n") + 1
    with open(path, "ab") as journal:
        journal.write(b"0badc0de {\"ops\":[[\"p\"")       # a crashed writer's half line
    torn = subprocess.run(CLI + ["admin", "store", "check", "--data", str(tmp_path)],
                          capture_output=True, text=True, timeout=60)
    assert torn.returncode == 0 and "Intact" in torn.stdout, torn.stdout
    path.write_bytes(whole[:last + 10])                   # cut inside the last acknowledged one
    cut = subprocess.run(CLI + ["admin", "store", "check", "--data", str(tmp_path), "--json"],
                         capture_output=True, text=True, timeout=60)
    assert cut.returncode == 1, cut.stdout + cut.stderr
    [journal] = [f for f in json.loads(cut.stdout)["files"] if f["kind"] == "journal"]
    assert journal["records"] == 2 and journal["damage"][0]["offset"] == last
    assert "cut inside acknowledged records" in journal["damage"][0]["reason"]
    human = subprocess.run(CLI + ["admin", "store", "check", "--data", str(tmp_path)],
                           capture_output=True, text=True, timeout=60)
    assert human.returncode == 1 and "Intact" not in human.stdout
    assert f"DAMAGED at offset {last}" in human.stdout
