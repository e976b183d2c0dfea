"""Webhook signatures: sign and verify deliveries (spec 6.3, CONTRACT.md).

Every delivery carries two signatures over the exact raw body bytes:

    Service-Signature: t=<unix seconds>,v1=<hex>[,v1=<hex>…]
        v1 = hex HMAC-SHA256 keyed with the whole secret string (`whsec_…`,
        UTF-8) over b"<t>." + body. During a secret rotation there is one
        v1 entry per secret.
    webhook-id / webhook-timestamp / webhook-signature: v1,<base64>[ v1,<base64>…]
        Standard Webhooks: base64 HMAC-SHA256 keyed with the base64-decoded
        part of the secret after `whsec_`, over b"<id>.<t>." + body.

    >>> from trackgrade import signing
    >>> header = signing.sign("whsec_test_secret_123", b'{"type":"x"}', 1700000000)
    >>> signing.verify("whsec_test_secret_123", header, b'{"type":"x"}', now=1700000100)
    {'type': 'x'}

`verify` and `verify_standard` return the parsed event or raise
`SignatureError` whose `reason` is one of REASONS. Verify over the raw body
as received (Flask `request.get_data()`, Django `request.body`), never over
re-serialised JSON. Stdlib only: `hmac`, `hashlib`, `base64`.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import math
import re
import secrets as _secrets
import time
from typing import Iterable, Mapping

SIGNATURE_HEADER = "Service-Signature"
DEFAULT_TOLERANCE = 300
SECRET_PREFIX = "whsec_"

MALFORMED_HEADER = "malformed_header"
NO_V1_SIGNATURE = "no_v1_signature"
SIGNATURE_MISMATCH = "signature_mismatch"
TIMESTAMP_TOO_OLD = "timestamp_too_old"
TIMESTAMP_TOO_NEW = "timestamp_too_new"
INVALID_BODY = "invalid_body"
REASONS = (MALFORMED_HEADER, NO_V1_SIGNATURE, SIGNATURE_MISMATCH, TIMESTAMP_TOO_OLD,
           TIMESTAMP_TOO_NEW, INVALID_BODY)

_HEX64 = re.compile(r"[0-9a-f]{64}")
_TIMESTAMP = re.compile(r"[0-9]{1,12}")


class SignatureError(Exception):
    """A delivery that must not be trusted. `reason` is one of REASONS;
    the message says what was wrong in words."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


def new_secret(num_bytes: int = 32) -> str:
    """A fresh endpoint secret: `whsec_` + base64 of 24-64 random bytes."""
    if not 24 <= num_bytes <= 64:
        raise ValueError(f"a secret holds 24-64 random bytes; given num_bytes={num_bytes}")
    return SECRET_PREFIX + base64.b64encode(_secrets.token_bytes(num_bytes)).decode("ascii")


def _bytes(body: bytes | str) -> bytes:
    return body.encode("utf-8") if isinstance(body, str) else bytes(body)


def _secret_list(secret: str | Iterable[str]) -> list[str]:
    return [secret] if isinstance(secret, str) else list(secret)


# --- Service-Signature ---------------------------------------------------------------------

def signature(secret: str, body: bytes | str, t: int) -> str:
    """The lowercase hex v1 value for one secret."""
    message = str(int(t)).encode("ascii") + b"." + _bytes(body)
    return hmac.new(secret.encode("utf-8"), message, hashlib.sha256).hexdigest()


def sign(secret: str | Iterable[str], body: bytes | str, t: int) -> str:
    """The Service-Signature header value `t=<t>,v1=<hex>`, one v1 entry
    per secret when several are given (rotation overlap)."""
    entries = [f"v1={signature(s, body, t)}" for s in _secret_list(secret)]
    return ",".join([f"t={int(t)}"] + entries)


def parse_header(header: str) -> tuple[int, list[str]]:
    """(t, [v1 hex…]) of a Service-Signature value (a leading
    `Service-Signature:` is tolerated). Unknown schemes (v0=, v2=) are
    ignored. Raises SignatureError malformed_header / no_v1_signature."""
    text = (header or "").strip()
    if text.lower().startswith(SIGNATURE_HEADER.lower() + ":"):
        text = text[len(SIGNATURE_HEADER) + 1:].strip()
    t: int | None = None
    v1: list[str] = []
    for item in text.split(","):
        name, sep, value = item.strip().partition("=")
        if not sep or not name:
            raise SignatureError(MALFORMED_HEADER, f"the signature header is malformed: "
                                 f"{item.strip()!r} is not a name=value pair")
        if name == "t":
            if t is not None or not _TIMESTAMP.fullmatch(value):
                raise SignatureError(MALFORMED_HEADER, f"the signature header's timestamp is "
                                     f"not one whole number of seconds: t={value!r}")
            t = int(value)
        elif name == "v1":
            v1.append(value)
    if t is None:
        raise SignatureError(MALFORMED_HEADER, "the signature header has no t= timestamp")
    if not v1:
        raise SignatureError(NO_V1_SIGNATURE, "the signature header has no v1= signature")
    return t, v1


def check_tolerance(tolerance: float) -> float:
    """`tolerance` as seconds; ValueError unless it is a finite number of
    seconds, 0 or more (NaN would make every comparison false and accept a
    signature of any age; infinity would too)."""
    try:
        seconds = float(tolerance)
    except (TypeError, ValueError):
        raise ValueError(f"tolerance must be a number of seconds, not {tolerance!r}") from None
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"tolerance must be a finite number of seconds, 0 or more "
                         f"(given {tolerance!r})")
    return seconds


def check_timestamp(t: int, *, tolerance: float, now: float | None) -> None:
    """Raise timestamp_too_old / timestamp_too_new when `t` is more than
    `tolerance` seconds off `now` (default: the system clock)."""
    tolerance = check_tolerance(tolerance)
    now = time.time() if now is None else float(now)
    if t < now - tolerance:
        raise SignatureError(TIMESTAMP_TOO_OLD, f"the signature timestamp is {now - t:.0f} s "
                             f"old, more than the {tolerance:g} s tolerance (a replay, or "
                             "this machine's clock is wrong)")
    if t > now + tolerance:
        raise SignatureError(TIMESTAMP_TOO_NEW, f"the signature timestamp is {t - now:.0f} s "
                             f"in the future, more than the {tolerance:g} s tolerance (check "
                             "this machine's clock)")


def _event(raw_body: bytes) -> object:
    try:
        return json.loads(raw_body)
    except (UnicodeDecodeError, ValueError):
        raise SignatureError(INVALID_BODY, "the signature matches but the body is not "
                             "JSON") from None


def verify(secret: str | Iterable[str], header: str, raw_body: bytes | str, *,
           tolerance: float = DEFAULT_TOLERANCE, now: float | None = None) -> object:
    """The event (parsed JSON) of a delivery whose Service-Signature is
    valid for `secret` (or any of several secrets); else SignatureError.

    Accepts when any v1 entry matches any secret (constant-time compare),
    then rejects a timestamp more than `tolerance` seconds off `now` in
    either direction. A tolerance that is not a finite number of seconds,
    0 or more, raises ValueError."""
    check_tolerance(tolerance)
    t, given = parse_header(header)
    body = _bytes(raw_body)
    expected = [signature(s, body, t) for s in _secret_list(secret)]
    return _accepted(given, expected, t, body, tolerance=tolerance, now=now,
                     mismatch="no v1 signature matches this secret and body "
                              "(wrong secret, or the body was changed or re-serialised)")


def _accepted(given: list[str], expected: list[str], t: int, body: bytes, *, tolerance: float,
              now: float | None, mismatch: str) -> object:
    """The event of `body` when any given signature equals any expected one
    (every pair compared in constant time) and the timestamp is fresh; else
    SignatureError (`mismatch` says why no signature matched)."""
    matched = False
    for value in given:
        for want in expected:
            matched |= hmac.compare_digest(value.encode("ascii", "replace"), want.encode("ascii"))
    if not matched:
        raise SignatureError(SIGNATURE_MISMATCH, mismatch)
    check_timestamp(t, tolerance=tolerance, now=now)
    return _event(body)


# --- Standard Webhooks ---------------------------------------------------------------------

def standard_key(secret: str) -> bytes:
    """The Standard Webhooks HMAC key: base64-decoded part after `whsec_`."""
    encoded = secret[len(SECRET_PREFIX):] if secret.startswith(SECRET_PREFIX) else secret
    try:
        return base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError):
        raise ValueError("the secret is not whsec_ + base64 (issued before Standard Webhooks "
                         "support? rotate it)") from None


def standard_signature(secret: str, msg_id: str, t: int, body: bytes | str) -> str:
    """`v1,<base64>` for one secret."""
    message = f"{msg_id}.{int(t)}.".encode("utf-8") + _bytes(body)
    digest = hmac.new(standard_key(secret), message, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def standard_headers(secret: str | Iterable[str], msg_id: str, t: int,
                     body: bytes | str) -> dict[str, str]:
    """The three Standard Webhooks headers (one signature per secret)."""
    sigs = " ".join(standard_signature(s, msg_id, t, body) for s in _secret_list(secret))
    return {"webhook-id": msg_id, "webhook-timestamp": str(int(t)), "webhook-signature": sigs}


def verify_standard(secret: str | Iterable[str], headers: Mapping[str, str],
                    raw_body: bytes | str, *, tolerance: float = DEFAULT_TOLERANCE,
                    now: float | None = None) -> object:
    """`verify` for the Standard Webhooks headers (header names in any case)."""
    check_tolerance(tolerance)
    lower = {str(k).lower(): v for k, v in headers.items()}
    msg_id = lower.get("webhook-id")
    stamp = (lower.get("webhook-timestamp") or "").strip()
    sigs = lower.get("webhook-signature")
    if not msg_id or sigs is None or not _TIMESTAMP.fullmatch(stamp):
        raise SignatureError(MALFORMED_HEADER, "webhook-id, webhook-timestamp (whole seconds) "
                             "and webhook-signature are all required")
    t = int(stamp)
    given = [part[3:] for part in sigs.split() if part.startswith("v1,")]
    if not given:
        raise SignatureError(NO_V1_SIGNATURE, "webhook-signature has no v1, entry")
    body = _bytes(raw_body)
    expected = [standard_signature(s, msg_id, t, body)[3:] for s in _secret_list(secret)]
    return _accepted(given, expected, t, body, tolerance=tolerance, now=now,
                     mismatch="no v1 signature in webhook-signature matches this secret and body")


__all__ = ["DEFAULT_TOLERANCE", "REASONS", "SIGNATURE_HEADER", "SignatureError", "new_secret",
           "check_tolerance", "parse_header", "sign", "signature", "standard_headers", "standard_signature",
           "verify", "verify_standard"]
