"""The dispatcher: one loop thread that claims due deliveries and a bounded
pool of sender threads that make the attempts.

    loop      every `poll` seconds, or at once when an attempt finishes:
              record finished attempts (one transaction), claim due work
              for the room left (one transaction), hand it to the pool,
              now and then prune delivered events
    pool      `concurrency` threads in all, at most `per_endpoint` attempts
              to one endpoint at a time: a slow or dead endpoint holds at
              most that many threads for at most the 10 s timeout, the
              others keep being served. Request threads never wait on it:
              they only write the outbox row.

Time comes from the injected clock (due times, backoff, `t`); tests drive a
`FixedClock` and call `deliver_due()` (claim, send, record, in the calling
thread) instead of running the loop.
"""

from __future__ import annotations

import logging
import queue
import random
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

from trackgrade import signing
from trackgrade.server.clock import Clock
from trackgrade.server.store import Store
from trackgrade.server.webhooks import state
from trackgrade.server.webhooks.schedule import DEFAULT_SCHEDULE
from trackgrade.server.webhooks.sender import TIMEOUT_S, SendResult, WebhookSender

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
        self._busy: dict[str, int] = {}
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._pool: ThreadPoolExecutor | None = None
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
        self._pool = ThreadPoolExecutor(self.options.concurrency,
                                        thread_name_prefix="trackgrade-webhook")
        self._thread = threading.Thread(target=self._loop, name="trackgrade-webhooks",
                                        daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)

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
        """One round of the loop: record finished attempts and claim new
        ones in one transaction; returns how many attempts it started."""
        finished = self._drain()
        for job, _ in finished:
            left = self._busy.get(job.webhook_id, 1) - 1
            if left > 0:
                self._busy[job.webhook_id] = left
            else:
                self._busy.pop(job.webhook_id, None)
        now = self.clock.time()
        total = self.options.concurrency - sum(self._busy.values())
        outcomes, jobs = state.settle_and_claim(
            self.store, finished, now, self._room(), total=max(0, total),
            schedule=self.options.schedule, rng=self.rng)
        for outcome in outcomes:
            _log(outcome)
        for job in jobs:
            self._busy[job.webhook_id] = self._busy.get(job.webhook_id, 0) + 1
            self._pool.submit(self._attempt, job)
        if now - self._last_prune >= self.options.prune_every:
            self._last_prune = now
            state.prune(self.store, keep=self.options.history)
        return len(jobs)

    def _room(self) -> dict:
        room = {webhook_id: self.options.per_endpoint - busy
                for webhook_id, busy in self._busy.items()}
        room[None] = self.options.per_endpoint
        return room

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
                                timeout=self.options.timeout)

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
