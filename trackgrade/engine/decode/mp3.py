"""MP3 headers: ID3v2 skipping, MPEG frame-header sync and walk, Xing/Info/VBRI
tags, and a Xing frame inserted so libsndfile reads a whole untagged stream."""

from __future__ import annotations

import io
import struct

from trackgrade.engine.decode.info import AudioInfo, _Layout
from trackgrade.engine.decode.limits import MAX_DURATION_S
from trackgrade.errors import AudioError


def _id3_end(data: bytes) -> int:
    """Offset just past an ID3v2 tag at the start (syncsafe size, optional footer)."""
    if len(data) < 10:
        return len(data)
    size = 0
    for byte in data[6:10]:
        size = (size << 7) | (byte & 0x7F)
    return 10 + size + (10 if data[5] & 0x10 else 0)


_MPEG_BITRATES = {  # (version is MPEG-1, layer) -> kbit/s by index
    (True, 1): (0, 32, 64, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 416, 448),
    (True, 2): (0, 32, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 384),
    (True, 3): (0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320),
    (False, 1): (0, 32, 48, 56, 64, 80, 96, 112, 128, 144, 160, 176, 192, 224, 256),
    (False, 2): (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
    (False, 3): (0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160),
}
_MPEG_RATES = {3: (44100, 48000, 32000), 2: (22050, 24000, 16000), 0: (11025, 12000, 8000)}


def _mpeg_frame_length(data: bytes, pos: int) -> int | None:
    """Length in bytes of the MPEG audio frame whose header starts at `pos`, or None."""
    if pos + 4 > len(data):
        return None
    b1, b2 = data[pos + 1], data[pos + 2]
    if data[pos] != 0xFF or b1 & 0xE0 != 0xE0:
        return None
    version, layer_bits = (b1 >> 3) & 3, (b1 >> 1) & 3
    bitrate_index, rate_index = b2 >> 4, (b2 >> 2) & 3
    if version == 1 or layer_bits == 0 or bitrate_index in (0, 15) or rate_index == 3:
        return None
    layer = 4 - layer_bits
    mpeg1 = version == 3
    bitrate = _MPEG_BITRATES[(mpeg1, layer)][bitrate_index] * 1000
    rate = _MPEG_RATES[version][rate_index]
    padding = (b2 >> 1) & 1
    if layer == 1:
        return (12 * bitrate // rate + padding) * 4
    return (144 if mpeg1 or layer == 2 else 72) * bitrate // rate + padding


def _find_mpeg_sync(data: bytes, start: int, *, strict: bool) -> int | None:
    """First offset at or after `start` where consecutive MPEG frames begin.
    `strict` (no ID3 tag vouching for the file): the stream must start at
    `start` and three frames must chain; otherwise two frames within 64 KiB."""
    window = bytes(data[start:start + 65536 + 8192])
    need = 3 if strict else 2
    candidates = [0] if strict else _ff_positions(window, 65536)
    for pos in candidates:
        p, chained = pos, 0
        while chained < need:
            length = _mpeg_frame_length(window, p)
            if length is None:
                break
            chained += 1
            p += length
            if p >= len(window) and p >= len(data) - start:   # stream ends inside the window
                chained = need
        if chained >= need:
            return start + pos
    return None


def _ff_positions(window: bytes, limit: int):
    pos = window.find(b"\xff")
    while 0 <= pos < limit:
        yield pos
        pos = window.find(b"\xff", pos + 1)


def _parse_mp3(data: bytes) -> tuple[AudioInfo, _Layout | None]:
    """libsndfile reads the stream parameters; the length comes from the
    Xing/Info/VBRI tag when there is one, else from walking the frame headers
    (libsndfile's own count is then a bitrate estimate, and it stops reading
    there: a VBR file without a tag would be cut short)."""
    import soundfile as sf            # loads on the first MP3 (WAV and AIFF never need it)

    try:
        meta = sf.info(io.BytesIO(data))
    except (sf.LibsndfileError, RuntimeError, ValueError) as exc:
        raise AudioError(f"the MP3 file could not be read: {exc}") from None
    rate = int(meta.samplerate)
    sync = _mp3_first_frame(data)
    if sync is not None and _has_vbr_tag(data, sync) and 0 < meta.frames < 2 ** 62:
        frames = int(meta.frames)
    elif sync is not None and rate > 0:
        frames = _count_mpeg_samples(data, sync, limit=int(MAX_DURATION_S * rate) + 1)
    else:
        frames = 0
    return AudioInfo("mp3", rate, int(meta.channels), frames or None,
                     frames / rate if frames else None, meta.subtype or "MPEG_LAYER_III"), None


def _mp3_first_frame(data: bytes) -> int | None:
    start = _id3_end(data) if bytes(data[:3]) == b"ID3" else 0
    return _find_mpeg_sync(data, start, strict=start == 0)


def _has_vbr_tag(data: bytes, sync: int) -> bool:
    """Does the first MPEG frame carry a Xing/Info/VBRI tag (an exact count)?"""
    first = bytes(data[sync:sync + 64])
    return any(tag in first for tag in (b"Xing", b"Info", b"VBRI"))


def _samples_per_frame(b1: int) -> int:
    layer, mpeg1 = 4 - ((b1 >> 1) & 3), (b1 >> 3) & 3 == 3
    return 384 if layer == 1 else 1152 if layer == 2 or mpeg1 else 576


def _count_mpeg_samples(data: bytes, sync: int, *, limit: int) -> int:
    """Samples in the whole, valid frames from `sync`, resynchronising past
    damage like the decoder does (stops at trailing tags, or once past `limit`)."""
    spf = _samples_per_frame(data[sync + 1])
    pos, total, resyncs = sync, 0, 0
    while total <= limit:
        length = _mpeg_frame_length(data, pos)
        if length is None:
            resyncs += 1          # bounded: crafted damage must not make the walk slow
            pos = _find_mpeg_sync(data, pos + 1, strict=False) if resyncs <= 64 else None
            if pos is None:
                break
            continue
        if pos + length > len(data):
            break
        total += spf
        pos += length
    return total


def _with_frame_count(data: bytes, sync: int, frames: int) -> bytes | None:
    """The MP3 bytes with a Xing frame carrying `frames` inserted before the
    first frame, so libsndfile (mpg123) knows the true length. Layer 3 only."""
    b1, b2, b3 = data[sync + 1], data[sync + 2], data[sync + 3]
    if (b1 >> 1) & 3 != 1:
        return None
    header = bytes([0xFF, b1 | 0x01, b2 & ~0x02 & 0xFF, b3])      # no CRC, no padding
    length = _mpeg_frame_length(header, 0)
    mpeg1, mono = (b1 >> 3) & 3 == 3, b3 >> 6 == 3
    side = (17 if mono else 32) if mpeg1 else (9 if mono else 17)
    if length is None or length < 4 + side + 12:
        return None
    count = frames // _samples_per_frame(b1)
    tag = bytearray(length)
    tag[:4] = header
    tag[4 + side:4 + side + 12] = b"Xing" + struct.pack(">II", 1, count)
    view = memoryview(data)
    return bytes(view[:sync]) + bytes(tag) + bytes(view[sync:])
