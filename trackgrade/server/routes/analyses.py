"""POST /analyses, GET /analyses, GET /analyses/{id}, GET /analyses/{id}/status
(spec 4.1-4.4), DELETE /analyses/{id} (cancel, CONTRACT.md 5)."""

from __future__ import annotations

import json

from flask import Blueprint, request

from trackgrade.display import has_controls
from trackgrade.errors import TrackgradeError
from trackgrade.grading.limits import MASTERING_STATUSES
from trackgrade.grading.targets import check_genre
from trackgrade.server import documents, idempotency, queries
from trackgrade.server.envelope import current_request_id, json_response, raw_json_response
from trackgrade.server.lifecycle import Caller, Submission
from trackgrade.server.routes.common import (
    authenticated, base_url, is_uuid, read_json_object, reject_unknown, reject_unknown_query,
    single_query,
)

BODY_FIELDS = ("file_name", "mastering_status", "external_id", "genre", "codec_preview")
MAX_NAME = 255
MAX_EXTERNAL_ID = 255
# Extensions of formats the service certainly cannot take; anything else
# (including no extension) is left to sniffing the bytes at upload.
UNSUPPORTED_EXTENSIONS = frozenset({
    "ogg", "oga", "opus", "spx", "m4a", "m4b", "mp4", "m4v", "aac", "adts", "wma", "asf",
    "webm", "mka", "mkv", "mov", "qt", "3gp", "caf", "au", "snd", "amr", "wv", "ape", "tta",
    "mpc", "dsf", "dff", "mid", "midi", "alac", "ac3", "dts", "ra", "rm", "avi", "flv",
    "pdf", "png", "jpg", "jpeg", "gif", "zip", "gz", "rar", "7z", "txt", "doc", "docx",
    "exe", "html", "json", "xml",
})


def unsupported_extension(file_name: str) -> str | None:
    """The refused extension `file_name` ends with (".ogg", any case), or None;
    the OpenAPI document states the same rule as a pattern."""
    stem, dot, extension = file_name.rpartition(".")
    return extension.lower() if dot and extension.lower() in UNSUPPORTED_EXTENSIONS else None


def parse_submission(body: dict) -> Submission:
    """Validate the POST /analyses body (400 with `param` naming the field)."""
    reject_unknown(body, BODY_FIELDS)
    if "file_name" not in body or body["file_name"] is None:
        raise TrackgradeError("parameter_missing", "file_name is required", param="file_name")
    file_name = body["file_name"]
    if not isinstance(file_name, str) or not file_name.strip():
        raise TrackgradeError("parameter_invalid", "file_name must be a non-empty string",
                              param="file_name")
    if len(file_name) > MAX_NAME:
        raise TrackgradeError("parameter_invalid", f"file_name may be at most {MAX_NAME} "
                              f"characters (given {len(file_name)})", param="file_name")
    if has_controls(file_name):
        raise TrackgradeError("parameter_invalid", "file_name contains control characters "
                              "(escape sequences, newlines, bidirectional overrides...)",
                              param="file_name")
    extension = unsupported_extension(file_name)
    if extension is not None:
        raise TrackgradeError("parameter_invalid", f"{extension.upper()} files are not accepted; "
                              "send WAV, MP3, AIFF or FLAC", param="file_name")
    mastering = body.get("mastering_status", "pre-master")
    if mastering not in MASTERING_STATUSES:
        raise TrackgradeError("parameter_invalid", "mastering_status must be one of "
                              + ", ".join(MASTERING_STATUSES), param="mastering_status")
    external_id = body.get("external_id")
    if external_id is not None:
        if not isinstance(external_id, str):
            raise TrackgradeError("parameter_invalid", "external_id must be a string or null",
                                  param="external_id")
        if len(external_id) > MAX_EXTERNAL_ID:
            raise TrackgradeError("parameter_invalid", f"external_id may be at most "
                                  f"{MAX_EXTERNAL_ID} characters (given {len(external_id)})",
                                  param="external_id")
        if has_controls(external_id):
            raise TrackgradeError("parameter_invalid", "external_id contains control characters "
                                  "(escape sequences, newlines, bidirectional overrides...)",
                                  param="external_id")
    genre = body.get("genre")
    if genre is not None:
        check_genre(genre)
    codec_preview = body.get("codec_preview", False)
    if not isinstance(codec_preview, bool):
        raise TrackgradeError("parameter_invalid", "codec_preview must be true or false",
                              param="codec_preview")
    return Submission(file_name=file_name, mastering_status=mastering, external_id=external_id,
                      genre=genre, codec_preview=codec_preview)


def parse_limit(raw: str | None) -> int:
    if raw is None:
        return 20
    if not raw.isdigit() or not 1 <= int(raw) <= 100:
        raise TrackgradeError("parameter_invalid", f"limit must be an integer from 1 to 100 "
                              f"(given {raw!r})", param="limit")
    return int(raw)


def list_page(store, caller: Caller, limit: int, after: str | None,
              before: str | None) -> tuple[list[dict], bool]:
    """One page of the key's analyses, newest first: older than `after`, newer
    than `before` (both: the window between them). A cursor that is not in the
    key's list is 404 `not_found`, like an unknown id."""
    def page(**cursor) -> tuple[list[dict], bool]:
        try:
            return queries.list_analyses(store, caller.account_id, caller.livemode, limit,
                                         key_id=caller.key_id, **cursor)
        except TrackgradeError as err:
            if err.param not in ("starting_after", "ending_before"):
                raise
            raise TrackgradeError("not_found", f"no analysis {cursor[err.param]!r} is in this "
                                  "key's list", param=err.param) from None

    if after is None or before is None:
        return page(starting_after=after, ending_before=before)
    page(ending_before=before)                              # 404 unless it is in the list
    bound = store.get("analyses", before)
    rows, has_more = page(starting_after=after)
    kept = [r for r in rows if (r["created_at"], r["id"]) > (bound["created_at"], bound["id"])]
    return kept, has_more and len(kept) == len(rows)


def blueprint(ctx) -> Blueprint:
    bp = Blueprint("analyses", __name__)
    settings = ctx.settings

    def visible_row(caller: Caller, analysis_id: str) -> dict:
        row = ctx.store.get("analyses", analysis_id) if is_uuid(analysis_id) else None
        if row is None or row["account_id"] != caller.account_id \
                or bool(row["livemode"]) != caller.livemode:
            raise TrackgradeError("not_found", f"no analysis {analysis_id!r} is visible to this "
                                  "key", param="id")
        return row

    def stored_response(status: int, body: dict, headers: dict, replayed: bool):
        if "error" in body:  # a stored 402: the envelope names this request
            body = {"error": {**body["error"], "request_id": current_request_id()}}
        headers = dict(headers)
        if replayed:
            headers["Idempotent-Replayed"] = "true"
        return json_response(body, status, headers)

    def replay_response(record: dict):
        record = ctx.lifecycle.replayed(record)
        return stored_response(int(record["status"]), record["body"],
                               record.get("headers") or {}, True)

    @bp.post("/analyses")
    @authenticated(ctx)
    def create_analysis(caller: Caller):
        key = idempotency.parse_key(request.headers.get(idempotency.HEADER))
        body = read_json_object(settings.max_json_bytes)
        submission = parse_submission(body)
        fp = idempotency.fingerprint("POST", request.path, body)
        idem_id = idempotency.scope(caller.key_id, key)
        now = ctx.clock.time()
        stored = idempotency.check_replay(ctx.store.get("idempotency", idem_id), fp, now,
                                          settings.idempotency_ttl)
        if stored is not None:
            return replay_response(stored)
        executor = ctx.executor_for(caller.livemode)
        if not executor.has_room():
            raise TrackgradeError("engine_at_capacity", "the analysis engine is at capacity; "
                                  "retry with exponential backoff",
                                  headers={"Retry-After": "5"})
        root = base_url(ctx)
        with ctx.idempotency.claim(idem_id, fp):
            outcome, replay = ctx.lifecycle.create(
                caller, submission, idem_id=idem_id, fingerprint=fp,
                upload_url=lambda analysis_id: f"{root}/v1/uploads/{analysis_id}")
        if replay is not None:
            return replay_response(replay)
        return stored_response(outcome.status, outcome.body, outcome.headers, False)

    @bp.get("/analyses")
    @authenticated(ctx)
    def list_analyses(caller: Caller):
        reject_unknown_query(("limit", "starting_after", "ending_before"))
        limit = parse_limit(single_query("limit"))
        after, before = single_query("starting_after"), single_query("ending_before")
        for name, value in (("starting_after", after), ("ending_before", before)):
            if value is not None and not is_uuid(value):
                raise TrackgradeError("parameter_invalid", f"{name} must be an analysis id",
                                      param=name)
        rows, has_more = list_page(ctx.store, caller, limit, after, before)
        cursor = json.dumps(rows[-1]["id"] if has_more and rows else None)
        body = b"".join((b'{"object":"list","data":[',
                         ",".join(documents.document_text(row) for row in rows).encode(),
                         b'],"has_more":', b"true" if has_more else b"false",
                         b',"next_cursor":', cursor.encode(), b"}"))
        return raw_json_response(body, 200)

    @bp.get("/analyses/<analysis_id>")
    @authenticated(ctx)
    def get_analysis(caller: Caller, analysis_id: str):
        reject_unknown_query(())
        return raw_json_response(
            documents.document_text(visible_row(caller, analysis_id)).encode(), 200)

    @bp.delete("/analyses/<analysis_id>")
    @authenticated(ctx)
    def cancel_analysis(caller: Caller, analysis_id: str):
        """Cancel an analysis awaiting its bytes (CONTRACT.md 5): 200 with it,
        now failed `analysis_canceled`; 409 `analysis_not_cancelable` after."""
        reject_unknown_query(())
        visible_row(caller, analysis_id)
        return json_response(ctx.lifecycle.cancel(analysis_id), 200)

    @bp.get("/analyses/<analysis_id>/status")
    @authenticated(ctx)
    def get_status(caller: Caller, analysis_id: str):
        reject_unknown_query(())
        return json_response(documents.status_document(visible_row(caller, analysis_id)), 200)

    return bp
