"""Work the server does for itself: recovery at start, and the sweeper
(expired uploads, idempotency records past their window, test-mode
analyses past `test_retention_days`)."""

from __future__ import annotations

from datetime import timedelta

from trackgrade.server.clock import isoformat
from trackgrade.server.lifecycle import markers
from trackgrade.server.lifecycle.rows import DONE, load_row, save_row
from trackgrade.server.lifecycle.transitions import Transitions

PURGE_BATCH = 500
SWEEP_BATCH = 50


class Upkeep(Transitions):
    def recover(self) -> list[str]:
        """At start: work lost with the previous process. Uploaded analyses
        without scores fail (`engine_error`, credit restored); those with
        scores get their narrative marked ready. On a shared store only the
        analyses this node was computing: other nodes' work goes on. Returns
        the ids touched."""
        markers.adopt_legacy(self.store)
        touched = []
        for analysis_id in markers.jobs_of(self.store, self.node if self.shared else None):
            with self.store.transaction() as txn:
                row = load_row(txn, analysis_id)
                if row is not None and row.status == "complete":
                    markers.clear(txn, analysis_id)
                    if row.diagnosis_status != "ready":
                        result = row.result() or {}
                        diagnosis = dict(result.get("diagnosis") or {}, status="ready")
                        result.update(diagnosis=diagnosis, diagnosis_status="ready")
                        row.diagnosis_status, row.phase = "ready", DONE
                        doc = row.render(result)
                        save_row(txn, row)
                        self._event(txn, "analysis.completed", row, doc)
                else:
                    self._fail_in(txn, analysis_id, "engine_error", "the server restarted "
                                  "while analysing; the audio was not kept, submit it again")
            touched.append(analysis_id)
        return touched

    def sweep(self) -> list[str]:
        """Fail analyses whose upload token expired before the bytes came
        (a batch per transaction); drop idempotency records past their
        window and test-mode analyses past their retention. Returns the
        failed ids."""
        now = self.clock.time()
        failed: list[str] = []
        while True:
            expired = markers.expired_uploads(self.store, now, SWEEP_BATCH)
            if not expired:
                break
            with self.store.transaction() as txn:
                for analysis_id in expired:
                    row = load_row(txn, analysis_id)
                    if row is not None and not row.awaiting_upload:
                        markers.clear(txn, analysis_id)   # accepted meanwhile: it computes
                        continue
                    self._fail_in(txn, analysis_id, "upload_incomplete", "the upload never "
                                  "completed before the upload token expired; submit the "
                                  "analysis again")
            failed.extend(expired)
        self.purge_idempotency(now)
        self.prune_test_analyses()
        self.awaiting.refresh(self.store)
        return failed

    def purge_idempotency(self, now: float) -> int:
        purged = 0
        while True:
            old = self.store.select("idempotency.by_expiry", (), limit=PURGE_BATCH,
                                    upto=(now,))
            if not old:
                return purged
            with self.store.transaction() as txn:
                for record in old:
                    txn.delete("idempotency", record["id"])
            purged += len(old)

    def prune_test_analyses(self) -> int:
        """Delete test-mode analyses created more than `test_retention_days`
        ago (with their markers); 0 days keeps them forever."""
        if self.test_retention <= 0:
            return 0
        cutoff = isoformat(self.clock.now() - timedelta(seconds=self.test_retention))
        pruned = 0
        while True:
            old = self.store.select("analyses.test_by_created", (), limit=PURGE_BATCH,
                                    upto=(cutoff,))
            old = [row for row in old if row["created_at"] < cutoff]
            if not old:
                return pruned
            with self.store.transaction() as txn:
                for row in old:
                    markers.clear(txn, row["id"])
                    txn.delete("analyses", row["id"])
            pruned += len(old)
