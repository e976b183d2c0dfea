"""The analysis state machine over the store (spec section 3).

Each transition is ONE store transaction that changes the analysis row, the
account's credits and writes the outbox events it causes, so a crash can
never separate them:

    create          (none) -> processing/pending; 1 credit spent (credit-billed
                    live keys); upload token issued; idempotency record stored
    accept_upload   the single-use token consumed; the job is registered
    scores_ready    processing -> complete/pending; event analysis.scores_ready
    completed       complete/pending -> complete/ready; event analysis.completed
    fail            processing -> failed; error embedded; credit restored;
                    event analysis.failed

Two small bookkeeping documents in the "settings" collection make restarts
cheap (no scan of the analyses): "server.jobs" lists the analyses whose bytes
were accepted but whose work is not finished (lost in a crash: they fail with
`engine_error`, credit restored, on the next start, or get their narrative
if scores had landed), "server.uploads" maps analyses awaiting their upload
to the token expiry (the sweeper fails them with `upload_incomplete`).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
import threading
import uuid
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import Callable

from trackgrade.display import plural
from trackgrade.errors import TrackgradeError
from trackgrade.model import Analysis
from trackgrade.server import accounts, documents, queries
from trackgrade.server.envelope import error_body
from trackgrade.server.clock import Clock, isoformat, utc_day_start
from trackgrade.server.store import Store, Txn, new_event

log = logging.getLogger("trackgrade.server.lifecycle")

UPLOAD_FIELD = "file"
JOBS = "server.job:"          # + analysis id: bytes accepted, work not finished
UPLOADS = "server.upload:"    # + analysis id: waiting for its bytes until "at"
PURGE_BATCH = 500
SWEEP_BATCH = 50
# the codes a failed analysis embeds (spec 7.2, plus the size limit at upload)
EMBEDDED_CODES = ("upload_incomplete", "file_rejected", "file_too_large",
                  "unprocessable_audio", "engine_error")


@dataclass(frozen=True)
class Caller:
    """Who is calling: the authenticated key and its account."""
    key_id: str
    account_id: str
    livemode: bool
    credit_billed: bool
    per_minute: int
    in_flight: int
    daily: int | None


@dataclass(frozen=True)
class Submission:
    file_name: str
    mastering_status: str
    external_id: str | None
    genre: str | None = None         # grade against this profile (a key of GET /genres)


@dataclass(frozen=True)
class Outcome:
    """A finished POST /analyses: what to answer (and, when stored, replay)."""
    status: int
    body: dict
    headers: dict


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class Lifecycle:
    def __init__(self, store: Store, clock: Clock, *, docs_url: str | None,
                 upload_ttl: int, idempotency_ttl: int, node: str = "") -> None:
        self.store = store
        # the name this server's job markers carry: on a shared store (several
        # nodes on one database) a restart recovers only its own node's work
        self.node = node
        self.shared = bool(getattr(store, "shared", False))
        self.clock = clock
        self.docs_url = docs_url
        self.upload_ttl = int(upload_ttl)
        self.idempotency_ttl = int(idempotency_ttl)
        # one create at a time in this process: the embedded stores serialise
        # transactions anyway; PostgreSQL's row locks serialise what must be
        # (per key and idempotency key), so creates of other keys run in parallel
        self._create_lock = nullcontext() if self.shared else threading.Lock()
        # analysis id -> upload deadline: a mirror of the UPLOADS markers (only
        # this process creates uploads), so sweeping never scans the store;
        # on a shared store other nodes create and accept uploads too, so
        # every sweep reads the markers afresh
        self._deadlines: dict[str, float] | None = None
        self._deadline_lock = threading.Lock()
        self.on_event: Callable[[], None] | None = None   # e.g. the webhook dispatcher's kick

    # --- create --------------------------------------------------------------

    def create(self, caller: Caller, sub: Submission, *, idem_id: str, fingerprint: str,
               upload_url: Callable[[str], str]) -> tuple[Outcome | None, dict | None]:
        """Run POST /analyses in one transaction.

        Returns (outcome, replay): `replay` is a stored record to answer
        instead; errors that must not be stored (429) raise. The stored
        response is the whole body except the upload token (tokens are only
        hashes at rest): a replay carries a fresh token (`replayed`), so a
        client that lost the first answer can still upload."""
        from trackgrade.server import idempotency

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
            token = "upt_" + secrets.token_urlsafe(24)
            row = self._new_row(caller, sub, now, token)
            row["credit_spent"] = caller.credit_billed
            documents.render(row)
            txn.put("analyses", row)
            self._edit_set(txn, UPLOADS, row["id"], row["upload_expires_at"])
            body = self._accepted_body(row, remaining, upload_url(row["id"]), token)
            headers = {"X-Credits-Remaining": str(remaining)} if remaining is not None else {}
            outcome = Outcome(202, body, headers)
            self._remember(txn, idem_id, fingerprint, outcome, now)
        self._deadline(row["id"], row["upload_expires_at"])
        return outcome, None

    def _check_limits(self, txn: Txn, caller: Caller, now: float) -> None:
        in_flight = queries.count_in_flight(txn, caller.key_id)
        if in_flight >= caller.in_flight:
            raise TrackgradeError(
                "too_many_in_flight", f"this key already has {plural(in_flight, 'analysis', 'analyses')} in flight "
                f"(limit {caller.in_flight}); wait for one to complete",
                headers={"Retry-After": "5"})
        if caller.daily is not None:
            day = utc_day_start(self.clock.now())
            used = queries.count_analyses_since(txn, caller.key_id, isoformat(day))
            if used >= caller.daily:
                reset = int(day.timestamp()) + 86400
                raise TrackgradeError(
                    "daily_quota_exceeded", f"this key has used its {plural(caller.daily, 'analysis', 'analyses')} "
                    f"for today (UTC)", headers={"Retry-After": str(max(1, int(reset - now)))})

    def _new_row(self, caller: Caller, sub: Submission, now: float, token: str) -> dict:
        return {
            "id": str(uuid.uuid4()), "account_id": caller.account_id, "key_id": caller.key_id,
            "livemode": caller.livemode, "created_at": isoformat(self.clock.now()),
            "status": "processing", "diagnosis_status": "pending",
            "external_id": sub.external_id, "file_name": sub.file_name,
            "mastering_status": sub.mastering_status, "genre": sub.genre, "completed_at": None,
            "phase": "awaiting_upload", "upload_token_hash": token_hash(token),
            "upload_expires_at": now + self.upload_ttl, "credit_spent": False,
            "embed": False, "error": None,
        }

    def _accepted_body(self, row: dict, remaining: int | None, url: str, token: str) -> dict:
        body = {"object": "analysis", "id": row["id"], "status": "processing",
                "diagnosis_status": "pending", "livemode": row["livemode"],
                "external_id": row["external_id"]}
        if remaining is not None:
            body["credits_remaining"] = remaining
        body["upload"] = {"url": url, "method": "POST", "field": UPLOAD_FIELD, "token": token,
                          "expires_in": self.upload_ttl}
        return body

    def _remember(self, txn: Txn, idem_id: str, fingerprint: str, outcome: Outcome,
                  now: float) -> None:
        """Store the response for replay within the idempotency window (the
        upload token left out: `replayed` issues a fresh one)."""
        body = outcome.body
        if "upload" in body:
            body = {**body, "upload": {**body["upload"], "token": ""}}
        txn.put("idempotency", {"id": idem_id, "fingerprint": fingerprint,
                                "status": outcome.status, "body": body,
                                "headers": outcome.headers, "created": now,
                                "expires_at": now + self.idempotency_ttl})

    def replayed(self, record: dict) -> dict:
        """A stored record ready to answer again: while its analysis still
        awaits the bytes, a fresh upload token replaces the previous one (which
        stops working); afterwards the token is empty (nothing left to upload)."""
        upload = record["body"].get("upload")
        if upload is None:
            return record
        token = "upt_" + secrets.token_urlsafe(24)
        with self.store.transaction() as txn:
            row = txn.get("analyses", record["body"]["id"])
            if row is not None and row.get("phase") == "awaiting_upload" \
                    and row.get("status") == "processing" \
                    and self.clock.time() < float(row.get("upload_expires_at", 0)):
                row["upload_token_hash"] = token_hash(token)
                txn.put("analyses", row)
            else:
                token = ""
        return {**record, "body": {**record["body"], "upload": {**upload, "token": token}}}

    # --- upload ------------------------------------------------------------------

    def upload_row(self, analysis_id: str, token: str | None) -> dict:
        """The analysis a valid, unused, unexpired upload token opens; else 401."""
        row = self.store.get("analyses", analysis_id) if token else None
        if not self._token_opens(row, token):
            raise TrackgradeError("upload_token_invalid", "the upload token is missing, invalid, "
                                  "expired or already used; submit the analysis again")
        return row

    def _token_opens(self, row: dict | None, token: str | None) -> bool:
        return bool(row and token and row.get("phase") == "awaiting_upload"
                    and row.get("status") == "processing"
                    and hmac.compare_digest(row.get("upload_token_hash", ""), token_hash(token))
                    and self.clock.time() < float(row.get("upload_expires_at", 0)))

    def accept_upload(self, analysis_id: str, token: str, size: int) -> dict:
        """Consume the token (single use) and register the job."""
        with self.store.transaction() as txn:
            row = txn.get("analyses", analysis_id)
            if not self._token_opens(row, token):
                raise TrackgradeError("upload_token_invalid", "the upload token was already "
                                      "used or has expired")
            row["phase"] = "uploaded"
            row["bytes_received"] = int(size)
            row["upload_token_hash"] = ""
            txn.put("analyses", row)
            self._edit_set(txn, UPLOADS, analysis_id, None)
            txn.put("settings", {"id": JOBS + analysis_id, "analysis_id": analysis_id,
                                 "at": self.clock.time(), "node": self.node})
        self._deadline(analysis_id, None)
        return row

    def reject_upload(self, analysis_id: str, token: str, code: str, message: str) -> None:
        """The token's holder sent unusable bytes: consume the token and fail
        the analysis (error embedded, credit restored, event) in one write."""
        with self.store.transaction() as txn:
            if not self._token_opens(txn.get("analyses", analysis_id), token):
                raise TrackgradeError("upload_token_invalid", "the upload token was already "
                                      "used or has expired")
            self._fail_in(txn, analysis_id, code, message)
        self._deadline(analysis_id, None)

    # --- transitions reported by the executor (the worker.Sink protocol) ------------

    def scores_ready(self, analysis_id: str, analysis: Analysis) -> None:
        pending = analysis if analysis.diagnosis.status == "pending" else \
            analysis.with_diagnosis(replace(analysis.diagnosis, status="pending"))
        with self.store.transaction() as txn:
            row = txn.get("analyses", analysis_id)
            if row is None or row["status"] != "processing":
                return
            row.update(status="complete", diagnosis_status="pending", phase="enhancing",
                       completed_at=isoformat(self.clock.now()))
            doc = documents.render(row, pending.to_dict())
            txn.put("analyses", row)
            self._event(txn, "analysis.scores_ready", row, doc)

    def completed(self, analysis_id: str, analysis: Analysis) -> None:
        ready = analysis if analysis.diagnosis.status == "ready" else \
            analysis.with_diagnosis(replace(analysis.diagnosis, status="ready"))
        with self.store.transaction() as txn:
            row = txn.get("analyses", analysis_id)
            if row is None or row["status"] != "complete" or row["diagnosis_status"] == "ready":
                self._edit_set(txn, JOBS, analysis_id, None)
                return
            row.update(diagnosis_status="ready", phase="done")
            doc = documents.render(row, ready.to_dict())
            txn.put("analyses", row)
            self._edit_set(txn, JOBS, analysis_id, None)
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
            changed = self._fail_in(txn, analysis_id, code, message)
        self._deadline(analysis_id, None)
        return changed

    def _fail_in(self, txn: Txn, analysis_id: str, code: str, message: str) -> bool:
        row = txn.get("analyses", analysis_id)
        self._edit_set(txn, UPLOADS, analysis_id, None)
        self._edit_set(txn, JOBS, analysis_id, None)
        if row is None or row["status"] != "processing":
            return False
        row.update(status="failed", phase="done", upload_token_hash="",
                   completed_at=isoformat(self.clock.now()),
                   error=documents.embedded_error(code, message, self.docs_url))
        if row.get("credit_spent"):
            if txn.get("accounts", row["account_id"]) is not None:
                accounts.restore_credit(txn, row["account_id"], clock=self.clock)
            row["credit_spent"] = False
            row["credit_restored"] = True
        documents.render(row)
        txn.put("analyses", row)
        self._event(txn, "analysis.failed", row, documents.failed_event_data(row))
        return True

    def _event(self, txn: Txn, event_type: str, row: dict, data: dict) -> None:
        txn.put("events", new_event(event_type, data, account_id=row["account_id"],
                                    livemode=row["livemode"], created=self.clock.time()))
        if self.on_event is not None:       # the dispatcher reads once this commits
            self.on_event()

    # --- bookkeeping, recovery, sweeping ---------------------------------------------

    @staticmethod
    def _edit_set(txn: Txn, prefix: str, analysis_id: str, value) -> None:
        """One small marker document per analysis (never a growing list)."""
        doc_id = prefix + analysis_id
        if value is None:
            if txn.get("settings", doc_id) is not None:
                txn.delete("settings", doc_id)
        else:
            txn.put("settings", {"id": doc_id, "analysis_id": analysis_id, "at": value})

    def _members(self, prefix: str, *, own: bool = False) -> dict:
        """Markers by analysis id; `own`: on a shared store only this node's."""
        return {doc["analysis_id"]: doc["at"] for doc in self.store.scan("settings")
                if doc["id"].startswith(prefix)
                and not (own and self.shared and doc.get("node", "") != self.node)}

    def recover(self) -> list[str]:
        """At start: work lost with the previous process. Uploaded analyses
        without scores fail (`engine_error`, credit restored); those with
        scores get their narrative marked ready. On a shared store only the
        analyses this node was computing: other nodes' work goes on. Returns
        the ids touched."""
        touched = []
        for analysis_id in self._members(JOBS, own=True):
            with self.store.transaction() as txn:
                row = txn.get("analyses", analysis_id)
                if row is not None and row["status"] == "complete":
                    self._edit_set(txn, JOBS, analysis_id, None)
                    if row["diagnosis_status"] != "ready":
                        result = documents.result_of(row) or {}
                        diagnosis = dict(result.get("diagnosis") or {}, status="ready")
                        result.update(diagnosis=diagnosis, diagnosis_status="ready")
                        row.update(diagnosis_status="ready", phase="done")
                        doc = documents.render(row, result)
                        txn.put("analyses", row)
                        self._event(txn, "analysis.completed", row, doc)
                else:
                    self._fail_in(txn, analysis_id, "engine_error", "the server restarted "
                                  "while analysing; the audio was not kept, submit it again")
            touched.append(analysis_id)
        return touched

    def sweep(self) -> list[str]:
        """Fail analyses whose upload token expired before the bytes came
        (a batch per transaction); drop idempotency records past their
        window. Returns the failed ids."""
        now = self.clock.time()
        with self._deadline_lock:
            if self.shared:
                self._deadlines = None
            deadlines = self._loaded_deadlines()
            expired = sorted(aid for aid, until in deadlines.items() if float(until) <= now)
        for start in range(0, len(expired), SWEEP_BATCH):
            batch = expired[start:start + SWEEP_BATCH]
            with self.store.transaction() as txn:
                for analysis_id in batch:
                    row = txn.get("analyses", analysis_id)
                    if row is not None and row.get("phase") not in (None, "awaiting_upload"):
                        continue        # accepted meanwhile (another node): it is computing
                    self._fail_in(txn, analysis_id, "upload_incomplete", "the upload never "
                                  "completed before the upload token expired; submit the "
                                  "analysis again")
            for analysis_id in batch:
                self._deadline(analysis_id, None)
        self.purge_idempotency(now)
        return expired

    def _loaded_deadlines(self) -> dict[str, float]:
        if self._deadlines is None:
            self._deadlines = {aid: float(at) for aid, at in self._members(UPLOADS).items()}
        return self._deadlines

    def _deadline(self, analysis_id: str, until: float | None) -> None:
        with self._deadline_lock:
            deadlines = self._loaded_deadlines()
            if until is None:
                deadlines.pop(analysis_id, None)
            else:
                deadlines[analysis_id] = float(until)

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
