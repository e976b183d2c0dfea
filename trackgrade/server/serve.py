"""`trackgrade serve` on waitress, configured so audio stays in memory.

- `inbuf_overflow` above the largest accepted body and `max_request_body_size`
  at it: waitress never spools a request body to a temporary file (it would
  above its default 512 KB). Memory: an upload is held by waitress until the
  form is parsed (then freed: `routes.uploads.release_body`), by the parsed
  bytes and by their copy pickled to the worker: about 2.2x the file at the
  peak, measured (README "Memory"); `outbuf_overflow` is raised too so no
  response is spooled either.
- `connections.guard` refuses bodies from the request head (route limits,
  the upload token and declared size, a budget of body bytes in flight),
  enforces the slow-client deadlines and the per-address connection cap, and
  answers waitress's own framing errors with our envelope and an
  X-Request-Id instead of waitress's plain-text page.

- One server per data directory: `run` holds an exclusive flock on
  `<data>/server.lock` for the whole life of the process (never released by
  hand: the kernel releases it when the process ends, kill -9 included, so
  a process still winding down keeps it); a second `serve` on the same directory
  refuses with one line naming it. The admin commands do not take this lock
  (they share the store's own per-transaction lock), so they keep working on
  the directory of a running server.

`build_server(app, settings)` returns a waitress server (bound, not yet
running); `start_in_thread` runs one in a background thread (tests and
benchmarks); `run(settings)` is the command.
"""

from __future__ import annotations

import errno
import fcntl
import gc
import logging
import os
import signal
import stat
import sys
import threading
from dataclasses import dataclass

from waitress.server import create_server

from trackgrade.config import Settings
from trackgrade.server import reference
from trackgrade.server.connections import guard, waitress_adjustments
from trackgrade.server.routes.uploads import MULTIPART_OVERHEAD
from trackgrade.server.store import StoreError

log = logging.getLogger("trackgrade.server")

OUTBUF_OVERFLOW = 64 * 1024 * 1024
RECV_BYTES = 256 * 1024      # fewer, larger socket reads for multi-MB uploads
# request threads share one GIL: hand it over sooner than the default 5 ms so
# a short request waiting behind a long one (a 100-row list) is not held up
SWITCH_INTERVAL_S = 0.001


def adjustments(settings: Settings) -> dict:
    body_limit = settings.max_upload_bytes + MULTIPART_OVERHEAD
    return {"threads": settings.threads, "inbuf_overflow": body_limit + 1,
            "max_request_body_size": body_limit + 1, "outbuf_overflow": OUTBUF_OVERFLOW,
            "ident": "trackgrade", "channel_timeout": 60, "expose_tracebacks": False,
            "recv_bytes": RECV_BYTES, **waitress_adjustments(settings)}


def build_server(app, settings: Settings, *, host: str | None = None, port: int | None = None):
    server = create_server(app, host=host or settings.host,
                           port=settings.port if port is None else port,
                           **adjustments(settings))
    server.trackgrade_docs_url = reference.root(settings, (server.effective_host,
                                                           server.effective_port))
    guard(server, app, settings, upload_overhead=MULTIPART_OVERHEAD)
    ctx = app.extensions.get("trackgrade") if hasattr(app, "extensions") else None
    if ctx is not None:
        ctx.bound = (server.effective_host, server.effective_port)
    return server


@dataclass
class RunningServer:
    server: object
    thread: threading.Thread
    url: str

    def stop(self) -> None:
        """Finish running requests, then close every connection from inside
        the loop thread (its trigger), which ends the loop."""
        from waitress import wasyncore

        server = self.server
        server.task_dispatcher.shutdown(cancel_pending=True, timeout=5)
        try:
            server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
        except OSError:
            pass
        self.thread.join(timeout=10)


def start_in_thread(app, settings: Settings, *, host: str = "127.0.0.1",
                    port: int = 0) -> RunningServer:
    """Serve `app` on a background thread (port 0: a free port)."""
    server = build_server(app, settings, host=host, port=port)
    thread = threading.Thread(target=server.run, name="trackgrade-waitress", daemon=True)
    thread.start()
    return RunningServer(server, thread, f"http://{host}:{server.effective_port}")


SERVER_LOCK = "server.lock"
DATA_DIR_MODE = 0o700
_HELD_LOCKS: list[int] = []     # lock descriptors, open until the process ends


def lock_data_dir(data_dir: str) -> int:
    """Hold `<data_dir>/server.lock` exclusively (the returned descriptor
    keeps it); StoreError naming the directory when another server has it.
    The directory is made 0700, or tightened to it when it already exists
    (it holds the store, the upload-token secret and the keys' hashes)."""
    try:
        os.makedirs(data_dir, mode=DATA_DIR_MODE, exist_ok=True)
        if stat.S_IMODE(os.stat(data_dir).st_mode) != DATA_DIR_MODE:
            os.chmod(data_dir, DATA_DIR_MODE)
            log.warning("data directory %s tightened to mode 0700", data_dir)
        fd = os.open(os.path.join(data_dir, SERVER_LOCK), os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as exc:
        raise StoreError(f"cannot open data directory {data_dir}: "
                         f"{exc.strerror or exc}") from None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as exc:
        os.close(fd)
        if exc.errno in (errno.EAGAIN, errno.EACCES):
            raise StoreError(f"another trackgrade server is already serving the data "
                             f"directory {os.path.abspath(data_dir)}; stop it first or "
                             "pass another --data") from None
        raise StoreError(f"cannot lock data directory {data_dir}: "
                         f"{exc.strerror or exc}") from None
    return fd


def state_location(settings: Settings) -> str:
    """Where the state lives, for the start line (never a password)."""
    if settings.database_url:
        from trackgrade.server.app import node_name
        from trackgrade.server.store.postgres import redact
        return f"database {redact(settings.database_url)}, node {node_name(settings)}"
    return f"data {settings.data_dir}"


EXIT_GRACE_S = 10.0      # after "stopping", the longest the process may take to end


def _interrupt(signum, frame):
    raise KeyboardInterrupt


def _end_within(seconds: float) -> None:
    """Make sure the process ends `seconds` from now even if some thread
    will not (the lock must never outlive the server, nor the server its
    SIGTERM): a daemon timer that exits hard."""
    def _hard_exit():
        log.warning("trackgrade did not stop within %g s; exiting now", seconds)
        logging.shutdown()
        os._exit(1)
    timer = threading.Timer(seconds, _hard_exit)
    timer.daemon = True
    timer.start()


def run(settings: Settings) -> None:
    """The `trackgrade serve` command: build, bind, recover, serve until
    interrupted (SIGINT/SIGTERM); in-flight work is recovered on the next start."""
    from trackgrade.server import logs
    from trackgrade.server.app import context, create_app

    logs.configure()
    # one server per data directory, before recovery touches any work (servers
    # sharing a PostgreSQL database coordinate through it instead)
    if not settings.database_url:
        _HELD_LOCKS.append(lock_data_dir(settings.data_dir))
    app = create_app(settings)
    ctx = context(app)
    server = None
    try:
        server = build_server(app, settings)       # bind before touching any work
        ctx.start()
        gc.collect()
        gc.freeze()         # the loaded store is long-lived: keep it out of GC passes
        sys.setswitchinterval(SWITCH_INTERVAL_S)
        signal.signal(signal.SIGTERM, _interrupt)
        log.info("trackgrade serving on http://%s:%s (%s, %d worker%s%s)",
                 settings.host, server.effective_port, state_location(settings),
                 settings.workers,
                 "" if settings.workers == 1 else "s",
                 ", MAINTENANCE" if settings.maintenance else "")
        if not (settings.public_base_url or settings.allowed_hosts) \
                and settings.host not in ("127.0.0.1", "localhost", "::1"):
            from trackgrade.server.hosts import allowed_hosts
            log.warning("submissions are answered only for the Host values %s; set "
                        "TRACKGRADE_PUBLIC_BASE_URL or TRACKGRADE_ALLOWED_HOSTS for the name "
                        "clients use", ", ".join(allowed_hosts(settings, ctx.bound)))
        server.run()
    except KeyboardInterrupt:
        pass
    finally:
        log.info("trackgrade stopping")
        _end_within(EXIT_GRACE_S)
        if server is not None:
            server.task_dispatcher.shutdown(cancel_pending=True, timeout=5)
        ctx.close(wait=False)
        ctx.store.close()
        # the lock stays held (`_HELD_LOCKS`): the kernel releases it when the process ends
