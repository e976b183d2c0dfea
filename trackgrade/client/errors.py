"""The client's exceptions and the one status-to-exception mapping.

    APIError                      every failure the client raises: status, code,
    │                             param, message, request_id (+ type, doc_url, headers)
    ├── APIConnectionError        no HTTP answer: refused, reset, timed out (status None)
    ├── WaitTimeoutError          `wait` gave up before the analysis got there (also a
    │                             TimeoutError; status None)
    ├── InvalidRequestError       400, 405, 413, 422 and any other 4xx not below
    │   ├── NotFoundError         404
    │   └── ConflictError         409 (idempotency_key_reused, idempotency_request_in_progress)
    ├── AuthenticationError       401 (invalid_api_key, upload_token_invalid)
    ├── InsufficientCreditsError  402
    ├── PermissionDeniedError     403 (not_eligible)
    ├── RateLimitError            429 (rate_limited, too_many_in_flight, daily_quota_exceeded)
    └── ServerError               500 and any other 5xx
        └── ServiceUnavailableError  503 (service_unavailable, engine_at_capacity)

Match on the class for the kind of failure and on `code` for the exact one
(the codes are the server's stable machine codes, README "Error codes").
"""

from __future__ import annotations

import json
from typing import Any, Mapping

from trackgrade.retry_after import parse_retry_after


class APIError(Exception):
    """A failed call. `status` is the HTTP status (None when no answer came),
    `code` the envelope's machine code, `param` the offending parameter,
    `request_id` the server's X-Request-Id (quote it in bug reports)."""

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None,
                 param: str | None = None, request_id: str | None = None,
                 type: str | None = None, doc_url: str | None = None,
                 headers: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.status = status
        self.code = code
        self.param = param
        self.request_id = request_id
        self.type = type
        self.doc_url = doc_url
        self.headers = dict(headers or {})
        # set by `analyses.create` when it canceled the analysis it could not upload to
        self.canceled_analysis_id: str | None = None

    @property
    def retry_after(self) -> float | None:
        """The server's Retry-After in seconds, when it sent one."""
        return parse_retry_after(header(self.headers, "Retry-After"))

    def __str__(self) -> str:
        """One line: the message, then the code, the parameter and the request id."""
        details = [f"code {self.code}" if self.code else None,
                   f"param {self.param}" if self.param else None,
                   f"request {self.request_id}" if self.request_id else None]
        extra = ", ".join(d for d in details if d)
        return f"{self.message} ({extra})" if extra else self.message

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, "
                f"message={self.message!r}, request_id={self.request_id!r})")


class APIConnectionError(APIError):
    """The request got no HTTP answer (connection refused or reset, timeout)."""


class WaitTimeoutError(APIError, TimeoutError):
    """`analyses.wait` reached its timeout; `last` holds the last status seen."""

    def __init__(self, message: str, *, last: Mapping[str, Any] | None = None) -> None:
        super().__init__(message, code="wait_timeout")
        self.last = dict(last or {})


class InvalidRequestError(APIError):
    """The request was refused as sent (4xx)."""


class NotFoundError(InvalidRequestError):
    """404: no such analysis for this key (or no such route)."""


class ConflictError(InvalidRequestError):
    """409: an Idempotency-Key reused with another body, or still in progress."""


class AuthenticationError(APIError):
    """401: the API key (or the upload token) was missing, wrong, revoked or used."""


class InsufficientCreditsError(APIError):
    """402: the account has no credits left."""


class PermissionDeniedError(APIError):
    """403: the key's plan has no API access."""


class RateLimitError(APIError):
    """429: per-minute rate, in-flight or daily limit reached."""


class ServerError(APIError):
    """5xx: the server failed; safe to retry with the same Idempotency-Key."""


class ServiceUnavailableError(ServerError):
    """503: maintenance or the engine at capacity; retry after `retry_after`."""


# THE mapping: HTTP status -> exception class (other 4xx/5xx fall back by range).
STATUS_ERRORS: dict[int, type[APIError]] = {
    400: InvalidRequestError,
    401: AuthenticationError,
    402: InsufficientCreditsError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    429: RateLimitError,
    503: ServiceUnavailableError,
}


def error_class(status: int) -> type[APIError]:
    """The exception class of an HTTP error status."""
    if status in STATUS_ERRORS:
        return STATUS_ERRORS[status]
    if 400 <= status < 500:
        return InvalidRequestError
    if status >= 500:
        return ServerError
    return APIError


def error_from_response(status: int, headers: Mapping[str, str], body: bytes) -> APIError:
    """Build the exception for an error answer from its envelope
    (`{"error": {"type", "code", "message", "param", "doc_url", "request_id"}}`);
    a body that is not an envelope (a proxy's HTML page) still gives a clear error."""
    envelope: dict = {}
    try:
        parsed = json.loads(body.decode("utf-8")) if body else None
        if isinstance(parsed, dict) and isinstance(parsed.get("error"), dict):
            envelope = parsed["error"]
    except (UnicodeDecodeError, ValueError):
        pass
    request_id = envelope.get("request_id") or header(headers, "X-Request-Id")
    message = envelope.get("message")
    if not isinstance(message, str) or not message:
        snippet = body[:120].decode("utf-8", "replace").strip() if body else ""
        message = f"HTTP {status} without an error envelope" + (f": {snippet}" if snippet else "")
    return error_class(status)(
        message, status=status, code=envelope.get("code"), param=envelope.get("param"),
        request_id=request_id, type=envelope.get("type"), doc_url=envelope.get("doc_url"),
        headers=headers)


def header(headers: Mapping[str, str], name: str) -> str | None:
    """A header value by case-insensitive name."""
    wanted = name.lower()
    for key, value in headers.items():
        if key.lower() == wanted:
            return value
    return None
