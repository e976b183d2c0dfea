"""The durable store on disk: other processes, crashes, compaction, TinyDB.

Real subprocesses on a real data directory; the crash test kill -9s a writer
at random moments and checks that every write it acknowledged survived.
"""

from __future__ import annotations

import glob
import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import threading
import time
import zlib
from pathlib import Path

import pytest
from tinydb import TinyDB

from trackgrade.server import queries
from trackgrade.server.store import open_store
from trackgrade.server.store.base import StoreDamage
from trackgrade.server.store.snapshot import SnapshotStorage

PYTHON = sys.executable


def run_python(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run([PYTHON, "-c", textwrap.dedent(code), *args], capture_output=True,
                          text=True, timeout=timeout, check=True)


def journals(root: Path) -> list[str]:
    return sorted(glob.glob(str(root / "journal-*.log")))


def test_another_process_write_is_seen_on_the_next_read(tmp_path):
    store = open_store(tmp_path)
    with store.transaction() as txn:
        txn.put("keys", {"id": "k1", "account_id": "a", "hash": "h", "revoked_at": None})
        txn.put("settings", {"id": "maintenance", "on": False})
    assert store.find("keys.hash", "h")["revoked_at"] is None
    run_python("""
        import sys
        from trackgrade.server.store import open_store
        with open_store(sys.argv[1]) as other:
            with other.transaction() as txn:
                key = txn.get("keys", "k1"); key["revoked_at"] = "now"; txn.put("keys", key)
                txn.put("settings", {"id": "maintenance", "on": True})
        """, str(tmp_path))
    assert store.find("keys.hash", "h")["revoked_at"] == "now"
    assert store.get("settings", "maintenance")["on"] is True
    store.close()


def test_writers_in_several_processes_and_threads_never_lose_an_update(tmp_path):
    store = open_store(tmp_path)
    with store.transaction() as txn:
        txn.put("accounts", {"id": "acct", "credits": 0})
    writer = """
        import sys
        from trackgrade.server.store import open_store
        with open_store(sys.argv[1], compact_bytes=8192) as s:
            for _ in range(150):
                with s.transaction() as txn:
                    a = txn.get("accounts", "acct"); a["credits"] += 1; txn.put("accounts", a)
        """
    procs = [subprocess.Popen([PYTHON, "-c", textwrap.dedent(writer), str(tmp_path)])
             for _ in range(2)]

    def local():
        for _ in range(100):
            with store.transaction() as txn:
                a = txn.get("accounts", "acct")
                a["credits"] += 1
                txn.put("accounts", a)

    threads = [threading.Thread(target=local) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [p.wait(timeout=120) for p in procs] == [0, 0]
    assert store.get("accounts", "acct")["credits"] == 2 * 150 + 2 * 100
    store.close()
    with open_store(tmp_path) as reopened:
        assert reopened.get("accounts", "acct")["credits"] == 500


def test_a_torn_last_line_is_ignored_then_cut_away(tmp_path):
    with open_store(tmp_path) as store:
        with store.transaction() as txn:
            txn.put("accounts", {"id": "a1", "credits": 1})
    path = journals(tmp_path)[-1]
    intact = Path(path).read_bytes()
    with open(path, "ab") as journal:                     # a crashed writer's half line
        journal.write(intact[:len(intact) // 2])
    with open_store(tmp_path) as store:
        assert store.get("accounts", "a1") == {"id": "a1", "credits": 1}
        with store.transaction() as txn:
            txn.put("accounts", {"id": "a2", "credits": 2})
    with open_store(tmp_path) as store:
        assert [a["id"] for a in store.scan("accounts")] == ["a1", "a2"]


def test_a_whole_line_with_a_bad_checksum_refuses_to_open_naming_file_and_offset(tmp_path):
    with open_store(tmp_path) as store:
        with store.transaction() as txn:
            txn.put("accounts", {"id": "a1", "credits": 1})
        with store.transaction() as txn:
            txn.put("accounts", {"id": "a1", "credits": 2})
    path = Path(journals(tmp_path)[-1])
    data = path.read_bytes()
    damaged = data[:-3] + (b"9" if data[-3:-2] != b"9" else b"8") + data[-2:]
    path.write_bytes(damaged)
    first = len(data.split(b"\n")[0]) + 1
    with pytest.raises(StoreDamage, match=f"{path} at offset {first}:"):
        open_store(tmp_path)
    assert path.read_bytes() == damaged           # acknowledged data is never silently dropped


def test_compaction_keeps_everything_and_a_lagging_reader_catches_up(tmp_path):
    writer = open_store(tmp_path, compact_bytes=1 << 30)
    reader = open_store(tmp_path)
    for round_ in range(3):                    # the reader sleeps through 3 compactions
        with writer.transaction() as txn:
            for i in range(20):
                txn.put("analyses", {"id": f"an_{round_}_{i}", "account_id": "a", "key_id": "k",
                                     "livemode": True, "status": "processing",
                                     "created_at": f"2026-11-0{round_ + 1}T00:00:{i:02d}.000000Z"})
        writer.compact()
    assert len(journals(tmp_path)) == 1 and len(glob.glob(str(tmp_path / "snapshot-*"))) == 1
    assert queries.count_in_flight(reader, "k") == 60
    rows, _ = queries.list_analyses(reader, "a", True, 100)
    assert rows[0]["id"] == "an_2_19" and rows[-1]["id"] == "an_0_0"
    writer.close()
    reader.close()
    with open_store(tmp_path) as reopened:
        assert queries.count_in_flight(reopened, "k") == 60


def test_a_snapshot_opens_in_tinydb(tmp_path):
    with open_store(tmp_path) as store:
        with store.transaction() as txn:
            txn.put("accounts", {"id": "acct_1", "plan": "pro", "credits": 3})
            txn.put("analyses", {"id": "an_1", "account_id": "acct_1", "key_id": "k",
                                 "livemode": True, "status": "complete",
                                 "created_at": "2026-11-01T00:00:00.000000Z"})
        store.compact()
    snapshot = glob.glob(str(tmp_path / "snapshot-*.jsonl"))[0]
    db = TinyDB(snapshot, storage=SnapshotStorage)
    assert db.table("accounts").all() == [{"id": "acct_1", "plan": "pro", "credits": 3}]
    assert db.table("analyses").all()[0]["status"] == "complete"
    db.close()


CRASH_WRITER = """
import os, sys
from trackgrade.server.store import open_store, new_event
root, start = sys.argv[1], int(sys.argv[2])
store = open_store(root, compact_bytes=96 * 1024)
pad = "x" * 3500
n = start
while True:
    with store.transaction() as txn:
        acct = txn.get("accounts", "acct") or {"id": "acct", "credits": 0}
        acct["credits"] += 1
        txn.put("accounts", acct)
        txn.put("analyses", {"id": f"an_{n}", "account_id": "acct", "key_id": "k",
                             "livemode": True, "status": "processing", "pad": pad,
                             "created_at": f"2026-11-01T00:00:00.{n:06d}Z"})
        if n % 3 == 0 and n > 0:
            txn.delete("analyses", f"an_{n - 1}")
        txn.put("events", new_event("credit.balance.low", {"n": n}, account_id="acct",
                                    livemode=True, created=n, event_id=f"evt_{n}"))
    sys.stdout.write(f"{n}\\n")
    sys.stdout.flush()
    n += 1
"""


@pytest.mark.slow(seconds=14)
def test_kill_9_at_random_moments_never_loses_an_acknowledged_write(tmp_path):
    rng = random.Random(2026)
    acked: list[int] = []
    next_n = 0
    for _ in range(20):
        proc = subprocess.Popen([PYTHON, "-c", CRASH_WRITER, str(tmp_path), str(next_n)],
                                stdout=subprocess.PIPE, text=True)
        first = proc.stdout.readline()                 # it is up and writing
        assert first, "writer died before its first write"
        time.sleep(rng.uniform(0.0, 0.4))
        os.kill(proc.pid, signal.SIGKILL)
        out = first + proc.stdout.read()
        proc.wait()
        lines = out.split("\n")
        if lines and lines[-1] != "":
            lines = lines[:-1]                         # a half-printed ack acknowledges nothing
        acked.extend(int(x) for x in lines if x)
        with open_store(tmp_path) as store:            # always readable
            account = store.get("accounts", "acct")
            assert account["credits"] >= len(acked)
            last = acked[-1]
            assert store.get("events", f"evt_{last}")["envelope"]["data"] == {"n": last}
            present = {int(a["id"][3:]) for a in store.select("analyses.in_flight", ("k",))}
            committed = account["credits"]              # writes 0..committed-1 are durable
            expected = {n for n in acked if (n + 1) % 3 != 0 or n + 1 >= committed}
            assert expected <= present
            assert all(store.get("analyses", f"an_{n}")["pad"] == "x" * 3500 for n in expected)
            next_n = account["credits"]                # continue after the last durable write
    assert len(acked) > 40
    leftovers = glob.glob(str(tmp_path / "*.tmp"))
    with open_store(tmp_path) as store:
        assert store.get("accounts", "acct")["credits"] >= len(acked)
    assert len(glob.glob(str(tmp_path / "*.tmp"))) <= len(leftovers)


def signed(value: dict) -> bytes:
    """A snapshot line rewritten on purpose, with its checksum."""
    payload = json.dumps(value, separators=(",", ":")).encode()
    return b"%08x %s" % (zlib.crc32(payload), payload)


def test_a_snapshot_written_with_other_index_fields_is_reindexed(tmp_path):
    with open_store(tmp_path) as store:
        with store.transaction() as txn:
            for i in range(5):
                txn.put("analyses", {"id": f"an_{i}", "account_id": "a", "key_id": "k",
                                     "livemode": True, "status": "processing",
                                     "created_at": f"2026-11-0{i + 1}T00:00:00.000000Z"})
        store.compact()
    snapshot = Path(glob.glob(str(tmp_path / "snapshot-*.jsonl"))[0])
    lines = snapshot.read_bytes().split(b"\n")
    header = json.loads(lines[0][9:])                   # "<crc> {json}" (snapshot.py)
    header["fields"]["analyses"] = ["id", "account_id"]   # an older release indexed less
    lines[0] = signed(header)
    block = json.loads(lines[1][9:])
    assert block["collection"] == "accounts"
    analyses_at = next(n for n, line in enumerate(lines) if line[9:].startswith(b'{"collection":"analyses"'))
    block = json.loads(lines[analyses_at][9:])
    block["meta"] = [row[:2] for row in block["meta"]]
    lines[analyses_at] = signed(block)
    snapshot.write_bytes(b"\n".join(lines))
    with open_store(tmp_path) as store:
        assert queries.count_in_flight(store, "k") == 5
        rows, _ = queries.list_analyses(store, "a", True, 2)
        assert [r["id"] for r in rows] == ["an_4", "an_3"]


def test_an_unreadable_snapshot_is_a_store_error_not_a_crash(tmp_path):
    from trackgrade.server.store import StoreError
    with open_store(tmp_path) as store:
        with store.transaction() as txn:
            txn.put("accounts", {"id": "a"})
        store.compact()
    snapshot = Path(glob.glob(str(tmp_path / "snapshot-*.jsonl"))[0])
    snapshot.write_bytes(snapshot.read_bytes()[:-20])
    with pytest.raises(StoreError):
        open_store(tmp_path)


def test_readers_in_threads_see_whole_transactions_while_compactions_run(tmp_path):
    store = open_store(tmp_path, compact_bytes=16 * 1024)
    other = open_store(tmp_path)                # another "process" reading the same directory
    stop = threading.Event()
    problems: list[str] = []

    def write():
        for n in range(150):
            with store.transaction() as txn:    # each transaction adds a pair
                for half in ("a", "b"):
                    txn.put("analyses", {"id": f"an_{n}_{half}", "account_id": "acct",
                                         "key_id": "k", "livemode": True, "status": "processing",
                                         "created_at": f"2026-11-01T00:00:00.{n:06d}Z",
                                         "pad": "y" * 800})
        stop.set()

    def read(reader):
        while not stop.is_set():
            count = queries.count_in_flight(reader, "k")
            rows, _ = queries.list_analyses(reader, "acct", True, 10)
            if count % 2 or any(r["pad"] != "y" * 800 for r in rows):
                problems.append(f"torn read: {count}")

    threads = [threading.Thread(target=write)] + \
              [threading.Thread(target=read, args=(r,)) for r in (store, other, other)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not problems
    assert queries.count_in_flight(store, "k") == queries.count_in_flight(other, "k") == 300
    store.close()
    other.close()
    assert len(journals(tmp_path)) == 1
