"""One typed settings table for the server (and anything else that needs one).

Every setting has a name, an environment variable, a type, a default and a
help text; `load_settings(environ)` reads them from an *injected* mapping
(never from `os.environ` behind the caller's back), so tests build settings
from a plain dict. CLI flags override through `load_settings(..., **overrides)`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace
from typing import Mapping


@dataclass(frozen=True)
class Setting:
    name: str
    env: str
    type: type
    default: object
    help: str


SETTINGS: tuple[Setting, ...] = (
    Setting("data_dir", "TRACKGRADE_DATA", str, "./trackgrade-data",
            "Directory holding the server's state (accounts, analyses, outbox)."),
    Setting("host", "TRACKGRADE_HOST", str, "127.0.0.1", "Interface the server listens on."),
    Setting("port", "TRACKGRADE_PORT", int, 8080, "TCP port the server listens on."),
    Setting("workers", "TRACKGRADE_WORKERS", int, 1,
            "Analysis worker processes (CPU-bound; one per spare core)."),
    Setting("threads", "TRACKGRADE_THREADS", int, 8, "waitress request threads."),
    Setting("queue_size", "TRACKGRADE_QUEUE_SIZE", int, 4,
            "Analyses queued beyond those running before the engine answers 503 "
            "engine_at_capacity."),
    Setting("docs_url", "TRACKGRADE_DOCS_URL", str, "https://docs.trackgrade.dev/errors",
            "Error reference; each error's doc_url is `{docs_url}#<code>`."),
    Setting("public_base_url", "TRACKGRADE_PUBLIC_BASE_URL", str, "",
            "Absolute base URL (scheme://host[:port]) used for upload URLs; "
            "empty: built from the request's Host."),
    Setting("upload_token_ttl", "TRACKGRADE_UPLOAD_TOKEN_TTL", int, 900,
            "Lifetime of an upload token in seconds (upload.expires_in)."),
    Setting("sweep_interval", "TRACKGRADE_SWEEP_INTERVAL", float, 5.0,
            "Seconds between sweeps that fail analyses whose upload never came."),
    Setting("max_json_bytes", "TRACKGRADE_MAX_JSON_BYTES", int, 64 * 1024,
            "Largest JSON request body (413 request_too_large above)."),
    Setting("max_upload_bytes", "TRACKGRADE_MAX_UPLOAD_BYTES", int, 200 * 1024 * 1024,
            "Largest upload (bytes) before the per-format limits of spec section 8 "
            "(413 file_too_large); waitress buffers up to this much per request, in memory."),
    Setting("max_duration_seconds", "TRACKGRADE_MAX_DURATION", float, 20 * 60.0,
            "Longest accepted track (413 file_rejected above)."),
    Setting("rate_per_minute", "TRACKGRADE_RATE_PER_MINUTE", int, 30,
            "Live keys: requests per key per minute."),
    Setting("in_flight", "TRACKGRADE_IN_FLIGHT", int, 1,
            "Live keys: analyses in flight per key."),
    Setting("daily_quota", "TRACKGRADE_DAILY_QUOTA", int, 500,
            "Live keys: analyses per key per UTC day."),
    Setting("test_rate_per_minute", "TRACKGRADE_TEST_RATE_PER_MINUTE", int, 100,
            "Test keys: requests per key per minute."),
    Setting("test_in_flight", "TRACKGRADE_TEST_IN_FLIGHT", int, 20,
            "Test keys: analyses in flight per key (no daily quota)."),
    Setting("idempotency_ttl", "TRACKGRADE_IDEMPOTENCY_TTL", int, 24 * 3600,
            "Seconds an Idempotency-Key replays its response."),
    Setting("maintenance", "TRACKGRADE_MAINTENANCE", bool, False,
            "Answer every API route with 503 service_unavailable."),
    Setting("retry_after", "TRACKGRADE_RETRY_AFTER", int, 30,
            "Retry-After seconds for 503 answers."),
    Setting("database_url", "TRACKGRADE_DATABASE_URL", str, "",
            "PostgreSQL URL (postgresql://user:pass@host/db): keep all state there instead "
            "of the data directory; several servers may share it."),
    Setting("node_id", "TRACKGRADE_NODE_ID", str, "",
            "This server's name among those sharing a database (default host:port); a "
            "restarted node recovers only the analyses its own name was computing."),
    Setting("webhook_schedule", "TRACKGRADE_WEBHOOK_SCHEDULE", str, "",
            "Webhook attempt waits in seconds, comma-separated (e.g. `0,1,2` in tests); "
            "empty: the CONTRACT schedule (0 s, 10 s, 1 min ... 24 h, about 3.2 days)."),
    Setting("webhook_concurrency", "TRACKGRADE_WEBHOOK_CONCURRENCY", int, 16,
            "Webhook attempts in flight at once, all endpoints together."),
    Setting("webhook_per_endpoint", "TRACKGRADE_WEBHOOK_PER_ENDPOINT", int, 4,
            "Webhook attempts in flight to one endpoint (a slow one never holds more)."),
    Setting("webhook_history", "TRACKGRADE_WEBHOOK_HISTORY", int, 1000,
            "Delivered events kept for `admin events resend`; older ones are pruned."),
    Setting("max_body_bytes_in_flight", "TRACKGRADE_MAX_BODY_BYTES_IN_FLIGHT", int,
            512 * 1024 * 1024,
            "Request body bytes held in memory by all requests together (at least one "
            "largest upload); a body that does not fit is refused from its headers with 503 "
            "engine_at_capacity and Retry-After."),
    Setting("head_timeout", "TRACKGRADE_HEAD_TIMEOUT", float, 10.0,
            "Seconds a client has to send a whole request head (line and headers); a "
            "connection that has sent none by then is closed."),
    Setting("min_body_rate", "TRACKGRADE_MIN_BODY_RATE", int, 10 * 1024,
            "Slowest accepted request body, bytes per second over each 5 s window; a slower "
            "connection is closed."),
    Setting("max_connections", "TRACKGRADE_MAX_CONNECTIONS", int, 1000,
            "Open connections the server accepts at once (all clients together)."),
    Setting("max_connections_per_address", "TRACKGRADE_MAX_CONNECTIONS_PER_ADDRESS", int, 64,
            "Open connections from one client address (0: no cap); more are answered 429 "
            "rate_limited. Behind a reverse proxy every client shares its address: raise it."),
    Setting("allowed_hosts", "TRACKGRADE_ALLOWED_HOSTS", str, "",
            "Comma-separated Host header values accepted when building upload URLs without "
            "public_base_url (`name` any port, `name:port` that port, `*` any); empty: the "
            "bound address, localhost and 127.0.0.1, with the port."),
)


def _parse(setting: Setting, raw: str) -> object:
    if setting.type is bool:
        value = raw.strip().lower()
        if value in ("1", "true", "yes", "on"):
            return True
        if value in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(f"{setting.env}: expected a boolean, given {raw!r}")
    try:
        return setting.type(raw)
    except ValueError:
        raise ValueError(f"{setting.env}: expected {setting.type.__name__}, given {raw!r}") from None


@dataclass(frozen=True)
class Settings:
    data_dir: str = "./trackgrade-data"
    host: str = "127.0.0.1"
    port: int = 8080
    workers: int = 1
    threads: int = 8
    queue_size: int = 4
    docs_url: str = "https://docs.trackgrade.dev/errors"
    public_base_url: str = ""
    upload_token_ttl: int = 900
    sweep_interval: float = 5.0
    max_json_bytes: int = 64 * 1024
    max_upload_bytes: int = 200 * 1024 * 1024
    max_duration_seconds: float = 20 * 60.0
    rate_per_minute: int = 30
    in_flight: int = 1
    daily_quota: int = 500
    test_rate_per_minute: int = 100
    test_in_flight: int = 20
    idempotency_ttl: int = 24 * 3600
    maintenance: bool = False
    retry_after: int = 30
    database_url: str = ""
    node_id: str = ""
    webhook_schedule: str = ""
    webhook_concurrency: int = 16
    webhook_per_endpoint: int = 4
    webhook_history: int = 1000
    max_body_bytes_in_flight: int = 512 * 1024 * 1024
    head_timeout: float = 10.0
    min_body_rate: int = 10 * 1024
    max_connections: int = 1000
    max_connections_per_address: int = 64
    allowed_hosts: str = ""

    def replace(self, **changes) -> "Settings":
        return replace(self, **changes)


def load_settings(environ: Mapping[str, str] | None = None, **overrides) -> Settings:
    """Settings from `environ` (an injected mapping; empty when None), then
    `overrides` (CLI flags; a None override is ignored)."""
    environ = environ or {}
    values = {s.name: _parse(s, environ[s.env]) for s in SETTINGS if s.env in environ}
    values.update({k: v for k, v in overrides.items() if v is not None})
    unknown = set(values) - {f.name for f in fields(Settings)}
    if unknown:
        raise TypeError(f"unknown settings: {sorted(unknown)}")
    return Settings(**values)


def _check_table() -> None:
    names = [f.name for f in fields(Settings)]
    assert names == [s.name for s in SETTINGS], "SETTINGS and Settings disagree"
    for s, f in zip(SETTINGS, fields(Settings)):
        assert s.default == f.default, f"default of {s.name} disagrees"


_check_table()
