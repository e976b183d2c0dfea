"""Name the container from its magic bytes (the file name is only used in messages)."""

from __future__ import annotations

from trackgrade.engine.decode.mp3 import _find_mpeg_sync, _id3_end
from trackgrade.engine.decode.wav import _W64_RIFF, _W64_WAVE


def sniff_container(data: bytes) -> str | None:
    """Name the container from the magic bytes: "wav", "aiff", "flac", "mp3",
    a `CONTAINER_NAMES` key for a recognised but unaccepted format, or None."""
    head = bytes(data[:64])
    if len(head) < 4:
        return None
    if head[:4] in (b"RIFF", b"RIFX", b"RF64", b"BW64") and head[8:12] == b"WAVE":
        return "wav"
    if head[:16] == _W64_RIFF and head[24:40] == _W64_WAVE:
        return "wav"
    if head[:4] == b"RIFF" and head[8:12] == b"AVI ":
        return "avi"
    if head[:4] == b"FORM" and head[8:12] in (b"AIFF", b"AIFC"):
        return "aiff"
    if head[:4] == b"FORM" and head[8:12] == b"8SVX":
        return "8svx"
    if head[:4] == b"fLaC":
        return "flac"
    if head[:3] == b"ID3":
        end = _id3_end(data)
        if bytes(data[end:end + 4]) == b"fLaC":
            return "flac"
        return "mp3" if _find_mpeg_sync(data, end, strict=False) is not None else None
    if head[:4] == b"OggS":
        return _ogg_kind(head)
    if head[:4] == b"\x1a\x45\xdf\xa3":
        return "webm" if b"webm" in bytes(data[:256]) else "matroska"
    if head[4:8] == b"ftyp":
        brand = head[8:12]
        return "3gp" if brand.startswith(b"3g") else "quicktime" if brand == b"qt  " else "mp4"
    for magic, name in _MAGIC:
        if head.startswith(magic):
            return name
    if _find_mpeg_sync(data, 0, strict=True) is not None:
        return "mp3"
    if len(head) >= 2 and head[0] == 0xFF and head[1] & 0xF6 == 0xF0:
        return "aac"
    return None


_MAGIC = (
    (b"caff", "caf"), (b".snd", "au"), (b"#!AMR", "amr"), (b"wvpk", "wavpack"),
    (b"MAC ", "ape"), (b"TTA1", "tta"), (b"\x30\x26\xb2\x75\x8e\x66\xcf\x11", "asf"),
    (b"MPCK", "musepack"), (b"MP+", "musepack"), (b"DSD ", "dsf"), (b"FRM8", "dff"),
    (b"MThd", "midi"), (b"ADIF", "aac"), (b"%PDF", "pdf"), (b"\x89PNG", "png"),
    (b"\xff\xd8\xff", "jpeg"), (b"GIF8", "gif"), (b"PK\x03\x04", "zip"), (b"\x1f\x8b", "gzip"),
)


def _ogg_kind(head: bytes) -> str:
    # First page: 27-byte header, segment table, then the first packet.
    nseg = head[26] if len(head) > 26 else 0
    packet = head[27 + nseg:27 + nseg + 8]
    for magic, name in ((b"\x01vorbis", "ogg_vorbis"), (b"OpusHead", "ogg_opus"),
                        (b"\x7fFLAC", "ogg_flac"), (b"Speex   ", "ogg_speex")):
        if packet.startswith(magic[:len(packet)]) and packet:
            return name
    return "ogg"
