"""The server's storage seam: see base.py for the interface and its rules.

    from trackgrade.server.store import MemoryStore, open_store
    store = open_store("./trackgrade-data")      # durable (TinyDB snapshot + journal)
"""

from trackgrade.server.store.base import (
    COLLECTIONS, INDEXES, Doc, Index, Store, StoreError, Txn, new_event, new_id,
)
from trackgrade.server.store.memory import MemoryStore


def open_store(data_dir, **options) -> "Store":
    """Open (creating if needed) the durable store in `data_dir`."""
    from trackgrade.server.store.durable import TinyDBStore
    return TinyDBStore(data_dir, **options)


__all__ = ["COLLECTIONS", "INDEXES", "Doc", "Index", "MemoryStore", "Store", "StoreError",
           "Txn", "new_event", "new_id", "open_store"]
