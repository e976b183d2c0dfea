"""The PostgreSQL store: the `Store` seam of base.py on psycopg 3, for
several `trackgrade serve` nodes sharing one database.

    store = PostgresStore("postgresql://trackgrade@db/trackgrade")

Tables and indexes come from schema.py and are created or migrated when the
store opens (versioned, idempotent, safe when nodes start together).

Transactions run at READ COMMITTED on a pooled connection. `txn.get` claims
the document for the transaction: `SELECT … FOR UPDATE` when the row
exists, else a transaction-scoped advisory lock on (collection, id) and a
second look, so two transactions creating the same id (an idempotency
claim) run one after the other and the second sees the first's row. So a
read-modify-write of one document (credits, an analysis, a rate window) is
serialised across nodes without serialising unrelated work.
`txn.select(..., skip_locked=True)` is `FOR UPDATE SKIP LOCKED`: nodes
claiming work (webhook deliveries) never take the same row. Deadlocks
(rare: two transactions locking the same documents in opposite orders)
surface as StoreError after PostgreSQL breaks them.

A database that is down or restarting surfaces as StoreError within
`acquire_timeout` seconds (the app answers 503 service_unavailable with
Retry-After); the pool keeps reconnecting in the background and serves
again as soon as the database is back.

A commit returns after PostgreSQL made it durable (`synchronous_commit`
on), so a write that returned survives a crash of the node or the database.
"""

from __future__ import annotations

import json
import re
import threading
from contextlib import contextmanager
from typing import Any, Iterator

from trackgrade.server.store import schema
from trackgrade.server.store.base import (
    Doc, Index, StoreError, StoreLifecycle, check_collection, index_named,
)
from trackgrade.server.store.memory import stored_form

try:
    import psycopg
    from psycopg import errors as pg_errors
    from psycopg_pool import ConnectionPool
except ImportError as missing:  # pragma: no cover - the dependency is declared
    psycopg = None
    _IMPORT_ERROR = missing

DEFAULT_POOL = 16
ACQUIRE_TIMEOUT = 5.0       # seconds a request waits for a connection before its 503
RECONNECT_TIMEOUT = 2.0     # seconds one pool slot keeps retrying a lost database


def _match(fields: tuple[str, ...], values: tuple) -> tuple[list[str], list]:
    """SQL conditions: each field's three sort columns equal the value's."""
    clauses, params = [], []
    for field, value in zip(fields, values):
        clauses += [f"{c} = %s" for c in schema.columns(field)]
        params += list(schema.sort_value(value))
    return clauses, params


def _bound(index: Index, values: tuple, op: str) -> tuple[str, list]:
    """`(cols…[, id]) op (values…)`: a prefix of the order values, or all of
    them followed by a document id."""
    values = tuple(values)
    order = values[:len(index.order)]
    cols = [c for f in index.order[:len(order)] for c in schema.columns(f)]
    params = [p for v in order for p in schema.sort_value(v)]
    if len(values) > len(index.order):
        cols.append("id")
        params.append(values[len(index.order)])
    if not cols:
        return "TRUE", []
    return f"({', '.join(cols)}) {op} ({', '.join(['%s'] * len(params))})", params


def select_sql(index: Index, partition: tuple, *, limit: int | None, newest_first: bool,
               upto: tuple | None, since: tuple | None, count: bool = False,
               skip_locked: bool = False) -> tuple[str, list]:
    clauses, params = _match(index.partition, tuple(partition))
    predicate, where_params = schema.where_sql(index)
    if predicate:
        clauses.append(predicate)
        params += where_params
    for bound, op in ((since, ">="), (upto, "<=")):
        if bound is not None:
            sql, bound_params = _bound(index, bound, op)
            clauses.append(sql)
            params += bound_params
    where = " AND ".join(clauses) or "TRUE"
    if count:
        return f"SELECT count(*) FROM {schema.table(index.collection)} WHERE {where}", params
    direction = " DESC" if newest_first else ""
    order = ", ".join([c + direction for f in index.order for c in schema.columns(f)]
                      + ["id" + direction])
    sql = f"SELECT doc::text FROM {schema.table(index.collection)} WHERE {where} ORDER BY {order}"
    if limit is not None:
        sql += f" LIMIT {max(0, int(limit))}"
    if skip_locked:
        sql += " FOR UPDATE SKIP LOCKED"
    return sql, params


def _upsert_sql(collection: str, fields: tuple[str, ...]) -> str:
    cols = ["id", "doc"] + [c for f in fields for c in schema.columns(f)]
    marks = ["%s", "%s::json"] + ["%s"] * (len(cols) - 2)
    updates = ", ".join(f"{c} = EXCLUDED.{c}" for c in cols[1:])
    return (f"INSERT INTO {schema.table(collection)} ({', '.join(cols)}) VALUES "
            f"({', '.join(marks)}) ON CONFLICT (id) DO UPDATE SET {updates}")


class PgTxn:
    """One open transaction on one connection (see base.Txn)."""

    def __init__(self, conn) -> None:
        self._conn = conn
        self.open = True

    def _check(self, collection: str | None = None) -> None:
        if not self.open:
            raise RuntimeError("transaction already finished")
        if collection is not None:
            check_collection(collection)

    def _rows(self, sql: str, params: list | tuple) -> list[Doc]:
        return [json.loads(row[0]) for row in self._conn.execute(sql, params)]

    def get(self, collection: str, doc_id: str) -> Doc | None:
        self._check(collection)
        sql = f"SELECT doc::text FROM {schema.table(collection)} WHERE id = %s FOR UPDATE"
        rows = self._rows(sql, (doc_id,))
        if rows:
            return rows[0]
        self._conn.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))",
                           (f"{collection}:{doc_id}",))
        rows = self._rows(sql, (doc_id,))
        return rows[0] if rows else None

    def put(self, collection: str, doc: Doc) -> None:
        self._check(collection)
        doc_id, text, meta = stored_form(collection, doc)
        fields = tuple(f for f in meta if f != "id")
        params: list = [doc_id, text]
        for field in fields:
            params += list(schema.sort_value(meta[field]))
        try:
            self._conn.execute(_upsert_sql(collection, fields), params)
        except pg_errors.UniqueViolation as exc:
            raise ValueError(f"{collection}: a unique index value is already used "
                             f"({exc.diag.constraint_name})") from None

    def delete(self, collection: str, doc_id: str) -> None:
        self._check(collection)
        self._conn.execute(f"DELETE FROM {schema.table(collection)} WHERE id = %s", (doc_id,))

    def find(self, index: str, *values: Any) -> Doc | None:
        self._check()
        return _find(self._conn, index, values)

    def select(self, index: str, partition: tuple = (), *, limit: int | None = None,
               newest_first: bool = False, upto: tuple | None = None,
               since: tuple | None = None, skip_locked: bool = False) -> list[Doc]:
        self._check()
        sql, params = select_sql(index_named(index, unique=False), partition, limit=limit,
                                 newest_first=newest_first, upto=upto, since=since,
                                 skip_locked=skip_locked)
        return self._rows(sql, params)

    def count(self, index: str, partition: tuple = (), *, since: tuple | None = None) -> int:
        self._check()
        return _count(self._conn, index, partition, since)


def _find(conn, name: str, values: tuple) -> Doc | None:
    index = index_named(name, unique=True)
    clauses, params = _match(index.partition, tuple(values))
    predicate, where_params = schema.where_sql(index)
    if predicate:
        clauses.append(predicate)
        params += where_params
    sql = (f"SELECT doc::text FROM {schema.table(index.collection)} "
           f"WHERE {' AND '.join(clauses)} LIMIT 1")
    row = conn.execute(sql, params).fetchone()
    return None if row is None else json.loads(row[0])


def _count(conn, name: str, partition: tuple, since: tuple | None) -> int:
    sql, params = select_sql(index_named(name, unique=False), partition, limit=None,
                             newest_first=False, upto=None, since=since, count=True)
    return int(conn.execute(sql, params).fetchone()[0])


class PostgresStore(StoreLifecycle):
    """A `Store` in a PostgreSQL database (see the module docstring)."""

    shared = True

    def __init__(self, url: str, *, pool_size: int = DEFAULT_POOL,
                 connect_timeout: float = 10.0, acquire_timeout: float = ACQUIRE_TIMEOUT) -> None:
        if psycopg is None:
            raise StoreError(f"PostgreSQL needs psycopg: pip install 'psycopg[binary]' "
                             f"psycopg_pool ({_IMPORT_ERROR})")
        self.url = url
        self.acquire_timeout = acquire_timeout
        self._local = threading.local()
        self._closed = False
        try:        # one direct attempt first: a wrong URL fails at once, in one line
            psycopg.connect(url, connect_timeout=max(1, int(connect_timeout))).close()
        except Exception as exc:  # noqa: BLE001 - every connection failure is one message
            raise StoreError(f"cannot connect to PostgreSQL at {redact(url)}: "
                             f"{_scrubbed(_reason(exc), url)}") from None
        try:
            # `check`: a connection the database dropped (a restart) is replaced
            # when taken, not handed to a request that would fail on it.
            # `reconnect_timeout`: a slot whose reconnection keeps failing is
            # given up after a few seconds (instead of backing off for minutes),
            # so the next request tries afresh: service resumes as soon as the
            # database is back
            self._pool = ConnectionPool(url, min_size=1, max_size=max(2, pool_size),
                                        kwargs={"autocommit": True}, open=False,
                                        timeout=connect_timeout, name="trackgrade",
                                        check=ConnectionPool.check_connection,
                                        reconnect_timeout=RECONNECT_TIMEOUT)
            self._pool.open(wait=True, timeout=connect_timeout)
        except Exception as exc:  # noqa: BLE001 - every connection failure is one message
            raise StoreError(f"cannot connect to PostgreSQL at {redact(url)}: "
                             f"{_scrubbed(_reason(exc), url)}") from None
        try:
            with self._pool.connection() as conn:
                self.migrated = schema.migrate(conn)
        except RuntimeError as exc:
            self._pool.close()
            raise StoreError(str(exc)) from None
        except psycopg.Error as exc:
            self._pool.close()
            raise StoreError(f"cannot prepare the PostgreSQL schema: {_reason(exc)}") from None

    # -- transactions -----------------------------------------------------
    @contextmanager
    def transaction(self, *, durable: bool = True) -> Iterator[PgTxn]:
        self._check_open()
        if getattr(self._local, "in_txn", False):
            raise RuntimeError("nested store.transaction() in one thread")
        self._local.in_txn = True
        txn = None
        try:
            with self._connection() as conn:
                with conn.transaction():
                    if not durable:     # a counter: its commit need not wait for the WAL flush
                        conn.execute("SET LOCAL synchronous_commit TO OFF")
                    txn = PgTxn(conn)
                    yield txn
        finally:
            if txn is not None:
                txn.open = False
            self._local.in_txn = False

    @contextmanager
    def _connection(self):
        """A pooled connection; database failures become StoreError (other
        exceptions, e.g. a ValueError from a bad document, pass through)."""
        self._check_open()
        try:
            with self._pool.connection(timeout=self.acquire_timeout) as conn:
                yield conn
        except psycopg.Error as exc:        # PoolTimeout included: the database is out of reach
            raise StoreError(f"PostgreSQL: {_reason(exc)}") from exc

    def _read(self, sql: str, params) -> list:
        with self._connection() as conn:
            return conn.execute(sql, params).fetchall()

    # -- reads ------------------------------------------------------------
    def get(self, collection: str, doc_id: str) -> Doc | None:
        check_collection(collection)
        rows = self._read(f"SELECT doc::text FROM {schema.table(collection)} WHERE id = %s",
                          (doc_id,))
        return json.loads(rows[0][0]) if rows else None

    def find(self, index: str, *values: Any) -> Doc | None:
        with self._connection() as conn:
            return _find(conn, index, values)

    def select(self, index: str, partition: tuple = (), *, limit: int | None = None,
               newest_first: bool = False, upto: tuple | None = None,
               since: tuple | None = None) -> list[Doc]:
        sql, params = select_sql(index_named(index, unique=False), partition, limit=limit,
                                 newest_first=newest_first, upto=upto, since=since)
        return [json.loads(row[0]) for row in self._read(sql, params)]

    def count(self, index: str, partition: tuple = (), *, since: tuple | None = None) -> int:
        with self._connection() as conn:
            return _count(conn, index, partition, since)

    def scan(self, collection: str) -> list[Doc]:
        check_collection(collection)
        rows = self._read(f"SELECT doc::text FROM {schema.table(collection)} ORDER BY id", ())
        return [json.loads(row[0]) for row in rows]

    def size(self, collection: str) -> int:
        """How many documents a collection holds (admin migrate's check)."""
        check_collection(collection)
        return int(self._read(f"SELECT count(*) FROM {schema.table(collection)}", ())[0][0])

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._pool.close()



_URL_PASSWORD = re.compile(r"(://[^/?#@:\s]*:)([^/?#\s]*)@")
_KV_PASSWORD = re.compile(r"""(\bpassword\s*=\s*)('(?:[^'\\]|\\.)*'|[^\s&#]*)""", re.IGNORECASE)


def redact(dsn: str) -> str:
    """A PostgreSQL connection string without its password, in every form
    libpq takes: `postgresql://user:PASSWORD@host/db`, a `?password=` (or
    `&password=`) URL parameter and a `password=...` (or `password='...'`)
    key=value entry all become `***`. For every message and log line that
    shows a connection string."""
    text = _URL_PASSWORD.sub(r"\1***@", str(dsn))
    return _KV_PASSWORD.sub(r"\1***", text)


def _scrubbed(text: str, dsn: str) -> str:
    """`text` (a driver's message) with any password of `dsn` in it replaced."""
    secrets = {m.group(2) for m in _URL_PASSWORD.finditer(dsn)}
    secrets |= {m.group(2).strip("'") for m in _KV_PASSWORD.finditer(dsn)}
    for secret in sorted(filter(None, secrets), key=len, reverse=True):
        text = text.replace(secret, "***")
    return redact(text)


def _reason(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else type(exc).__name__
