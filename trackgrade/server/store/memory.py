"""The in-memory store: the engine every backend here is built on.

`State` keeps each collection as {id: compact JSON text} (a 4 KB analysis
costs ~4 KB of memory as text, ~10x less than as a dict tree) plus, per
document, the few fields the indexes read ("meta"). Indexes are plain dicts
(unique) and sorted lists per partition (ordered; `bisect`).

`MemoryStore` adds the transaction protocol of base.py over a `State`: one
re-entrant thread lock serialises every access; a transaction applies its
writes at once and keeps an undo log, so a rollback (exception, failed
commit) restores the previous state exactly. Subclasses (the durable store)
hook in through `_begin`, `_commit`, `_end` and `_refresh`.
"""

from __future__ import annotations

import json
import threading
from bisect import bisect_left, bisect_right, insort
from contextlib import contextmanager
from typing import Any, Iterator

from trackgrade.server.store.base import (
    COLLECTIONS, INDEX_BY_NAME, INDEXES, Doc, Index, StoreLifecycle, check_collection,
    index_fields, index_named,
)

_FIELDS = {collection: index_fields(collection) for collection in COLLECTIONS}
_BY_COLLECTION = {c: tuple(i for i in INDEXES if i.collection == c) for c in COLLECTIONS}


class _Max:
    """Sorts after every document id (closes an `upto` range)."""

    def __lt__(self, other: object) -> bool:
        return False

    def __gt__(self, other: object) -> bool:
        return True


_MAX = _Max()


def dumps(doc: Doc) -> str:
    """Compact, ASCII, NaN-free JSON text (the stored form of a document)."""
    return json.dumps(doc, separators=(",", ":"), allow_nan=False)


def meta_of(collection: str, doc: Doc) -> dict:
    """The fields of `doc` the indexes of `collection` read."""
    return {field: doc.get(field) for field in _FIELDS[collection]}


def stored_form(collection: str, doc: Doc) -> tuple[str, str, dict]:
    """(id, JSON text, index fields) of a document about to be written, after
    the checks every store makes: a non-empty string id, and index fields
    that are strings, numbers, booleans or null. ValueError otherwise."""
    doc_id = doc.get("id")
    if not isinstance(doc_id, str) or not doc_id:
        raise ValueError(f"a {collection} document needs a string 'id'; given {doc_id!r}")
    text = dumps(doc)
    meta = meta_of(collection, doc)
    for field, value in meta.items():
        if not isinstance(value, _SCALARS):
            raise ValueError(f"{collection}.{field} is indexed and must be a string, number, "
                             f"boolean or null; given {type(value).__name__}")
    return doc_id, text, meta


def _tag(value: Any) -> tuple:
    """A sortable pair for one order value: None first, then numbers, then
    text, so documents with odd values never make a comparison raise."""
    if value is None:
        return (0, 0)
    if isinstance(value, (int, float)):
        return (1, value)
    return (2, value)


def _order_key(index: Index, meta: dict) -> tuple:
    """The tagged order values, flattened, then the id."""
    if len(index.order) == 1:
        return _tag(meta.get(index.order[0])) + (meta["id"],)
    key: tuple = ()
    for field in index.order:
        key += _tag(meta.get(field))
    return key + (meta["id"],)


def _bound(index: Index, values: tuple, *, closed_high: bool) -> tuple:
    """A bisect key for a bound on (order values…[, id]): the order values
    tagged, then the id when given; without an id, `closed_high` makes the
    bound sort after every id of those values."""
    values = tuple(values)
    head: tuple = ()
    for value in values[:len(index.order)]:
        head += _tag(value)
    if len(values) > len(index.order):
        return head + (values[len(index.order)],)
    return head + (_MAX,) if closed_high else head


_SCALARS = (str, int, float, bool, type(None))


def _member(index: Index, meta: dict) -> bool:
    return index.where is None or meta.get(index.where[0]) == index.where[1]


class State:
    """Documents as JSON text, their index fields, and the indexes."""

    def __init__(self) -> None:
        self.docs: dict[str, dict[str, str]] = {c: {} for c in COLLECTIONS}
        self.meta: dict[str, dict[str, dict]] = {c: {} for c in COLLECTIONS}
        self.unique: dict[str, dict[tuple, str]] = {i.name: {} for i in INDEXES if i.unique}
        self.ordered: dict[str, dict[tuple, list]] = {i.name: {} for i in INDEXES if not i.unique}

    # -- writes -----------------------------------------------------------
    def load(self, records) -> None:
        """Fill an empty State from (collection, meta, text) records at once:
        indexes are built by one sort per partition instead of an insort per
        document (the snapshot load path)."""
        if any(self.docs.values()):
            raise RuntimeError("State.load needs an empty state")
        for collection, meta, text in records:
            doc_id = meta["id"]
            self.docs[collection][doc_id] = text
            self.meta[collection][doc_id] = meta
        for index in INDEXES:
            self._build(index)

    def _build(self, index: Index) -> None:
        metas = self.meta[index.collection].values()
        if index.where is not None:
            field, value = index.where
            metas = [meta for meta in metas if meta.get(field) == value]
        fields = index.partition
        if index.unique:
            self.unique[index.name].update(
                (tuple(map(meta.get, fields)), meta["id"]) for meta in metas)
            return
        parts = self.ordered[index.name]
        for meta in metas:
            key = tuple(map(meta.get, fields))
            rows = parts.get(key)
            if rows is None:
                rows = parts[key] = []
            rows.append(_order_key(index, meta))
        for rows in parts.values():
            rows.sort()

    def put(self, collection: str, doc_id: str, meta: dict, text: str) -> tuple | None:
        """Store one document; returns what it replaced as (meta, text) or None."""
        old = self.delete(collection, doc_id)
        self.docs[collection][doc_id] = text
        self.meta[collection][doc_id] = meta
        for index in _BY_COLLECTION[collection]:
            if not _member(index, meta):
                continue
            part = tuple(meta.get(f) for f in index.partition)
            if index.unique:
                self.unique[index.name][part] = doc_id
            else:
                insort(self.ordered[index.name].setdefault(part, []), _order_key(index, meta))
        return old

    def delete(self, collection: str, doc_id: str) -> tuple | None:
        text = self.docs[collection].pop(doc_id, None)
        if text is None:
            return None
        meta = self.meta[collection].pop(doc_id)
        for index in _BY_COLLECTION[collection]:
            if not _member(index, meta):
                continue
            part = tuple(meta.get(f) for f in index.partition)
            if index.unique:
                table = self.unique[index.name]
                if table.get(part) == doc_id:
                    del table[part]
            else:
                self._unlink(index, part, _order_key(index, meta))
        return meta, text

    def _unlink(self, index: Index, part: tuple, key: tuple) -> None:
        parts = self.ordered[index.name]
        rows = parts.get(part, [])
        at = bisect_left(rows, key)
        if at < len(rows) and rows[at] == key:
            del rows[at]
            if not rows:
                del parts[part]

    def restore(self, collection: str, doc_id: str, old: tuple | None) -> None:
        """Undo one write: put back `old` (from put/delete) or remove."""
        if old is None:
            self.delete(collection, doc_id)
        else:
            self.put(collection, doc_id, old[0], old[1])

    # -- reads ------------------------------------------------------------
    def get(self, collection: str, doc_id: str) -> Doc | None:
        text = self.docs[collection].get(doc_id)
        return None if text is None else json.loads(text)

    def find(self, index_name: str, values: tuple) -> Doc | None:
        index = index_named(index_name, unique=True)
        doc_id = self.unique[index.name].get(values)
        return None if doc_id is None else self.get(index.collection, doc_id)

    def keys(self, index_name: str, partition: tuple) -> list:
        index = index_named(index_name, unique=False)
        return self.ordered[index.name].get(tuple(partition), [])

    def select(self, index_name: str, partition: tuple, limit: int | None,
               newest_first: bool, upto: tuple | None, since: tuple | None = None) -> list[Doc]:
        index = INDEX_BY_NAME[index_name]
        rows = self.keys(index_name, partition)
        start = 0 if since is None else bisect_left(rows, _bound(index, since, closed_high=False))
        end = (len(rows) if upto is None
               else bisect_right(rows, _bound(index, upto, closed_high=True)))
        if newest_first:
            picked = rows[max(start, end - limit) if limit is not None else start:end][::-1]
        else:
            picked = rows[start:end if limit is None else min(end, start + max(0, limit))]
        if limit is not None:
            picked = picked[:max(0, limit)]
        return [self.get(index.collection, key[-1]) for key in picked]

    def count(self, index_name: str, partition: tuple, since: tuple | None) -> int:
        index = INDEX_BY_NAME[index_name]
        rows = self.keys(index_name, partition)
        if since is None:
            return len(rows)
        return len(rows) - bisect_left(rows, _bound(index, since, closed_high=False))

    def scan(self, collection: str) -> list[Doc]:
        docs = self.docs[collection]
        return [json.loads(docs[doc_id]) for doc_id in sorted(docs)]


class _Txn:
    """A transaction over a `State` (see base.Txn). Writes apply at once;
    `undo` restores them in reverse order; `ops` keeps the last write per
    document for the journal."""

    def __init__(self, state: State) -> None:
        self._state = state
        self.undo: list[tuple[str, str, tuple | None]] = []
        self.ops: dict[tuple[str, str], tuple[dict, str] | None] = {}
        self.open = True

    def _check(self, collection: str) -> None:
        if not self.open:
            raise RuntimeError("transaction already finished")
        check_collection(collection)

    def get(self, collection: str, doc_id: str) -> Doc | None:
        self._check(collection)
        return self._state.get(collection, doc_id)

    def put(self, collection: str, doc: Doc) -> None:
        self._check(collection)
        doc_id, text, meta = stored_form(collection, doc)
        self._check_unique(collection, doc_id, meta)
        self.undo.append((collection, doc_id, self._state.put(collection, doc_id, meta, text)))
        self.ops[(collection, doc_id)] = (meta, text)

    def _check_unique(self, collection: str, doc_id: str, meta: dict) -> None:
        for index in _BY_COLLECTION[collection]:
            if index.unique and _member(index, meta):
                part = tuple(meta.get(f) for f in index.partition)
                owner = self._state.unique[index.name].get(part)
                if owner is not None and owner != doc_id:
                    raise ValueError(f"{index.name}: value already used by {owner!r}")

    def delete(self, collection: str, doc_id: str) -> None:
        self._check(collection)
        old = self._state.delete(collection, doc_id)
        if old is not None or (collection, doc_id) in self.ops:
            self.undo.append((collection, doc_id, old))
            self.ops[(collection, doc_id)] = None

    def find(self, index: str, *values: Any) -> Doc | None:
        self._check("keys")
        return self._state.find(index, tuple(values))

    def select(self, index: str, partition: tuple = (), *, limit: int | None = None,
               newest_first: bool = False, upto: tuple | None = None,
               since: tuple | None = None, skip_locked: bool = False) -> list[Doc]:
        self._check("keys")
        return self._state.select(index, tuple(partition), limit, newest_first, upto, since)

    def count(self, index: str, partition: tuple = (), *, since: tuple | None = None) -> int:
        self._check("keys")
        return self._state.count(index, tuple(partition), since)

    def rollback(self) -> None:
        for collection, doc_id, old in reversed(self.undo):
            self._state.restore(collection, doc_id, old)
        self.undo.clear()
        self.ops.clear()


class MemoryStore(StoreLifecycle):
    """A `Store` kept in this process's memory only (tests, throwaway servers)."""

    shared = False

    def __init__(self) -> None:
        self._state = State()
        self._lock = threading.RLock()
        self._txn_owner: int | None = None
        self._closed = False

    # -- hooks for durable subclasses (no-ops here) -----------------------
    def _begin(self) -> None:
        """Called under the thread lock before a transaction starts."""

    def _commit(self, ops: dict) -> None:
        """Make `ops` durable; raising rolls the transaction back."""

    def _end(self) -> None:
        """Called under the thread lock after a transaction ends (always)."""

    def _refresh(self) -> None:
        """Called under the thread lock before a read outside a transaction."""

    # -- transactions -----------------------------------------------------
    @contextmanager
    def transaction(self, *, durable: bool = True) -> Iterator[_Txn]:
        with self._lock:
            self._check_open()
            if self._txn_owner == threading.get_ident():
                raise RuntimeError("nested store.transaction() in one thread")
            self._begin()
            txn = _Txn(self._state)
            self._txn_owner = threading.get_ident()
            try:
                yield txn
                if txn.ops:
                    self._commit(txn.ops)
            except BaseException:
                txn.rollback()
                raise
            finally:
                txn.open = False
                self._txn_owner = None
                self._end()

    # -- reads ------------------------------------------------------------
    @contextmanager
    def _reading(self) -> Iterator[State]:
        with self._lock:
            self._check_open()
            if self._txn_owner is None:
                self._refresh()
            yield self._state

    def get(self, collection: str, doc_id: str) -> Doc | None:
        check_collection(collection)
        with self._reading() as state:
            return state.get(collection, doc_id)

    def find(self, index: str, *values: Any) -> Doc | None:
        with self._reading() as state:
            return state.find(index, tuple(values))

    def select(self, index: str, partition: tuple = (), *, limit: int | None = None,
               newest_first: bool = False, upto: tuple | None = None,
               since: tuple | None = None) -> list[Doc]:
        with self._reading() as state:
            return state.select(index, tuple(partition), limit, newest_first, upto, since)

    def count(self, index: str, partition: tuple = (), *, since: tuple | None = None) -> int:
        with self._reading() as state:
            return state.count(index, tuple(partition), since)

    def scan(self, collection: str) -> list[Doc]:
        check_collection(collection)
        with self._reading() as state:
            return state.scan(collection)

    def iter_docs(self, collection: str) -> Iterator[Doc]:
        """Every document of a collection, one at a time (a bulk copy:
        `admin migrate`); the texts are taken under the lock, decoded lazily."""
        check_collection(collection)
        with self._reading() as state:
            texts = list(state.docs[collection].values())
        for text in texts:
            yield json.loads(text)

    def close(self) -> None:
        self._closed = True

