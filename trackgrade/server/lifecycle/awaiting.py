"""The analyses awaiting their bytes, held in memory: who may upload what, and
until when, known without asking the store.

waitress's event loop admits an upload from its head before a body byte is
read (`connections/admission.py`) and must never wait on the store, yet it
needs the analysis's account and key (whose share of the body budget the
upload uses), its `file_name` (the declared format's size limit) and its
upload deadline (the end of the reservation). This directory answers that:

- `note(row)` when this process creates an analysis (after the commit);
- `drop(id)` when its upload phase ends here (accepted, failed, canceled);
- `refresh(store)` on the sweeper thread: analyses other nodes created
  (a shared PostgreSQL store) are read from the `uploads` markers, and those
  no longer awaiting (ended elsewhere) are dropped.

On a store of its own (not shared) this process made every analysis, so the
directory is complete; on a shared database an analysis another node made
moments ago may not be here yet (the admission then uses a shared
"unattributed" share; the route checks the token against the store anyway).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from trackgrade.server.lifecycle import markers
from trackgrade.server.lifecycle.rows import AnalysisRow


@dataclass(frozen=True)
class Awaiting:
    analysis_id: str
    account_id: str
    key_id: str
    livemode: bool
    file_name: str
    expires_at: float        # the upload token's deadline (the lifecycle clock's Unix s)


class AwaitingUploads:
    """analysis id -> `Awaiting` (thread-safe; reads never block on the store)."""

    def __init__(self) -> None:
        self._rows: dict[str, Awaiting] = {}
        self._noted_at: dict[str, float] = {}       # monotonic time of `note`
        self._lock = threading.Lock()

    def note(self, row: AnalysisRow) -> None:
        entry = Awaiting(row.id, row.account_id, row.key_id, bool(row.livemode), row.file_name,
                         float(row.upload_expires_at))
        with self._lock:
            self._rows[row.id] = entry
            self._noted_at[row.id] = time.monotonic()

    def drop(self, analysis_id: str) -> None:
        with self._lock:
            self._rows.pop(analysis_id, None)
            self._noted_at.pop(analysis_id, None)

    def get(self, analysis_id: str) -> Awaiting | None:
        return self._rows.get(analysis_id)

    def __contains__(self, analysis_id: str) -> bool:
        return analysis_id in self._rows

    def __len__(self) -> int:
        return len(self._rows)

    def refresh(self, store) -> None:
        """Agree with the store's `uploads` markers (the sweeper thread)."""
        began = time.monotonic()
        marked = {doc["id"] for doc in store.scan(markers.UPLOADS)}
        for analysis_id in marked - self._rows.keys():
            doc = store.get("analyses", analysis_id)
            if doc is not None:
                row = AnalysisRow.from_doc(doc)
                if row.awaiting_upload:
                    self.note(row)
        with self._lock:
            gone = [i for i in self._rows if i not in marked and self._noted_at[i] < began]
        for analysis_id in gone:       # noted after the scan began: its marker may be newer
            self.drop(analysis_id)
