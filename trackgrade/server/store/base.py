"""The storage seam of the server: one small interface, several backends.

Backends (each passes the one contract suite, tests/server/test_store_contract.py):

    MemoryStore   trackgrade.server.store.memory    tests, `create_app(store=MemoryStore())`
    TinyDBStore   trackgrade.server.store.durable   `trackgrade serve --data DIR`, the admin CLI
    PostgresStore trackgrade.server.store.postgres  `trackgrade serve --database URL`: nodes
                                                    sharing one database

`open_store(data_dir)` (in `trackgrade.server.store`) opens the durable one,
`open_store(database=url)` the PostgreSQL one.

Data model
----------
A store holds JSON documents (plain dicts: str keys; str/int/float/bool/None,
lists and dicts as values; NaN is refused) in the named COLLECTIONS below.
Every document has a string `id`, unique in its collection. Documents are
copied in and out: a dict you `put` is serialised at once, a dict you `get`
is a fresh copy you may mutate freely (it is not written back until you
`put` it again).

    accounts     {"id": "acct_…", "plan", "billing", "credits", "limits", …}   see accounts.py
    keys         {"id": "key_…", "account_id", "hash", "mode", "livemode",
                  "revoked_at", "created_at", …}                               see accounts.py
    analyses     the server's analysis rows. Fields the store indexes (must be
                 present): "account_id", "key_id", "livemode" (bool),
                 "created_at" (clock.isoformat text), "status"
                 ("processing" | "complete" | "failed"). The admin `embed`
                 command sets "embed": true/false on the row.
    events       the webhook outbox, one row per event: see `new_event`.
                 Indexed while "state" == "pending" (not yet fanned out to
                 the account's endpoints), by "next_attempt_at"; all of them
                 by "created" (to prune delivered ones: each row carries the
                 Analysis, ~4 KB, and the store lives in memory).
    deliveries   one row per (event, endpoint): its attempts, last result and
                 next attempt; indexed per endpoint while "state" ==
                 "pending", by "next_attempt_at", and by "event_id". See
                 trackgrade/server/webhooks/state.py.
    webhooks     {"id": "we_…", "account_id", "url", "secret", "enabled",
                  "created_at", …}   see trackgrade/server/webhooks/endpoints.py
    idempotency  the app's records (fingerprint, status, response, …) with an
                 "expires_at" (Unix seconds) the store indexes; the app picks
                 the id (e.g. f"{key_id}:{idempotency_key}").
    settings     small switches, e.g. {"id": "maintenance", "on": true}.
    uploads      {"id": <analysis id>, "at": <deadline>}: analyses awaiting
                 their bytes, indexed by deadline (the sweeper's question).
    jobs         {"id": <analysis id>, "at", "node"}: bytes accepted, work not
                 finished (recovered at start). See server/lifecycle/markers.py.
    counters     small shared counters, e.g. a key's rate window
                 {"id": "rate:<key id>", "window", "count"} (ratelimit.py).
    sessions     the developer console's one-time sign-in links and sessions,
                 keyed by the SHA-256 of their token (never the token), with
                 an "expires_at" (Unix seconds) the store indexes: see
                 trackgrade/server/console/signin.py.

Indexes are fixed here (INDEXES) so every backend builds the same ones; the
PostgreSQL backend turns each into a SQL index. Unique indexes answer
`find`; ordered indexes keep each partition sorted by (order fields…, id)
and answer `select` and `count`. That is the whole seam: transactions, get,
find, select, count, scan. Domain questions (a page of analyses, in-flight
counts, due events) are built on it in trackgrade/server/queries.py and in
their callers, once for every backend.

Transactions
------------
`with store.transaction() as txn:` is atomic and serialised across threads
and processes (the durable store takes a thread lock and an flock on the data
directory). Inside, reads see the transaction's own writes. Leaving the block
normally commits: the durable store appends one journal line with every
change and fsyncs it before `__exit__` returns, so a write that returned is a
write that survives kill -9. Leaving it with an exception rolls everything
back and re-raises. Keep transactions short (no network, no analysis inside)
and do not open a transaction inside another one (it raises RuntimeError).

Reads outside a transaction (`store.get`, `store.find`, `store.select`
…) are consistent snapshots and first catch up with writes other processes
made (e.g. `trackgrade admin keys revoke`), so those are seen on the very
next call.

Indexed fields must be scalars (str, number, bool, None); a put with a list
or dict there raises ValueError, as does a second document claiming a
unique-index value. Memory: the embedded stores keep documents in memory as
compact JSON text (~4 KB per analysis); prune what is finished from a
periodic sweeper.

Locking: `txn.get` of a document claims it for the transaction (the
embedded stores serialise whole transactions; PostgreSQL locks the row, or
the id when there is no row yet), so read-modify-write on one document is
safe across threads, processes and nodes. Storage failures (disk full, unreadable files) raise `StoreError`.
"""

from __future__ import annotations

import uuid
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

Doc = dict[str, Any]

COLLECTIONS: tuple[str, ...] = (
    "accounts", "keys", "analyses", "events", "webhooks", "idempotency", "settings",
    "deliveries", "counters", "uploads", "jobs", "sessions",
)


class StoreError(Exception):
    """The storage itself failed (unreadable data directory, damaged files,
    disk full, database down). Not a TrackgradeError: the app answers it as
    503 `service_unavailable` with Retry-After, the admin CLI as exit code 2."""


class StoreDamage(StoreError):
    """A damaged byte in the store's files: one line naming the file and the
    offset of the record that holds it. Raised instead of ever dropping (or
    truncating) acknowledged data."""

    def __init__(self, path, offset: int, reason: str) -> None:
        super().__init__(f"store damaged: {path} at offset {offset}: {reason}; nothing was "
                         "changed (`trackgrade admin store check` lists the damage)")
        self.path, self.offset, self.reason = str(path), offset, reason


@dataclass(frozen=True)
class Index:
    """A secondary index over one collection.

    `partition`: fields whose values pick the partition (exact match).
    `order`: fields sorting rows inside a partition (the doc id breaks ties).
    `where`: (field, value): only documents with doc[field] == value are in.
    `unique`: a lookup index (`find`); at most one document per value.
    """

    name: str
    collection: str
    partition: tuple[str, ...]
    order: tuple[str, ...] = ()
    where: tuple[str, Any] | None = None
    unique: bool = False

    @property
    def fields(self) -> tuple[str, ...]:
        where = (self.where[0],) if self.where else ()
        return self.partition + self.order + where


INDEXES: tuple[Index, ...] = (
    Index("keys.hash", "keys", ("hash",), unique=True),
    Index("keys.by_account", "keys", ("account_id",), ("created_at",)),
    Index("webhooks.by_account", "webhooks", ("account_id",), ("created_at",)),
    Index("analyses.by_owner", "analyses", ("account_id", "livemode"), ("created_at",)),
    Index("analyses.by_key", "analyses", ("key_id",), ("created_at",)),
    Index("analyses.in_flight", "analyses", ("key_id",), ("created_at",),
          where=("status", "processing")),
    Index("analyses.test_by_created", "analyses", (), ("created_at",),
          where=("livemode", False)),
    Index("uploads.by_deadline", "uploads", (), ("at",)),
    Index("events.pending", "events", (), ("next_attempt_at",), where=("state", "pending")),
    Index("events.by_created", "events", (), ("created",)),
    Index("idempotency.by_expiry", "idempotency", (), ("expires_at",)),
    Index("deliveries.due", "deliveries", ("webhook_id",), ("next_attempt_at",),
          where=("state", "pending")),
    Index("deliveries.by_event", "deliveries", ("event_id",)),
    Index("deliveries.by_webhook", "deliveries", ("webhook_id",), ("created",)),
    Index("sessions.by_expiry", "sessions", (), ("expires_at",)),
)
INDEX_BY_NAME: dict[str, Index] = {index.name: index for index in INDEXES}


def index_named(name: str, *, unique: bool) -> Index:
    """The declared index of that name, checked to be unique (or ordered) as
    the caller's operation needs; ValueError otherwise (a programming error)."""
    index = INDEX_BY_NAME.get(name)
    if index is None:
        raise ValueError(f"unknown index {name!r}; known: {', '.join(INDEX_BY_NAME)}")
    if index.unique != unique:
        raise ValueError(f"index {name!r} is {'unique' if index.unique else 'ordered'}")
    return index


@runtime_checkable
class Txn(Protocol):
    """One open transaction (see the module docstring)."""

    def get(self, collection: str, doc_id: str) -> Doc | None:
        """The document, or None."""

    def put(self, collection: str, doc: Doc) -> None:
        """Insert or replace the whole document `doc["id"]`."""

    def delete(self, collection: str, doc_id: str) -> None:
        """Remove the document; no error when it is absent."""

    def find(self, index: str, *values: Any) -> Doc | None:
        """The document whose unique-index fields equal `values`, or None.
        `txn.find("keys.hash", sha256_hex)`."""

    def select(self, index: str, partition: tuple = (), *, limit: int | None = None,
               newest_first: bool = False, upto: tuple | None = None,
               since: tuple | None = None, skip_locked: bool = False) -> list[Doc]:
        """Documents of one ordered-index partition in (order…, id) order
        (reversed with `newest_first`: then `limit` keeps the last ones),
        only those between `since` and `upto` (both inclusive). A bound is
        a tuple of order values compared as a prefix, or the order values
        followed by a document id (an exact position: paging cursors).
        `skip_locked`: the rows are for this transaction alone; rows another
        open transaction holds are left out instead of waited for (a
        PostgreSQL store selects `FOR UPDATE SKIP LOCKED`; a store that
        serialises every transaction has nothing to skip). Work queues
        (webhook deliveries) claim with it."""

    def count(self, index: str, partition: tuple = (), *, since: tuple | None = None) -> int:
        """How many documents the partition holds (only those at or after
        `since`, a bound as in `select`, if given)."""


@runtime_checkable
class Store(Protocol):
    """A document store (see the module docstring)."""

    shared: bool
    """True when several servers may run on this store at once (PostgreSQL):
    the server then keeps rate windows in the store, recovers only its own
    node's work and claims webhook deliveries beside other nodes."""

    def transaction(self, *, durable: bool = True) -> AbstractContextManager[Txn]:
        """Atomic, serialised, durable on exit. Yields a `Txn`. `durable=False`
        (counters such as rate windows): the commit may be lost if the
        database itself crashes right after it (PostgreSQL then commits
        without waiting for its WAL flush; the embedded stores ignore it)."""

    def get(self, collection: str, doc_id: str) -> Doc | None: ...

    def find(self, index: str, *values: Any) -> Doc | None: ...

    def select(self, index: str, partition: tuple = (), *, limit: int | None = None,
               newest_first: bool = False, upto: tuple | None = None,
               since: tuple | None = None) -> list[Doc]: ...

    def count(self, index: str, partition: tuple = (), *, since: tuple | None = None) -> int: ...

    def scan(self, collection: str) -> list[Doc]:
        """Every document of a (small) collection, in id order. Not for analyses."""

    def close(self) -> None:
        """Release files and locks. Idempotent."""


class StoreLifecycle:
    """What every store does alike once it is closed: refuse further use, and
    close itself at the end of a `with` block. Subclasses set `_closed = False`
    and implement `close()`."""

    _closed: bool

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("store is closed")

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def new_id(prefix: str) -> str:
    """A fresh random id: `new_id("acct")` -> "acct_3f2a…" (32 hex digits)."""
    return f"{prefix}_{uuid.uuid4().hex}"


def new_event(event_type: str, data: Doc, *, account_id: str, livemode: bool,
              created: float, event_id: str | None = None) -> Doc:
    """An outbox row for the `events` collection, ready to deliver.

    `envelope` is the spec 6.2 event body, frozen when the event happens;
    the webhook sender signs and POSTs `envelope` to every endpoint of the
    account. "state" is "pending" until the dispatcher fans the event out
    into one `deliveries` row per endpoint, then "dispatched"; the delivery
    state (attempts, results, next attempt) lives on those rows
    (trackgrade/server/webhooks/state.py). Put it in the same transaction
    as the state change that caused it.
    """
    event_id = event_id or str(uuid.uuid4())
    envelope = {"id": event_id, "object": "event", "type": event_type,
                "created": int(created), "livemode": bool(livemode), "data": data}
    return {"id": event_id, "account_id": account_id, "type": event_type,
            "livemode": bool(livemode), "created": int(created), "envelope": envelope,
            "state": "pending", "attempts": 0, "next_attempt_at": float(created),
            "deliveries": {}}


def index_fields(collection: str) -> tuple[str, ...]:
    """Every field some index of `collection` reads (plus "id")."""
    fields: list[str] = ["id"]
    for index in INDEXES:
        if index.collection == collection:
            fields.extend(f for f in index.fields if f not in fields)
    return tuple(fields)


def check_collection(collection: str) -> None:
    if collection not in COLLECTIONS:
        raise ValueError(f"unknown collection {collection!r}; known: {', '.join(COLLECTIONS)}")
