"""Connections that cannot hold the server hostage (CONTRACT section 5,
"bodies" and "slow clients").

waitress buffers a request's whole body in memory before the app sees it
(serve.py raises `inbuf_overflow` so audio never spools to disk), and its
`channel_timeout` counts only silence. So the rules live at waitress's level:

- `admission`: what a request may send, decided from its head (route,
  method, upload token, declared format size) before a body byte is read and
  without the store (the loop thread never waits on it), and the budget of
  body bytes in flight: server-wide, and a share per account and per key;
- `channel`: the guarded parser and channel (refusals answered with the
  envelope and drained, a per-address connection cap) and the deadlines
  (`head_timeout` for a request head, `min_body_rate` for a body, an upload's
  token for its reservation, a shorter idle keep-alive on a crowded server)
  checked once a second on the loop thread.

`guard(server, app, settings)` installs all of it on a waitress server.
"""

from __future__ import annotations

from trackgrade.server.connections.admission import Gate
from trackgrade.server.connections.channel import (
    EnvelopeErrorTask, GuardedChannel, enforce_deadlines,
)

CLEANUP_INTERVAL_S = 1

__all__ = ["EnvelopeErrorTask", "GuardedChannel", "guard", "waitress_adjustments"]


def waitress_adjustments(settings) -> dict:
    """The waitress adjustments the guard relies on: poll (no select() limit
    of 1024 descriptors), the connection limit, a one-second maintenance tick."""
    return {"connection_limit": settings.max_connections, "asyncore_use_poll": True,
            "cleanup_interval": CLEANUP_INTERVAL_S}


def guard(server, app, settings, *, upload_overhead: int) -> None:
    ctx = app.extensions.get("trackgrade") if hasattr(app, "extensions") else None
    server.trackgrade_gate = Gate(settings, ctx, upload_overhead=upload_overhead,
                                  url_map=getattr(app, "url_map", None))
    server.channel_class = GuardedChannel
    idle = server.maintenance           # waitress's own: silent connections

    def maintenance(now: float) -> None:
        idle(now)
        enforce_deadlines(server, now)

    server.maintenance = maintenance
