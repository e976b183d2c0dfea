"""What every part of the state machine shares: the store, the clock, the
token minter, events, and the one failure transition (processing -> failed,
error embedded, credit restored, event `analysis.failed`)."""

from __future__ import annotations

import threading
from contextlib import nullcontext
from typing import Callable

from trackgrade.server import accounts, documents
from trackgrade.server.clock import Clock, isoformat
from trackgrade.server.lifecycle import markers
from trackgrade.server.lifecycle.awaiting import AwaitingUploads
from trackgrade.server.lifecycle.rows import DONE, AnalysisRow, load_row, save_row
from trackgrade.server.lifecycle.tokens import TokenMinter
from trackgrade.server.store import Store, Txn, new_event

UPLOAD_FIELD = "file"


class LifecycleCore:
    def __init__(self, store: Store, clock: Clock, *, docs_url,
                 upload_ttl: int, idempotency_ttl: int, node: str = "",
                 test_retention_days: float = 0.0) -> None:
        self.store = store
        # the name this server's job markers carry: on a shared store (several
        # nodes on one database) a restart recovers only its own node's work
        self.node = node
        self.shared = bool(getattr(store, "shared", False))
        self.clock = clock
        self._docs_url = docs_url         # the error reference's URL, or a function giving it
        self.upload_ttl = int(upload_ttl)
        self.idempotency_ttl = int(idempotency_ttl)
        self.test_retention = float(test_retention_days) * 86400.0
        self.tokens = TokenMinter(store)
        self.awaiting = AwaitingUploads()      # read by the connection layer's admission
        # one create at a time in this process: the embedded stores serialise
        # transactions anyway; PostgreSQL's row locks serialise what must be
        # (per key and idempotency key), so creates of other keys run in parallel
        self._create_lock = nullcontext() if self.shared else threading.Lock()
        self.on_event: Callable[[], None] | None = None   # e.g. the webhook dispatcher's kick

    @property
    def docs_url(self) -> str | None:
        """The error reference's URL, for this request when in one (trackgrade.server.reference)."""
        return self._docs_url() if callable(self._docs_url) else self._docs_url

    def _event(self, txn: Txn, event_type: str, row: AnalysisRow, data: dict) -> None:
        txn.put("events", new_event(event_type, data, account_id=row.account_id,
                                    livemode=row.livemode, created=self.clock.time()))
        if self.on_event is not None:       # the dispatcher reads once this commits
            self.on_event()

    def _fail_in(self, txn: Txn, analysis_id: str, code: str, message: str) -> AnalysisRow | None:
        """processing -> failed inside `txn`; the failed row, or None when it
        was not processing (its markers are dropped either way)."""
        row = load_row(txn, analysis_id)
        markers.clear(txn, analysis_id)
        self.awaiting.drop(analysis_id)
        if row is None or row.status != "processing":
            return None
        row.status, row.phase = "failed", DONE
        row.completed_at = isoformat(self.clock.now())
        row.error = documents.embedded_error(code, message, self.docs_url)
        if row.credit_spent:
            if txn.get("accounts", row.account_id) is not None:
                accounts.restore_credit(txn, row.account_id, clock=self.clock)
            row.credit_spent, row.credit_restored = False, True
        row.render()
        save_row(txn, row)
        self._event(txn, "analysis.failed", row, documents.failed_event_data(row.to_doc()))
        return row
