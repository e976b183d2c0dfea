"""Upload tokens, derived rather than stored.

A token is `upt_` + the base64url HMAC-SHA256 of the analysis id under a
server secret. Nothing about it is stored, so every replay of a `POST
/analyses` answers the very token of the first response (spec 4.1: the
original response), and every node sharing a database derives the same
one. It opens the upload only while the analysis awaits its bytes and
before its deadline (single use: accepting the bytes ends that phase).

The secret is one document of the store's "settings" collection, created
on first use (inside the data directory, whose files are 0600, or in the
database for PostgreSQL, so all nodes agree). Creating it claims its id in
a transaction: two nodes starting together end with one secret.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import threading

from trackgrade.errors import TrackgradeError

SECRET_DOC = "upload_token_secret"
PREFIX = "upt_"


def token_invalid() -> TrackgradeError:
    """401 for a token that opens nothing (the route's and the head's answer)."""
    return TrackgradeError("upload_token_invalid", "the upload token is missing, invalid, "
                           "expired or already used; submit the analysis again")


class TokenMinter:
    def __init__(self, store) -> None:
        self.store = store
        self._key: bytes | None = None
        self._lock = threading.Lock()

    def key(self) -> bytes:
        """The server secret (loaded once; created on the first call ever).
        Call it outside any open transaction."""
        if self._key is None:
            with self._lock:
                if self._key is None:
                    self._key = self._load_or_create()
        return self._key

    def _load_or_create(self) -> bytes:
        doc = self.store.get("settings", SECRET_DOC)
        if doc is None:
            with self.store.transaction() as txn:
                doc = txn.get("settings", SECRET_DOC)       # claims the id on every node
                if doc is None:
                    doc = {"id": SECRET_DOC, "key": secrets.token_hex(32)}
                    txn.put("settings", doc)
        return bytes.fromhex(doc["key"])

    @property
    def loaded(self) -> bool:
        """Whether `key()` answers without the store (the event loop asks)."""
        return self._key is not None

    def token(self, analysis_id: str) -> str:
        mac = hmac.new(self.key(), b"upload:" + analysis_id.encode("utf-8"), hashlib.sha256)
        return PREFIX + base64.urlsafe_b64encode(mac.digest()).rstrip(b"=").decode("ascii")

    def matches(self, analysis_id: str, token: str | None) -> bool:
        return bool(token) and hmac.compare_digest(self.token(analysis_id).encode(),
                                                    token.encode("utf-8", "replace"))
