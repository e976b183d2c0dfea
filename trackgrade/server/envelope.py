"""Every error body of the service, built in ONE place (spec section 7.1).

`error_body` builds the `{"error": {...}}` document; `error_response` turns a
`TrackgradeError` into a Flask response with its headers; `install` routes
every failure through them: our own `TrackgradeError`s, Werkzeug's HTTP
exceptions (404 route_not_found, 405 method_not_allowed with `Allow`, 413
request_too_large, 400 invalid_json...) and unexpected exceptions (500
api_error, logged with the request id, never the body; a StoreError is a
503 service_unavailable with Retry-After). waitress's own
framing errors use `error_body` too (see `serve.py`).
"""

from __future__ import annotations

import json
import logging
import secrets

from flask import Flask, Response, g, request
from werkzeug.exceptions import HTTPException

from trackgrade.errors import ERROR_CODES, TrackgradeError
from trackgrade.server import reference, routing

log = logging.getLogger("trackgrade.server")

# Werkzeug/Flask HTTP status -> (our code, message)
_HTTP_CODES: dict[int, tuple[str, str]] = {
    400: ("parameter_invalid", "the request could not be understood"),
    404: ("route_not_found", "no such route; see /v1/openapi.json"),
    405: ("method_not_allowed", "method not allowed on this route"),
    413: ("request_too_large", "the request body is too large"),
    414: ("request_too_large", "the request URI is too long"),
    431: ("request_too_large", "the request headers are too large"),
}


def new_request_id() -> str:
    return "req_" + secrets.token_hex(12)


def error_body(code: str, message: str, *, request_id: str, docs_url: str | None,
               param: str | None = None) -> dict:
    """The spec 7.1 envelope: type from ERROR_CODES, doc_url `{docs_url}/<code>`
    (`docs_url`: the error reference's absolute URL, trackgrade.server.reference)."""
    _status, kind = ERROR_CODES[code]
    return {"error": {
        "type": kind,
        "code": code,
        "message": message,
        "param": param,
        "doc_url": reference.doc_url(code, docs_url),
        "request_id": request_id,
    }}


def json_response(body: dict, status: int, headers: dict[str, str] | None = None) -> Response:
    data = json.dumps(body, separators=(",", ":"), ensure_ascii=False)
    return Response(data, status=status, headers=headers or {},
                    content_type="application/json")


def raw_json_response(data: bytes, status: int, headers: dict[str, str] | None = None
                      ) -> Response:
    """A response from already-encoded JSON."""
    return Response(data, status=status, headers=headers or {}, content_type="application/json")


def error_response(err: TrackgradeError) -> Response:
    """A TrackgradeError as a response of the current request."""
    body = error_body(err.code, err.message, param=err.param,
                      request_id=current_request_id(), docs_url=_docs_url())
    return json_response(body, err.http_status, err.headers)


def current_request_id() -> str:
    rid = g.get("request_id")
    if rid is None:
        rid = g.request_id = new_request_id()
    return rid


def _docs_url() -> str | None:
    from flask import current_app
    root = current_app.config.get("TRACKGRADE_DOCS_URL")
    return root() if callable(root) else root


def http_error(exc: HTTPException) -> TrackgradeError:
    """A Werkzeug HTTP exception as our error (Allow kept on 405)."""
    status = exc.code or 500
    code, message = _HTTP_CODES.get(status, ("api_error", "unexpected server error"))
    if status >= 500:
        code = "service_unavailable" if status == 503 else "api_error"
    if status == 405:
        return routing.method_not_allowed(request.method, getattr(exc, "valid_methods", None))
    if status == 404:
        return routing.route_not_found(request.path)
    return TrackgradeError(code, message)


def store_unavailable(exc: Exception | None, retry_after: int) -> TrackgradeError:
    """A store that cannot be read or written (disk full, damaged files,
    PostgreSQL down or restarting): 503 with Retry-After, never a 500."""
    return TrackgradeError("service_unavailable", "the service's storage is unavailable; "
                           "retry later with the same Idempotency-Key",
                           headers={"Retry-After": str(max(1, int(retry_after)))})


def install(app: Flask, docs_url, retry_after: int = 30) -> None:
    """Register the handlers and the X-Request-Id stamp on `app`; `docs_url`
    is the error reference's URL or a function of the current request giving it."""
    from trackgrade.server.store import StoreError

    app.config["TRACKGRADE_DOCS_URL"] = docs_url

    @app.errorhandler(StoreError)
    def _store(exc: StoreError):
        log.warning("store unavailable in %s %s (request %s): %s", request.method,
                    request.path, current_request_id(), exc)
        return error_response(store_unavailable(exc, retry_after))

    @app.errorhandler(TrackgradeError)
    def _ours(err: TrackgradeError):
        return error_response(err)

    @app.errorhandler(HTTPException)
    def _http(exc: HTTPException):
        return error_response(http_error(exc))

    @app.errorhandler(Exception)
    def _unexpected(exc: Exception):
        log.exception("unexpected error in %s %s (request %s)",
                      request.method, request.path, current_request_id())
        return error_response(TrackgradeError(
            "api_error", "unexpected server error; retry with the same Idempotency-Key"))

    @app.after_request
    def _stamp(response: Response) -> Response:
        response.headers["X-Request-Id"] = current_request_id()
        return response
