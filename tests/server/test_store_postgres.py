"""What only the PostgreSQL store has: the schema it creates and migrates on
start (versioned, idempotent, safe when nodes start together), its errors,
and row claims across connections (the contract suite covers the rest)."""

from __future__ import annotations

import threading

import psycopg
import pytest

from trackgrade.server.store import StoreError, open_store
from trackgrade.server.store.schema import MIGRATIONS, SCHEMA_VERSION


def test_the_schema_is_created_once_even_when_nodes_start_together(postgres_url):
    opened, errors = [], []

    def start():
        try:
            opened.append(open_store(database=postgres_url, pool_size=2))
        except Exception as exc:  # surfaced below
            errors.append(exc)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sorted(len(store.migrated) for store in opened) == [0, 0, 0, len(MIGRATIONS)]
    for store in opened:
        store.close()
    with psycopg.connect(postgres_url) as conn:
        versions = [row[0] for row in conn.execute("SELECT version FROM schema_version")]
    assert sorted(versions) == [version for version, _ in MIGRATIONS]
    assert max(versions) == SCHEMA_VERSION
    again = open_store(database=postgres_url, pool_size=2)
    assert again.migrated == []
    again.close()


def test_a_database_from_a_newer_trackgrade_is_refused(postgres_url):
    open_store(database=postgres_url, pool_size=2).close()
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("INSERT INTO schema_version (version) VALUES (%s)", (SCHEMA_VERSION + 1,))
    with pytest.raises(StoreError, match="newer than this trackgrade"):
        open_store(database=postgres_url, pool_size=2)


def test_an_unreachable_database_is_one_clear_error_without_the_password():
    with pytest.raises(StoreError) as err:
        open_store(database="postgresql://tg:hunter2@127.0.0.1:1/tg", connect_timeout=2)
    assert "hunter2" not in str(err.value) and "cannot connect to PostgreSQL" in str(err.value)


def test_get_claims_a_document_until_the_transaction_ends(postgres_url):
    store = open_store(database=postgres_url, pool_size=4)
    other = open_store(database=postgres_url, pool_size=4)
    try:
        with store.transaction() as txn:
            txn.put("accounts", {"id": "acct", "credits": 1})
        order = []
        inside, release = threading.Event(), threading.Event()

        def first():
            with store.transaction() as txn:
                txn.get("accounts", "acct")
                txn.get("idempotency", "not-yet")       # absent: the id is claimed too
                inside.set()
                release.wait(10)
                txn.put("idempotency", {"id": "not-yet", "expires_at": 1})
                order.append("first")

        def second():
            inside.wait(10)
            with other.transaction() as txn:
                seen = txn.get("idempotency", "not-yet")
                order.append(("second", seen is not None))

        threads = [threading.Thread(target=first), threading.Thread(target=second)]
        for thread in threads:
            thread.start()
        inside.wait(10)
        threading.Event().wait(0.3)                     # the second is now waiting
        assert order == []
        release.set()
        for thread in threads:
            thread.join()
        assert order == ["first", ("second", True)]
        with store.transaction() as txn:                 # skip_locked: held rows are skipped
            txn.put("idempotency", {"id": "free", "expires_at": 2})
        with store.transaction() as txn:
            held = txn.select("idempotency.by_expiry", skip_locked=True, limit=1)
            assert [r["id"] for r in held] == ["not-yet"]
            with other.transaction() as txn2:
                rest = txn2.select("idempotency.by_expiry", skip_locked=True)
                assert [r["id"] for r in rest] == ["free"]
    finally:
        store.close()
        other.close()
