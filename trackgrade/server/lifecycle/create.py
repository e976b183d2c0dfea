"""POST /analyses as one transaction: limits, the credit, the row, its
upload marker and the idempotency record, written together; and the replay
of a stored record (byte for byte: the derived token is the original one)."""

from __future__ import annotations

import uuid
from typing import Callable

from trackgrade.display import plural
from trackgrade.errors import TrackgradeError
from trackgrade.server import accounts, idempotency, queries
from trackgrade.server.clock import isoformat, utc_day_start
from trackgrade.server.envelope import error_body
from trackgrade.server.lifecycle import markers
from trackgrade.server.lifecycle.core import UPLOAD_FIELD, LifecycleCore
from trackgrade.server.lifecycle.rows import AnalysisRow, Caller, Outcome, Submission, load_row, \
    save_row
from trackgrade.server.store import Txn

NAMED_IN_FLIGHT = 10        # ids the too_many_in_flight message names


class Creating(LifecycleCore):
    def create(self, caller: Caller, sub: Submission, *, idem_id: str, fingerprint: str,
               upload_url: Callable[[str], str]) -> tuple[Outcome | None, dict | None]:
        """Run POST /analyses in one transaction.

        Returns (outcome, replay): `replay` is a stored record to answer
        instead (pass it through `replayed`); errors that must not be stored
        (429) raise. The stored response leaves the upload token out (tokens
        are never stored): `replayed` derives it again."""
        self.tokens.key()                    # the secret exists before the transaction
        now = self.clock.time()
        with self._create_lock, self.store.transaction() as txn:
            # claims the key for this transaction: limits are counted and the
            # idempotency record written by one submission of the key at a time,
            # on every node sharing the store
            txn.get("keys", caller.key_id)
            record = txn.get("idempotency", idem_id)
            replay = idempotency.check_replay(record, fingerprint, now, self.idempotency_ttl)
            if replay is not None:
                return None, replay
            self._check_limits(txn, caller, now)
            try:
                remaining = (accounts.spend_credit(txn, caller.account_id, clock=self.clock)
                             ["credits"] if caller.credit_billed else None)
            except TrackgradeError as err:
                if err.code != "insufficient_credits":
                    raise
                body = error_body(err.code, err.message, request_id="",
                                  docs_url=self.docs_url)
                outcome = Outcome(err.http_status, body, {})
                self._remember(txn, idem_id, fingerprint, outcome, now)
                return outcome, None
            row = self._new_row(caller, sub, now)
            row.credit_spent = caller.credit_billed
            row.render()
            save_row(txn, row)
            markers.set_upload(txn, row.id, row.upload_expires_at)
            body = self._accepted_body(row, remaining, upload_url(row.id),
                                       self.tokens.token(row.id))
            headers = {"X-Credits-Remaining": str(remaining)} if remaining is not None else {}
            outcome = Outcome(202, body, headers)
            self._remember(txn, idem_id, fingerprint, outcome, now)
        self.awaiting.note(row)             # committed: its upload may come
        return outcome, None

    def _check_limits(self, txn: Txn, caller: Caller, now: float) -> None:
        in_flight = queries.count_in_flight(txn, caller.key_id)
        if in_flight >= caller.in_flight:
            held = [r["id"] for r in txn.select("analyses.in_flight", (caller.key_id,),
                                                limit=NAMED_IN_FLIGHT)]
            more = f" and {in_flight - len(held)} more" if in_flight > len(held) else ""
            raise TrackgradeError(
                "too_many_in_flight", f"this key already has "
                f"{plural(in_flight, 'analysis', 'analyses')} in flight "
                f"(limit {caller.in_flight}): {', '.join(held)}{more}; wait for one to "
                "complete, or cancel one that awaits its upload (DELETE /v1/analyses/{id})",
                headers={"Retry-After": "5"})
        if caller.daily is not None:
            day = utc_day_start(self.clock.now())
            used = queries.count_analyses_since(txn, caller.key_id, isoformat(day))
            if used >= caller.daily:
                reset = int(day.timestamp()) + 86400
                raise TrackgradeError(
                    "daily_quota_exceeded", f"this key has used its "
                    f"{plural(caller.daily, 'analysis', 'analyses')} "
                    f"for today (UTC)", headers={"Retry-After": str(max(1, int(reset - now)))})

    def _new_row(self, caller: Caller, sub: Submission, now: float) -> AnalysisRow:
        return AnalysisRow(
            id=str(uuid.uuid4()), account_id=caller.account_id, key_id=caller.key_id,
            livemode=caller.livemode, created_at=isoformat(self.clock.now()),
            file_name=sub.file_name, mastering_status=sub.mastering_status,
            external_id=sub.external_id, genre=sub.genre, codec_preview=sub.codec_preview,
            upload_expires_at=now + self.upload_ttl)

    def _accepted_body(self, row: AnalysisRow, remaining: int | None, url: str,
                       token: str) -> dict:
        body = {"object": "analysis", "id": row.id, "status": "processing",
                "diagnosis_status": "pending", "livemode": row.livemode,
                "external_id": row.external_id}
        if remaining is not None:
            body["credits_remaining"] = remaining
        body["upload"] = {"url": url, "method": "POST", "field": UPLOAD_FIELD, "token": token,
                          "expires_in": self.upload_ttl}
        return body

    def _remember(self, txn: Txn, idem_id: str, fingerprint: str, outcome: Outcome,
                  now: float) -> None:
        """Store the response for replay within the idempotency window (the
        upload token left out: `replayed` derives it again)."""
        body = outcome.body
        if "upload" in body:
            body = {**body, "upload": {**body["upload"], "token": ""}}
        txn.put("idempotency", {"id": idem_id, "fingerprint": fingerprint,
                                "status": outcome.status, "body": body,
                                "headers": outcome.headers, "created": now,
                                "expires_at": now + self.idempotency_ttl})

    def replayed(self, record: dict) -> dict:
        """A stored record ready to answer again: the original response byte for
        byte, whatever its analysis did since (CONTRACT.md section 6, Replays):
        the upload token is derived again, the same on every call and every
        node; once used or expired it opens nothing (`row_opened_by`)."""
        upload = record["body"].get("upload")
        if upload is None:
            return record
        token = self.tokens.token(record["body"]["id"])
        return {**record, "body": {**record["body"], "upload": {**upload, "token": token}}}

    def _open_for_upload(self, row: AnalysisRow | None) -> bool:
        return bool(row is not None and row.awaiting_upload
                    and self.clock.time() < float(row.upload_expires_at))

    def _token_opens(self, row: AnalysisRow | None, token: str | None, reader) -> bool:
        """The token is this analysis's, the analysis awaits its bytes, and
        the key that submitted it is not revoked (`reader`: the store or the
        open transaction): revoking a key closes its uploads at once."""
        if not (self._open_for_upload(row) and self.tokens.matches(row.id, token)):
            return False
        key = reader.get("keys", row.key_id)
        return key is not None and not key.get("revoked_at")

    def row_opened_by(self, txn: Txn, analysis_id: str, token: str | None) -> AnalysisRow:
        row = load_row(txn, analysis_id)
        if not self._token_opens(row, token, txn):
            raise TrackgradeError("upload_token_invalid", "the upload token was already "
                                  "used or has expired")
        return row
