"""The server's storage seam: see base.py for the interface and its rules.

    from trackgrade.server.store import MemoryStore, open_store
    store = open_store("./trackgrade-data")      # durable (TinyDB snapshot + journal)
    store = open_store(database="postgresql://…") # PostgreSQL (several nodes)
"""

from trackgrade.server.store.base import (
    COLLECTIONS, INDEXES, Doc, Index, Store, StoreError, Txn, new_event, new_id,
)
from trackgrade.server.store.memory import MemoryStore


def open_store(data_dir=None, *, database: str | None = None, **options) -> "Store":
    """Open (creating if needed) the durable store in `data_dir`, or, given a
    `database` URL (postgresql://…), the PostgreSQL store there (its schema
    created or migrated)."""
    if database:
        from trackgrade.server.store.postgres import PostgresStore
        return PostgresStore(database, **options)
    from trackgrade.server.store.durable import JournalStore
    return JournalStore(data_dir, **options)


__all__ = ["COLLECTIONS", "INDEXES", "Doc", "Index", "MemoryStore", "Store", "StoreError",
           "Txn", "new_event", "new_id", "open_store"]
