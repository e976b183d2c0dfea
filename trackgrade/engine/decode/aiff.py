"""AIFF and AIFF-C headers (`_parse_aiff`); the AIFF-C codecs refused by name."""

from __future__ import annotations

import struct

import numpy as np

from trackgrade.engine.decode.info import AudioInfo, _Layout
from trackgrade.engine.decode.pcm import _numpy_dtype, _pcm_subtype, _walk_chunks
from trackgrade.errors import AudioError


AIFC_CODECS = {
    b"ulaw": "mu-law", b"ULAW": "mu-law", b"alaw": "A-law", b"ALAW": "A-law",
    b"ima4": "IMA ADPCM", b"MAC3": "MACE 3:1", b"MAC6": "MACE 6:1", b"GSM ": "GSM 6.10",
    b"Qclp": "QCELP", b"QDMC": "QDesign", b"QDM2": "QDesign 2", b"sdx2": "SDX2", b"G722": "G.722",
}


def _parse_aiff(data: bytes) -> tuple[AudioInfo, _Layout | None]:
    comm = ssnd = None
    for cid, payload, size in _walk_chunks(data, 12, len(data), big=True):
        if cid == b"COMM" and comm is None:
            comm = (payload, size)
        elif cid == b"SSND" and ssnd is None:
            ssnd = (payload, size)
        if comm is not None and ssnd is not None:
            break
    if comm is None or comm[1] < 18 or comm[0] + 18 > len(data):
        raise AudioError("the AIFF file has no valid COMM chunk")
    channels, frames, bits = struct.unpack_from(">hIh", data, comm[0])
    rate = _extended_to_float(bytes(data[comm[0] + 8:comm[0] + 18]))
    compression = b"NONE"
    if bytes(data[8:12]) == b"AIFC" and comm[1] >= 22:
        compression = bytes(data[comm[0] + 18:comm[0] + 22])
    endian, is_float = ">", False
    if compression in (b"sowt",):
        endian = "<"
    elif compression in (b"fl32", b"FL32", b"fl64", b"FL64"):
        is_float = True
    elif compression not in (b"NONE", b"twos"):
        codec = AIFC_CODECS.get(compression) or "compression type " + ascii(
            compression.decode("latin-1"))
        raise AudioError(f"the AIFF-C file contains compressed audio ({codec}); "
                         f"send uncompressed AIFF, WAV, MP3 or FLAC")
    if is_float:
        bits = 64 if compression.lower() == b"fl64" else 32
    subtype = _pcm_subtype(is_float, bits)
    if subtype == "PCM_U8":
        subtype = "PCM_S8"      # AIFF 8-bit is signed
    if subtype is None:
        raise AudioError(f"AIFF with {bits} bits per sample is not supported")
    rate_int = int(round(rate)) if np.isfinite(rate) and 0 < rate < 1e7 else 0
    if ssnd is None:
        raise AudioError("the AIFF file has no audio data (SSND chunk missing)")
    block_align = max(channels, 0) * bits // 8
    ssnd_offset = struct.unpack_from(">I", data, ssnd[0])[0] if ssnd[0] + 8 <= len(data) else 0
    start = ssnd[0] + 8 + ssnd_offset
    available = max(len(data) - start, 0)
    in_chunk = max(ssnd[1] - 8 - ssnd_offset, 0)
    present = min(frames, min(available, in_chunk) // block_align if block_align else 0)
    info = AudioInfo("aiff", rate_int, channels, present,
                     frames / rate_int if rate_int else None, subtype)
    return info, _Layout(start, present * block_align, _numpy_dtype(subtype, endian), block_align)


def _extended_to_float(raw: bytes) -> float:
    """IEEE 754 80-bit extended (AIFF sample rate) to float."""
    if len(raw) < 10:
        return 0.0
    exponent = struct.unpack(">H", raw[:2])[0]
    mantissa = struct.unpack(">Q", raw[2:10])[0]
    sign = -1.0 if exponent & 0x8000 else 1.0
    exponent &= 0x7FFF
    if mantissa == 0 or not 16383 - 64 < exponent < 16383 + 64:
        return 0.0          # zero, denormal, inf/NaN or absurd: rejected as a bad rate later
    return sign * mantissa * 2.0 ** (exponent - 16383 - 63)
