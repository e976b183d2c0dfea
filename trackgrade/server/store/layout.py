"""The files of a data directory (see durable.py): their names, which
generations are on disk, and the crash leftovers a new process removes.
Shared by the store and `admin store check`."""

from __future__ import annotations

import errno
import fcntl
import os
import re
from pathlib import Path

FILE_NAME = re.compile(r"^(snapshot|journal)-(\d{10})\.(jsonl|log)(\.tmp)?$")


def snapshot_path(root: Path, generation: int) -> Path:
    return root / f"snapshot-{generation:010d}.jsonl"


def journal_path(root: Path, generation: int) -> Path:
    return root / f"journal-{generation:010d}.log"


def generations(root: Path) -> tuple[list[int], list[int], list[Path]]:
    """(snapshot generations, journal generations, leftover .tmp files)."""
    snapshots, journals, temps = [], [], []
    for name in os.listdir(root):
        match = FILE_NAME.match(name)
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


def remove_stale(temps: list[Path]) -> None:
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
