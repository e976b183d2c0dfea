"""The server's own OpenAPI 3.1 document (served at GET /v1/openapi.json).

The Analysis schema is derived from model.py (trackgrade/document.py): a new
document field appears here without being written again.

Paths are relative to the server URL `/v1`. Every operation lists the error
codes it can answer (`x-error-codes`, also the `code` enum of the Error
schema); tests/server/test_openapi.py checks the document against Flask's
url_map and the codes the server raises.
"""

from __future__ import annotations

from trackgrade.display import CONTROLS_CLASS
from trackgrade.document import component_schemas, served_analysis_schema
from trackgrade.errors import ERROR_CODES
from trackgrade.grading.genres import GENRES
from trackgrade.grading.limits import MASTERING_STATUSES

UPLOAD_MAX_PARTS = 16      # app.InMemoryRequest.max_form_parts

VERSION = "1.0.0"
AUTH_CODES = ("invalid_api_key", "not_eligible", "rate_limited", "service_unavailable")


def _ref(name: str) -> dict:
    return {"$ref": f"#/components/schemas/{name}"}


def _int(lo: int | None = None, hi: int | None = None) -> dict:
    out: dict = {"type": "integer"}
    if lo is not None:
        out["minimum"] = lo
    if hi is not None:
        out["maximum"] = hi
    return out


_NUM = {"type": "number"}
_STR = {"type": "string"}
_NSTR = {"type": ["string", "null"]}
_UUID = {"type": "string", "format": "uuid"}


def _obj(props: dict, required: tuple[str, ...] | None = None) -> dict:
    return {"type": "object", "properties": props,
            "required": list(props if required is None else required)}


def schemas() -> dict:
    codes = sorted(ERROR_CODES)
    types = sorted({kind for _, kind in ERROR_CODES.values()})
    error_obj = _obj({"type": {"type": "string", "enum": types},
                      "code": {"type": "string", "enum": codes}, "message": _STR,
                      "param": _NSTR, "doc_url": {"type": ["string", "null"], "format": "uri"},
                      "request_id": _STR}, ("type", "code", "message"))
    return {
        "ErrorObject": error_obj,
        "Error": _obj({"error": _ref("ErrorObject")}),
        **component_schemas(),
        "Analysis": served_analysis_schema(),
        "AnalysisCreate": {**_obj({"file_name": file_name_schema(),
                                   "mastering_status": {"enum": list(MASTERING_STATUSES),
                                                        "default": "pre-master"},
                                   "genre": {"type": ["string", "null"], "enum": [*GENRES, None],
                                             "description": "grade against this profile (a key "
                                                            "of GET /genres) instead of the "
                                                            "detected family"},
                                   "external_id": {"type": ["string", "null"],
                                                   "maxLength": 255,
                                                   "pattern": EXTERNAL_ID_PATTERN},
                                   "codec_preview": {"type": "boolean", "default": False,
                                                     "description": "also measure the true peak "
                                                                    "after MP3, AAC and Opus "
                                                                    "(delivery.codecs)"}},
                                  ("file_name",)),
                           "additionalProperties": False},
        "UploadTarget": _obj({"url": {"type": "string", "format": "uri"},
                              "method": {"const": "POST"}, "field": _STR, "token": _STR,
                              "expires_in": _int(1)}),
        "AnalysisAccepted": _obj({"object": {"const": "analysis"}, "id": _UUID,
                                  "status": {"const": "processing"},
                                  "diagnosis_status": {"const": "pending"},
                                  "livemode": {"type": "boolean"}, "external_id": _NSTR,
                                  "credits_remaining": _int(0),
                                  "upload": _ref("UploadTarget")},
                                 ("object", "id", "status", "diagnosis_status", "livemode",
                                  "external_id", "upload")),
        "AnalysisStatus": _obj({"object": {"const": "analysis.status"}, "id": _UUID,
                                "status": {"enum": ["processing", "complete", "failed"]},
                                "diagnosis_status": {"enum": ["pending", "ready"]},
                                "livemode": {"type": "boolean"}}),
        "AnalysisList": _obj({"object": {"const": "list"},
                              "data": {"type": "array", "items": _ref("Analysis")},
                              "has_more": {"type": "boolean"}, "next_cursor": _NSTR}),
        "GenreProfile": _obj({"key": _STR, "name": _STR,
                              "bpm_range": {"type": "array", "items": _NUM, "minItems": 2,
                                            "maxItems": 2},
                              "ideal_bands": _ref("FrequencyBands"), "family": _STR},
                             ("key", "name", "bpm_range", "ideal_bands")),
        "GenreList": _obj({"object": {"const": "list"},
                           "data": {"type": "array", "items": _ref("GenreProfile")}}),
        "Account": _obj({"object": {"const": "account"}, "id": _STR,
                         "plan": {"enum": ["free", "pro", "studio", "partner"]},
                         "billing": {"enum": ["credits", "comp", "metered"]},
                         "livemode": {"type": "boolean"},
                         "credits_remaining": {"type": ["integer", "null"], "minimum": 0},
                         "limits": _obj({"rate_per_minute": _int(1), "in_flight": _int(1),
                                         "daily_quota": {"type": ["integer", "null"],
                                                         "minimum": 0}}),
                         "usage": _obj({"today": _int(0), "in_flight": _int(0)})}),
        "UploadReceived": _obj({"object": {"const": "upload"}, "analysis_id": _UUID,
                                "status": {"const": "processing"},
                                "bytes_received": _int(0)}),
        **event_schemas(),
    }


EVENT_TYPES = {   # type -> (schema of `data`, when it is sent)
    "analysis.scores_ready": ("Analysis", "the analysis reached `complete` with scores; "
                                          "diagnosis_status is `pending`"),
    "analysis.completed": ("Analysis", "the enhanced diagnosis landed; diagnosis_status is "
                                       "`ready`"),
    "analysis.failed": ("AnalysisFailedData", "the analysis could not complete (credit "
                                              "restored)"),
    "credit.balance.low": ("CreditBalanceLowData", "the credit balance crossed from above the "
                                                   "threshold to at or below it"),
}


def event_schemas() -> dict:
    """The webhook event envelope (spec 6.2) per type, and the non-Analysis `data`."""
    out = {
        "AnalysisFailedData": _obj({"id": _UUID, "status": {"const": "failed"},
                                    "external_id": _NSTR, "error": _ref("ErrorObject")}),
        "CreditBalanceLowData": _obj({"credits_remaining": _int(0), "threshold": _int(0)}),
    }
    for event_type, (data, _) in EVENT_TYPES.items():
        name = "Event_" + event_type.replace(".", "_")
        out[name] = _obj({"id": _UUID, "object": {"const": "event"},
                          "type": {"const": event_type}, "created": _int(0),
                          "livemode": {"type": "boolean"}, "data": _ref(data)})
    return out


def _json(schema: dict, description: str) -> dict:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _errors(*codes: str) -> dict:
    out: dict = {}
    for code in codes:
        status = str(ERROR_CODES[code][0])
        entry = out.setdefault(status, _json(_ref("Error"), "error; see `error.code`"))
        entry.setdefault("x-error-codes", []).append(code)
    return out


def _op(op_id: str, summary: str, ok: tuple[str, dict], codes: tuple[str, ...], *,
        auth: bool = True, params: list | None = None, body: dict | None = None,
        headers: dict | None = None) -> dict:
    status, response = ok
    if headers:
        response = {**response, "headers": headers}
    op = {"operationId": op_id, "summary": summary,
          "responses": {status: response, **_errors(*((AUTH_CODES if auth else ())
                                                      + codes))},
          "x-error-codes": list(dict.fromkeys((AUTH_CODES if auth else ()) + codes))}
    if not auth:
        op["security"] = []
    if params:
        op["parameters"] = params
    if body:
        op["requestBody"] = body
    return op


def _param(name: str, where: str, schema: dict, *, required: bool = False,
           description: str = "") -> dict:
    return {"name": name, "in": where, "required": required or where == "path",
            "schema": schema, "description": description}


_ID = _param("analysis_id", "path", _UUID, description="the analysis id")
_INT_HEADER = {"schema": {"type": "integer"}}
_RATE_HEADERS = {"X-RateLimit-Limit": _INT_HEADER, "X-RateLimit-Remaining": _INT_HEADER,
                 "X-RateLimit-Reset": _INT_HEADER, "X-Request-Id": {"schema": _STR}}


# what idempotency.parse_key accepts: 1-255 characters, no control characters,
# not only whitespace
IDEMPOTENCY_KEY = {"type": "string", "minLength": 1, "maxLength": 255,
                   "pattern": "^[^\\x00-\\x1f\\x7f]*[^\\s\\x00-\\x1f\\x7f][^\\x00-\\x1f\\x7f]*$"}


# what routes.analyses.parse_submission accepts in external_id: no control
# character (C0, DEL, C1, bidi and zero-width format characters: display.is_control)
EXTERNAL_ID_PATTERN = f"^[^{CONTROLS_CLASS}]*$"
# ... and in file_name: the same, and not only whitespace
FILE_NAME_PATTERN = f"^[^{CONTROLS_CLASS}]*[^\\s{CONTROLS_CLASS}][^{CONTROLS_CLASS}]*$"


def _any_case(text: str) -> str:
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in text)


def file_name_schema() -> dict:
    """What routes.analyses.parse_submission accepts: 1-255 characters, no
    control characters, not only whitespace, not ending in a refused extension."""
    from trackgrade.server.routes.analyses import MAX_NAME, UNSUPPORTED_EXTENSIONS

    refused = "|".join(_any_case(e) for e in sorted(UNSUPPORTED_EXTENSIONS))
    return {"type": "string", "minLength": 1, "maxLength": MAX_NAME,
            "pattern": FILE_NAME_PATTERN,
            "not": {"pattern": f"\\.(?:{refused})$"},
            "description": "WAV, MP3, AIFF or FLAC; names ending in another format's "
                           "extension are refused"}


def _link(op_id: str, description: str, **parameters: str) -> dict:
    return {"operationId": op_id, "description": description, "parameters": parameters}


# OpenAPI links: how a client (or a stateful fuzzer) follows submit -> upload -> read
_FROM_ACCEPTED = {
    "UploadAudio": _link("uploadAudio", "send the bytes to upload.url with `Authorization: "
                         "Bearer <upload.token>`", analysis_id="$response.body#/id"),
    "GetAnalysis": _link("getAnalysis", "read it", analysis_id="$response.body#/id"),
    "GetAnalysisStatus": _link("getAnalysisStatus", "poll it", analysis_id="$response.body#/id"),
    "ListAfter": _link("listAnalyses", "page after it", starting_after="$response.body#/id"),
}
_FROM_UPLOAD = {
    "GetAnalysis": _link("getAnalysis", "read it", analysis_id="$response.body#/analysis_id"),
    "GetAnalysisStatus": _link("getAnalysisStatus", "poll it",
                               analysis_id="$response.body#/analysis_id"),
    "EmbedBadge": _link("embedBadge", "its public badge",
                        analysis_id="$response.body#/analysis_id"),
}
_FROM_ANALYSIS = {
    "GetAnalysisStatus": _link("getAnalysisStatus", "poll it", analysis_id="$response.body#/id"),
    "EmbedBadge": _link("embedBadge", "its public badge", analysis_id="$response.body#/id"),
}


def _with_links(op: dict, status: str, links: dict) -> dict:
    op["responses"][status] = {**op["responses"][status], "links": links}
    return op


def paths() -> dict:
    return {
        "/analyses": {
            "post": _with_links(_op(
                "createAnalysis", "Create an analysis; answers the upload target",
                ("202", _json(_ref("AnalysisAccepted"), "accepted; upload the bytes next")),
                ("parameter_missing", "parameter_invalid", "parameter_unknown", "invalid_json",
                 "request_too_large", "insufficient_credits", "idempotency_key_reused",
                 "idempotency_request_in_progress", "too_many_in_flight",
                 "daily_quota_exceeded", "engine_at_capacity", "api_error"),
                params=[_param("Idempotency-Key", "header", IDEMPOTENCY_KEY, required=True)],
                body={"required": True, "content": {"application/json": {
                    "schema": _ref("AnalysisCreate")}}},
                headers={**_RATE_HEADERS, "X-Credits-Remaining": _INT_HEADER,
                         "Idempotent-Replayed": {"schema": {"const": "true"}}}),
                "202", _FROM_ACCEPTED),
            "get": _op(
                "listAnalyses", "List the caller's analyses, newest first (a cursor that is "
                "not one of the caller's analyses is 404 not_found)",
                ("200", _json(_ref("AnalysisList"), "one page")),
                ("parameter_invalid", "parameter_unknown", "not_found"),
                params=[_param("limit", "query", {**_int(1, 100), "default": 20}),
                        _param("starting_after", "query", _UUID),
                        _param("ending_before", "query", _UUID)],
                headers=_RATE_HEADERS),
        },
        "/analyses/{analysis_id}": {"get": _with_links(_op(
            "getAnalysis", "Read an analysis", ("200", _json(_ref("Analysis"), "the analysis")),
            ("not_found", "parameter_unknown"), params=[_ID], headers=_RATE_HEADERS),
            "200", _FROM_ANALYSIS),
            "delete": _op(
                "cancelAnalysis", "Cancel an analysis awaiting its upload: it fails with "
                "error code analysis_canceled and its credit is restored",
                ("200", _json(_ref("Analysis"), "the analysis, now failed")),
                ("not_found", "parameter_unknown", "analysis_not_cancelable"), params=[_ID],
                headers=_RATE_HEADERS)},
        "/analyses/{analysis_id}/status": {"get": _op(
            "getAnalysisStatus", "Poll an analysis's state",
            ("200", _json(_ref("AnalysisStatus"), "the state")),
            ("not_found", "parameter_unknown"), params=[_ID], headers=_RATE_HEADERS)},
        "/uploads/{analysis_id}": {"post": {**_with_links(_op(
            "uploadAudio", "Send the audio bytes (the upload step)",
            ("200", _json(_ref("UploadReceived"), "received; the analysis runs")),
            ("upload_token_invalid", "upload_incomplete", "file_too_large", "file_rejected",
             "unprocessable_audio", "engine_at_capacity", "engine_error",
             "service_unavailable"), auth=False, params=[_ID],
            body={"required": True, "content": {"multipart/form-data": {"schema": {**_obj(
                {"file": {"type": "string", "contentMediaType": "application/octet-stream",
                          "minLength": 1}}), "maxProperties": UPLOAD_MAX_PARTS,
                "description": "the audio in the part `file`; other parts are ignored"}}}}),
            "200", _FROM_UPLOAD),
            "security": [{"uploadToken": []}]}},
        "/genres": {"get": _op("listGenres", "The genre profiles",
                               ("200", _json(_ref("GenreList"), "11 families, then labels")),
                               ("parameter_unknown",), headers=_RATE_HEADERS)},
        "/account": {"get": _op("getAccount", "The calling key's account, limits and usage",
                                ("200", _json(_ref("Account"), "the account")),
                                ("parameter_unknown",), headers=_RATE_HEADERS)},
        "/embed/{analysis_id}": {"get": _op(
            "embedBadge", "Public score badge (HTML/SVG)",
            ("200", {"description": "the badge", "content": {"text/html": {"schema": _STR}}}),
            ("parameter_invalid", "not_found", "service_unavailable"), auth=False,
            params=[_ID, _param("theme", "query", {"enum": ["dark", "light"], "default": "dark"}),
                    _param("size", "query", {"enum": ["sm", "md"], "default": "md"})])},
        "/openapi.json": {"get": _op(
            "openapiDocument", "This document",
            ("200", {"description": "OpenAPI 3.1", "content": {"application/json": {
                "schema": {"type": "object"}}}}), (), auth=False)},
        "/errors": {"get": _op(
            "errorReference", "The error reference: every error code, what it means and what "
            "to do (HTML; each has an anchor #<code>)",
            ("200", {"description": "the reference", "content": {"text/html": {"schema": _STR}}}),
            (), auth=False)},
        "/errors/{code}": {"get": _op(
            "errorReferenceEntry", "One error code's entry: every error's doc_url opens it",
            ("200", {"description": "the entry", "content": {"text/html": {"schema": _STR}}}),
            ("not_found",), auth=False,
            params=[_param("code", "path", {"enum": list(ERROR_CODES)},
                           description="an error code")])},
    }


_SIGNATURE_HEADERS = [
    _param("Service-Signature", "header",
           {"type": "string", "pattern": r"^t=\d+(,v1=[0-9a-f]{64})+"}, required=True,
           description="t=<Unix seconds of this attempt>,v1=<hex HMAC-SHA256 of "
           "'<t>.<raw body>' keyed with the whole whsec_ secret>; one v1 per secret during a "
           "rotation overlap. Reject t more than 300 s off."),
    _param("webhook-id", "header", _UUID, required=True, description="the event id"),
    _param("webhook-timestamp", "header", {"type": "string", "pattern": r"^\d+$"},
           required=True, description="the same t"),
    _param("webhook-signature", "header", _STR, required=True,
           description="Standard Webhooks: v1,<base64 HMAC-SHA256 of '<id>.<t>.<raw body>' "
           "keyed with the base64-decoded secret after whsec_>, space-separated per secret"),
]


def webhooks() -> dict:
    """OpenAPI 3.1 `webhooks`: what the server POSTs to registered endpoints."""
    out = {}
    for event_type, (_, when) in EVENT_TYPES.items():
        out[event_type] = {"post": {
            "operationId": "event_" + event_type.replace(".", "_"),
            "summary": f"{event_type}: {when}",
            "description": "POSTed to every enabled endpoint of the account. Any 2xx "
                           "acknowledges; no answer in 10 s, 3xx (not followed), 4xx and 5xx "
                           "are retried for about 3.2 days; Retry-After on 429/503 is honoured "
                           "(at most 1 h); 410 disables the endpoint. Dedupe on `id`.",
            "parameters": _SIGNATURE_HEADERS,
            "requestBody": {"required": True, "content": {"application/json": {
                "schema": _ref("Event_" + event_type.replace(".", "_"))}}},
            "responses": {"2XX": {"description": "acknowledged"},
                          "410": {"description": "gone: the endpoint is disabled"}},
            "security": [],
        }}
    return out


def document(server_url: str = "/v1") -> dict:
    return {
        "openapi": "3.1.0",
        "info": {"title": "trackgrade Track Analysis API", "version": VERSION,
                 "description": "Analyze electronic-music tracks: score, grade, metrics and "
                                "feedback. Every error body is {\"error\": {...}} (see Error); "
                                "every response carries X-Request-Id."},
        "servers": [{"url": server_url}],
        "security": [{"apiKey": []}],
        "paths": paths(),
        "webhooks": webhooks(),
        "components": {
            "schemas": schemas(),
            "securitySchemes": {
                "apiKey": {"type": "http", "scheme": "bearer",
                           "description": "svc_live_… or svc_test_… API key"},
                "uploadToken": {"type": "http", "scheme": "bearer",
                                "description": "the short-lived upload.token of a submission"},
            },
        },
        "x-all-error-codes": sorted({c for item in paths().values() for op in item.values()
                                     for c in op["x-error-codes"]} | {"route_not_found",
                                                                      "method_not_allowed",
                                                                      "analysis_canceled"}),
    }
