"""What every route shares: authentication + the rate window, JSON bodies,
query parameters and absolute URLs."""

from __future__ import annotations

import functools
import json
import uuid

from flask import g, request

from trackgrade.errors import TrackgradeError
from trackgrade.server import accounts
from trackgrade.server.auth import authenticate
from trackgrade.server.lifecycle import Caller


def authenticated(ctx):
    """Decorator: 401/403 from the key, 429 from the minute window; the
    caller lands in `g.caller`, the window state in `g.rate_state` (the app
    adds the X-RateLimit headers to every response of the request)."""
    def wrap(view):
        @functools.wraps(view)
        def inner(*args, **kwargs):
            caller = authenticate(ctx.store, request.headers.get("Authorization"), ctx.settings)
            accounts.note_use(ctx.store, caller.key_id, ctx.clock)
            g.caller = caller
            g.rate_state = ctx.window.hit(caller.key_id, caller.per_minute)
            return view(caller, *args, **kwargs)
        return inner
    return wrap


def current_caller() -> Caller:
    return g.caller


def read_json_object(limit: int) -> dict:
    """The request body as a JSON object: 413 `request_too_large` over
    `limit` bytes, 400 `invalid_json` for anything that is not one object."""
    if request.mimetype != "application/json":
        given = request.headers.get("Content-Type")
        raise TrackgradeError("invalid_json", "send the body with Content-Type: application/json"
                              + (f" (given {_printable(given)})" if given else
                                 " (no Content-Type given)"))
    length = request.content_length
    if length is not None and length > limit:
        raise TrackgradeError("request_too_large", f"JSON bodies may be at most {limit} bytes "
                              f"(given {length})")
    raw = request.stream.read(limit + 1)
    if len(raw) > limit:
        raise TrackgradeError("request_too_large", f"JSON bodies may be at most {limit} bytes")
    if not raw.strip():
        raise TrackgradeError("invalid_json", "the request body is empty; send a JSON object")
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_no_constants, parse_float=_finite,
                          object_pairs_hook=_no_duplicates)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise TrackgradeError("invalid_json", f"the body is not valid JSON: {_reason(exc)}") \
            from None
    if not isinstance(body, dict):
        raise TrackgradeError("invalid_json", "the body must be a JSON object, given "
                              f"{type(body).__name__ if body is not None else 'null'}")
    for name, value in body.items():
        if not _is_unicode(name) or not _is_unicode(value):
            field = _printable(name)
            raise TrackgradeError("parameter_invalid", f"{field} holds a lone UTF-16 surrogate "
                                  "escape (e.g. \\ud800), which is not text", param=field)
    return body


def _is_unicode(value) -> bool:
    """False when a string anywhere in `value` holds a lone surrogate
    (valid JSON escapes such as "\\ud800" that no UTF-8 text can carry)."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return False
        return True
    if isinstance(value, dict):
        return all(_is_unicode(k) and _is_unicode(v) for k, v in value.items())
    if isinstance(value, list):
        return all(_is_unicode(v) for v in value)
    return True


def _printable(text: str) -> str:
    """`text` safe to echo in an error (lone surrogates as \\uXXXX escapes)."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def _no_duplicates(pairs: list) -> dict:
    out = dict(pairs)
    if len(out) != len(pairs):
        seen = set()
        duplicate = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise ValueError(f"the field {duplicate!r} appears twice")
    return out


def _finite(text: str) -> float:
    value = float(text)
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"the number {text[:40]} is too large")
    return value


def _no_constants(name: str):
    raise ValueError(f"{name} is not valid JSON")


def _reason(exc: Exception) -> str:
    if isinstance(exc, UnicodeDecodeError):
        return "it is not UTF-8"
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    return str(exc)


def reject_unknown(body: dict, allowed: tuple[str, ...]) -> None:
    for name in body:
        if name not in allowed:
            raise TrackgradeError("parameter_unknown", f"unknown field {name!r}; accepted: "
                                  + ", ".join(allowed), param=name)


def reject_unknown_query(allowed: tuple[str, ...]) -> None:
    for name in request.args:
        if name not in allowed:
            raise TrackgradeError("parameter_unknown", f"unknown query parameter {name!r}"
                                  + (f"; accepted: {', '.join(allowed)}" if allowed else ""),
                                  param=name)


def single_query(name: str) -> str | None:
    values = request.args.getlist(name)
    if len(values) > 1:
        raise TrackgradeError("parameter_invalid", f"{name} given more than once", param=name)
    return values[0] if values else None


def is_uuid(value: str) -> bool:
    try:
        return str(uuid.UUID(value)) == value.lower() and len(value) == 36
    except (ValueError, AttributeError, TypeError):
        return False


def base_url(ctx) -> str:
    """scheme://host[:port] of the service as clients see it: `public_base_url`,
    else from the Host header, which must be one of the allowed hosts (400
    `parameter_invalid`, param `Host`)."""
    from trackgrade.server.hosts import check_host

    configured = ctx.settings.public_base_url.rstrip("/")
    if configured:
        return configured
    check_host(request.host, ctx.settings, ctx.bound)
    return request.host_url.rstrip("/")
