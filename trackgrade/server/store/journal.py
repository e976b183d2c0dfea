"""The append-only journal of the durable store: one line per transaction.

    <crc32 of payload, 8 lowercase hex> <payload JSON>\n
    payload = {"ops": [["p", collection, id, meta, text], ["d", collection, id], ...]}

`text` is the document's stored JSON text (a JSON string inside the line, so
a replay never re-serialises documents); `meta` its index fields. A line is
valid when it ends in a newline and its checksum matches.

Damage is told apart from a torn write by the newline: a writer appends one
whole line and fdatasyncs it before the transaction is acknowledged, so a
crash can only leave an *unterminated* tail (the torn tail: never
acknowledged, safe to drop; the next writer truncates it under the lock).
A newline-terminated line that fails its checksum is damage: reading raises
`StoreDamage` naming the file and the line's offset, and nothing behind
it is ever truncated. A tail that is a whole valid record whose newline is
missing (the last byte lost) is complete data: the writer restores the
newline instead of dropping it (`tail_state`).
"""

from __future__ import annotations

import json
import os
import zlib
from functools import lru_cache
from typing import Iterator

from trackgrade.server.store.base import StoreDamage, index_fields
from trackgrade.server.store.memory import State, meta_of

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
        if line[:8] != b"%08x" % zlib.crc32(payload):   # exactly: int() would take "0X1f…"
            return None
        return json.loads(payload)["ops"]
    except (ValueError, KeyError, TypeError):
        return None


def read_transactions(fd: int, offset: int, *, path="journal") -> Iterator[tuple[list, int]]:
    """Yield (ops, offset after the line) for every line from `offset` to
    the last newline; an unterminated tail is left alone (see `tail_state`).
    A terminated line that is not a valid record raises StoreDamage."""
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
                raise StoreDamage(path, position, "the record fails its checksum "
                                    f"({end - start + 1} bytes)")
            position += end + 1 - start
            yield ops, position
            start = end + 1
        pending = data[start:]


def ack_mark(generation: int, length: int) -> bytes:
    """The acknowledged mark, kept in durable.py's store.lock: the journal's
    generation and length after the last commit, written after that commit's
    fdatasync. A journal whose records end before its mark was cut inside
    acknowledged records, not torn by a crash (`admin store check` says so)."""
    return b"%010d %020d\n" % (generation, length)


def read_ack_mark(data: bytes) -> tuple[int, int] | None:
    """(generation, length) of a mark; None when there is none (an older store)."""
    parts = data.split(b"\n", 1)[0].split()
    if len(parts) != 2 or not all(p.isdigit() for p in parts):
        return None
    return int(parts[0]), int(parts[1])


def tail_state(fd: int, offset: int) -> tuple[str, int, list | None]:
    """What lies from `offset` (after the last whole record) to the end: its
    kind, size and, for a whole record, its ops. Kinds: "clean" (nothing),
    "torn" (a crashed write: drop it), or a whole valid record whose newline
    is "missing" (append one) or "damaged" (its last byte replaced: restore
    it). The last two are data: kept, never dropped."""
    tail = os.pread(fd, _CHUNK, offset)
    if not tail:
        return "clean", 0, None
    if len(tail) < _CHUNK:
        for kind, line in (("missing", tail), ("damaged", tail[:-1])):
            ops = decode_line(line)
            if ops is not None:
                return kind, len(tail), ops
    return "torn", len(tail), None


def mend_tail(fd: int, offset: int) -> str:
    """Under the writer's lock: truncate a torn tail, restore the newline of
    a whole record; returns what it found (see `tail_state`)."""
    kind, size, _ = tail_state(fd, offset)
    if kind == "torn":
        os.ftruncate(fd, offset)
    elif kind == "missing":
        os.pwrite(fd, b"\n", offset + size)
    elif kind == "damaged":
        os.pwrite(fd, b"\n", offset + size - 1)
    if kind != "clean":
        os.fsync(fd)
    return kind


def apply_ops(state: State, ops: list) -> None:
    """Replay one transaction's ops onto `state`. A record written before an
    index was added lacks that index's fields: they are read from the document."""
    for op in ops:
        if op[0] == "p":
            meta = op[3]
            if meta.keys() != _fields(op[1]):
                meta = meta_of(op[1], json.loads(op[4]))
            state.put(op[1], op[2], meta, op[4])
        else:
            state.delete(op[1], op[2])


@lru_cache(maxsize=None)
def _fields(collection: str) -> frozenset:
    return frozenset(index_fields(collection))
