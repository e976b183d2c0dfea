"""The one 503 `engine_at_capacity` answer (CONTRACT.md: retry with the
Retry-After the answer gives). The worker pool, the submission and upload
routes and the connection layer's body budget each say why; the code and its
header are built here."""

from __future__ import annotations

from trackgrade.errors import TrackgradeError

ENGINE_RETRY_AFTER_S = 5         # the engine's queue drains in seconds
ENGINE_FULL = "the analysis engine is at capacity"


def engine_at_capacity(why: str, *, retry_after: int = ENGINE_RETRY_AFTER_S) -> TrackgradeError:
    """503 engine_at_capacity saying `why`, with Retry-After."""
    return TrackgradeError("engine_at_capacity", why, headers={"Retry-After": str(retry_after)})
