"""Snapshots of the durable store, as a TinyDB storage.

A snapshot lists, per collection, the index fields of every document in one
JSON line, then the documents themselves, one compact JSON text per line, in
the same order, so the store loads 100,000 analyses as text without building
(and re-serialising) their dict trees:

    <crc> {"trackgrade_snapshot": 3, "generation": G, "fields": {collection: [field, ...]}}
    <crc> {"collection": "<name>", "count": N, "meta": [[<fields of doc 1>], ...], "crc": C}
    <document 1>
    ...
    <document N>
    ... (the next collection)
    <crc> {"end": <total documents>}

Checksums (CRC-32): `<crc>` (8 lowercase hex) covers the rest of its line,
`C` the N document lines of the block (newlines included). A damaged byte
anywhere raises `StoreDamage` naming the file and the offset of the line
or block that holds it: a snapshot is never served mangled. Format 2 (no
checksums, the same lines without `<crc> ` and "crc") is still read.

`SnapshotStorage` is a `tinydb.Storage` over that format, so any snapshot
opens in TinyDB for inspection or migration:

    TinyDB(path, storage=SnapshotStorage).table("accounts").all()

Every write (TinyDB's or the store's compaction) goes to `<path>.tmp`, is
fsynced, renamed over the target and the directory fsynced: a reader sees
the old file or the new one, never a torn one.
"""

from __future__ import annotations

import fcntl
import json
import mmap
import os
import zlib
from pathlib import Path
from typing import Any, Iterator, Mapping

from tinydb.storages import Storage

from trackgrade.server.store.base import COLLECTIONS, StoreDamage, StoreError, index_fields
from trackgrade.server.store.memory import dumps, meta_of

FORMAT = 3
UNCHECKED_FORMAT = 2      # read for older data directories

# {collection: ({id: text}, {id: meta})}: what a snapshot holds
Frozen = Mapping[str, tuple[Mapping[str, str], Mapping[str, dict]]]


def current_fields() -> dict[str, list[str]]:
    return {c: list(index_fields(c)) for c in COLLECTIONS}


def fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_snapshot(path: Path, generation: int, frozen: Frozen) -> int:
    """Atomically write the collections of `frozen` to `path`; returns the
    number of documents. The temporary file is flock'ed while written so a
    concurrent open can tell a live compaction from a crashed one's leftovers."""
    path = Path(path)
    tmp = path.with_name(path.name + ".tmp")
    fields = {c: list(index_fields(c)) if c in COLLECTIONS else ["id"] for c in frozen}
    total = 0
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)     # state is private
    with os.fdopen(fd, "wb", buffering=1 << 20) as out:
        fcntl.flock(out.fileno(), fcntl.LOCK_EX)
        out.write(_line({"trackgrade_snapshot": FORMAT, "generation": generation,
                         "fields": fields}))
        for collection, (docs, metas) in frozen.items():
            names = fields[collection]
            ids = list(docs)
            texts = [docs[i] if isinstance(docs[i], bytes) else docs[i].encode("ascii")
                     for i in ids]
            crc = 0
            for text in texts:
                crc = zlib.crc32(b"\n", zlib.crc32(text, crc))
            rows = [[metas[doc_id].get(name) for name in names] for doc_id in ids]
            out.write(_line({"collection": collection, "count": len(ids), "meta": rows,
                             "crc": crc}))
            for text in texts:
                out.write(text)
                out.write(b"\n")
            total += len(ids)
        out.write(_line({"end": total}))
        out.flush()
        os.fsync(out.fileno())
    os.replace(tmp, path)
    fsync_dir(path.parent)
    return total


def _line(value: dict) -> bytes:
    payload = dumps(value).encode("ascii")
    return b"%08x %s\n" % (zlib.crc32(payload), payload)


def read_snapshot(path: Path, *, fd: int | None = None
                  ) -> tuple[dict, Iterator[tuple[str, list[dict], list[bytes]]]]:
    """The header and an iterator of (collection, metas, texts) blocks; the
    texts are the documents' JSON as bytes (what `json.loads` takes).

    Raises StoreDamage when a checksum fails, StoreError when the file is
    not a complete snapshot. `fd`: read through this open descriptor (a
    duplicate of it; the caller keeps its own) instead of opening `path`,
    which then only names the file in messages."""
    lines = _Lines(open(path, "rb") if fd is None else os.fdopen(os.dup(fd), "rb"), Path(path))
    path = lines.path
    try:
        first = lines.take(1)[0]
        lines.checked = not first.startswith(b"{")
        header = lines.structure(first, 0)
        if header.get("trackgrade_snapshot") != (FORMAT if lines.checked else UNCHECKED_FORMAT):
            raise ValueError("not a trackgrade snapshot (or another format version)")
    except (ValueError, UnicodeDecodeError, AttributeError, StoreError) as exc:
        lines.close()
        if isinstance(exc, StoreDamage):
            raise
        raise StoreError(f"unreadable snapshot {path}: {exc}") from None
    return header, _blocks(lines, header, path)


class _Lines:
    """Newline-terminated records of a file, sliced straight out of an mmap
    (one copy per record; 3x cheaper than read + split at 400 MB)."""

    _RELEASE = 32 << 20   # hand consumed pages back every 32 MB: RSS stays the state's

    def __init__(self, handle, path: Path) -> None:
        self.handle, self.path = handle, path
        self.checked = True
        size = os.fstat(handle.fileno()).st_size
        self.map = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) if size else b""
        self.position = 0
        self.released = 0

    def take(self, count: int) -> list[bytes]:
        find, data, position = self.map.find, self.map, self.position
        out: list[bytes] = []
        append = out.append
        for _ in range(count):
            end = find(b"\n", position)
            if end < 0:
                raise StoreError(f"snapshot {self.path} is truncated")
            append(data[position:end])
            position = end + 1
            if position - self.released > self._RELEASE:
                self._release(position)
        self.position = position
        return out

    def structure(self, line: bytes, offset: int) -> dict:
        """A header, block or end line, its checksum verified."""
        if self.checked:
            if len(line) < 10 or line[8:9] != b" ":
                raise StoreDamage(self.path, offset, "a damaged line (no checksum)")
            if line[:8] != b"%08x" % zlib.crc32(line[9:]):    # exactly (not int(): "0X…")
                raise StoreDamage(self.path, offset, "the line fails its checksum")
            line = line[9:]
        value = json.loads(line)
        if not isinstance(value, dict):
            raise ValueError("a snapshot line is not an object")
        return value

    def check_range(self, start: int, end: int, crc: int, what: str) -> None:
        """The bytes [start, end) against their block checksum."""
        if not self.checked:
            return
        view = memoryview(self.map)[start:end] if isinstance(self.map, mmap.mmap) else b""
        try:
            found = zlib.crc32(view)
        finally:
            if isinstance(view, memoryview):
                view.release()
        if found != crc:
            raise StoreDamage(self.path, start, f"{what} fail their checksum")

    def _release(self, upto: int) -> None:
        end = upto - upto % mmap.PAGESIZE
        if end > self.released and hasattr(self.map, "madvise"):
            self.map.madvise(mmap.MADV_DONTNEED, self.released, end - self.released)
        self.released = end

    def close(self) -> None:
        if isinstance(self.map, mmap.mmap):
            self.map.close()
        self.handle.close()


def _blocks(lines: _Lines, header: dict, path: Path) -> Iterator[tuple[str, list[dict], list[bytes]]]:
    total = 0
    try:
        while True:
            offset = lines.position
            block = lines.structure(lines.take(1)[0], offset)
            if "end" in block:
                if block["end"] != total:
                    raise StoreError(f"snapshot {path} is incomplete")
                return
            collection, count = block["collection"], block["count"]
            names = header["fields"][collection]
            metas = [dict(zip(names, row)) for row in block["meta"]]
            if len(metas) != count:
                raise StoreError(f"snapshot {path} is inconsistent")
            start = lines.position
            texts = lines.take(count)
            lines.check_range(start, lines.position, block.get("crc"),
                              f"the {count} {collection} documents from here")
            total += count
            yield collection, metas, texts
    except (ValueError, KeyError, TypeError) as exc:
        raise StoreError(f"unreadable snapshot {path}: {exc}") from None
    finally:
        lines.close()


class SnapshotStorage(Storage):
    """TinyDB storage over a snapshot file (read it, or replace it atomically)."""

    def __init__(self, path: str | os.PathLike, generation: int = 0) -> None:
        self.path = Path(path)
        self.generation = generation

    def read(self) -> dict[str, dict[str, Any]] | None:
        if not self.path.exists():
            return None
        header, blocks = read_snapshot(self.path)
        self.generation = header.get("generation", self.generation)
        return {collection: {str(n): json.loads(text) for n, text in enumerate(texts, start=1)}
                for collection, _metas, texts in blocks}

    def write(self, data: dict[str, dict[str, Any]]) -> None:
        frozen = {}
        for collection, table in data.items():
            docs, metas = {}, {}
            for number, doc in table.items():
                doc = dict(doc)
                doc.setdefault("id", f"tinydb-{number}")
                known = collection in COLLECTIONS
                metas[doc["id"]] = meta_of(collection, doc) if known else {"id": doc["id"]}
                docs[doc["id"]] = dumps(doc)
            frozen[collection] = (docs, metas)
        write_snapshot(self.path, self.generation, frozen)

    def close(self) -> None:
        pass
