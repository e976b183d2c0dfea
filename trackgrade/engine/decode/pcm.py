"""Uncompressed samples (WAV, AIFF): the RIFF/IFF chunk walk they share, the
subtype and numpy dtype of a sample format, and the numpy read of the data chunk
(with its sanitising, piece by piece)."""

from __future__ import annotations

import struct
from dataclasses import replace

import numpy as np

from trackgrade.engine.decode.info import _Layout
from trackgrade.engine.decode.limits import sanitise


_CHUNK_SAMPLES = 1 << 20     # 24-bit conversion works in 4 MB pieces
_SANITISE_FRAMES = 1 << 17   # frames read and checked at a time (1 MB of stereo float32)


def _walk_chunks(data: bytes, start: int, end: int, *, big: bool, size64: bool = False):
    """Yield (id, payload_offset, declared_size) for RIFF/AIFF (8-byte headers,
    even-padded) or Wave64 (`size64`: 24-byte GUID headers, size includes the
    header, 8-byte aligned). Stops at the end of the data; sizes may lie."""
    fmt = (">I" if big else "<I")
    pos = start
    end = min(end, len(data))
    while pos + (24 if size64 else 8) <= end:
        cid = bytes(data[pos:pos + 4])
        if size64:
            size = struct.unpack_from("<Q", data, pos + 16)[0] - 24
            payload = pos + 24
            nxt = payload + max(size, 0)
            nxt += -nxt % 8
        else:
            size = struct.unpack_from(fmt, data, pos + 4)[0]
            payload = pos + 8
            nxt = payload + size + (size & 1)
            if size & 1 and not _plausible_id(data, nxt) and _plausible_id(data, nxt - 1):
                nxt -= 1        # writer forgot the pad byte
        if size < 0:
            return
        yield cid, payload, size
        pos = nxt


def _plausible_id(data: bytes, pos: int) -> bool:
    cid = bytes(data[pos:pos + 4])
    return len(cid) == 4 and all(32 <= c < 127 for c in cid)


def _pcm_subtype(is_float: bool, bits: int) -> str | None:
    if is_float:
        return {32: "FLOAT", 64: "DOUBLE"}.get(bits)
    return {8: "PCM_U8", 16: "PCM_16", 24: "PCM_24", 32: "PCM_32"}.get(bits)


def _numpy_dtype(subtype: str, endian: str) -> str:
    return {"PCM_U8": "u1", "PCM_S8": "i1", "PCM_16": endian + "i2", "PCM_24": endian + "i3",
            "PCM_32": endian + "i4", "FLOAT": endian + "f4", "DOUBLE": endian + "f8"}[subtype]


def _read_raw(data: bytes, layout: _Layout, channels: int, out: np.ndarray | None = None) -> np.ndarray:
    """Uncompressed samples straight from the bytes: one float32 allocation
    (none when `out`, a float32 array of the samples' size, is given)."""
    count = layout.nbytes // layout.block_align * channels
    if out is None:
        out = np.empty(count, dtype=np.float32)
    flat = out.reshape(-1)
    if layout.dtype.endswith("i3"):
        _int24_to_float(data, layout.offset, count, big=layout.dtype[0] == ">", out=flat)
    else:
        raw = np.frombuffer(data, dtype=layout.dtype, count=count, offset=layout.offset)
        kind, width = raw.dtype.kind, raw.dtype.itemsize
        if kind == "f":
            flat[...] = raw
        elif kind == "u":     # WAV 8-bit is unsigned: x / 128 - 1, exact in float32
            np.multiply(raw, np.float32(1 / 128), out=flat, dtype=np.float32)
            flat -= np.float32(1.0)
        else:
            np.multiply(raw, np.float32(1.0 / 2 ** (8 * width - 1)), out=flat, dtype=np.float32)
    return out.reshape(-1, channels)


def read_sanitised(data: bytes, layout: _Layout, channels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """`_read_raw` then `limits.sanitise`, piece by piece, so each piece is
    checked while it is still in cache rather than in a second pass over the
    whole signal: (samples, per-channel max, per-channel min), the same
    values as the two passes."""
    align = layout.block_align
    total = layout.nbytes // align
    samples = np.empty((total, channels), dtype=np.float32)
    maxs = np.full(channels, -np.inf, dtype=np.float32)
    mins = np.full(channels, np.inf, dtype=np.float32)
    for f0 in range(0, total, _SANITISE_FRAMES):
        f1 = min(total, f0 + _SANITISE_FRAMES)
        piece = replace(layout, offset=layout.offset + f0 * align, nbytes=(f1 - f0) * align)
        part_max, part_min = sanitise(_read_raw(data, piece, channels, out=samples[f0:f1]))
        np.maximum(maxs, part_max, out=maxs)
        np.minimum(mins, part_min, out=mins)
    return samples, maxs, mins


def _int24_to_float(data: bytes, offset: int, count: int, *, big: bool, out: np.ndarray) -> None:
    """24-bit samples into `out` (float32 (count,)), read as overlapping 32-bit
    words (stride 3) whose spare byte is masked off, in chunks so the int32
    temporary stays small."""
    start = offset if big else offset - 1               # LE: the spare byte is below the sample
    strided = count - 1 if big and offset + 3 * count + 1 > len(data) else count
    words = np.ndarray(shape=(strided,), dtype=">i4" if big else "<i4", buffer=data,
                       offset=start, strides=(3,))
    scale = np.float32(1.0 / 2 ** 31)
    for lo in range(0, strided, _CHUNK_SAMPLES):
        hi = min(lo + _CHUNK_SAMPLES, strided)
        np.multiply(np.bitwise_and(words[lo:hi], np.int32(-256)), scale, out=out[lo:hi])
    if strided < count:                                 # BE: the last word would overrun the bytes
        last = offset + 3 * strided
        out[-1] = int.from_bytes(data[last:last + 3], "big", signed=True) * np.float32(2.0 ** -23)
