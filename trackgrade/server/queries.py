"""The server's domain questions, asked through the store seam only
(`select`, `count`, `get`), so every backend answers them the same way.

    list_analyses          one page of GET /v1/analyses (newest first, cursors)
    count_in_flight        a key's analyses still "processing"
    count_analyses_since   a key's analyses created since a moment (daily quota)
    pending_events         outbox rows not yet fanned out to endpoints

`source` is a `Store` or an open `Txn` (both have `get`, `select`, `count`).
"""

from __future__ import annotations

from trackgrade.errors import TrackgradeError
from trackgrade.server.store import Doc


def list_analyses(source, account_id: str, livemode: bool, limit: int = 20, *,
                  starting_after: str | None = None, ending_before: str | None = None,
                  key_id: str | None = None) -> tuple[list[Doc], bool]:
    """One page of an account's analyses of one mode (only those created by
    `key_id` when given: spec 4.2 lists "the analyses created by the calling
    key"), newest first by (created_at, id), and whether more exist beyond
    the page in the paging direction (older for `starting_after`/no cursor,
    newer for `ending_before`). Cursors are analysis ids of the same account,
    mode (and key); unknown ones raise TrackgradeError("parameter_invalid")."""
    index, partition = (("analyses.by_key", (key_id,)) if key_id is not None
                        else ("analyses.by_owner", (account_id, bool(livemode))))
    if starting_after is not None:
        cursor = _cursor(source, starting_after, "starting_after", account_id, livemode, key_id)
        rows = source.select(index, partition, newest_first=True, upto=cursor, limit=limit + 2)
        rows = [row for row in rows if row["id"] != starting_after]
        return rows[:limit], len(rows) > limit
    if ending_before is not None:
        cursor = _cursor(source, ending_before, "ending_before", account_id, livemode, key_id)
        rows = source.select(index, partition, since=cursor, limit=limit + 2)
        rows = [row for row in rows if row["id"] != ending_before]
        return rows[:limit][::-1], len(rows) > limit
    rows = source.select(index, partition, newest_first=True, limit=limit + 1)
    return rows[:limit], len(rows) > limit


def _cursor(source, analysis_id: str, param: str, account_id: str, livemode: bool,
            key_id: str | None) -> tuple:
    row = source.get("analyses", analysis_id)
    if (row is None or (row.get("account_id"), row.get("livemode")) != (account_id, livemode)
            or (key_id is not None and row.get("key_id") != key_id)):
        raise TrackgradeError("parameter_invalid", f"No such analysis: {analysis_id!r}",
                              param=param)
    return (row.get("created_at"), row["id"])


def count_in_flight(source, key_id: str) -> int:
    return source.count("analyses.in_flight", (key_id,))


def count_analyses_since(source, key_id: str, since_iso: str) -> int:
    """Pass `clock.isoformat(clock.utc_day_start(now))` for the daily quota."""
    return source.count("analyses.by_key", (key_id,), since=(since_iso,))


def pending_events(source, now: float | None = None, limit: int = 100) -> list[Doc]:
    """Outbox rows not yet fanned out whose next_attempt_at <= now (all of
    them when now is None), soonest first."""
    upto = None if now is None else (float(now),)
    return source.select("events.pending", (), limit=limit, upto=upto)
