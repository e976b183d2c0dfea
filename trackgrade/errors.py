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

# code -> (what it means, what to do): the error reference every instance
# serves at GET /v1/errors (trackgrade.server.reference) and each doc_url opens
ERROR_HELP: dict[str, tuple[str, str]] = {
    "parameter_invalid": ("A parameter has a value the API does not accept: the wrong type, out of "
                          "range, not one of the allowed values, or a Host header the server does "
                          "not answer to. `param` names it.",
                          "Fix the value named by `param` (the message says what is allowed) "
                          "and send the request again."),
    "parameter_missing": ("A required parameter is absent. `param` names it.",
                          "Add the parameter named by `param` and send the request again."),
    "parameter_unknown": ("The request has a field or query parameter the route does not take "
                          "(often a typo). `param` names it.",
                          "Remove or correct the parameter named by `param`."),
    "invalid_json": ("The body is not a JSON object, or the Content-Type is not "
                     "application/json.",
                     "Send a JSON object with `Content-Type: application/json`."),
    "upload_incomplete": ("The upload ended before the whole file arrived, or held no file part.",
                          "Upload the file again (multipart/form-data, the field named in "
                          "`upload.field`) while the upload token is valid, or cancel the "
                          "analysis (DELETE) to get its credit back."),
    "invalid_api_key": ("The API key is missing, malformed, unknown or revoked.",
                        "Send `Authorization: Bearer <key>` with a live or test key of this "
                        "instance (`trackgrade admin keys list`)."),
    "upload_token_invalid": ("The upload token is missing, wrong, already used or expired.",
                             "Use the `upload.token` of the analysis within `expires_in` "
                             "seconds; after that, create a new analysis."),
    "insufficient_credits": ("The account has no credits left for a new analysis.",
                             "Add credits (`trackgrade admin credits ACCOUNT --add N`) or use a "
                             "test key, which spends none."),
    "not_eligible": ("The key's account is on a plan without API access.",
                     "Move the account to a plan with API access (Pro or Studio) or ask about "
                     "partner access."),
    "not_found": ("No analysis (or other object) with that id exists for this key.",
                  "Check the id, and that the key belongs to the account and mode (live or "
                  "test) that created it."),
    "route_not_found": ("No route has this path.",
                        "Check the path and method against GET /v1/openapi.json."),
    "method_not_allowed": ("The route exists but not for this HTTP method; the `Allow` header "
                           "lists the ones it takes.",
                           "Use one of the methods in `Allow`."),
    "idempotency_key_reused": ("This Idempotency-Key was used within 24 hours for a request with "
                               "a different body.",
                               "Use a new Idempotency-Key for a new request; repeat a request "
                               "only with its original body."),
    "idempotency_request_in_progress": ("A request with this Idempotency-Key is still being "
                                        "processed.",
                                        "Retry a moment later with the same key and body."),
    "analysis_canceled": ("The analysis was canceled before its bytes arrived; its credit was "
                          "restored.",
                          "Create a new analysis if you still want one."),
    "analysis_not_cancelable": ("Only an analysis that still awaits its upload can be canceled; "
                                "this one is already processing, complete or failed.",
                                "Nothing to do: fetch it with GET /v1/analyses/{id}."),
    "file_rejected": ("The audio breaks a limit other than size, such as its duration or "
                      "channel count.",
                      "Send a file within the limits the message names (trim or export it "
                      "again)."),
    "file_too_large": ("The file is larger than the server accepts for its format.",
                       "Send a smaller file: a compressed format (FLAC, MP3) or a shorter "
                       "export."),
    "request_too_large": ("The request (body, URI or headers) is larger than the server reads.",
                          "Send a smaller request; audio goes to the upload URL, never in the "
                          "JSON body."),
    "unprocessable_audio": ("The bytes are not audio the service can analyse: an unsupported or "
                            "damaged file, digital silence or near-silence.",
                            "Export the track again as WAV, AIFF, FLAC or MP3 and check it "
                            "plays; the message says what was wrong."),
    "rate_limited": ("Too many requests in the current minute for this key.",
                     "Wait for `Retry-After` seconds, then retry with the same "
                     "Idempotency-Key."),
    "too_many_in_flight": ("The key already has as many analyses in progress as its plan "
                           "allows; the message names them.",
                           "Wait for one to finish, or cancel one that awaits its upload "
                           "(`trackgrade remote cancel ID`), then retry."),
    "daily_quota_exceeded": ("The key has used its analyses for today.",
                             "Retry after `Retry-After` seconds, when the day's count "
                             "starts again."),
    "api_error": ("Something unexpected failed on the server; it is logged with the request id.",
                  "Retry with the same Idempotency-Key; if it persists, report the "
                  "`request_id`."),
    "engine_error": ("The analysis engine failed on this file (it crashed, ran out of memory, "
                     "or the server restarted while it ran).",
                     "Retry once; if it fails again, report the analysis id and the "
                     "`request_id`."),
    "service_unavailable": ("The service is down for maintenance or its storage cannot be "
                            "reached.",
                            "Retry after `Retry-After` seconds with the same Idempotency-Key."),
    "engine_at_capacity": ("The server is at capacity: its queue or its budget of request "
                           "bytes in flight is full.",
                           "Retry after `Retry-After` seconds with the same Idempotency-Key."),
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
