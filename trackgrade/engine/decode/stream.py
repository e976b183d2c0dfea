"""FLAC and MP3 samples through libsndfile (soundfile on io.BytesIO): block-wise
into one buffer, never past the duration limit; long FLACs as two halves on
two threads. soundfile (cffi and libsndfile) loads on the first FLAC or MP3:
WAV and AIFF are read without it."""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING

import numpy as np

from trackgrade.engine.decode.info import AudioInfo, CONTAINER_NAMES
from trackgrade.engine.decode.limits import MAX_DURATION_S
from trackgrade.engine.decode.mp3 import _id3_end, _mp3_first_frame, _with_frame_count
from trackgrade.errors import AudioError, LimitError

if TYPE_CHECKING:
    import soundfile as sf


_BLOCK_FRAMES = 1 << 14      # a stream that breaks off loses at most one block
# FLAC/MP3 frames one byte can plausibly carry when preallocating (music FLAC
# holds ~0.3-3 frames per byte, an 8 kbit/s MP3 ~20; near-silence beyond this
# still decodes, the buffer grows as it goes)
_PLAUSIBLE_FRAMES_PER_BYTE = 64


def _read_soundfile(data: bytes, info: AudioInfo, *,
                    parallel: bool = True) -> tuple[np.ndarray, bool]:
    """FLAC/MP3 through libsndfile, block-wise into one buffer, never past the
    duration limit. A stream that breaks off keeps what decoded (truncated)."""
    import soundfile as sf

    cap = frame_cap(info)
    name = CONTAINER_NAMES[info.container]
    handle, payload = open_stream(data, info)
    # a header's length is believed up to what the bytes could plausibly hold:
    # a 16 KiB FLAC claiming 19 minutes must not reserve 19 minutes of samples
    plausible = max(_BLOCK_FRAMES, _PLAUSIBLE_FRAMES_PER_BYTE * len(payload))
    if (parallel and info.container == "flac" and 0 < handle.frames < min(cap, plausible)
            and handle.frames >= _HALVES_FROM_S * info.sample_rate):
        whole = _decode_flac_in_halves(handle, payload)
        if whole is not None:
            return whole, False
        handle.close()                  # a damaged stream: decode it afresh, in order
        handle = _open_soundfile(payload, name)
    with handle:
        known = 0 < handle.frames < cap
        first = handle.frames if known else min(cap, 30 * info.sample_rate)
        out = np.empty((min(first, plausible), handle.channels), dtype=np.float32)
        pos, broken = 0, ""
        try:
            while pos < cap:
                if pos == out.shape[0]:      # more than announced: read on, grow once per block
                    extra = handle.read(_BLOCK_FRAMES, dtype="float32", always_2d=True)
                    if extra.shape[0] == 0:
                        break
                    out = _grow(out, min(cap, max(pos + extra.shape[0], int(pos * 1.5))))
                    got = min(extra.shape[0], out.shape[0] - pos)
                    out[pos:pos + got] = extra[:got]
                else:
                    got = handle.read(out=out[pos:pos + _BLOCK_FRAMES]).shape[0]
                    if got == 0:
                        break
                pos += got
        except (sf.LibsndfileError, RuntimeError) as exc:
            broken = str(exc) or "decoder error"
    truncated = stream_end(info, pos, broken)
    return (out[:pos] if pos >= out.shape[0] * 0.9 else out[:pos].copy()), truncated


def read_into(handle: sf.SoundFile, out: np.ndarray) -> tuple[int, str]:
    """Fill `out` from `handle` block by block (a stream that breaks off loses
    at most one block): (frames read, the decoder's error or "")."""
    import soundfile as sf

    got = 0
    try:
        while got < out.shape[0]:
            n = handle.read(out=out[got:got + _BLOCK_FRAMES]).shape[0]
            if n == 0:
                break
            got += n
    except (sf.LibsndfileError, RuntimeError) as exc:
        return got, str(exc) or "decoder error"
    return got, ""


def stream_end(info: AudioInfo, frames: int, broken: str) -> bool:
    """After reading `frames` of a FLAC/MP3 (stopped by `broken`, if set):
    refuse one past the duration limit or with nothing readable; else whether
    it is truncated: the header promised more than decoded (a FLAC without a
    total sample count, whose last read libsndfile fails, promised nothing)."""
    if frames >= frame_cap(info):
        raise LimitError("the audio is longer than 20 minutes; the limit is 20 minutes per file")
    if broken and frames == 0:
        raise AudioError(f"the {CONTAINER_NAMES[info.container]} file could not be decoded: {broken}")
    declared = info.frames if info.container == "flac" else None
    return declared is not None and frames < declared


_HALVES_FROM_S = 60.0    # FLACs at least this long decode as two halves on two threads


def _decode_flac_in_halves(handle: sf.SoundFile, payload: bytes) -> np.ndarray | None:
    """A long FLAC of known length decoded as two halves at once: FLAC frames
    decode independently, libsndfile seeks sample-exactly, and cffi releases
    the GIL during the C calls, so the halves run on two cores. The samples are
    those of one sequential decode. None when any read falls short or fails
    (a damaged stream): the caller then decodes sequentially and keeps what is
    readable. Closes nothing; the caller still owns `handle`."""
    import soundfile as sf

    frames, channels = handle.frames, handle.channels
    out = np.empty((frames, channels), dtype=np.float32)
    middle = frames // 2

    def read(part: sf.SoundFile, start: int, end: int) -> bool:
        try:
            part.seek(start)
        except (sf.LibsndfileError, RuntimeError):
            return False
        got, broken = read_into(part, out[start:end])
        return not broken and got == end - start

    try:
        second = sf.SoundFile(io.BytesIO(payload))
    except (sf.LibsndfileError, RuntimeError, ValueError):
        return None
    with second, ThreadPoolExecutor(max_workers=1) as pool:
        later = pool.submit(read, second, middle, frames)
        first_ok = read(handle, 0, middle)
        ok = later.result() and first_ok
    return out if ok else None


def frame_cap(info: AudioInfo) -> int:
    """Frames past which a stream is refused (20 minutes + 1 frame)."""
    return int(MAX_DURATION_S * info.sample_rate) + 1


def open_stream(data: bytes, info: AudioInfo) -> tuple[sf.SoundFile, bytes]:
    """(libsndfile handle, the bytes it reads) of a FLAC or MP3: a FLAC's ID3
    tag skipped, an untagged MP3 whose length libsndfile under-estimates given
    a Xing frame with the walked count (so the whole stream is read)."""
    start = _id3_end(data) if info.container == "flac" and bytes(data[:3]) == b"ID3" else 0
    name = CONTAINER_NAMES[info.container]
    payload = bytes(memoryview(data)[start:]) if start else data
    handle = _open_soundfile(payload, name)
    if info.container == "mp3" and info.frames and handle.frames < info.frames - 2304:
        # libsndfile under-estimated an untagged MP3 and would stop reading there
        sync = _mp3_first_frame(data)
        tagged = _with_frame_count(data, sync, info.frames) if sync is not None else None
        if tagged is not None:
            handle.close()
            handle = _open_soundfile(tagged, name)
    return handle, payload


def _open_soundfile(data: bytes, name: str) -> sf.SoundFile:
    import soundfile as sf

    try:
        return sf.SoundFile(io.BytesIO(data))
    except (sf.LibsndfileError, RuntimeError, ValueError) as exc:
        raise AudioError(f"the {name} file could not be decoded: {exc}") from None


def _grow(out: np.ndarray, frames: int) -> np.ndarray:
    bigger = np.empty((frames, out.shape[1]), dtype=np.float32)
    bigger[:out.shape[0]] = out
    return bigger
