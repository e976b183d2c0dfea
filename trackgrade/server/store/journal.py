"""The append-only journal of the durable store: one line per transaction.

    <crc32 of payload, 8 lowercase hex> <payload JSON>\\n
    payload = {"ops": [["p", collection, id, meta, text], ["d", collection, id], ...]}

`text` is the document's stored JSON text (a JSON string inside the line, so
a replay never re-serialises documents); `meta` its index fields. A line is
valid when it ends in a newline and its checksum matches; reading stops at
the first invalid line (a torn write from a crash: the next writer truncates
it away under the lock before appending).
"""

from __future__ import annotations

import json
import os
import zlib
from typing import Iterator

from trackgrade.server.store.memory import State

_CHUNK = 16 << 20


def encode_line(ops: dict) -> bytes:
    """One journal line for a transaction's `ops` ({(collection, id): (meta, text) | None})."""
    body = [["p", c, i, op[0], op[1]] if op is not None else ["d", c, i]
            for (c, i), op in ops.items()]
    payload = json.dumps({"ops": body}, separators=(",", ":")).encode("ascii")
    return b"%08x %s\n" % (zlib.crc32(payload), payload)


def decode_line(line: bytes) -> list | None:
    """The ops of one line (without its newline), or None when it is torn or corrupt."""
    if len(line) < 10 or line[8:9] != b" ":
        return None
    payload = line[9:]
    try:
        if int(line[:8], 16) != zlib.crc32(payload):
            return None
        return json.loads(payload)["ops"]
    except (ValueError, KeyError, TypeError):
        return None


def read_transactions(fd: int, offset: int) -> Iterator[tuple[list, int]]:
    """Yield (ops, offset after the line) for every valid line from `offset`,
    stopping at end of file or at the first invalid line."""
    pending = b""
    position = offset
    while True:
        chunk = os.pread(fd, _CHUNK, position + len(pending))
        if not chunk:
            return
        data = pending + chunk
        start = 0
        while True:
            end = data.find(b"\n", start)
            if end < 0:
                break
            ops = decode_line(data[start:end])
            if ops is None:
                return
            position += end + 1 - start
            yield ops, position
            start = end + 1
        pending = data[start:]


def apply_ops(state: State, ops: list) -> None:
    """Replay one transaction's ops onto `state`."""
    for op in ops:
        if op[0] == "p":
            state.put(op[1], op[2], op[3], op[4])
        else:
            state.delete(op[1], op[2])
