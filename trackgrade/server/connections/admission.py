"""What a request may send, decided from its head before any body byte is read.

`Gate.admit(head)` runs on waitress's event-loop thread and never touches the
store (one slow query there would stall every connection). It answers an
`Admission` (the most body bytes the request may send, and whose shares of
the body budget they count against) or raises `Refused` carrying the
TrackgradeError to answer, in the app's order (`routing`, the one home of
these rules): an unknown route 404 `route_not_found`, a method the route does
not take 405 `method_not_allowed` (with `Allow`), in maintenance 503
`service_unavailable` (the switch as last read by the sweeper or a request
thread); then:

- `GET`, `HEAD`, `DELETE`: no body at all (413 `request_too_large`);
- the upload route (`POST /v1/uploads/<id>`): the bearer upload token must be
  the one derived for that analysis (401 `upload_token_invalid`; whether it is
  still unused and unexpired is the route's check, against the store), the
  engine must have room (503 `engine_at_capacity`, token kept), and the
  declared size must fit the server's limit and the limit of the format the
  submitted `file_name` declares (413 `file_too_large`, which fails the
  analysis as the app would). The analysis's account, key, `file_name` and
  deadline come from the lifecycle's in-memory `AwaitingUploads` (on a store
  of its own the server made every analysis, so one it does not know awaits
  nothing: 401; on a shared database, one another node made moments ago is
  admitted under an "unattributed" share until the next sweep learns of it);
- every other route: at most `max_json_bytes` (413 `request_too_large`).

`BodyBudget` bounds the body bytes held by all requests together (waitress
buffers each body whole in memory before the app runs) and, for uploads, by
each account and each key: one tenant holds at most its share, so others
still get through. A request whose declared length does not fit is refused
with 503 `engine_at_capacity` and `Retry-After`, the message naming what is
full; a chunked body reserves as it arrives. A reservation is returned when
the request is closed (answered, or its connection gone), and an upload's
connection is closed when its analysis stops awaiting bytes or its token's
deadline passes (`channel.enforce_deadlines`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Callable

from trackgrade.errors import TrackgradeError
from trackgrade.server import routing

UPLOAD_ENDPOINT = "uploads.upload"
BODYLESS_METHODS = frozenset({"GET", "HEAD", "DELETE"})
BUDGET_RETRY_AFTER_S = 5
SERVER = "server"
UNATTRIBUTED = "unattributed"   # uploads of analyses this process does not know (yet)


class Refused(Exception):
    """A request refused from its head (or mid-body): `error` is the answer;
    `after` (if any) runs on a request thread before the answer is sent."""

    def __init__(self, error: TrackgradeError,
                 after: Callable[[], None] | None = None) -> None:
        super().__init__(error.message)
        self.error = error
        self.after = after


@dataclass(frozen=True)
class Head:
    method: str
    path: str
    headers: dict            # waitress's: upper case, "_" for "-"
    content_length: int
    chunked: bool


@dataclass
class Admission:
    limit: int                         # the most body bytes this request may send
    size_check: Callable[[int], None]  # raises Refused for a body that grew too large
    owners: tuple[str, ...] = ()       # the budget shares it counts against, beside the server's
    analysis_id: str | None = None     # an upload: it ends when the analysis stops awaiting bytes
    deadline: float | None = None      # ... or at this lifecycle-clock time (the token's expiry)


def shares(settings, largest: int) -> tuple[int, int, int]:
    """(server budget, one account's share, one key's share) in bytes: an
    account holds at most half the budget, a key half its account's share,
    each at least one largest upload."""
    capacity = max(settings.max_body_bytes_in_flight, largest)
    account = max(settings.max_body_bytes_per_account or capacity // 2, largest)
    return capacity, min(account, capacity), min(max(account // 2, largest), capacity)


class BodyBudget:
    """Body bytes in flight: all requests together, and per owner (an account,
    a key, the unattributed uploads), thread-safe."""

    def __init__(self, capacity: int, account_share: int | None = None,
                 key_share: int | None = None) -> None:
        self.capacity = capacity
        self.account_share = account_share or capacity
        self.key_share = key_share or self.account_share
        self.held = 0
        self.by_owner: dict[str, int] = {}
        self._lock = threading.Lock()

    def share(self, owner: str) -> int:
        return self.key_share if owner.startswith("key:") else self.account_share

    def reserve(self, size: int, owners: tuple[str, ...] = ()) -> str | None:
        """Reserve `size` bytes; None when done, else what is full (SERVER or an owner)."""
        with self._lock:
            if self.held + size > self.capacity:
                return SERVER
            for owner in owners:
                if self.by_owner.get(owner, 0) + size > self.share(owner):
                    return owner
            self.held += size
            for owner in owners:
                self.by_owner[owner] = self.by_owner.get(owner, 0) + size
            return None

    def release(self, size: int, owners: tuple[str, ...] = ()) -> None:
        with self._lock:
            self.held = max(0, self.held - size)
            for owner in owners:
                left = self.by_owner.get(owner, 0) - size
                if left > 0:
                    self.by_owner[owner] = left
                else:
                    self.by_owner.pop(owner, None)


def budget_full(size: int, budget: BodyBudget, full: str = SERVER) -> Refused:
    if full == SERVER:
        what = (f"the server holds as many request bodies as it can ({budget.held} of "
                f"{budget.capacity} bytes in flight; this one declares {size})")
    else:
        kind = full.split(":", 1)[0]
        what = (f"the uploads in progress of this {kind} hold {budget.by_owner.get(full, 0)} "
                f"bytes of its {budget.share(full)}-byte share of the server's body budget "
                f"(this one declares {size}); finish or abandon one")
    return Refused(TrackgradeError("engine_at_capacity", f"{what}; retry shortly",
                                   headers={"Retry-After": str(BUDGET_RETRY_AFTER_S)}))


def address_key(address: str) -> str:
    """What the per-address cap counts: an IPv4 address, or an IPv6 /64
    (one host is handed a whole /64; an IPv4-mapped address is its IPv4)."""
    import ipaddress

    try:
        ip = ipaddress.ip_address(address.split("%", 1)[0])
    except ValueError:
        return address
    if ip.version == 6:
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.ip_network(f"{ip}/64", strict=False))
    return str(ip)


class AddressCount:
    """Open connections per client address (IPv6: per /64), loop thread only."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.open_by_address: dict[str, int] = {}

    def open(self, address: str) -> bool:
        """Count one more; False when that puts the address over the cap."""
        key = address_key(address)
        count = self.open_by_address.get(key, 0) + 1
        self.open_by_address[key] = count
        return self.cap <= 0 or count <= self.cap

    def close(self, address: str) -> None:
        key = address_key(address)
        count = self.open_by_address.get(key, 0) - 1
        if count > 0:
            self.open_by_address[key] = count
        else:
            self.open_by_address.pop(key, None)


class Gate:
    """The admission rules of one server (`ctx`: the app's ServerContext,
    None for a bare WSGI app: then every route is held to `max_json_bytes`)."""

    def __init__(self, settings, ctx=None, *, upload_overhead: int, url_map=None) -> None:
        self.settings = settings
        self.ctx = ctx
        self.url_map = url_map
        self.overhead = upload_overhead
        self.budget = BodyBudget(*shares(settings, settings.max_upload_bytes + upload_overhead))
        self.connections = AddressCount(settings.max_connections_per_address)

    def admit(self, head: Head) -> Admission:
        method = head.method.upper()
        endpoint, args = (None, {}) if self.url_map is None else \
            _routed(self.url_map, method, head.path)
        if self.ctx is not None and routing.in_maintenance_scope(endpoint) \
                and self.ctx.maintenance_seen:
            raise Refused(routing.maintenance_error(self.settings.retry_after))
        if method in BODYLESS_METHODS:
            raise Refused(TrackgradeError(
                "request_too_large", f"{method} requests take no body; send none"))
        if endpoint == UPLOAD_ENDPOINT and self.ctx is not None:
            return self._admit_upload(head, str(args.get("analysis_id", "")))
        limit = self.settings.max_json_bytes

        def json_size(size: int) -> None:
            if size > limit:
                raise Refused(TrackgradeError(
                    "request_too_large", f"the request body is {size} bytes or more; "
                    f"JSON bodies may be at most {limit} bytes"))

        if not head.chunked:
            json_size(head.content_length)
        return Admission(limit, json_size)

    def _admit_upload(self, head: Head, analysis_id: str) -> Admission:
        from trackgrade.server.auth import bearer
        from trackgrade.server.lifecycle.tokens import token_invalid
        from trackgrade.server.routes.common import is_uuid
        from trackgrade.server.routes.uploads import check_room, check_upload_size

        lifecycle = self.ctx.lifecycle
        token = bearer(head.headers.get("AUTHORIZATION"))
        if not is_uuid(analysis_id) or (lifecycle.tokens.loaded
                                        and not lifecycle.tokens.matches(analysis_id, token)):
            raise Refused(token_invalid())
        entry = lifecycle.awaiting.get(analysis_id)
        now = lifecycle.clock.time()
        max_bytes = self.settings.max_upload_bytes
        if entry is None:
            if not lifecycle.shared:   # this process made every analysis: none awaits this
                raise Refused(token_invalid())
            # another node made it moments ago, or it awaits nothing: the route knows
            owners, deadline, file_name = (UNATTRIBUTED,), now + lifecycle.upload_ttl, None
        else:
            if now >= entry.expires_at:
                raise Refused(token_invalid())
            owners = (f"key:{entry.key_id}", f"account:{entry.account_id}")
            deadline, file_name = entry.expires_at, entry.file_name
            try:
                check_room(self.ctx.executor_for(entry.livemode))
            except TrackgradeError as err:
                raise Refused(err) from None

        def upload_size(size: int) -> None:
            try:
                check_upload_size(size, file_name, max_bytes, overhead=self.overhead)
            except TrackgradeError as err:
                raise Refused(err, after=self._reject(analysis_id, token, err)) from None

        if not head.chunked:
            upload_size(head.content_length)
        return Admission(max_bytes + self.overhead, upload_size, owners,
                         analysis_id if entry is not None else None, deadline)

    def _reject(self, analysis_id: str, token: str, err: TrackgradeError):
        """Fail the analysis (credit restored) as the upload route would have
        (on a request thread: the error task runs there)."""
        import logging

        def reject() -> None:
            try:
                self.ctx.lifecycle.reject_upload(analysis_id, token, err.code, err.message)
            except TrackgradeError:
                pass            # the token was spent meanwhile: nothing to fail
            except Exception:  # noqa: BLE001 - never break the error answer
                logging.getLogger("trackgrade.server").exception(
                    "failing an oversized upload failed")
        return reject

    def expired(self, admission: Admission) -> bool:
        """Whether an upload's reservation has ended: its analysis no longer
        awaits bytes here, or its token's deadline has passed."""
        if admission.deadline is None or self.ctx is None:
            return False
        lifecycle = self.ctx.lifecycle
        if admission.analysis_id is not None and admission.analysis_id not in lifecycle.awaiting:
            return True
        return lifecycle.clock.time() >= admission.deadline


def _routed(url_map, method: str, path: str) -> tuple[str | None, dict]:
    try:
        return routing.match(url_map, method, path)
    except TrackgradeError as err:
        raise Refused(err) from None
