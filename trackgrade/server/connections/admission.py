"""What a request may send, decided from its head before any body byte is read.

`Gate.admit(head)` answers an `Admission` (the most body bytes the request
may send, reserved from the server-wide budget) or raises `Refused` carrying
the TrackgradeError to answer, in the app's order: an unknown route 404
`route_not_found`, a method the route does not take 405 `method_not_allowed`
(with `Allow`), in maintenance 503 `service_unavailable`; then:

- `GET`, `HEAD`, `DELETE`: no body at all (413 `request_too_large`);
- the upload route (`POST /v1/uploads/<id>`): the bearer upload token must
  open that analysis (401 `upload_token_invalid`), the engine must have room
  (503 `engine_at_capacity`, token kept), and the declared size must fit the
  server's limit and the limit of the format the submitted `file_name`
  declares (413 `file_too_large`, which fails the analysis as the app would);
- every other route: at most `max_json_bytes` (413 `request_too_large`).

`BodyBudget` bounds the body bytes held by all requests together (waitress
buffers each body whole in memory before the app runs): a request whose
declared length does not fit is refused with 503 `engine_at_capacity` and
`Retry-After`; a chunked body reserves as it arrives. A reservation is
returned when the request is closed (answered, or its connection gone).
"""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass
from typing import Callable

from trackgrade.errors import TrackgradeError

log = logging.getLogger("trackgrade.server")
# after a store outage seen while admitting a head, heads are answered 503 without
# asking the store again for this long (each ask may wait for a connection)
STORE_RETRY_S = 1.0

UPLOADS = "/v1/uploads/"
OPENAPI = "/v1/openapi.json"     # served in maintenance too
BODYLESS_METHODS = frozenset({"GET", "HEAD", "DELETE"})
BUDGET_RETRY_AFTER_S = 5


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


class BodyBudget:
    """Body bytes in flight, all requests together (thread-safe)."""

    def __init__(self, capacity: int) -> None:
        self.capacity = capacity
        self.held = 0
        self._lock = threading.Lock()

    def reserve(self, size: int) -> bool:
        with self._lock:
            if self.held + size > self.capacity:
                return False
            self.held += size
            return True

    def release(self, size: int) -> None:
        with self._lock:
            self.held = max(0, self.held - size)


def budget_full(size: int, budget: BodyBudget) -> Refused:
    return Refused(TrackgradeError(
        "engine_at_capacity", f"the server holds as many request bodies as it can "
        f"({budget.held} of {budget.capacity} bytes in flight; this one declares {size}); "
        "retry shortly", headers={"Retry-After": str(BUDGET_RETRY_AFTER_S)}))


class AddressCount:
    """Open connections per client address (used on the loop thread only)."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.open_by_address: dict[str, int] = {}

    def open(self, address: str) -> bool:
        """Count one more; False when that puts the address over the cap."""
        count = self.open_by_address.get(address, 0) + 1
        self.open_by_address[address] = count
        return self.cap <= 0 or count <= self.cap

    def close(self, address: str) -> None:
        count = self.open_by_address.get(address, 0) - 1
        if count > 0:
            self.open_by_address[address] = count
        else:
            self.open_by_address.pop(address, None)


class Gate:
    """The admission rules of one server (`ctx`: the app's ServerContext,
    None for a bare WSGI app: then every route is held to `max_json_bytes`)."""

    def __init__(self, settings, ctx=None, *, upload_overhead: int, url_map=None) -> None:
        self.settings = settings
        self.ctx = ctx
        self.url_map = url_map
        self.overhead = upload_overhead
        largest = settings.max_upload_bytes + upload_overhead
        self.budget = BodyBudget(max(settings.max_body_bytes_in_flight, largest))
        self.connections = AddressCount(settings.max_connections_per_address)
        self.store_down_until = 0.0      # monotonic time before which the store is not asked

    def admit(self, head: Head) -> Admission:
        """The admission of one request head; a store that cannot be read here
        answers as the app would (503 service_unavailable with Retry-After)."""
        from trackgrade.server.envelope import store_unavailable
        from trackgrade.server.store import StoreError

        if time.monotonic() < self.store_down_until:       # no store wait on the event loop
            raise Refused(store_unavailable(None, self.settings.retry_after))
        try:
            return self._admit(head)
        except StoreError as exc:
            log.warning("store unavailable while admitting %s %s: %s", head.method, head.path, exc)
            self.store_down_until = time.monotonic() + STORE_RETRY_S
            raise Refused(store_unavailable(exc, self.settings.retry_after)) from None

    def _admit(self, head: Head) -> Admission:
        method = head.method.upper()
        self._route(method, head.path)
        if self.ctx is not None and head.path.rstrip("/") != OPENAPI and self.ctx.maintenance():
            raise Refused(TrackgradeError(
                "service_unavailable", "the service is down for maintenance; retry later",
                headers={"Retry-After": str(self.settings.retry_after)}))
        if method in BODYLESS_METHODS:
            raise Refused(TrackgradeError(
                "request_too_large", f"{method} requests take no body; send none"))
        if method == "POST" and head.path.startswith(UPLOADS) and self.ctx is not None:
            return self._admit_upload(head)
        limit = self.settings.max_json_bytes

        def json_size(size: int) -> None:
            if size > limit:
                raise Refused(TrackgradeError(
                    "request_too_large", f"the request body is {size} bytes or more; "
                    f"JSON bodies may be at most {limit} bytes"))

        if not head.chunked:
            json_size(head.content_length)
        return Admission(limit, json_size)

    def _route(self, method: str, path: str) -> None:
        """404 / 405 (with Allow) from the head, as the app's routing would answer."""
        if self.url_map is None:
            return
        from werkzeug.exceptions import MethodNotAllowed, NotFound
        from werkzeug.routing import RequestRedirect

        try:
            self.url_map.bind("trackgrade").match(path, method=method)
        except NotFound:
            raise Refused(TrackgradeError(
                "route_not_found", f"no route {path}; see /v1/openapi.json")) from None
        except MethodNotAllowed as exc:
            allowed = ", ".join(sorted(exc.valid_methods or ()))
            raise Refused(TrackgradeError(
                "method_not_allowed", f"{method} is not allowed here; allowed: {allowed}",
                headers={"Allow": allowed})) from None
        except RequestRedirect:
            pass

    def _admit_upload(self, head: Head) -> Admission:
        from trackgrade.server.auth import bearer
        from trackgrade.server.routes.common import is_uuid
        from trackgrade.server.routes.uploads import check_room, check_upload_size

        ctx = self.ctx
        analysis_id = head.path[len(UPLOADS):].rstrip("/")
        token = bearer(head.headers.get("AUTHORIZATION"))
        try:
            if not is_uuid(analysis_id):
                raise TrackgradeError("upload_token_invalid", "the upload token is missing, "
                                      "invalid, expired or already used; submit the analysis "
                                      "again")
            row = ctx.lifecycle.upload_row(analysis_id, token)
            check_room(ctx.executor_for(bool(row["livemode"])))
        except TrackgradeError as err:
            raise Refused(err) from None
        file_name = row["file_name"]
        max_bytes = self.settings.max_upload_bytes

        def upload_size(size: int) -> None:
            try:
                check_upload_size(size, file_name, max_bytes, overhead=self.overhead)
            except TrackgradeError as err:
                raise Refused(err, after=self._reject(analysis_id, token, err)) from None

        if not head.chunked:
            upload_size(head.content_length)
        return Admission(max_bytes + self.overhead, upload_size)

    def _reject(self, analysis_id: str, token: str, err: TrackgradeError):
        """Fail the analysis (credit restored) as the upload route would have."""
        def reject() -> None:
            try:
                self.ctx.lifecycle.reject_upload(analysis_id, token, err.code, err.message)
            except TrackgradeError:
                pass            # the token was spent meanwhile: nothing to fail
            except Exception:  # noqa: BLE001 - never break the error answer
                log.exception("failing an oversized upload failed")
        return reject
