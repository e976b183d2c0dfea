"""One error hierarchy for the whole product.

Every failure the library, the CLI or the server can report is a
`TrackgradeError` carrying a stable machine `code` (CONTRACT.md section 1 and
spec section 7). The HTTP status and the envelope `type` follow from the code
through `ERROR_CODES`, the single table the server's envelope builder and the
CLI's exit-code mapping both read.

    TrackgradeError
      AudioError            the bytes are not analyzable audio (decode time)
      LimitError            the file breaks a size or duration limit
"""

from __future__ import annotations

# code -> (http status, envelope type)
ERROR_CODES: dict[str, tuple[int, str]] = {
    "parameter_invalid": (400, "invalid_request_error"),
    "parameter_missing": (400, "invalid_request_error"),
    "parameter_unknown": (400, "invalid_request_error"),
    "invalid_json": (400, "invalid_request_error"),
    "upload_incomplete": (400, "invalid_request_error"),
    "invalid_api_key": (401, "authentication_error"),
    "upload_token_invalid": (401, "authentication_error"),
    "insufficient_credits": (402, "invalid_request_error"),
    "not_eligible": (403, "permission_error"),
    "not_found": (404, "invalid_request_error"),
    "route_not_found": (404, "invalid_request_error"),
    "method_not_allowed": (405, "invalid_request_error"),
    "idempotency_key_reused": (409, "invalid_request_error"),
    "idempotency_request_in_progress": (409, "invalid_request_error"),
    "analysis_canceled": (409, "invalid_request_error"),
    "analysis_not_cancelable": (409, "invalid_request_error"),
    "file_rejected": (413, "invalid_request_error"),
    "file_too_large": (413, "invalid_request_error"),
    "request_too_large": (413, "invalid_request_error"),
    "unprocessable_audio": (422, "invalid_request_error"),
    "rate_limited": (429, "rate_limit_error"),
    "too_many_in_flight": (429, "rate_limit_error"),
    "daily_quota_exceeded": (429, "rate_limit_error"),
    "api_error": (500, "api_error"),
    "engine_error": (500, "api_error"),
    "service_unavailable": (503, "api_error"),
    "engine_at_capacity": (503, "api_error"),
}


class TrackgradeError(Exception):
    """A failure with a stable machine code, a message for people and, when
    known, the offending parameter."""

    def __init__(self, code: str, message: str, *, param: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        if code not in ERROR_CODES:
            raise ValueError(f"unknown error code {code!r}")
        super().__init__(message)
        self.code = code
        self.message = message
        self.param = param
        self.headers = dict(headers or {})

    @property
    def http_status(self) -> int:
        return ERROR_CODES[self.code][0]

    @property
    def type(self) -> str:
        return ERROR_CODES[self.code][1]

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"


class AudioError(TrackgradeError):
    """The bytes cannot be analyzed: `unprocessable_audio`."""

    def __init__(self, message: str) -> None:
        super().__init__("unprocessable_audio", message)


class LimitError(TrackgradeError):
    """The file breaks a limit of spec section 8: `file_rejected` (duration)
    or `file_too_large` (size)."""

    def __init__(self, message: str, *, code: str = "file_rejected") -> None:
        super().__init__(code, message)
