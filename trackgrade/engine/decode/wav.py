"""WAV headers: RIFF/RIFX, RF64/BW64 and Sony Wave64 (`_parse_wav`); the codecs
refused by name."""

from __future__ import annotations

import struct

from trackgrade.engine.decode.info import AudioInfo, _Layout
from trackgrade.engine.decode.pcm import _numpy_dtype, _pcm_subtype, _walk_chunks
from trackgrade.errors import AudioError


# WAVE format tags (mmreg.h) worth naming in a refusal.
WAVE_CODECS = {
    0x0002: "MS ADPCM", 0x0006: "A-law", 0x0007: "mu-law", 0x0010: "OKI ADPCM",
    0x0011: "IMA ADPCM", 0x0014: "G.723 ADPCM", 0x0022: "DSP Group TrueSpeech",
    0x0031: "GSM 6.10", 0x0040: "G.721 ADPCM", 0x0042: "G.723.1", 0x0050: "MPEG Layer 1/2",
    0x0055: "MPEG Layer 3 (MP3)",
    0x0064: "G.726 ADPCM", 0x0065: "G.722 ADPCM", 0x00FF: "AAC", 0x0160: "WMA v1",
    0x0161: "WMA", 0x0162: "WMA Pro", 0x0163: "WMA Lossless", 0x1610: "HE-AAC",
    0x2000: "AC-3", 0x2001: "DTS", 0x674F: "Ogg Vorbis", 0x6750: "Ogg Vorbis",
    0x6751: "Ogg Vorbis", 0xF1AC: "FLAC",
}

WAVE_PCM, WAVE_FLOAT, WAVE_EXTENSIBLE = 0x0001, 0x0003, 0xFFFE
_KSDATAFORMAT_TAIL = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
_W64_RIFF = b"riff\x2e\x91\xcf\x11\xa5\xd6\x28\xdb\x04\xc1\x00\x00"
_W64_WAVE = b"wave\xf3\xac\xd3\x11\x8c\xd1\x00\xc0\x4f\x8e\xdb\x8a"


def _parse_wav(data: bytes) -> tuple[AudioInfo, _Layout | None]:
    kind = bytes(data[:4])
    big = kind == b"RIFX"
    w64 = kind == b"riff"
    chunks = _walk_chunks(data, 40 if w64 else 12, len(data), big=big, size64=w64)
    fmt_chunk = data_chunk = None
    ds64_data_size = None
    for cid, payload, size in chunks:
        if cid == b"ds64" and size >= 16 and payload + 16 <= len(data):
            ds64_data_size = struct.unpack_from("<Q", data, payload + 8)[0]
        elif cid == b"fmt " and fmt_chunk is None:
            fmt_chunk = (payload, size)
        elif cid == b"data" and data_chunk is None:
            data_chunk = (payload, size)
        if data_chunk is not None and (fmt_chunk is not None or payload + size >= len(data)):
            break
    if fmt_chunk is None or fmt_chunk[1] < 14 or fmt_chunk[0] + 16 > len(data):
        raise AudioError("the WAV file has no valid 'fmt ' chunk")
    e = ">" if big else "<"
    tag, channels, rate, _byterate, block_align, bits = struct.unpack_from(e + "HHIIHH", data,
                                                                           fmt_chunk[0])
    if tag == WAVE_EXTENSIBLE:
        if fmt_chunk[1] < 40 or fmt_chunk[0] + 40 > len(data):
            raise AudioError("the WAV file's WAVE_FORMAT_EXTENSIBLE header is incomplete")
        guid = bytes(data[fmt_chunk[0] + 24:fmt_chunk[0] + 40])
        tag = struct.unpack_from(e + "H", guid)[0] if guid[2:] == _KSDATAFORMAT_TAIL else -1
        if tag == -1:
            raise AudioError(f"the WAV file's codec (subformat {guid.hex()}) is not supported; "
                             f"send uncompressed PCM or float WAV")
    if tag not in (WAVE_PCM, WAVE_FLOAT):
        codec = WAVE_CODECS.get(tag, f"format 0x{tag:04X}")
        raise AudioError(f"the WAV file contains compressed audio ({codec}); "
                         f"send uncompressed PCM or float WAV, or MP3, AIFF or FLAC")
    subtype = _pcm_subtype(tag == WAVE_FLOAT, bits)
    if subtype is None:
        raise AudioError(f"{'float' if tag == WAVE_FLOAT else 'PCM'} WAV with {bits} bits per "
                         f"sample is not supported; send 8/16/24/32-bit PCM or 32/64-bit float")
    if channels == 0 or block_align != channels * bits // 8:
        raise AudioError(f"the WAV header is inconsistent (block align {block_align} for "
                         f"{channels} channels of {bits} bits)")
    if data_chunk is None:
        raise AudioError("the WAV file has no audio data ('data' chunk missing)")
    offset, size = data_chunk
    if ds64_data_size is not None and size == 0xFFFFFFFF:
        size = ds64_data_size
    available = max(len(data) - offset, 0)
    if size in (0, 0xFFFFFFFF) and not (kind in (b"RF64", b"BW64")):
        size = available if size == 0xFFFFFFFF or available >= block_align * rate else size
    present = min(size, available) // block_align
    declared = size // block_align
    dtype = _numpy_dtype(subtype, ">" if big else "<")
    info = AudioInfo("wav", rate, channels, present, declared / rate if rate else None, subtype)
    return info, _Layout(offset, present * block_align, dtype, block_align)
