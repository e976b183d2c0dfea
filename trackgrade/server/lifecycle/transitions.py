"""The transitions after creation, each ONE store transaction (state change,
credit and outbox event together):

    accept_upload   the token consumed (single use); the job registered
    reject_upload   unusable bytes: the token consumed, the analysis failed
    scores_ready    processing -> complete/pending; event analysis.scores_ready
    completed       complete/pending -> complete/ready; event analysis.completed
    fail            processing -> failed; error embedded; credit restored;
                    event analysis.failed
    cancel          awaiting its bytes -> failed `analysis_canceled` (as fail)
"""

from __future__ import annotations

from dataclasses import replace

from trackgrade.errors import TrackgradeError
from trackgrade.model import Analysis
from trackgrade.server import documents
from trackgrade.server.clock import isoformat
from trackgrade.server.lifecycle import markers
from trackgrade.server.lifecycle.create import Creating
from trackgrade.server.lifecycle.rows import (
    DONE, ENHANCING, UPLOADED, AnalysisRow, load_row, save_row,
)
from trackgrade.server.lifecycle.tokens import token_invalid

# the codes a failed analysis embeds (spec 7.2, plus the size limit at upload)
EMBEDDED_CODES = ("upload_incomplete", "file_rejected", "file_too_large",
                  "unprocessable_audio", "engine_error")


class Transitions(Creating):
    # --- upload ------------------------------------------------------------------

    def upload_row(self, analysis_id: str, token: str | None) -> dict:
        """The analysis a valid, unused, unexpired upload token opens; else 401."""
        self.tokens.key()
        doc = self.store.get("analyses", analysis_id) if token else None
        row = None if doc is None else AnalysisRow.from_doc(doc)
        if not self._token_opens(row, token, self.store):
            raise token_invalid()
        return doc

    def accept_upload(self, analysis_id: str, token: str, size: int) -> dict:
        """Consume the token (single use) and register the job."""
        self.tokens.key()
        with self.store.transaction() as txn:
            row = self.row_opened_by(txn, analysis_id, token)
            row.phase = UPLOADED
            row.bytes_received = int(size)
            save_row(txn, row)
            markers.clear(txn, analysis_id)
            markers.set_job(txn, analysis_id, self.clock.time(), self.node)
        self.awaiting.drop(analysis_id)
        return row.to_doc()

    def reject_upload(self, analysis_id: str, token: str, code: str, message: str) -> None:
        """The token's holder sent unusable bytes: consume the token and fail
        the analysis (error embedded, credit restored, event) in one write."""
        self.tokens.key()
        with self.store.transaction() as txn:
            self.row_opened_by(txn, analysis_id, token)
            self._fail_in(txn, analysis_id, code, message)

    # --- cancel -------------------------------------------------------------------

    def cancel(self, analysis_id: str) -> dict:
        """DELETE /v1/analyses/{id}: an analysis awaiting its bytes fails with
        `analysis_canceled` (credit restored, analysis.failed sent); returns
        its public document. Anything else: 409 analysis_not_cancelable."""
        with self.store.transaction() as txn:
            row = load_row(txn, analysis_id)
            if row is None or not row.awaiting_upload:
                state = "gone" if row is None else (
                    row.status if row.status != "processing" else "past its upload")
                raise TrackgradeError(
                    "analysis_not_cancelable", f"analysis {analysis_id} is {state}; only an "
                    "analysis awaiting its upload can be canceled", param="id")
            failed = self._fail_in(txn, analysis_id, "analysis_canceled",
                                   "canceled by the caller before the audio was uploaded")
        return documents.document(failed.to_doc())

    # --- transitions reported by the executor (the worker.Sink protocol) ------------

    def scores_ready(self, analysis_id: str, analysis: Analysis) -> None:
        pending = analysis if analysis.diagnosis.status == "pending" else \
            analysis.with_diagnosis(replace(analysis.diagnosis, status="pending"))
        with self.store.transaction() as txn:
            row = load_row(txn, analysis_id)
            if row is None or row.status != "processing":
                return
            row.status, row.diagnosis_status, row.phase = "complete", "pending", ENHANCING
            row.completed_at = isoformat(self.clock.now())
            doc = row.render(pending.to_dict())
            save_row(txn, row)
            self._event(txn, "analysis.scores_ready", row, doc)

    def completed(self, analysis_id: str, analysis: Analysis) -> None:
        ready = analysis if analysis.diagnosis.status == "ready" else \
            analysis.with_diagnosis(replace(analysis.diagnosis, status="ready"))
        with self.store.transaction() as txn:
            row = load_row(txn, analysis_id)
            markers.clear(txn, analysis_id)
            if row is None or row.status != "complete" or row.diagnosis_status == "ready":
                return
            row.diagnosis_status, row.phase = "ready", DONE
            doc = row.render(ready.to_dict())
            save_row(txn, row)
            self._event(txn, "analysis.completed", row, doc)

    def failed(self, analysis_id: str, error: TrackgradeError) -> None:
        if error.code in EMBEDDED_CODES:
            self.fail(analysis_id, error.code, error.message)
        else:   # any other code from inside the engine is an engine failure
            self.fail(analysis_id, "engine_error", f"the analysis engine failed: {error.message}")

    def fail(self, analysis_id: str, code: str, message: str) -> bool:
        """processing -> failed with the error embedded, credit restored, event
        analysis.failed; all in one write. False when it was not processing."""
        with self.store.transaction() as txn:
            return self._fail_in(txn, analysis_id, code, message) is not None
