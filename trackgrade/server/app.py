"""The app factory: `create_app(settings, store=, executor=, clock=)`.

Nothing exists at import time; everything the server uses is built here or
injected (STYLE.md habit 4): the store (durable by default, a MemoryStore in
tests), the live executor (worker processes by default), the test-mode
executor (threads: the canned analysis never touches the engine) and the
clock. The sweeper thread that fails expired uploads starts with
`ctx.start()` (`serve.py` does it) and can be driven directly with
`ctx.lifecycle.sweep()`.
"""

from __future__ import annotations

import io
import logging
import socket
import threading
import time
from dataclasses import dataclass, field

from flask import Flask, Request, g, request

from trackgrade.config import Settings
from trackgrade.server import envelope, reference, routing
from trackgrade.server.admin import MAINTENANCE_DOC
from trackgrade.server.clock import Clock, SystemClock
from trackgrade.server.idempotency import InFlightKeys
from trackgrade.server.lifecycle import Lifecycle
from trackgrade.server.ratelimit import MinuteWindow, StoreMinuteWindow
from trackgrade.server.store import Store, StoreError
from trackgrade.server.webhooks import (
    Dispatcher, DispatchOptions, HttpSender, WebhookSender, parse_schedule,
)
from trackgrade.server.worker import Executor, ProcessExecutor, ThreadExecutor

log = logging.getLogger("trackgrade.server")
access_log = logging.getLogger("trackgrade.access")

# the sweeper thread reads the maintenance switch at least this often
MAINTENANCE_REFRESH_S = 1.0


class InMemoryRequest(Request):
    """Multipart file parts go to memory, never to a spooled temporary file
    (Werkzeug's default factory spools parts over 500 KB to disk)."""

    max_form_parts = 16           # openapi.UPLOAD_MAX_PARTS

    def _get_file_stream(self, total_content_length, content_type, filename=None,
                         content_length=None):
        return io.BytesIO()


@dataclass
class ServerContext:
    settings: Settings
    store: Store
    clock: Clock
    executor: Executor
    test_executor: Executor
    lifecycle: Lifecycle
    window: MinuteWindow | StoreMinuteWindow
    idempotency: InFlightKeys = field(default_factory=InFlightKeys)
    webhooks: Dispatcher | None = None
    bound: tuple[str, int] | None = None      # (host, port) once a server listens
    _stop: threading.Event = field(default_factory=threading.Event)
    _sweeper: threading.Thread | None = None
    _next_sweep: float = 0.0

    # the maintenance switch as last read: the connection layer, on waitress's
    # event loop, reads only this (never the store); every read refreshes it
    maintenance_seen: bool = False

    def __post_init__(self) -> None:
        self.maintenance_seen = self.settings.maintenance

    def maintenance(self) -> bool:
        """The switch, read from the store (a request thread or the sweeper)."""
        if self.settings.maintenance:
            on = True
        else:
            doc = self.store.get("settings", MAINTENANCE_DOC)
            on = bool(doc and doc.get("on"))
        self.maintenance_seen = on
        return on

    def executor_for(self, livemode: bool) -> Executor:
        return self.executor if livemode else self.test_executor

    def start(self) -> None:
        """Recover work lost by a previous process, start the worker
        processes and the sweeper."""
        self.lifecycle.recover()
        self.lifecycle.sweep()
        self.lifecycle.tokens.key()     # the loop checks tokens without the store from now on
        self.maintenance()
        warm = getattr(self.executor, "warm", None)
        if warm is not None:
            warm()
        if self.webhooks is not None:
            # several nodes on one database: a dead node's leases expire to
            # the others; only a store's single server may take them at once
            self.webhooks.start(exclusive=not getattr(self.store, "shared", False))
        if self._sweeper is None:
            self._next_sweep = time.monotonic() + self.settings.sweep_interval
            self._sweeper = threading.Thread(target=self._sweep_loop, name="trackgrade-sweeper",
                                             daemon=True)
            self._sweeper.start()

    def _sweep_loop(self) -> None:
        while not self._stop.wait(min(self.settings.sweep_interval, MAINTENANCE_REFRESH_S)):
            try:
                self.maintenance()
                if time.monotonic() >= self._next_sweep:
                    self._next_sweep = time.monotonic() + self.settings.sweep_interval
                    self.lifecycle.sweep()
            except StoreError as exc:       # an outage: one line, the next sweep retries
                log.warning("the sweeper could not reach the store: %s", exc)
            except Exception:  # noqa: BLE001 - keep sweeping
                log.exception("the upload sweeper failed")

    def close(self, wait: bool = True) -> None:
        self._stop.set()
        if self.webhooks is not None:
            self.webhooks.stop()
        if self._sweeper is not None:
            self._sweeper.join(timeout=5)
        self.executor.shutdown(wait=wait)
        self.test_executor.shutdown(wait=wait)


def create_app(settings: Settings, *, store: Store | None = None,
               executor: Executor | None = None, test_executor: Executor | None = None,
               clock: Clock | None = None, sender: WebhookSender | None = None) -> Flask:
    """Build the Flask app and its `ServerContext` (`app.extensions["trackgrade"]`).
    `sender` is the webhook transport (default: real HTTP)."""
    from trackgrade.server import routes

    clock = clock or SystemClock()
    if store is None:
        from trackgrade.server.store import open_store
        store = open_store(settings.data_dir, database=settings.database_url or None)
    if executor is None:
        executor = ProcessExecutor(settings.workers, queue_size=settings.queue_size)
    if test_executor is None:
        test_executor = ThreadExecutor(2, queue_size=max(64, settings.test_in_flight * 4))
    docs_url = lambda: reference.request_root(settings, ctx.bound)  # noqa: E731
    lifecycle = Lifecycle(store, clock, docs_url=docs_url,
                          upload_ttl=settings.upload_token_ttl,
                          idempotency_ttl=settings.idempotency_ttl,
                          node=node_name(settings),
                          test_retention_days=settings.test_retention_days)
    window = StoreMinuteWindow(store, clock) if getattr(store, "shared", False) \
        else MinuteWindow(clock)
    ctx = ServerContext(settings=settings, store=store, clock=clock, executor=executor,
                        test_executor=test_executor, lifecycle=lifecycle, window=window,
                        webhooks=build_dispatcher(settings, store, clock, sender))
    lifecycle.on_event = ctx.webhooks.kick

    app = Flask("trackgrade.server", static_folder=None)
    app.request_class = InMemoryRequest
    app.config.update(MAX_CONTENT_LENGTH=None, MAX_FORM_MEMORY_SIZE=None,
                      JSON_SORT_KEYS=False, PROPAGATE_EXCEPTIONS=False, TRAP_HTTP_EXCEPTIONS=False)
    app.url_map.strict_slashes = False
    app.extensions["trackgrade"] = ctx
    envelope.install(app, docs_url, settings.retry_after)

    @app.before_request
    def _begin():
        g.started = time.perf_counter()
        g.request_id = envelope.new_request_id()
        if request.url_rule is not None and routing.in_maintenance_scope(request.endpoint) \
                and ctx.maintenance():
            raise routing.maintenance_error(settings.retry_after)

    @app.after_request
    def _rate_headers(response):
        state = g.get("rate_state")
        if state is not None:
            for name, value in state.headers().items():
                response.headers.setdefault(name, value)
        if access_log.isEnabledFor(logging.INFO):   # never bodies, never keys or tokens
            access_log.info("%s %s %d %.1fms %s", request.method, request.path,
                            response.status_code,
                            (time.perf_counter() - g.get("started", time.perf_counter())) * 1e3,
                            envelope.current_request_id())
        return response

    routes.register(app, ctx)
    return app


def node_name(settings: Settings) -> str:
    """This server's name on a shared database: --node-id, else host:port."""
    return settings.node_id or f"{socket.gethostname()}:{settings.port}"


def build_dispatcher(settings: Settings, store: Store, clock: Clock,
                     sender: WebhookSender | None = None) -> Dispatcher:
    """The webhook dispatcher the settings describe (started by `ctx.start()`)."""
    options = DispatchOptions(schedule=parse_schedule(settings.webhook_schedule),
                              concurrency=max(1, settings.webhook_concurrency),
                              per_endpoint=max(1, settings.webhook_per_endpoint),
                              timeout=max(0.1, settings.webhook_timeout),
                              history=max(0, settings.webhook_history))
    return Dispatcher(store, clock, sender or HttpSender(), options)


def context(app: Flask) -> ServerContext:
    return app.extensions["trackgrade"]
