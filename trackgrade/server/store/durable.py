"""The durable store: a TinyDB snapshot plus an append-only journal.

TinyDB rewrites its whole file on every write and is not thread-safe, so it
is not used as a live database here. The live state is `MemoryStore`'s
(JSON text + indexes, in memory); disk holds, in the data directory:

    store.lock                 flock'ed for every transaction (all processes);
                               holds `journal.ack_mark` (see there)
    snapshot-<G>.jsonl         a TinyDB `SnapshotStorage` file: the state
                               after every journal generation < G
    journal-<G>.log            transactions since, one checksummed line each

The state is the newest snapshot S_G plus the journals G, G+1, ... replayed
in order (no snapshot: generation 0, empty). A transaction takes the thread
lock and the flock, catches up with lines other processes appended,
truncates a torn tail left by a crashed writer, applies its writes, appends
ONE line and fdatasyncs it before returning (outbox events ride in the same
line as the state change that caused them). Reads take the thread lock and,
only when the journal changed (one fstat and one stat when it did not), a
SHARED flock to catch up: a writer holds the exclusive flock from its append
through its fdatasync (and through the truncate when that fails), so a reader
never applies a line that is not yet durable. A journal shorter than the
offset a process has applied (a line it must not have seen) forces a reload.
So `trackgrade admin keys revoke` in another process is seen on the next call.

Compaction (journal past `compact_bytes`): under both locks the writer
starts journal G+1 and freezes a shallow copy of the state; a background
thread writes snapshot-(G+1) (tmp, fsync, rename, fsync dir) and then,
under the locks again, deletes older journals and snapshots. A crash at any
step leaves either the old snapshot with every journal, or the new snapshot
with the new journal: never an unreadable store.
"""

from __future__ import annotations

import errno
import fcntl
import json
import logging
import os
import re
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from trackgrade.server.store.base import COLLECTIONS, StoreError
from trackgrade.server.store.journal import (
    ack_mark, apply_ops, encode_line, mend_tail, read_ack_mark, read_transactions, tail_state,
)
from trackgrade.server.store.memory import MemoryStore, State, meta_of
from trackgrade.server.store.snapshot import (
    current_fields, fsync_dir, read_snapshot, write_snapshot,
)

log = logging.getLogger("trackgrade.server.store")

DEFAULT_COMPACT_BYTES = 64 << 20
_NAME = re.compile(r"^(snapshot|journal)-(\d{10})\.(jsonl|log)(\.tmp)?$")


def _snapshot_path(root: Path, generation: int) -> Path:
    return root / f"snapshot-{generation:010d}.jsonl"


def _journal_path(root: Path, generation: int) -> Path:
    return root / f"journal-{generation:010d}.log"


def _generations(root: Path) -> tuple[list[int], list[int], list[Path]]:
    """(snapshot generations, journal generations, leftover .tmp files)."""
    snapshots, journals, temps = [], [], []
    for name in os.listdir(root):
        match = _NAME.match(name)
        if not match:
            continue
        kind, generation, _, tmp = match.groups()
        if tmp:
            temps.append(root / name)
        elif kind == "snapshot":
            snapshots.append(int(generation))
        else:
            journals.append(int(generation))
    return sorted(snapshots), sorted(journals), temps


class TinyDBStore(MemoryStore):
    """A `Store` in a data directory, shared safely by threads and processes."""

    def __init__(self, data_dir: str | os.PathLike, *,
                 compact_bytes: int = DEFAULT_COMPACT_BYTES) -> None:
        super().__init__()
        self.root = Path(data_dir)
        self.compact_bytes = compact_bytes
        self._jfd: int | None = None
        self._generation = 0
        self._offset = 0
        self._compactor: threading.Thread | None = None
        self._flock_depth = 0
        try:
            self.root.mkdir(mode=0o700, parents=True, exist_ok=True)
            self._lockfd = os.open(self.root / "store.lock", os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as exc:
            raise StoreError(f"cannot open data directory {self.root}: "
                             f"{exc.strerror or exc}") from None
        try:
            self._load()
        except BaseException:
            if self._jfd is not None:
                os.close(self._jfd)
            os.close(self._lockfd)
            raise

    # -- locking ----------------------------------------------------------
    # flock is per open file description, so it cannot nest or tell threads
    # apart: it is only taken with self._lock held, and counted.
    def _lock_files(self) -> None:
        if self._flock_depth == 0:
            fcntl.flock(self._lockfd, fcntl.LOCK_EX)
        self._flock_depth += 1

    def _unlock_files(self) -> None:
        self._flock_depth -= 1
        if self._flock_depth == 0:
            fcntl.flock(self._lockfd, fcntl.LOCK_UN)

    @contextmanager
    def _shared(self) -> Iterator[None]:
        """A shared flock for catching up (readers exclude writers, not each
        other); inside an exclusive one it is already held."""
        if self._flock_depth == 0:
            fcntl.flock(self._lockfd, fcntl.LOCK_SH)
        self._flock_depth += 1
        try:
            yield
        finally:
            self._unlock_files()

    @contextmanager
    def _flocked(self) -> Iterator[None]:
        self._lock_files()
        try:
            yield
        finally:
            self._unlock_files()

    # -- opening ----------------------------------------------------------
    def _load(self) -> None:
        """Build the state from the newest snapshot and the journals after it."""
        try:
            with self._lock, self._flocked():
                snapshot_fd, journals = self._open_files()
        except OSError as exc:
            raise StoreError(f"cannot read data directory {self.root}: {exc}") from None
        state = State()
        unread = list(journals)
        try:
            if snapshot_fd is not None:
                self._load_snapshot(state, snapshot_fd, self._snapshot_name)
            while len(unread) > 1:
                generation, fd = unread.pop(0)
                self._replay_final(state, fd, _journal_path(self.root, generation))
        except BaseException:
            for _generation, fd in unread:
                os.close(fd)
            raise
        if self._jfd is not None:
            os.close(self._jfd)
        self._generation, self._jfd = journals[-1]
        self._offset = 0
        self._state = state
        with self._shared():
            self._catch_up()

    def _open_files(self) -> tuple[int | None, list[tuple[int, int]]]:
        """Under the flock: open the newest snapshot and every journal after it
        (open descriptors survive a concurrent compaction's unlink)."""
        snapshots, journals, temps = _generations(self.root)
        self._remove_stale(temps)
        base = snapshots[-1] if snapshots else (journals[0] if journals else 0)
        snapshot_fd = os.open(_snapshot_path(self.root, base), os.O_RDONLY) if snapshots else None
        self._snapshot_name = _snapshot_path(self.root, base)
        wanted = [g for g in journals if g >= base]
        if not wanted:
            fd = os.open(_journal_path(self.root, base), os.O_RDWR | os.O_CREAT, 0o600)
            fsync_dir(self.root)
            return snapshot_fd, [(base, fd)]
        return snapshot_fd, [(g, os.open(_journal_path(self.root, g), os.O_RDWR)) for g in wanted]

    @staticmethod
    def _remove_stale(temps: list[Path]) -> None:
        """Delete .tmp files no live compaction holds (crash leftovers)."""
        for path in temps:
            try:
                fd = os.open(path, os.O_RDONLY)
            except FileNotFoundError:
                continue
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                path.unlink(missing_ok=True)
            except OSError as exc:
                if exc.errno not in (errno.EAGAIN, errno.EACCES):
                    raise
            finally:
                os.close(fd)

    def _load_snapshot(self, state: State, fd: int, name: Path) -> None:
        try:
            header, blocks = read_snapshot(name, fd=fd)
            wanted = current_fields()
            stored = header.get("fields") or {}

            def records():
                for collection, metas, texts in blocks:
                    if collection not in wanted:
                        continue
                    if stored.get(collection) != wanted[collection]:   # indexes changed
                        metas = [meta_of(collection, json.loads(t)) for t in texts]
                    yield from zip([collection] * len(texts), metas, texts)
            state.load(records())
        finally:
            os.close(fd)

    @staticmethod
    def _replay_final(state: State, fd: int, path: Path) -> None:
        """Replay a rotated (final) journal whole; its tail, if any, is a
        crashed writer's: a whole record in it counts, a torn one is dropped."""
        try:
            offset = 0
            for ops, offset in read_transactions(fd, 0, path=path):
                apply_ops(state, ops)
            kind, size, ops = tail_state(fd, offset)
            if ops is not None:
                apply_ops(state, ops)
            elif kind == "torn":
                log.warning("store: ignoring a torn write of %d bytes at offset %d of %s",
                            size, offset, path)
        finally:
            os.close(fd)

    # -- following the journal ---------------------------------------------
    def _read_tail(self) -> None:
        path = _journal_path(self.root, self._generation)
        for ops, offset in read_transactions(self._jfd, self._offset, path=path):
            apply_ops(self._state, ops)
            self._offset = offset

    def _catch_up(self) -> None:
        """Apply every line other processes appended; follow journal rotations."""
        while True:
            info = os.fstat(self._jfd)
            if info.st_size < self._offset:     # we hold a line that is gone: start over
                self._load()
                return
            if info.st_size > self._offset:
                self._read_tail()
            following = _journal_path(self.root, self._generation + 1)
            if not following.exists():
                if info.st_nlink == 0:      # our journal was compacted away: start over
                    self._load()
                return
            self._read_tail()               # the rotated journal is final now
            try:
                fd = os.open(following, os.O_RDWR)
            except FileNotFoundError:
                self._load()
                return
            os.close(self._jfd)
            self._jfd, self._generation, self._offset = fd, self._generation + 1, 0

    # -- MemoryStore hooks ---------------------------------------------------
    def _refresh(self) -> None:
        info = os.fstat(self._jfd)
        if (info.st_size == self._offset and info.st_nlink
                and not _journal_path(self.root, self._generation + 1).exists()):
            return                          # nothing changed: no lock needed
        try:
            with self._shared():
                self._catch_up()
        except OSError as exc:
            raise StoreError(f"cannot read the store in {self.root}: "
                             f"{exc.strerror or exc}") from None

    def _begin(self) -> None:
        self._lock_files()
        try:
            self._catch_up()
            self._mend()
        except OSError as exc:
            self._unlock_files()
            raise StoreError(f"cannot use the store in {self.root}: "
                             f"{exc.strerror or exc}") from None
        except BaseException:
            self._unlock_files()
            raise

    def _mend(self) -> None:
        """Under the exclusive lock, after catching up: what follows the last
        whole record is a crashed writer's. A torn write is truncated (never
        more: damage before it raised while catching up); a whole record
        whose newline was lost gets it back and is applied."""
        if os.fstat(self._jfd).st_size == self._offset:
            return
        mark = read_ack_mark(os.pread(self._lockfd, 64, 0)) or (-1, 0)
        kind = mend_tail(self._jfd, self._offset)
        cut = kind == "torn" and mark[0] == self._generation and mark[1] > self._offset
        log.warning("store: %s tail after offset %d of %s %s", kind, self._offset,
                    _journal_path(self.root, self._generation),
                    f"dropped, but {mark[1]} bytes were acknowledged: records LOST" if cut
                    else "dropped (a crashed write)" if kind == "torn" else "restored")
        if kind != "torn":
            self._read_tail()

    def _commit(self, ops: dict) -> None:
        line = encode_line(ops)
        try:
            written = 0
            while written < len(line):
                written += os.pwrite(self._jfd, line[written:], self._offset + written)
            os.fdatasync(self._jfd)
        except OSError as exc:
            try:
                os.ftruncate(self._jfd, self._offset)
            except OSError:
                pass
            raise StoreError(f"cannot write the journal in {self.root}: "
                             f"{exc.strerror or exc}") from None
        self._offset += len(line)
        try:        # no fsync: a stale mark only ever under-reports, never accuses
            os.pwrite(self._lockfd, ack_mark(self._generation, self._offset), 0)
        except OSError:
            pass

    def _end(self) -> None:
        self._unlock_files()
        if self._offset > self.compact_bytes and self._compactor is None and not self._closed:
            try:        # the transaction is committed: a compaction failure must not undo that
                self.compact(wait=False)
            except Exception:
                log.exception("store compaction could not start in %s", self.root)

    # -- compaction ------------------------------------------------------------
    def compact(self, *, wait: bool = True) -> None:
        """Write a new snapshot of the current state and start a new journal.

        Writers are blocked only while the journal rotates; the snapshot is
        written by a background thread (`wait=True` joins it)."""
        with self._lock:
            self._check_open()
            thread = self._compactor if self._compactor is not None else self._rotate()
        if wait and thread is not None:
            thread.join()

    def _rotate(self) -> threading.Thread:
        with self._flocked():
            self._catch_up()
            self._mend()
            generation = self._generation + 1
            fd = os.open(_journal_path(self.root, generation), os.O_RDWR | os.O_CREAT, 0o600)
            fsync_dir(self.root)
            os.close(self._jfd)
            self._jfd, self._generation, self._offset = fd, generation, 0
            frozen = {c: (dict(self._state.docs[c]), dict(self._state.meta[c]))
                      for c in COLLECTIONS}
        thread = threading.Thread(target=self._write_compacted, args=(generation, frozen),
                                  name="trackgrade-store-compaction", daemon=True)
        self._compactor = thread
        thread.start()
        return thread

    def _write_compacted(self, generation: int, frozen: dict) -> None:
        try:
            write_snapshot(_snapshot_path(self.root, generation), generation, frozen)
            with self._lock, self._flocked():
                snapshots, journals, _ = _generations(self.root)
                for g in journals:
                    if g < generation:
                        _journal_path(self.root, g).unlink(missing_ok=True)
                for g in snapshots:
                    if g < generation:
                        _snapshot_path(self.root, g).unlink(missing_ok=True)
                fsync_dir(self.root)
        except Exception:
            log.exception("store compaction failed in %s (the journal still holds everything)",
                          self.root)
        finally:
            self._compactor = None

    # -- closing ---------------------------------------------------------------
    def close(self) -> None:
        thread = self._compactor
        if thread is not None:
            thread.join()
        with self._lock:
            if self._closed:
                return
            self._closed = True
            if self._jfd is not None:
                os.close(self._jfd)
                self._jfd = None
            os.close(self._lockfd)

    @property
    def journal_bytes(self) -> int:
        """Size of the current journal generation (what triggers compaction)."""
        return self._offset
