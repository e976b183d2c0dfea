"""`trackgrade admin store check`: read every file of a data directory's
store and report damage, changing nothing (no lock file created, no tail
truncated, nothing written).

Each snapshot is read through its checksums; each journal record by record,
past a damaged one (so the report says how many intact records lie behind
it: the data a careless truncation would lose). A torn tail (a crashed,
never-acknowledged write) is reported but is not damage: the next writer
drops it. A journal that ends before the acknowledged mark (store.lock,
durable.py) was cut inside records already acknowledged: that is damage,
even when what is left looks like a torn tail.
"""

from __future__ import annotations

import fcntl
import os
from dataclasses import dataclass, field
from pathlib import Path

from trackgrade.server.store.base import StoreDamage, StoreError
from trackgrade.server.store.durable import _NAME
from trackgrade.server.store.journal import decode_line, read_ack_mark, tail_state
from trackgrade.server.store.snapshot import read_snapshot

_CHUNK = 16 << 20


@dataclass
class FileReport:
    file: str
    kind: str                              # snapshot | journal
    records: int = 0                       # documents (snapshot) or intact records (journal)
    damage: list[dict] = field(default_factory=list)   # {"offset", "reason"}
    tail: str = "clean"                    # journals: clean | torn | missing | damaged
    tail_bytes: int = 0

    @property
    def ok(self) -> bool:
        return not self.damage

    def line(self) -> str:
        name = Path(self.file).name
        unit = "documents" if self.kind == "snapshot" else "records"
        if self.damage:
            first = self.damage[0]
            more = f" (+{len(self.damage) - 1} more damaged)" if len(self.damage) > 1 else ""
            text = (f"{name}: DAMAGED at offset {first['offset']}: {first['reason']}{more}; "
                    f"{self.records} intact {unit}")
        else:
            text = f"{name}: ok, {self.records} {unit}"
        if self.tail == "torn":
            text += f"; a torn write of {self.tail_bytes} bytes at the end (dropped at the next write)"
        elif self.tail in ("missing", "damaged"):
            text += "; the last record lost its newline (restored at the next write)"
        return text

    def as_dict(self) -> dict:
        return {"file": self.file, "kind": self.kind, "ok": self.ok, "records": self.records,
                "damage": self.damage, "tail": self.tail, "tail_bytes": self.tail_bytes}


def check_data_dir(root: str | os.PathLike) -> list[FileReport]:
    """Every snapshot and journal of the store in `root`, checked, in name
    order. StoreError when `root` is not a readable data directory."""
    root = Path(root)
    try:
        names = sorted(n for n in os.listdir(root) if _NAME.match(n) and not n.endswith(".tmp"))
    except OSError as exc:
        raise StoreError(f"cannot read data directory {root}: {exc.strerror or exc}") from None
    lock = root / "store.lock"
    lockfd = os.open(lock, os.O_RDONLY) if lock.exists() else None
    try:
        mark = None
        if lockfd is not None:
            fcntl.flock(lockfd, fcntl.LOCK_SH)      # no writer mid-append while we read
            mark = read_ack_mark(os.pread(lockfd, 64, 0))
        return [check_snapshot(root / n) if n.startswith("snapshot")
                else check_journal(root / n, acknowledged=_acknowledged(n, mark))
                for n in names]
    finally:
        if lockfd is not None:
            os.close(lockfd)


def _acknowledged(name: str, mark: tuple[int, int] | None) -> int:
    """The length the mark says journal `name` had when last acknowledged (0: unknown)."""
    if mark is None or int(_NAME.match(name).group(2)) != mark[0]:
        return 0
    return mark[1]


def check_snapshot(path: Path) -> FileReport:
    report = FileReport(str(path), "snapshot")
    try:
        _header, blocks = read_snapshot(path)
        for _collection, _metas, texts in blocks:
            report.records += len(texts)
    except StoreDamage as exc:
        report.damage.append({"offset": exc.offset, "reason": exc.reason})
    except StoreError as exc:
        report.damage.append({"offset": None, "reason": str(exc)})
    except OSError as exc:
        report.damage.append({"offset": None, "reason": f"unreadable: {exc.strerror or exc}"})
    return report


def check_journal(path: Path, *, acknowledged: int = 0) -> FileReport:
    """Every newline-terminated record of a journal (past damaged ones);
    damage too when its whole records end before `acknowledged` bytes."""
    report = FileReport(str(path), "journal")
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError as exc:
        report.damage.append({"offset": None, "reason": f"unreadable: {exc.strerror or exc}"})
        return report
    try:
        position, pending = 0, b""
        while True:
            chunk = os.pread(fd, _CHUNK, position + len(pending))
            if not chunk:
                break
            data, start = pending + chunk, 0
            while (end := data.find(b"\n", start)) >= 0:
                if decode_line(data[start:end]) is None:
                    report.damage.append({"offset": position, "reason": "the record fails its "
                                          f"checksum ({end - start + 1} bytes)"})
                else:
                    report.records += 1
                position += end + 1 - start
                start = end + 1
            pending = data[start:]
        report.tail, report.tail_bytes, _ = tail_state(fd, position)
        # what the next writer keeps: whole records, and a last one whose newline it restores
        kept = position + {"missing": report.tail_bytes + 1,
                           "damaged": report.tail_bytes}.get(report.tail, 0)
        if kept < acknowledged:
            report.damage.append({"offset": position, "reason": (
                f"the journal was cut inside acknowledged records: it ends at "
                f"{position + report.tail_bytes}, {acknowledged} bytes were acknowledged")})
    finally:
        os.close(fd)
    return report
