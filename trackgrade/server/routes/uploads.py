"""The upload step (spec 4.7): POST {upload_url} with the bearer upload token
and the bytes in the multipart field announced in `upload.field`.

The bytes stay in memory from the socket to the worker: waitress buffers the
body in memory (`inbuf_overflow` above the largest body, serve.py), the form
parser writes file parts to a BytesIO (`InMemoryRequest`), and the job hands
the bytes to the worker process through the pool's pipe.

Attempts that leave the token valid (nothing changes; retry within the
token window): 401 `upload_token_invalid` for a bad, expired or used token,
503 `engine_at_capacity` when the engine queue is full, 400
`upload_incomplete` for a malformed attempt (not multipart/form-data, no
`file` part, broken multipart, an empty file). A verdict on the file itself
fails the analysis with the error embedded and the credit restored:
`file_too_large` (the limit of the format the submitted `file_name`
declares, spec section 8, checked from the size before any sniffing),
`file_rejected`, `unprocessable_audio` (header checks: the engine's `probe`).
"""

from __future__ import annotations

import threading

from flask import Blueprint, request
from werkzeug.exceptions import HTTPException

from trackgrade.errors import TrackgradeError
from trackgrade.server.auth import bearer
from trackgrade.server.envelope import json_response
from trackgrade.server.lifecycle import UPLOAD_FIELD
from trackgrade.server.lifecycle.tokens import token_invalid
from trackgrade.server.routes.common import is_uuid
from trackgrade.server.worker import Job

MULTIPART_OVERHEAD = 64 * 1024
# the codes a `_fail_<code>` test-mode file name fails with at the upload step
UPLOAD_STEP_CODES = ("upload_incomplete", "file_rejected", "unprocessable_audio")


class MalformedUpload(TrackgradeError):
    """An attempt that carried no usable file (400 `upload_incomplete`): the
    token stays valid and nothing changes."""

    def __init__(self, message: str) -> None:
        super().__init__("upload_incomplete", message, param=UPLOAD_FIELD)


def check_upload_size(size: int, file_name: str | None, max_bytes: int, *,
                      overhead: int = 0) -> None:
    """413 `file_too_large` over the server's limit or the declared format's
    (spec section 8; None: not known yet), from a size alone: nothing is sniffed."""
    from trackgrade.engine.decode import check_declared_size

    if size > max_bytes + overhead:
        raise TrackgradeError("file_too_large", f"the upload is {size} bytes; files may be at "
                              f"most {max_bytes} bytes")
    if file_name is not None:
        check_declared_size(max(0, size - overhead), file_name)


def read_upload(max_bytes: int, file_name: str) -> bytes:
    """The bytes of the announced multipart field, or 400/413."""
    length = request.content_length
    if length is not None:
        check_upload_size(length, file_name, max_bytes, overhead=MULTIPART_OVERHEAD)
    if request.mimetype != "multipart/form-data":
        raise MalformedUpload("send the bytes as multipart/form-data in the field "
                              f"{UPLOAD_FIELD!r}")
    try:
        part = request.files.get(UPLOAD_FIELD)
    except HTTPException as exc:     # e.g. too many parts
        raise MalformedUpload(f"the multipart form could not be read "
                              f"({exc.description})") from None
    if part is None:
        raise MalformedUpload(f"the multipart file part {UPLOAD_FIELD!r} is missing or the "
                              "form is incomplete (send it as a file part, e.g. curl -F "
                              f"{UPLOAD_FIELD}=@track.wav)")
    data = part.stream.getvalue()        # BytesIO shares its buffer here: no copy
    part.stream.close()
    release_body()
    if not data:
        raise MalformedUpload(f"the file part {UPLOAD_FIELD!r} is empty; send the audio bytes")
    check_upload_size(len(data), file_name, max_bytes)
    return data


def release_body() -> None:
    """Free waitress's in-memory copy of the whole request body now that the
    form is parsed (`wsgi.input` is waitress's BytesIO), instead of when the
    request ends: otherwise it lives on beside the parsed bytes and the copy
    pickled to the worker (a 200 MiB WAV: 3.2x the file at the peak before,
    2.2x now; benchmarks/results/conn.md)."""
    stream = request.environ.get("wsgi.input")
    if stream is not None and hasattr(stream, "close"):
        stream.close()


def check_audio(data: bytes, file_name: str, max_bytes: int) -> None:
    """Header-level checks (no decoding): format, size, codec, duration."""
    from trackgrade.engine.decode import probe

    if len(data) > max_bytes:
        raise TrackgradeError("file_too_large", f"the file is {len(data)} bytes; files may be "
                              f"at most {max_bytes} bytes")
    probe(data, file_name=file_name)


def check_test_upload(data: bytes, file_name: str, max_bytes: int) -> None:
    """Test mode: the bytes are never decoded; `_fail_<code>` names fail here
    for the codes the live upload step answers itself."""
    from trackgrade import testmode

    if len(data) > max_bytes:
        raise TrackgradeError("file_too_large", f"the file is {len(data)} bytes; files may be "
                              f"at most {max_bytes} bytes")
    code = testmode.failure_code(file_name)
    if code in UPLOAD_STEP_CODES:
        raise TrackgradeError(code, testmode.FAILURE_MESSAGES[code])


def check_room(executor) -> None:
    """503 before the token is spent: the client retries with the same token."""
    if not executor.has_room():
        raise TrackgradeError("engine_at_capacity", "the analysis engine is at capacity; "
                              "retry the upload with the same token shortly",
                              headers={"Retry-After": "5"})


def blueprint(ctx) -> Blueprint:
    bp = Blueprint("uploads", __name__)
    settings = ctx.settings
    submit_lock = threading.Lock()

    @bp.post("/uploads/<analysis_id>")
    def upload(analysis_id: str):
        token = bearer(request.headers.get("Authorization"))
        if not is_uuid(analysis_id):
            raise token_invalid()
        row = ctx.lifecycle.upload_row(analysis_id, token)
        livemode = bool(row["livemode"])
        executor = ctx.executor_for(livemode)
        check_room(executor)
        try:
            data = read_upload(settings.max_upload_bytes, row["file_name"])
            if livemode:
                check_audio(data, row["file_name"], settings.max_upload_bytes)
            else:
                check_test_upload(data, row["file_name"], settings.max_upload_bytes)
        except TrackgradeError as err:
            # only the holder of a valid token gets here: a malformed attempt leaves
            # the token valid; a verdict on the file fails the analysis for good
            if not isinstance(err, MalformedUpload):
                ctx.lifecycle.reject_upload(analysis_id, token, err.code, err.message)
            raise
        with submit_lock:           # room, token and job: one step for concurrent uploads
            check_room(executor)
            ctx.lifecycle.accept_upload(analysis_id, token, len(data))
            job = Job(analysis_id=analysis_id, file_name=row["file_name"],
                      mastering_status=row["mastering_status"], genre=row.get("genre"),
                      codec_preview=bool(row.get("codec_preview", False)), data=data,
                      test_mode=not livemode)
            try:
                executor.submit(job, ctx.lifecycle)
            except TrackgradeError as err:
                ctx.lifecycle.fail(analysis_id, "engine_error", err.message)
                raise
        size = len(data)
        del data, job
        return json_response({"object": "upload", "analysis_id": analysis_id,
                              "status": "processing", "bytes_received": size}, 200)

    return bp
