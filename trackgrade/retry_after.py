"""`Retry-After` (RFC 9110 section 10.2.3), read the same way by the client
(waiting out a 429/503 of the API) and by the webhook sender (a receiver's
429/503): delay-seconds or an HTTP-date, as seconds from now; None when the
header is absent or unreadable. Stdlib only (the client imports it)."""

from __future__ import annotations

import math
import time
from datetime import timezone


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds to wait from `now` (default: the wall clock): a number of seconds
    ("120"; a decimal like "1.5" is read too; negative or not finite is
    unreadable), or an HTTP date ("Wed, 21 Oct 2015 07:28:00 GMT"; one in the
    past is 0; a date without a zone is GMT, as HTTP dates always are)."""
    if not value or not value.strip():
        return None
    value = value.strip()
    try:
        seconds = float(value)
    except ValueError:
        pass
    else:
        return seconds if math.isfinite(seconds) and seconds >= 0 else None
    from email.utils import parsedate_to_datetime   # an HTTP date: rare (every CLI run imports this)

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when is None:
        return None
    stamp = when.timestamp() if when.tzinfo else when.replace(tzinfo=timezone.utc).timestamp()
    return max(0.0, stamp - (time.time() if now is None else now))

