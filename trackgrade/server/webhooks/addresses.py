"""Where a webhook may be delivered (CONTRACT section 5, "webhook URLs").

- no credentials in the URL (`https://user:pass@…` is refused, and the
  refusal never repeats them);
- `http://` only to loopback addresses (local testing with `trackgrade listen`);
- `https://` to a private, loopback, link-local, shared, reserved or
  cloud-metadata address only for an endpoint added with `--allow-private`.

`check_url` applies the rules when an endpoint is added (to the literal
address, or to what the name resolves to now); `address_refusal` applies them
again to the address each delivery actually connects to (sender.py), so a
name that later resolves somewhere private is still refused.
"""

from __future__ import annotations

import ipaddress
import socket
from urllib.parse import urlsplit, urlunsplit

from trackgrade.errors import TrackgradeError

# instance-metadata services reachable from cloud machines (AWS/GCP/Azure/
# OpenStack 169.254.169.254, AWS ECS 169.254.170.2, AWS IPv6, Alibaba, Azure wireserver)
METADATA = frozenset(ipaddress.ip_address(a) for a in (
    "169.254.169.254", "169.254.170.2", "fd00:ec2::254", "100.100.100.200", "168.63.129.16"))


def redacted(url: str) -> str:
    """`url` as it may be shown (listings, messages, logs): without any
    user:password part, and with every query value replaced by `***`
    (`?token=***&v=***`: a receiver's shared secret often rides there)."""
    url = url.encode("unicode_escape").decode("ascii") if not url.isprintable() else url
    try:
        parts = urlsplit(url)
    except ValueError:
        return "<an invalid URL>"
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"***@{netloc.rpartition('@')[2]}"
    query = "&".join(f"{name}=***" if sep else "***"
                     for name, sep, _ in (item.partition("=")
                                          for item in parts.query.split("&") if item))
    if netloc == parts.netloc and query == parts.query:
        return url
    return urlunsplit((parts.scheme, netloc, parts.path, query, parts.fragment))


def special_kind(address: str) -> str | None:
    """What makes `address` not a public one ("loopback", "private",
    "link-local", "cloud metadata", ...), or None for a public address."""
    ip = ipaddress.ip_address(address.split("%", 1)[0])
    if ip.version == 6 and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip in METADATA:
        return "cloud metadata"
    for kind in ("loopback", "link_local", "private", "multicast", "unspecified", "reserved"):
        if getattr(ip, f"is_{kind}"):
            return kind.replace("_", "-")
    return None if ip.is_global else "non-public"


def address_refusal(scheme: str, address: str, *, allow_private: bool) -> str | None:
    """Why a delivery may not connect to `address` (None: it may)."""
    kind = special_kind(address)
    if scheme == "http":
        return None if kind == "loopback" else (
            f"http:// deliveries go only to loopback addresses, not {address}")
    if kind is not None and not allow_private:
        return (f"{address} is a {kind} address; add the endpoint with --allow-private "
                "to deliver there")
    return None


def resolve(host: str, port: int) -> list[str]:
    """The addresses `host` resolves to now (empty when it does not resolve)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError):
        return []
    return list(dict.fromkeys(info[4][0] for info in infos))


def check_url(url: str, *, allow_private: bool = False) -> str:
    """400 `parameter_invalid` (param `url`) unless `url` may receive webhooks."""
    def refuse(why: str) -> TrackgradeError:
        return TrackgradeError("parameter_invalid", f"webhook URL {redacted(url)!r}: {why}",
                               param="url")
    try:
        parts = urlsplit(url)
        host = parts.hostname or ""
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        raise refuse("not a valid URL") from None
    if any(ord(ch) < 33 or 127 <= ord(ch) < 160 for ch in url):
        raise refuse("spaces and control characters are not allowed in a URL")
    if parts.username is not None or parts.password is not None:
        raise refuse("credentials in the URL are refused (they would be stored and shown); "
                      "authenticate deliveries with the signing secret")
    if parts.scheme not in ("http", "https") or not host:
        raise refuse("must be https:// (http:// only for loopback addresses)")
    try:
        addresses = [str(ipaddress.ip_address(host))]
    except ValueError:
        addresses = resolve(host, port)
    if parts.scheme == "http" and not addresses:
        raise refuse("must be https:// (http:// only for loopback addresses)")
    for address in addresses:
        why = address_refusal(parts.scheme, address, allow_private=allow_private)
        if why is not None:
            raise refuse(why if parts.scheme == "https" else
                         "must be https:// (http:// only for loopback addresses)")
    return url
