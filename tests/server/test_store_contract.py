"""The store contract (trackgrade/server/store/base.py): ONE suite, every backend.

A new backend joins by adding a factory to BACKENDS. PostgreSQL runs on the
session's real throwaway server (tests/pgserver.py), one database emptied
before each test.
"""

from __future__ import annotations

import math
import random
import threading

import pytest

from trackgrade.errors import TrackgradeError
from trackgrade.server.store import COLLECTIONS, MemoryStore, new_event, open_store
from trackgrade.server import queries


def _memory(tmp_path):
    return MemoryStore()


def _journal(tmp_path):
    return open_store(tmp_path / "data")


def _journal_compacting(tmp_path):
    # a tiny compaction threshold: snapshots rotate under the tests' feet
    return open_store(tmp_path / "data", compact_bytes=4096)


BACKENDS = {"memory": _memory, "journal": _journal, "journal-compacting": _journal_compacting,
            "postgres": None}


@pytest.fixture(scope="module")
def _pg_database(postgres_server):
    return postgres_server.create_database()


def _empty_postgres(url):
    import psycopg

    from trackgrade.server.store.postgres import PostgresStore
    from trackgrade.server.store.schema import table

    store = PostgresStore(url, pool_size=8)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("TRUNCATE " + ", ".join(table(c) for c in COLLECTIONS))
    return store


@pytest.fixture(params=sorted(BACKENDS))
def store(request, tmp_path):
    if request.param == "postgres":
        opened = _empty_postgres(request.getfixturevalue("_pg_database"))
    else:
        opened = BACKENDS[request.param](tmp_path)
    yield opened
    opened.close()


def analysis(i: int, *, account="acct_a", live=True, key="key_a", status="processing",
             created=None) -> dict:
    return {"id": f"an_{i:05d}", "account_id": account, "key_id": key, "livemode": live,
            "created_at": created or f"2026-11-{1 + i // 1000:02d}T00:00:{i % 60:02d}.{i:06d}Z",
            "status": status, "file_name": f"track {i}.wav", "result": {"score": i % 100}}


def put_all(store, collection, docs):
    with store.transaction() as txn:
        for doc in docs:
            txn.put(collection, doc)


# -- documents ------------------------------------------------------------------

def test_put_then_get_returns_an_equal_independent_copy(store):
    doc = {"id": "acct_1", "plan": "pro", "nested": {"list": [1, 2.5, None, "x"]}, "ok": True}
    put_all(store, "accounts", [doc])
    doc["plan"] = "free"                                   # the caller's dict is not the stored one
    got = store.get("accounts", "acct_1")
    assert got == {"id": "acct_1", "plan": "pro", "nested": {"list": [1, 2.5, None, "x"]}, "ok": True}
    got["nested"]["list"].append(99)                       # nor is the returned one
    assert store.get("accounts", "acct_1")["nested"]["list"] == [1, 2.5, None, "x"]


def test_missing_documents_and_deletes(store):
    assert store.get("accounts", "nope") is None
    put_all(store, "accounts", [{"id": "a1"}, {"id": "a2"}])
    with store.transaction() as txn:
        txn.delete("accounts", "a1")
        txn.delete("accounts", "never-existed")
    assert store.get("accounts", "a1") is None
    assert [d["id"] for d in store.scan("accounts")] == ["a2"]


def test_put_replaces_the_whole_document(store):
    put_all(store, "accounts", [{"id": "a1", "plan": "pro", "credits": 3}])
    put_all(store, "accounts", [{"id": "a1", "plan": "studio"}])
    assert store.get("accounts", "a1") == {"id": "a1", "plan": "studio"}


@pytest.mark.parametrize("bad", [{"plan": "pro"}, {"id": 7}, {"id": ""},
                                 {"id": "x", "v": math.nan}, {"id": "x", "v": object()}])
def test_invalid_documents_are_refused_and_nothing_is_written(store, bad):
    with pytest.raises((ValueError, TypeError)):
        with store.transaction() as txn:
            txn.put("accounts", {"id": "first"})
            txn.put("accounts", bad)
    assert store.get("accounts", "first") is None


def test_indexed_fields_must_be_scalars_but_may_mix_types(store):
    with pytest.raises(ValueError):
        put_all(store, "analyses", [dict(analysis(1), account_id=["a", "b"])])
    put_all(store, "idempotency", [{"id": "i1", "expires_at": 5.0}, {"id": "i2", "expires_at": "x"},
                                   {"id": "i3", "expires_at": None}, {"id": "i4", "expires_at": 2}])
    assert [r["id"] for r in store.select("idempotency.by_expiry")] == ["i3", "i4", "i1", "i2"]


def test_unknown_collection_is_refused(store):
    with pytest.raises(ValueError):
        store.get("nonsense", "x")
    with pytest.raises(ValueError):
        with store.transaction() as txn:
            txn.put("nonsense", {"id": "x"})


# -- transactions -----------------------------------------------------------------

def test_a_failed_transaction_changes_nothing(store):
    put_all(store, "analyses", [analysis(1), analysis(2)])
    put_all(store, "keys", [{"id": "key_a", "account_id": "acct_a", "hash": "h1"}])
    with pytest.raises(KeyError):
        with store.transaction() as txn:
            txn.put("analyses", analysis(3))
            txn.put("analyses", dict(analysis(1), status="complete"))
            txn.delete("analyses", "an_00002")
            txn.put("keys", {"id": "key_a", "account_id": "acct_a", "hash": "h2"})
            raise KeyError("boom")
    assert store.get("analyses", "an_00003") is None
    assert store.get("analyses", "an_00001")["status"] == "processing"
    assert store.get("analyses", "an_00002") is not None
    assert queries.count_in_flight(store, "key_a") == 2
    assert store.find("keys.hash", "h1")["id"] == "key_a"
    assert store.find("keys.hash", "h2") is None
    rows, has_more = queries.list_analyses(store, "acct_a", True, 10)
    assert [r["id"] for r in rows] == ["an_00002", "an_00001"] and not has_more


def test_a_transaction_sees_its_own_writes(store):
    with store.transaction() as txn:
        txn.put("analyses", analysis(1))
        txn.put("keys", {"id": "k1", "account_id": "a", "hash": "abc"})
        assert txn.get("analyses", "an_00001")["status"] == "processing"
        assert txn.count("analyses.in_flight", ("key_a",)) == 1
        assert txn.find("keys.hash", "abc")["id"] == "k1"
        txn.delete("keys", "k1")
        assert txn.find("keys.hash", "abc") is None


def test_nested_transactions_are_refused(store):
    with store.transaction():
        with pytest.raises(RuntimeError):
            with store.transaction():
                pass


def test_a_finished_transaction_cannot_be_used(store):
    with store.transaction() as txn:
        txn.put("accounts", {"id": "a"})
    with pytest.raises(RuntimeError):
        txn.put("accounts", {"id": "b"})
    assert store.get("accounts", "b") is None


def test_unique_index_refuses_a_second_owner(store):
    put_all(store, "keys", [{"id": "k1", "account_id": "a", "hash": "same"}])
    with pytest.raises(ValueError):
        put_all(store, "keys", [{"id": "k2", "account_id": "a", "hash": "same"}])
    assert store.get("keys", "k2") is None
    put_all(store, "keys", [{"id": "k1", "account_id": "a", "hash": "same", "revoked_at": "x"}])
    assert store.find("keys.hash", "same")["revoked_at"] == "x"


def test_transactions_are_serialised_across_threads(store):
    put_all(store, "accounts", [{"id": "acct", "credits": 0}])
    errors = []

    def spend(n):
        try:
            for _ in range(n):
                with store.transaction() as txn:
                    account = txn.get("accounts", "acct")
                    account["credits"] += 1
                    txn.put("accounts", account)
                store.get("accounts", "acct")
        except Exception as exc:   # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=spend, args=(40,)) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    assert store.get("accounts", "acct")["credits"] == 240


# -- indexes -------------------------------------------------------------------------

def test_list_analyses_pages_newest_first_through_everything(store):
    rng = random.Random(7)
    docs = [analysis(i) for i in range(57)]
    docs += [analysis(1000 + i, created=docs[i]["created_at"]) for i in range(5)]  # equal stamps
    docs += [analysis(2000 + i, account="acct_b") for i in range(4)]
    docs += [analysis(3000 + i, live=False) for i in range(3)]
    rng.shuffle(docs)
    put_all(store, "analyses", docs)
    mine = sorted((d for d in docs if d["account_id"] == "acct_a" and d["livemode"]),
                  key=lambda d: (d["created_at"], d["id"]), reverse=True)
    seen, cursor = [], None
    while True:
        rows, has_more = queries.list_analyses(store, "acct_a", True, 10, starting_after=cursor)
        seen += [r["id"] for r in rows]
        if not has_more:
            break
        cursor = rows[-1]["id"]
    assert seen == [d["id"] for d in mine]
    rows, has_more = queries.list_analyses(store, "acct_a", False, 20)
    assert sorted(r["id"] for r in rows) == ["an_03000", "an_03001", "an_03002"] and not has_more


def test_list_analyses_ending_before_pages_back_towards_the_newest(store):
    put_all(store, "analyses", [analysis(i) for i in range(30)])
    ids = [f"an_{i:05d}" for i in reversed(range(30))]      # newest first
    rows, has_more = queries.list_analyses(store, "acct_a", True, 5, ending_before=ids[20])
    assert [r["id"] for r in rows] == ids[15:20] and has_more
    rows, has_more = queries.list_analyses(store, "acct_a", True, 5, ending_before=ids[5])
    assert [r["id"] for r in rows] == ids[0:5] and not has_more
    rows, has_more = queries.list_analyses(store, "acct_a", True, 5, starting_after=ids[24])
    assert [r["id"] for r in rows] == ids[25:30] and not has_more


def test_list_analyses_rejects_foreign_and_unknown_cursors(store):
    put_all(store, "analyses", [analysis(1), analysis(2, account="acct_b"), analysis(3, live=False)])
    for cursor in ("an_99999", "an_00002", "an_00003"):
        with pytest.raises(TrackgradeError) as err:
            queries.list_analyses(store, "acct_a", True, 5, starting_after=cursor)
        assert err.value.code == "parameter_invalid" and err.value.param == "starting_after"
    with pytest.raises(TrackgradeError) as err:
        queries.list_analyses(store, "acct_a", True, 5, ending_before="an_00002")
    assert err.value.param == "ending_before"


def test_list_analyses_by_key_pages_only_that_keys_analyses(store):
    docs = [analysis(i, key="key_a" if i % 3 else "key_b") for i in range(30)]
    put_all(store, "analyses", docs)
    mine = [d["id"] for d in sorted((d for d in docs if d["key_id"] == "key_b"),
                                    key=lambda d: (d["created_at"], d["id"]), reverse=True)]
    rows, has_more = queries.list_analyses(store, "acct_a", True, 4, key_id="key_b")
    assert [r["id"] for r in rows] == mine[:4] and has_more
    rows, has_more = queries.list_analyses(store, "acct_a", True, 20, key_id="key_b",
                                         starting_after=rows[-1]["id"])
    assert [r["id"] for r in rows] == mine[4:] and not has_more
    with pytest.raises(TrackgradeError) as err:              # another key's analysis is no cursor
        queries.list_analyses(store, "acct_a", True, 5, key_id="key_b", starting_after="an_00001")
    assert err.value.param == "starting_after"


def test_counts_follow_status_and_time(store):
    docs = [analysis(i, created=f"2026-11-2{i % 3}T12:00:00.{i:06d}Z") for i in range(12)]
    put_all(store, "analyses", docs)
    assert queries.count_in_flight(store, "key_a") == 12
    assert queries.count_analyses_since(store, "key_a", "2026-11-21T00:00:00.000000Z") == 8
    assert queries.count_analyses_since(store, "key_a", "2026-11-22T00:00:00.000000Z") == 4
    assert queries.count_analyses_since(store, "key_b", "2026-11-20T00:00:00.000000Z") == 0
    with store.transaction() as txn:
        for i in range(5):
            txn.put("analyses", dict(docs[i], status="complete"))
        txn.put("analyses", dict(docs[5], status="failed"))
    assert queries.count_in_flight(store, "key_a") == 6
    with store.transaction() as txn:
        txn.delete("analyses", docs[11]["id"])
    assert queries.count_in_flight(store, "key_a") == 5
    assert queries.count_analyses_since(store, "key_a", "2026-11-20T00:00:00.000000Z") == 11


def test_pending_events_are_the_due_ones_soonest_first(store):
    events = [new_event("analysis.failed", {"id": f"an_{i}"}, account_id="acct_a", livemode=True,
                        created=1000 + i) for i in range(6)]
    events[2]["next_attempt_at"] = 5000.0
    events[4]["state"] = "delivered"
    put_all(store, "events", events)
    due = queries.pending_events(store, now=1003.5)
    assert [e["id"] for e in due] == [events[i]["id"] for i in (0, 1, 3)]
    assert [e["id"] for e in queries.pending_events(store)] == [events[i]["id"] for i in (0, 1, 3, 5, 2)]
    assert len(queries.pending_events(store, now=10_000, limit=2)) == 2
    assert due[0]["envelope"] == {"id": events[0]["id"], "object": "event",
                                  "type": "analysis.failed", "created": 1000, "livemode": True,
                                  "data": {"id": "an_0"}}


def test_select_and_count_on_an_ordered_index(store):
    records = [{"id": f"idem_{i}", "expires_at": 100.0 + i} for i in range(10)]
    put_all(store, "idempotency", records)
    expired = store.select("idempotency.by_expiry", upto=(104.0,))
    assert [r["id"] for r in expired] == [f"idem_{i}" for i in range(5)]
    newest = store.select("idempotency.by_expiry", newest_first=True, limit=3)
    assert [r["id"] for r in newest] == ["idem_9", "idem_8", "idem_7"]
    assert store.count("idempotency.by_expiry", since=(107.0,)) == 3
    with pytest.raises(ValueError):
        store.select("keys.hash")
    with pytest.raises(ValueError):
        store.find("analyses.by_owner", "x")


def test_a_closed_store_refuses_work(store):
    store.close()
    with pytest.raises(RuntimeError):
        store.get("accounts", "a")
    store.close()  # idempotent


def test_select_between_bounds_with_and_without_ids(store):
    records = [{"id": f"idem_{i}", "expires_at": 100.0 + i // 2} for i in range(10)]
    put_all(store, "idempotency", records)
    ids = [r["id"] for r in store.select("idempotency.by_expiry", since=(102.0,), upto=(103.0,))]
    assert ids == ["idem_4", "idem_5", "idem_6", "idem_7"]
    # an id after the order values is an exact position (a paging cursor), inclusive
    ids = [r["id"] for r in store.select("idempotency.by_expiry", since=(102.0, "idem_5"),
                                         upto=(103.0, "idem_6"))]
    assert ids == ["idem_5", "idem_6"]
    older = store.select("idempotency.by_expiry", newest_first=True, upto=(103.0, "idem_6"),
                         limit=3)
    assert [r["id"] for r in older] == ["idem_6", "idem_5", "idem_4"]
    newer = store.select("idempotency.by_expiry", since=(103.0, "idem_6"), limit=3)
    assert [r["id"] for r in newer] == ["idem_6", "idem_7", "idem_8"]
    assert store.count("idempotency.by_expiry", since=(102.0, "idem_5")) == 5
    assert store.select("idempotency.by_expiry", limit=0) == []
    with store.transaction() as txn:
        claimed = txn.select("idempotency.by_expiry", upto=(101.0,), skip_locked=True)
        assert [r["id"] for r in claimed] == ["idem_0", "idem_1", "idem_2", "idem_3"]
