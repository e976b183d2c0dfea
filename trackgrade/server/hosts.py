"""Which `Host` header values may become the service's URLs (CONTRACT section
5, "hosts"): without `public_base_url`, upload URLs are built from the Host
header, so a forged one (`Host: evil.example`) must never be stored and
replayed. Accepted: the `allowed_hosts` setting (comma-separated; `name`
matches that name on any port, `name:port` only that port, `*` anything),
by default the bound address, `localhost` and `127.0.0.1`, each with the
bound port."""

from __future__ import annotations

from trackgrade.errors import TrackgradeError

DEFAULT_NAMES = ("localhost", "127.0.0.1")


def split_host(value: str) -> tuple[str, int | None]:
    """("name", port or None) of a Host value; IPv6 literals keep their brackets."""
    value = value.strip().lower()
    if value.startswith("["):
        name, _, rest = value.partition("]")
        name += "]"
        port = rest[1:] if rest.startswith(":") else ""
    else:
        name, _, port = value.rpartition(":") if value.count(":") == 1 else (value, "", "")
    if port and not port.isdigit():
        raise ValueError(value)
    return name, int(port) if port else None


def allowed_hosts(settings, bound: tuple[str, int] | None) -> list[str]:
    configured = [h.strip().lower() for h in settings.allowed_hosts.split(",") if h.strip()]
    if configured:
        return configured
    host, port = bound or (settings.host, settings.port)
    names = dict.fromkeys([*DEFAULT_NAMES, f"[{host}]" if ":" in host else host])
    return [f"{name}:{port}" for name in names]


def host_allowed(host: str, allowed: list[str]) -> bool:
    try:
        name, port = split_host(host)
    except ValueError:
        return False
    if not name:
        return False
    for entry in allowed:
        if entry == "*":
            return True
        entry_name, entry_port = split_host(entry)
        if entry_name == name and (entry_port is None or entry_port == (port or 80)):
            return True
    return False


def check_host(host: str | None, settings, bound: tuple[str, int] | None) -> None:
    """400 `parameter_invalid` (param `Host`) unless `host` is allowed."""
    allowed = allowed_hosts(settings, bound)
    if not host or not host_allowed(host, allowed):
        shown = (host or "").encode("unicode_escape").decode("ascii")[:100]
        raise TrackgradeError(
            "parameter_invalid", f"the Host header {shown!r} is not one this server answers "
            f"to (allowed: {', '.join(allowed)}); set public_base_url or allowed_hosts",
            param="Host")
