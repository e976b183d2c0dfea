"""The dispatcher: one loop thread that claims due deliveries and a bounded
pool of sender threads that make the attempts.

    loop      every `poll` seconds, or at once when an attempt finishes:
              record finished attempts (one transaction), claim due work
              for the room left (one transaction), hand it to the pool,
              now and then prune delivered events
    pool      `concurrency` daemon threads in all, shared fairly between
              accounts and then endpoints (slots.py): a slow, dead or
              trickling endpoint holds at most its share of the threads for
              at most the attempt deadline, and another account's work finds
              a free thread at once. Request threads never wait on it: they
              only write the outbox row.
    stop      records what has finished and abandons what is in flight
              (its connections are shut): the process can end at once, and
              the abandoned attempts' leases make them due again at the
              next start (`state.recover_leases`).
    prefetch  each round claims up to PREFETCH attempts per free slot and
              queues them here, so a finished attempt's slot is refilled at
              once instead of after the next store round; the lease covers
              the wait (PREFETCH + 1 timeouts). A queued job whose row moved
              on (410, endpoint removed, resent) is dropped, never sent.

Time comes from the injected clock (due times, backoff, `t`); tests drive a
`FixedClock` and call `deliver_due()` (claim, send, record, in the calling
thread) instead of running the loop.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
from dataclasses import dataclass

from trackgrade import signing
from trackgrade.server.clock import Clock
from trackgrade.server.store import Store
from trackgrade.server.webhooks import state
from trackgrade.server.webhooks.schedule import DEFAULT_SCHEDULE
from trackgrade.server.webhooks.sender import TIMEOUT_S, SendResult, WebhookSender
from trackgrade.server.webhooks.slots import PREFETCH, Slots

log = logging.getLogger("trackgrade.webhooks")


@dataclass(frozen=True)
class DispatchOptions:
    schedule: tuple[float, ...] = DEFAULT_SCHEDULE
    concurrency: int = 16           # attempts in flight, all endpoints
    per_endpoint: int = 4           # attempts in flight to one endpoint
    timeout: float = TIMEOUT_S
    poll: float = 0.05              # seconds between looks at the store when idle
    history: int = 1000             # finished events kept for `admin events resend`
    prune_every: float = 5.0        # seconds between prunes


def signed_headers(job: state.Job, t: int) -> dict[str, str]:
    """Service-Signature (one v1 per secret) and the Standard Webhooks trio,
    for an attempt made at `t`."""
    headers = {signing.SIGNATURE_HEADER: signing.sign(job.secrets, job.body, t)}
    try:
        headers.update(signing.standard_headers(job.secrets, job.event_id, t, job.body))
    except ValueError:          # a secret that is not base64: Service-Signature only
        headers.update({"webhook-id": job.event_id, "webhook-timestamp": str(t)})
    return headers


class Dispatcher:
    def __init__(self, store: Store, clock: Clock, sender: WebhookSender,
                 options: DispatchOptions = DispatchOptions(), *,
                 rng: random.Random | None = None) -> None:
        self.store = store
        self.clock = clock
        self.sender = sender
        self.options = options
        self.rng = rng or random.Random()
        self._done: queue.SimpleQueue = queue.SimpleQueue()
        self._jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.slots = Slots(options.concurrency, options.per_endpoint)
        self._held: set[str] = set()            # delivery ids claimed, not yet recorded
        self._unrecorded: list = []             # finished attempts a failed round could not record
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._senders: list[threading.Thread] = []
        self._last_prune = 0.0

    # --- running ---------------------------------------------------------------------------

    def start(self, *, exclusive: bool = True) -> None:
        """Recover leases of a dead predecessor (`exclusive`: this process is
        the store's only dispatcher) and start the loop."""
        if self._thread is not None:
            return
        if exclusive:
            recovered = state.recover_leases(self.store, self.clock.time())
            if recovered:
                log.info("webhooks: %d attempt(s) interrupted by a restart are due again",
                         recovered)
        self._senders = [threading.Thread(target=self._send_loop, daemon=True,
                                          name=f"trackgrade-webhook-{n}")
                         for n in range(self.options.concurrency)]
        for thread in self._senders:
            thread.start()
        self._thread = threading.Thread(target=self._loop, name="trackgrade-webhooks",
                                        daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop the loop, abandon the attempts in flight (their leases bring
        them back at the next start) and record those already finished."""
        self._stop.set()
        self._wake.set()
        abort = getattr(self.sender, "abort_all", None)
        if abort is not None:
            abort()
        for _ in self._senders:
            self._jobs.put(None)
        if self._thread is not None:
            self._thread.join(timeout)
            if not self._thread.is_alive():
                self._record_finished()

    def _record_finished(self) -> None:
        finished, self._unrecorded = self._unrecorded + self._drain(), []
        if finished:
            try:
                for outcome in state.record_results(self.store, finished, self.clock.time(),
                                                    self.options.schedule, self.rng):
                    _log(outcome)
            except Exception:  # noqa: BLE001 - stopping: the leases bring them back
                log.exception("webhooks: could not record the last attempts")

    def _send_loop(self) -> None:
        while True:
            job = self._jobs.get()
            if job is None or self._stop.is_set():
                return
            self._attempt(job)

    def kick(self) -> None:
        """Look at the store now (e.g. right after an event was written)."""
        self._wake.set()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                self.pump()
            except Exception:  # noqa: BLE001 - the loop must outlive a bad round
                log.exception("webhooks: a dispatch round failed")
                self._stop.wait(1.0)
            self._wake.wait(self.options.poll)
            self._wake.clear()

    def pump(self) -> int:
        """One round of the loop: refill free slots from the queue, record
        finished attempts and claim more in one transaction, refill again.
        Returns how many attempts it started."""
        finished = self._drain()
        for job, result in finished:
            self.slots.finished(job, answered=result.status is not None)
            if result.status == 410:                # gone: nothing more goes there
                self._drop_queued(job.webhook_id)
        started = self._start_ready()
        now = self.clock.time()
        opts = self.options
        room, account_room = self.slots.room()
        # what a failed round could not record is recorded with this round's:
        # an answered attempt is never lost to a store error and made again
        finished, self._unrecorded = self._unrecorded + finished, []
        try:
            outcomes, jobs = state.settle_and_claim(
                self.store, finished, now, room,
                total=max(0, opts.concurrency * PREFETCH - len(self._held)),
                lease=opts.timeout * (PREFETCH + 1) + 20, schedule=opts.schedule, rng=self.rng,
                held=self._held, account_room=account_room)
        except Exception:
            self._unrecorded = finished             # held (never claimed again) until written
            raise
        for job, _ in finished:
            self._held.discard(job.delivery_id)
        for outcome in outcomes:
            _log(outcome)
        for job in jobs:
            self._held.add(job.delivery_id)
            self.slots.queue(job)
        started += self._start_ready()
        if now - self._last_prune >= opts.prune_every:
            self._last_prune = now
            state.prune(self.store, keep=opts.history)
        return started

    def _drop_queued(self, webhook_id: str) -> None:
        for job in self.slots.drop_queued(webhook_id):
            self._held.discard(job.delivery_id)

    def _start_ready(self) -> int:
        """Start queued attempts while the pool, their account and their
        endpoint have room, in the order `Slots.pick` gives; a job whose
        delivery row moved on meanwhile is dropped."""
        started = 0
        while not self._stop.is_set():
            job = self.slots.pick()
            if job is None:
                return started
            row = self.store.get("deliveries", job.delivery_id)
            if row is None or row["state"] != "pending" \
                    or row.get("lease_id") != job.lease_id:
                self._held.discard(job.delivery_id)
                continue
            self.slots.started(job)
            self._jobs.put(job)
            started += 1
        return started

    def _attempt(self, job: state.Job) -> None:
        try:
            result = self.send(job)
        except Exception as exc:  # noqa: BLE001 - a sender bug is a failed attempt
            result = SendResult(None, None, f"{type(exc).__name__}: {exc}"[:200])
        self._done.put((job, result))
        self._wake.set()

    def send(self, job: state.Job) -> SendResult:
        """Sign afresh (this attempt's own t) and POST."""
        t = int(self.clock.time())
        return self.sender.send(job.url, job.body, signed_headers(job, t),
                                timeout=self.options.timeout, allow_private=job.allow_private)

    def _drain(self) -> list:
        finished = []
        while True:
            try:
                finished.append(self._done.get_nowait())
            except queue.Empty:
                return finished

    # --- driven by tests (FixedClock) --------------------------------------------------------

    def deliver_due(self) -> list[state.Outcome]:
        """Claim what is due now, make every attempt in this thread, record
        them; returns the outcomes. Not while the loop runs."""
        now = self.clock.time()
        jobs = state.claim_due(self.store, now, {None: self.options.per_endpoint},
                               total=self.options.concurrency)
        results = [(job, self.send(job)) for job in jobs]
        if not results:
            return []
        return state.record_results(self.store, results, self.clock.time(),
                                    self.options.schedule, self.rng)


def _log(outcome: state.Outcome) -> None:
    job, result = outcome.job, outcome.result
    answer = result.status if result.status is not None else result.error
    if outcome.state == "delivered":
        log.info("webhook %s -> %s: %s (attempt %d)", job.event_id, job.webhook_id, answer,
                 job.attempt)
    else:
        log.warning("webhook %s -> %s: %s (attempt %d, %s)", job.event_id, job.webhook_id,
                    answer, job.attempt, outcome.state if outcome.next_attempt_at is None
                    else f"retry at {outcome.next_attempt_at:.0f}")
