"""Which claimed attempt starts next: delivery slots shared fairly between
accounts, then between each account's endpoints.

    account    at most its share of the pool: `concurrency // accounts with
               work`, and never more than ACCOUNT_SHARE of it even alone, so
               an account that shows up while another holds the pool (slow
               or trickling receivers, up to the attempt deadline each) finds
               free slots at once instead of waiting for the others' attempts
               to end
    endpoint   at most `per_endpoint`, and its part of its account's share
               (at least 1); 1 while its last attempt got no answer at all
    order      round robin over accounts, then over each account's endpoints

`room()` bounds what the dispatcher claims from the store the same way
(PREFETCH attempts per slot), so one account's backlog never fills the
claim budget either. Pure bookkeeping: no threads, no store.
"""

from __future__ import annotations

from collections import deque

ACCOUNT_SHARE = 0.75        # most of the pool one account may hold, even alone
PREFETCH = 4                # claimed attempts held per attempt slot


class Slots:
    def __init__(self, concurrency: int, per_endpoint: int) -> None:
        self.concurrency = concurrency
        self.per_endpoint = per_endpoint
        self.busy: dict[str, int] = {}          # endpoint -> attempts in flight
        self.queued: dict[str, deque] = {}      # endpoint -> claimed jobs waiting
        self.unanswered: set[str] = set()       # endpoints whose last attempt got no answer
        self._account: dict[str, str] = {}      # endpoint -> its account
        self._turn = 0

    # --- bookkeeping --------------------------------------------------------------------

    def queue(self, job) -> None:
        self._account[job.webhook_id] = job.account_id
        self.queued.setdefault(job.webhook_id, deque()).append(job)

    def drop_queued(self, webhook_id: str) -> list:
        return list(self.queued.pop(webhook_id, ()))

    def started(self, job) -> None:
        self.busy[job.webhook_id] = self.busy.get(job.webhook_id, 0) + 1

    def finished(self, job, answered: bool) -> None:
        left = self.busy.get(job.webhook_id, 1) - 1
        if left > 0:
            self.busy[job.webhook_id] = left
        else:
            self.busy.pop(job.webhook_id, None)
        (self.unanswered.discard if answered else self.unanswered.add)(job.webhook_id)

    def in_flight(self) -> int:
        return sum(self.busy.values())

    # --- shares -------------------------------------------------------------------------

    def _active(self) -> dict[str, set[str]]:
        """Accounts with work in flight or queued, and those endpoints."""
        active: dict[str, set[str]] = {}
        for webhook_id in set(self.busy) | set(self.queued):
            active.setdefault(self._account.get(webhook_id, ""), set()).add(webhook_id)
        return active

    def account_cap(self, account: str | None, active: dict | None = None) -> int:
        active = self._active() if active is None else active
        accounts = len(active) + (account not in active)
        return max(1, min(int(self.concurrency * ACCOUNT_SHARE),
                          self.concurrency // accounts))

    def endpoint_cap(self, webhook_id: str, active: dict | None = None) -> int:
        if webhook_id in self.unanswered:
            return 1
        active = self._active() if active is None else active
        account = self._account.get(webhook_id, "")
        endpoints = len(active.get(account, ())) or 1
        share = self.account_cap(account, active) // endpoints
        return max(1, min(self.per_endpoint, share))

    def _held_by(self, account: str, active: dict) -> tuple[int, int]:
        """(in flight, in flight + queued) for `account`."""
        busy = sum(self.busy.get(w, 0) for w in active.get(account, ()))
        return busy, busy + sum(len(self.queued.get(w, ())) for w in active.get(account, ()))

    # --- choosing -----------------------------------------------------------------------

    def pick(self):
        """The next queued job whose account and endpoint have a free slot
        (removed from the queue), or None."""
        if self.in_flight() >= self.concurrency or not self.queued:
            return None
        active = self._active()
        accounts = sorted({self._account.get(w, "") for w in self.queued})
        self._turn += 1
        for account in _rotated(accounts, self._turn):
            if self._held_by(account, active)[0] >= self.account_cap(account, active):
                continue
            mine = sorted(w for w in self.queued if self._account.get(w, "") == account)
            for webhook_id in _rotated(mine, self._turn):
                if self.busy.get(webhook_id, 0) >= self.endpoint_cap(webhook_id, active):
                    continue
                waiting = self.queued[webhook_id]
                job = waiting.popleft()
                if not waiting:
                    del self.queued[webhook_id]
                return job
        return None

    def room(self) -> tuple[dict, dict]:
        """What may be claimed now: per endpoint and per account (key None:
        one not seen yet), PREFETCH per slot less what is held."""
        active = self._active()
        endpoints: dict = {None: self.per_endpoint * PREFETCH}
        for webhook_id in set(self.busy) | set(self.queued) | self.unanswered:
            endpoints[webhook_id] = (self.endpoint_cap(webhook_id, active) * PREFETCH
                                     - self.busy.get(webhook_id, 0)
                                     - len(self.queued.get(webhook_id, ())))
        accounts: dict = {None: self.account_cap(None, active) * PREFETCH}
        for account in active:
            accounts[account] = (self.account_cap(account, active) * PREFETCH
                                 - self._held_by(account, active)[1])
        return endpoints, accounts


def _rotated(items: list, turn: int) -> list:
    if not items:
        return items
    start = turn % len(items)
    return items[start:] + items[:start]
