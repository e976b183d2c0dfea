"""A decode bomb: a valid FLAC of long, high-rate audio that is almost all
CONSTANT subframes, so 20 minutes at 192 kHz stereo take under 1 MB of bytes
(written frame by frame here: no encoder, no samples in memory).

Used by tests/server/test_bounded_work.py and benchmarks/bench_hardening.py."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import time
from dataclasses import dataclass


def _crc8_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte
        for _ in range(8):
            crc = ((crc << 1) ^ 0x07) & 0xFF if crc & 0x80 else (crc << 1) & 0xFF
        table.append(crc)
    return table


def _crc16_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x8005) & 0xFFFF if crc & 0x8000 else (crc << 1) & 0xFFFF
        table.append(crc)
    return table


_CRC8, _CRC16 = _crc8_table(), _crc16_table()


def _crc8(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc = _CRC8[crc ^ byte]
    return crc


def _crc16(data: bytes) -> int:
    crc = 0
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC16[(crc >> 8) ^ byte]
    return crc


def _utf8_number(n: int) -> bytes:
    """FLAC's 'UTF-8' coding of the frame number (up to 2**31 - 1)."""
    if n < 0x80:
        return bytes([n])
    if n < 0x800:
        return bytes([0xC0 | n >> 6, 0x80 | n & 0x3F])
    if n < 0x10000:
        return bytes([0xE0 | n >> 12, 0x80 | n >> 6 & 0x3F, 0x80 | n & 0x3F])
    return bytes([0xF0 | n >> 18, 0x80 | n >> 12 & 0x3F, 0x80 | n >> 6 & 0x3F, 0x80 | n & 0x3F])


def flac_constant_blocks(seconds: float, rate: int = 192000, channels: int = 2, *,
                         block: int = 8192, level: int = 8000, declare_total: bool = True) -> bytes:
    """A 16-bit FLAC of `seconds` at `rate`: every frame a CONSTANT subframe per
    channel, alternating +level/-level from frame to frame (a square wave of
    rate / (2 block) Hz, loud enough not to be silence; the last frame may be
    shorter). `declare_total=False`: STREAMINFO's total sample count is 0
    ("unknown"), so only decoding tells the length."""
    total = int(round(seconds * rate))
    streaminfo = struct.pack(">HH", block, block) + (0).to_bytes(3, "big") * 2
    packed = (rate << 44) | ((channels - 1) << 41) | (15 << 36) | (total if declare_total else 0)
    streaminfo += packed.to_bytes(8, "big") + bytes(16)
    out = bytearray(b"fLaC" + bytes([0x80]) + len(streaminfo).to_bytes(3, "big") + streaminfo)
    size_code = {4096: 0b1100, 8192: 0b1101, 16384: 0b1110}[block]
    values = [struct.pack(">h", level), struct.pack(">h", -level)]
    for number, start in enumerate(range(0, total, block)):
        frames = min(block, total - start)
        code, extra = (size_code, b"") if frames == block else (0b0111, struct.pack(">H", frames - 1))
        header = bytes([0xFF, 0xF8, code << 4 | 0b0000, (channels - 1) << 4 | 0b100 << 1])
        header += _utf8_number(number) + extra
        header += bytes([_crc8(header)])
        body = header + (b"\x00" + values[number % 2]) * channels
        out += body + struct.pack(">H", _crc16(body))
    return bytes(out)


# --- analysing it in a child process, measured --------------------------------

# what a server worker runs on a job (`score_stage`, one core), as a script
WORKER_SCRIPT = """
import json, sys
from trackgrade.pool import one_core
from trackgrade.server.worker import score_stage
one_core()
data = open(sys.argv[1], "rb").read()
outcome = score_stage(data, "bomb.flac", "pre-master")
print(json.dumps(outcome[1].to_dict() if outcome[0] == "ok" else list(outcome)))
"""


def worker_command(path: str) -> list[str]:
    return [sys.executable, "-c", WORKER_SCRIPT, path]


def analyze_command(path: str) -> list[str]:
    return [sys.executable, "-m", "trackgrade", "analyze", path, "--json"]


@dataclass
class Measured:
    code: int
    out: str
    err: str
    peak_bytes: int          # the child's own peak RSS (wait4's rusage)
    seconds: float           # start to exit
    cpu_seconds: float       # user + system


# A small launcher runs the measured command and reports its rusage. A child
# forked straight from a large process (a pytest worker that has run other tests)
# would start with the parent's resident set as its peak (Linux carries the
# high-water mark across exec), so the command is started from this small one.
LAUNCHER = """
import json, os, sys, time
t0 = time.perf_counter()
pid = os.spawnv(os.P_NOWAIT, sys.argv[1], sys.argv[1:])
_, status, usage = os.wait4(pid, 0)
sys.stderr.flush()
os.write(2, ("\\n" + MARK + json.dumps({"code": os.waitstatus_to_exitcode(status),
    "peak": usage.ru_maxrss * 1024, "seconds": time.perf_counter() - t0,
    "cpu": usage.ru_utime + usage.ru_stime}) + "\\n").encode())
"""
MARK = "decode-bomb-measure: "


def start(args: list[str], env: dict | None = None) -> tuple[subprocess.Popen, float]:
    code = f"MARK = {MARK!r}\n" + LAUNCHER
    child = subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env={**os.environ, **(env or {})})
    return child, time.perf_counter()


def finish(started: tuple[subprocess.Popen, float]) -> Measured:
    """Read a command's output to the end and its own rusage, as its launcher
    reaped it."""
    child, _ = started
    out, err = child.communicate()
    text, _, measured = err.decode().rpartition("\n" + MARK)
    figures = json.loads(measured)
    return Measured(figures["code"], out.decode(), text, figures["peak"], figures["seconds"],
                    figures["cpu"])
