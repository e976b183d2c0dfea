"""One typed settings table for the server (and anything else that needs one).

Every setting has a name, an environment variable, a type, a default and a
help text, written once: as a field of the `Settings` dataclass (its
metadata holds the variable and the help). `SETTINGS`, the table the CLI
help and the README test read, is derived from those fields.
`load_settings(environ)` reads them from an *injected* mapping (never from
`os.environ` behind the caller's back), so tests build settings from a
plain dict. CLI flags override through `load_settings(..., **overrides)`.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields, replace
from typing import Mapping, get_type_hints


@dataclass(frozen=True)
class Setting:
    name: str
    env: str
    type: type
    default: object
    help: str


def setting(env: str, default: object, text: str):
    """A `Settings` field: its default, environment variable and help text."""
    return field(default=default, metadata={"env": env, "help": text})


@dataclass(frozen=True)
class Settings:
    data_dir: str = setting("TRACKGRADE_DATA", "./trackgrade-data",
        "Directory holding the server's state (accounts, analyses, outbox).")
    host: str = setting("TRACKGRADE_HOST", "127.0.0.1",
        "Interface the server listens on.")
    port: int = setting("TRACKGRADE_PORT", 8080,
        "TCP port the server listens on.")
    workers: int = setting("TRACKGRADE_WORKERS", 1,
        "Analysis worker processes (CPU-bound; one per spare core).")
    threads: int = setting("TRACKGRADE_THREADS", 8,
        "waitress request threads.")
    queue_size: int = setting("TRACKGRADE_QUEUE_SIZE", 4,
        "Analyses queued beyond those running before the engine answers 503 "
        "engine_at_capacity.")
    docs_url: str = setting("TRACKGRADE_DOCS_URL", "",
        "Error reference; each error's doc_url is `{docs_url}/<code>`. Empty: this instance's own, `<base>/v1/errors` (from `public_base_url`, else the request's host).")
    public_base_url: str = setting("TRACKGRADE_PUBLIC_BASE_URL", "",
        "Absolute base URL (scheme://host[:port]) used for upload URLs; "
        "empty: built from the request's Host.")
    upload_token_ttl: int = setting("TRACKGRADE_UPLOAD_TOKEN_TTL", 900,
        "Lifetime of an upload token in seconds (upload.expires_in).")
    sweep_interval: float = setting("TRACKGRADE_SWEEP_INTERVAL", 5.0,
        "Seconds between sweeps that fail analyses whose upload never came.")
    max_json_bytes: int = setting("TRACKGRADE_MAX_JSON_BYTES", 64 * 1024,
        "Largest JSON request body (413 request_too_large above).")
    max_upload_bytes: int = setting("TRACKGRADE_MAX_UPLOAD_BYTES", 200 * 1024 * 1024,
        "Largest upload (bytes) before the per-format limits of spec section 8 "
        "(413 file_too_large); waitress buffers up to this much per request, in memory.")
    max_duration_seconds: float = setting("TRACKGRADE_MAX_DURATION", 20 * 60.0,
        "Longest accepted track (413 file_rejected above).")
    rate_per_minute: int = setting("TRACKGRADE_RATE_PER_MINUTE", 30,
        "Live keys: requests per key per minute.")
    in_flight: int = setting("TRACKGRADE_IN_FLIGHT", 1,
        "Live keys: analyses in flight per key.")
    daily_quota: int = setting("TRACKGRADE_DAILY_QUOTA", 500,
        "Live keys: analyses per key per UTC day.")
    test_rate_per_minute: int = setting("TRACKGRADE_TEST_RATE_PER_MINUTE", 100,
        "Test keys: requests per key per minute.")
    test_in_flight: int = setting("TRACKGRADE_TEST_IN_FLIGHT", 20,
        "Test keys: analyses in flight per key (no daily quota).")
    idempotency_ttl: int = setting("TRACKGRADE_IDEMPOTENCY_TTL", 24 * 3600,
        "Seconds an Idempotency-Key replays its response.")
    maintenance: bool = setting("TRACKGRADE_MAINTENANCE", False,
        "Answer every API route with 503 service_unavailable.")
    retry_after: int = setting("TRACKGRADE_RETRY_AFTER", 30,
        "Retry-After seconds for 503 answers.")
    database_url: str = setting("TRACKGRADE_DATABASE_URL", "",
        "PostgreSQL URL (postgresql://user:pass@host/db): keep all state there instead "
        "of the data directory; several servers may share it.")
    node_id: str = setting("TRACKGRADE_NODE_ID", "",
        "This server's name among those sharing a database (default host:port); a "
        "restarted node recovers only the analyses its own name was computing.")
    webhook_schedule: str = setting("TRACKGRADE_WEBHOOK_SCHEDULE", "",
        "Webhook attempt waits in seconds, comma-separated (e.g. `0,1,2` in tests); "
        "empty: the CONTRACT schedule (0 s, 10 s, 1 min ... 24 h, about 3.2 days).")
    webhook_concurrency: int = setting("TRACKGRADE_WEBHOOK_CONCURRENCY", 16,
        "Webhook attempts in flight at once, all endpoints together; one account holds at "
        "most its share (and never more than 3/4 of them), so another account's deliveries "
        "always find room.")
    webhook_per_endpoint: int = setting("TRACKGRADE_WEBHOOK_PER_ENDPOINT", 4,
        "Webhook attempts in flight to one endpoint (a slow one never holds more).")
    webhook_timeout: float = setting("TRACKGRADE_WEBHOOK_TIMEOUT", 10.0,
        "Seconds one webhook attempt may take in all: connecting, TLS, sending and the "
        "whole answer (the CONTRACT's 10 s; shorter in tests); a receiver trickling its "
        "answer is cut off then. An attempt a dead node had claimed is taken over by another "
        "node after 5 of these plus 20 s.")
    webhook_history: int = setting("TRACKGRADE_WEBHOOK_HISTORY", 1000,
        "Delivered events kept for `admin events resend`; older ones are pruned.")
    test_retention_days: float = setting("TRACKGRADE_TEST_RETENTION_DAYS", 7.0,
        "Days test-mode analyses are kept; the sweeper then deletes them (0: keep forever).")
    max_body_bytes_in_flight: int = setting("TRACKGRADE_MAX_BODY_BYTES_IN_FLIGHT",
        512 * 1024 * 1024,
        "Request body bytes held in memory by all requests together (at least one "
        "largest upload); a body that does not fit is refused from its headers with 503 "
        "engine_at_capacity and Retry-After.")
    max_body_bytes_per_account: int = setting("TRACKGRADE_MAX_BODY_BYTES_PER_ACCOUNT", 0,
        "Upload body bytes one account's uploads may hold in flight together (0: half of "
        "max_body_bytes_in_flight; one key: half of this; each at least one largest "
        "upload); over it the account's next upload is refused with 503 "
        "engine_at_capacity, not anyone else's.")
    head_timeout: float = setting("TRACKGRADE_HEAD_TIMEOUT", 10.0,
        "Seconds a client has to send a whole request head (line and headers); a "
        "connection that has sent none by then is closed.")
    min_body_rate: int = setting("TRACKGRADE_MIN_BODY_RATE", 10 * 1024,
        "Slowest accepted request body, bytes per second over each 5 s window; a slower "
        "connection is closed.")
    max_connections: int = setting("TRACKGRADE_MAX_CONNECTIONS", 1000,
        "Open connections the server accepts at once (all clients together).")
    max_connections_per_address: int = setting("TRACKGRADE_MAX_CONNECTIONS_PER_ADDRESS", 64,
        "Open connections from one client address (0: no cap); more are answered 429 "
        "rate_limited. Behind a reverse proxy every client shares its address: raise it.")
    console: bool = setting("TRACKGRADE_CONSOLE", True,
        "Serve the developer console at /console (`--no-console`: off).")
    allowed_hosts: str = setting("TRACKGRADE_ALLOWED_HOSTS", "",
        "Comma-separated Host header values accepted when building upload URLs without "
        "public_base_url (`name` any port, `name:port` that port, `*` any); empty: the "
        "bound address, localhost and 127.0.0.1, with the port.")

    def replace(self, **changes) -> "Settings":
        return replace(self, **changes)


def _table() -> tuple[Setting, ...]:
    types = get_type_hints(Settings)
    return tuple(Setting(f.name, f.metadata["env"], types[f.name], f.default, f.metadata["help"])
                 for f in fields(Settings))


SETTINGS: tuple[Setting, ...] = _table()


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
