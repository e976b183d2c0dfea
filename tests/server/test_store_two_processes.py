"""The durable store shared by two processes (two stores on one directory:
flock is per open file description, so two stores in one process contend
exactly as two processes do).

The fault: a reader caught up without the file lock and could apply a line
whose writer's fdatasync then failed (the writer truncates it). The reader
kept a phantom write and an offset past the end of the journal; its next
commit left a zero-filled gap that stopped replay, so a later acknowledged
write was lost on reopen."""

from __future__ import annotations

import errno
import os
import threading

import pytest

from trackgrade.server.store import StoreError, open_store
from trackgrade.server.store import durable, layout


def _put(store, doc_id: str, **fields) -> None:
    with store.transaction() as txn:
        txn.put("settings", {"id": doc_id, **fields})


def test_a_reader_never_applies_a_line_whose_fdatasync_fails(tmp_path, monkeypatch):
    writer, reader = open_store(tmp_path), open_store(tmp_path)
    _put(writer, "before", n=1)
    assert reader.get("settings", "before") == {"id": "before", "n": 1}
    seen: dict = {}
    real = os.fdatasync

    def failing_fdatasync(fd: int) -> None:
        if fd != writer._jfd:
            return real(fd)
        # the line is written but not durable: a read in another "process" now
        thread = threading.Thread(target=lambda: seen.update(doc=reader.get("settings",
                                                                             "phantom")))
        thread.start()
        thread.join(0.5)
        raise OSError(errno.EIO, "Input/output error")

    monkeypatch.setattr(durable.os, "fdatasync", failing_fdatasync)
    with pytest.raises(StoreError):
        _put(writer, "phantom", n=2)
    monkeypatch.setattr(durable.os, "fdatasync", real)
    for _ in range(100):                # the reader was held until the writer gave up
        if "doc" in seen:
            break
        threading.Event().wait(0.02)
    assert seen == {"doc": None}
    assert reader.get("settings", "phantom") is None
    _put(reader, "after-reader", n=3)            # acknowledged writes of both stores
    _put(writer, "after-writer", n=4)
    writer.close(), reader.close()
    reopened = open_store(tmp_path)
    assert reopened.get("settings", "phantom") is None
    assert reopened.get("settings", "after-reader") == {"id": "after-reader", "n": 3}
    assert reopened.get("settings", "after-writer") == {"id": "after-writer", "n": 4}
    reopened.close()


def test_a_journal_shorter_than_the_applied_offset_forces_a_reload(tmp_path):
    writer, reader = open_store(tmp_path), open_store(tmp_path)
    _put(writer, "kept", n=1)
    size = os.fstat(writer._jfd).st_size
    _put(writer, "gone", n=2)
    assert reader.get("settings", "gone") is not None       # the reader applied it
    os.truncate(layout.journal_path(tmp_path, writer._generation), size)
    assert reader.get("settings", "gone") is None          # reloaded from what is there
    assert reader.get("settings", "kept") == {"id": "kept", "n": 1}
    _put(reader, "next", n=3)                              # appended at the real end
    reader.close(), writer.close()
    reopened = open_store(tmp_path)
    assert reopened.get("settings", "next") == {"id": "next", "n": 3}
    assert reopened.get("settings", "kept") == {"id": "kept", "n": 1}
    reopened.close()
