"""Processes by their parentage, read from /proc (Linux): what a server or a
batch started, and whether any of it is still running after its parent died.
Used by tests/server/test_no_orphans.py and benchmarks/bench_hardening.py."""

from __future__ import annotations

import os
import time
from pathlib import Path


def _stat(pid: int) -> tuple[int, str] | None:
    """(parent pid, state letter) of a process, None when it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None
    fields = text[text.rindex(")") + 2:].split()        # after "pid (comm) "
    return int(fields[1]), fields[0]


def descendants(pid: int) -> set[int]:
    """Every live process below `pid` (children, their children...)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            stat = _stat(int(entry))
            if stat is not None and stat[1] != "Z":
                children.setdefault(stat[0], []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def running(pids: set[int]) -> set[int]:
    """Those of `pids` still running (a zombie waiting to be reaped is not)."""
    return {pid for pid in pids if (stat := _stat(pid)) is not None and stat[1] != "Z"}


def wait_until_gone(pids: set[int], timeout: float) -> tuple[set[int], float]:
    """(the pids still running after `timeout` s, the seconds it took)."""
    started = time.monotonic()
    while running(pids) and time.monotonic() - started < timeout:
        time.sleep(0.05)
    return running(pids), time.monotonic() - started


def wait_for_descendants(pid: int, count: int, timeout: float) -> set[int]:
    """The descendants of `pid` once there are at least `count` of them (or
    whatever there are after `timeout` s)."""
    deadline = time.monotonic() + timeout
    found = descendants(pid)
    while len(found) < count and time.monotonic() < deadline:
        time.sleep(0.1)
        found = descendants(pid)
    return found


def command_line(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"
