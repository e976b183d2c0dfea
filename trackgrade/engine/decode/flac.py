"""FLAC headers: STREAMINFO (rate, channels, bits, total samples), after an
optional ID3v2 tag."""

from __future__ import annotations

from trackgrade.engine.decode.info import AudioInfo, _Layout
from trackgrade.engine.decode.mp3 import _id3_end
from trackgrade.errors import AudioError


def _parse_flac(data: bytes) -> tuple[AudioInfo, _Layout | None]:
    start = 0 if bytes(data[:4]) == b"fLaC" else _id3_end(data)
    block = start + 4
    if block + 4 + 18 > len(data) or data[block] & 0x7F != 0:
        raise AudioError("the FLAC file has no valid STREAMINFO header")
    si = block + 4
    packed = int.from_bytes(data[si + 10:si + 18], "big")
    rate = packed >> 44
    channels = ((packed >> 41) & 0x7) + 1
    bits = ((packed >> 36) & 0x1F) + 1
    total = packed & ((1 << 36) - 1)
    subtype = {8: "PCM_S8", 16: "PCM_16", 24: "PCM_24"}.get(bits, f"PCM_{bits}")
    declared_s = total / rate if total and rate else None
    return AudioInfo("flac", rate, channels, total or None, declared_s, subtype), None
