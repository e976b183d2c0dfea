"""Delivery state as ordinary store records (collections "events",
"deliveries", "webhooks"), read and written only through store transactions.

    event      the outbox row `new_event` writes with the state change that
               caused it. "pending" until `claim_due` fans it out, then
               "dispatched". Its `envelope` is the body of every delivery.
    delivery   {"id": "<event id>:<endpoint id>", "event_id", "webhook_id",
                "account_id", "created", "state", "attempts",
                "next_attempt_at", "lease_until", "lease_id", "last_attempt_at",
                "last_status", "last_error", "delivered_at"}
               "state": "pending" -> "delivered" (a 2xx) | "failed" (schedule
               used up, or 410) | "cancelled" (endpoint disabled or removed).

One function, `claim_due`, picks the work: in ONE transaction it fans out
new events and, per endpoint with room, takes the due deliveries, bumping
`attempts` and leasing each one (`next_attempt_at` = now + lease, so no other
claimer takes it while the attempt runs). The PostgreSQL store turns the
per-endpoint select into `... FOR UPDATE SKIP LOCKED` with the same lease
(`skip_locked=True`): nodes sharing a database never claim the same row.
`record_results` writes a batch of outcomes in one transaction and ignores
outcomes whose lease was lost (the row's `lease_id` changed: resent, or
claimed again after the lease ran out).

After a crash the leased rows are still "pending": `recover_leases` (run at
start by the only server of a data directory) makes them due at once, so an
attempt that may not have reached the receiver is made again; an
acknowledged one was recorded "delivered" and is never sent again, unless the
crash fell between the receiver's 2xx and that write (then it is sent once
more: receivers dedupe on the event id).
"""

from __future__ import annotations

import json
import random
import secrets as secrets_module
from collections import deque
from dataclasses import dataclass
from typing import Iterable

from trackgrade.server.store import Store, Txn
from trackgrade.server.webhooks.schedule import next_wait
from trackgrade.server.webhooks.sender import TIMEOUT_S, SendResult

LEASE_S = TIMEOUT_S + 20.0       # an attempt still unrecorded after this is taken again
FAN_OUT_BATCH = 200
PRUNE_BATCH = 500


@dataclass(frozen=True)
class Job:
    """One claimed attempt: what to sign and where to POST it."""
    delivery_id: str
    event_id: str
    webhook_id: str
    url: str
    secrets: tuple[str, ...]
    body: bytes
    attempt: int
    lease_id: str = ""
    allow_private: bool = False        # the endpoint's --allow-private
    account_id: str = ""


def delivery_id(event_id: str, webhook_id: str) -> str:
    return f"{event_id}:{webhook_id}"


def event_body(event: dict) -> bytes:
    """The exact bytes every attempt of `event` sends (and signs)."""
    return json.dumps(event["envelope"], separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def signing_secrets(endpoint: dict, now: float) -> tuple[str, ...]:
    """The endpoint's current secret, then those still in their rotation overlap."""
    older = [old["secret"] for old in endpoint.get("previous_secrets") or ()
             if float(old.get("expires_at", 0)) > now]
    return (endpoint["secret"], *older)


def new_delivery(event: dict, webhook_id: str, now: float) -> dict:
    return {"id": delivery_id(event["id"], webhook_id), "event_id": event["id"],
            "webhook_id": webhook_id, "account_id": event["account_id"],
            "created": event["created"], "state": "pending", "attempts": 0,
            "next_attempt_at": float(now), "lease_until": None, "lease_id": None,
            "last_attempt_at": None,
            "last_status": None, "last_error": None, "delivered_at": None}


def fan_out(txn: Txn, now: float, limit: int = FAN_OUT_BATCH) -> int:
    """One delivery row per enabled endpoint of the account for each new
    event; the event becomes "dispatched". Returns how many events."""
    events = txn.select("events.pending", upto=(now,), limit=limit, skip_locked=True)
    for event in events:
        for endpoint in txn.select("webhooks.by_account", (event["account_id"],)):
            if endpoint.get("enabled", True):
                txn.put("deliveries", new_delivery(event, endpoint["id"], now))
        event["state"] = "dispatched"
        txn.put("events", event)
    return len(events)


def claim_due(store: Store, now: float, room: dict[str, int], *, total: int,
              lease: float = LEASE_S, account_room: dict | None = None) -> list[Job]:
    """Fan out new events, then claim up to `room[endpoint id]` due
    deliveries per enabled endpoint, `account_room[account id]` per account
    (no limit when None) and `total` in all, in one transaction, taking the
    accounts in turn. Endpoints and accounts missing from their dict get the
    entry for None (0 when there is none)."""
    return settle_and_claim(store, (), now, room, total=total, lease=lease,
                            account_room=account_room)[1]


def settle_and_claim(store: Store, finished: Iterable[tuple[Job, SendResult]], now: float,
                     room: dict[str, int], *, total: int, lease: float = LEASE_S,
                     schedule: tuple[float, ...] = (), rng: random.Random | None = None,
                     held: set[str] | frozenset = frozenset(),
                     account_room: dict | None = None,
                     ) -> tuple[list[Outcome], list[Job]]:
    """`record_results` for `finished`, then `claim_due`, in ONE transaction
    (one journal write per round of the dispatcher instead of two). Rows in
    `held` (claimed by this process and not yet recorded) are never claimed
    again, even if their lease ran out."""
    finished = list(finished)
    endpoints = [e for e in store.scan("webhooks") if e.get("enabled", True)
                 and min(room.get(e["id"], room.get(None, 0)), total) > 0]
    if not finished and not _anything_due(store, now, endpoints):
        return [], []           # the idle poll: reads only, no transaction
    with store.transaction() as txn:
        outcomes = _record_in(txn, finished, now, schedule, rng or random.Random())
        fan_out(txn, now)
        jobs = _claim_in(txn, now, endpoints, room, total, lease, held, account_room)
    return outcomes, jobs


def _claim_in(txn: Txn, now: float, endpoints: list[dict], room: dict, total: int,
              lease: float, held: set[str] | frozenset = frozenset(),
              account_room: dict | None = None) -> list[Job]:
    """Lease the due rows `_in_turn` picks."""
    jobs: list[Job] = []
    bodies: dict[str, bytes] = {}
    due = []
    for endpoint in endpoints:
        limit = min(room.get(endpoint["id"], room.get(None, 0)), total)
        rows = [row for row in txn.select("deliveries.due", (endpoint["id"],), limit=limit,
                                          upto=(now,), skip_locked=True)
                if row["id"] not in held]
        if rows:
            due.append((endpoint, rows))
    for endpoint, row in _in_turn(due, total, account_room):
        body = bodies.get(row["event_id"])
        if body is None:
            event = txn.get("events", row["event_id"])
            if event is None:           # pruned under it: nothing to send
                row["state"] = "cancelled"
                txn.put("deliveries", row)
                continue
            body = bodies[row["event_id"]] = event_body(event)
        row["attempts"] = int(row["attempts"]) + 1
        row.update(lease_until=now + lease, next_attempt_at=now + lease,
                   last_attempt_at=now, lease_id=secrets_module.token_hex(8))
        txn.put("deliveries", row)
        jobs.append(Job(row["id"], row["event_id"], endpoint["id"], endpoint["url"],
                        signing_secrets(endpoint, now), body, row["attempts"], row["lease_id"],
                        bool(endpoint.get("allow_private", False)),
                        endpoint.get("account_id", "")))
    return jobs


def _in_turn(due: list[tuple[dict, list[dict]]], total: int,
             account_room: dict | None) -> list[tuple[dict, dict]]:
    """(endpoint, row) pairs, one at a time with the accounts taking turns
    and each account's endpoints taking turns, up to `total` in all and
    `account_room` per account: no backlog uses up another's turn."""
    by_account: dict[str, deque] = {}
    for endpoint, rows in due:
        by_account.setdefault(endpoint.get("account_id", ""), deque()).append(
            (endpoint, deque(rows)))
    turns = deque(sorted(by_account))
    taken: dict[str, int] = {}
    picked = []
    while turns and len(picked) < total:
        account = turns.popleft()
        if account_room is not None and taken.get(account, 0) >= account_room.get(
                account, account_room.get(None, 0)):
            continue
        endpoints = by_account[account]
        endpoint, rows = endpoints.popleft()
        picked.append((endpoint, rows.popleft()))
        taken[account] = taken.get(account, 0) + 1
        if rows:
            endpoints.append((endpoint, rows))
        if endpoints:
            turns.append(account)
    return picked


def _anything_due(store: Store, now: float, endpoints: list[dict]) -> bool:
    if store.count("events.pending") and store.select("events.pending", limit=1,
                                                      upto=(now,)):
        return True
    return any(store.select("deliveries.due", (endpoint["id"],), limit=1, upto=(now,))
               for endpoint in endpoints)


@dataclass(frozen=True)
class Outcome:
    job: Job
    result: SendResult
    state: str                  # the delivery's state after this attempt
    next_attempt_at: float | None


def record_results(store: Store, results: Iterable[tuple[Job, SendResult]], now: float,
                   schedule: tuple[float, ...], rng: random.Random) -> list[Outcome]:
    """Write a batch of attempt outcomes in one transaction (see the module
    docstring); a 410 disables the endpoint and cancels its other deliveries."""
    with store.transaction() as txn:
        return _record_in(txn, results, now, schedule, rng)


def _record_in(txn: Txn, results: Iterable[tuple[Job, SendResult]], now: float,
               schedule: tuple[float, ...], rng: random.Random) -> list[Outcome]:
    outcomes = []
    latest: dict[str, SendResult] = {}
    for job, result in results:
        row = txn.get("deliveries", job.delivery_id)
        if row is None or row["state"] != "pending" or row.get("lease_id") != job.lease_id:
            continue                        # lease lost: the row moved on (resend, re-claim)
        row.update(lease_until=None, lease_id=None, last_status=result.status,
                   last_error=result.error)
        if result.acknowledged:
            row.update(state="delivered", delivered_at=now)
        elif result.status == 410:
            row["state"] = "failed"
        else:
            wait = next_wait(row["attempts"], schedule, rng, status=result.status,
                             retry_after=result.retry_after)
            if wait is None:
                row["state"] = "failed"
            else:
                row["next_attempt_at"] = now + wait
        txn.put("deliveries", row)
        latest[job.webhook_id] = result
        if result.status == 410:
            disable_endpoint(txn, job.webhook_id, now, "the endpoint answered 410 Gone")
        outcomes.append(Outcome(job, result, row["state"],
                                row["next_attempt_at"] if row["state"] == "pending" else None))
    for webhook_id, result in latest.items():        # one write per endpoint per batch
        _note_on_endpoint(txn, webhook_id, now, result)
    return outcomes


def _note_on_endpoint(txn: Txn, webhook_id: str, now: float, result: SendResult) -> None:
    endpoint = txn.get("webhooks", webhook_id)
    if endpoint is not None:
        endpoint.update(last_attempt_at=now, last_status=result.status,
                        last_error=result.error)
        txn.put("webhooks", endpoint)


def disable_endpoint(txn: Txn, webhook_id: str, now: float, reason: str) -> int:
    """No further attempts to this endpoint: disabled, pending deliveries
    cancelled. Returns how many were cancelled."""
    endpoint = txn.get("webhooks", webhook_id)
    if endpoint is not None and endpoint.get("enabled", True):
        endpoint.update(enabled=False, disabled_at=now, disabled_reason=reason)
        txn.put("webhooks", endpoint)
    return cancel_pending(txn, webhook_id)


def cancel_pending(txn: Txn, webhook_id: str) -> int:
    rows = txn.select("deliveries.due", (webhook_id,))
    for row in rows:
        row.update(state="cancelled", lease_until=None)
        txn.put("deliveries", row)
    return len(rows)


def recover_leases(store: Store, now: float) -> int:
    """At start, for the only server of a store: attempts leased by a
    process that died become due now. Returns how many."""
    recovered = 0
    for endpoint in store.scan("webhooks"):
        with store.transaction() as txn:
            for row in txn.select("deliveries.due", (endpoint["id"],)):
                if row.get("lease_until") is not None:
                    row.update(lease_until=None, lease_id=None, next_attempt_at=float(now))
                    txn.put("deliveries", row)
                    recovered += 1
    return recovered


def finished(txn: Txn, event: dict) -> bool:
    """Dispatched and no delivery of it still pending."""
    if event.get("state") == "pending":
        return False
    return all(row["state"] != "pending"
               for row in txn.select("deliveries.by_event", (event["id"],)))


def prune(store: Store, *, keep: int, limit: int = PRUNE_BATCH) -> int:
    """Delete the oldest finished events (and their delivery rows) beyond
    the newest `keep` events, up to `limit` per call. Events still being
    delivered stay. Returns how many were deleted."""
    excess = store.count("events.by_created") - keep
    if excess <= 0:
        return 0
    deleted = 0
    with store.transaction() as txn:
        for event in txn.select("events.by_created", limit=min(excess, limit)):
            if not finished(txn, event):
                continue
            for row in txn.select("deliveries.by_event", (event["id"],)):
                txn.delete("deliveries", row["id"])
            txn.delete("events", event["id"])
            deleted += 1
    return deleted


def resend(store: Store, event_id: str, now: float) -> list[dict]:
    """Deliver a kept event again to every enabled endpoint of its account
    (attempt count restarts). Returns the delivery rows; [] when the event
    was not fanned out yet (it is about to be delivered anyway). Raises
    LookupError for an unknown (or pruned) event."""
    with store.transaction() as txn:
        event = txn.get("events", event_id)
        if event is None:
            raise LookupError(event_id)
        if event.get("state") == "pending":
            return []
        rows = []
        for endpoint in txn.select("webhooks.by_account", (event["account_id"],)):
            if endpoint.get("enabled", True):
                row = new_delivery(event, endpoint["id"], now)
                txn.put("deliveries", row)
                rows.append(row)
        return rows
