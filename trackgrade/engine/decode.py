"""bytes -> DecodedAudio, in memory only (never a temporary file).

The boundary where untrusted uploads become samples, so every decision is made
here, from the bytes:

1. `sniff_container` names the container from its magic bytes (the file name
   is only used in messages). Ogg/Opus/WebM/MP4/AAC... are recognised and
   refused by name; unrecognised bytes are refused.
2. `probe` parses the header ourselves (RIFF/RIFX/RF64/BW64/Wave64 chunk
   walk, AIFF/AIFF-C chunk walk, FLAC STREAMINFO; MP3: libsndfile's header
   read plus our own Xing/Info/VBRI check or frame-header walk for the length)
   and applies every header-level rule: size limit, codec (compressed codecs
   inside WAV or AIFF-C are refused even where libsndfile could decode them),
   sample rate 8-192 kHz, mono or stereo, the 20-minute limit, the 2-second
   minimum where the header is exact. No samples are decoded.
3. `decode` reads the samples as float32 (frames, channels) in [-1, 1]:
   uncompressed WAV/AIFF straight from the data chunk with numpy (one float32
   allocation, no float64 intermediate; 3x faster than libsndfile, and
   bit-identical to it, which the tests check for every subtype); FLAC and MP3
   through libsndfile (soundfile on io.BytesIO), read block-wise into one
   preallocated buffer and never past 20 minutes + 1 frame, so a lying or
   missing length cannot make us decode hours of audio. Then: the duration
   limit again, too short, digital silence, a constant DC offset (silent
   once the offset is removed: refused like silence).

Decisions:
- Channels: more than two are refused (`unprocessable_audio`, "send a mono or
  stereo mix") rather than downmixed: the grading is defined on a stereo mix
  and a guessed downmix of surround stems would grade something the user did
  not make.
- Duration limit: for WAV/AIFF the samples present are exact, so a header
  claiming 25 minutes with 10 s of bytes is a truncated 10-s file (decoded,
  `truncated=True`, `declared_duration_s` = 1500), not a 25-minute one. For
  FLAC, STREAMINFO is written by the encoder after encoding and is
  authoritative: a FLAC claiming more than 20 minutes is refused
  (`file_rejected`) before any decoding. An MP3's length comes from its
  Xing/Info/VBRI tag, else from walking its frame headers (libsndfile's own
  count is then a bitrate estimate, wildly off for VBR or a damaged first
  frame, and libsndfile stops reading at it: we insert a Xing frame with the
  walked count so the whole stream is read). Anything still unknown is cut
  at 20 minutes + 1 frame and refused.
- Truncation (the header promises more than is present, or a FLAC stream
  that breaks off mid-way): whatever decodes is kept; >= 2 s is returned
  with `truncated=True`, less is `unprocessable_audio` ("truncated").
- Accepted WAV codecs: PCM 0x0001 (8/16/24/32-bit), IEEE float 0x0003
  (32/64-bit), EXTENSIBLE 0xFFFE with the PCM or float KSDATAFORMAT GUID.
  AIFF-C: NONE, twos, sowt, fl32/FL32, fl64/FL64. Everything else is refused
  with the codec's name.
- Float WAV/AIFF samples outside [-1, 1] are clipped to it (the overs count
  as clipping downstream); NaN/inf become 0.
- Size limits use MiB (2**20 bytes): 200 MiB WAV/AIFF, 48 MiB MP3, 140 MiB
  FLAC, 200 MiB otherwise.
- pydub is not used: it writes temporary files and needs ffmpeg.
"""

from __future__ import annotations

import io
import struct
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import soundfile as sf

from trackgrade.engine.features import DecodedAudio
from trackgrade.errors import AudioError, LimitError

MIB = 1024 * 1024
SIZE_LIMITS = {"wav": 200 * MIB, "aiff": 200 * MIB, "mp3": 48 * MIB, "flac": 140 * MIB}
DEFAULT_SIZE_LIMIT = 200 * MIB
# the container a file name's extension declares (the upload step's size limit
# before any byte is sniffed); any other extension gets DEFAULT_SIZE_LIMIT
EXTENSION_CONTAINERS = {"wav": "wav", "wave": "wav", "bwf": "wav", "rf64": "wav", "w64": "wav",
                        "aif": "aiff", "aiff": "aiff", "aifc": "aiff", "mp3": "mp3",
                        "flac": "flac"}
MAX_DURATION_S = 1200.0
MIN_DURATION_S = 2.0
MIN_SAMPLE_RATE = 8000
MAX_SAMPLE_RATE = 192000
MAX_CHANNELS = 2
SILENCE_PEAK = 10 ** (-100 / 20)     # -100 dBFS
ACCEPTED = "send WAV, MP3, AIFF or FLAC"
_CHUNK_SAMPLES = 1 << 20     # 24-bit conversion works in 4 MB pieces
_BLOCK_FRAMES = 1 << 14      # a stream that breaks off loses at most one block
# FLAC/MP3 frames one byte can plausibly carry when preallocating (music FLAC
# holds ~0.3-3 frames per byte, an 8 kbit/s MP3 ~20; near-silence beyond this
# still decodes, the buffer grows as it goes)
_PLAUSIBLE_FRAMES_PER_BYTE = 64

CONTAINER_NAMES = {
    "wav": "WAV", "aiff": "AIFF", "flac": "FLAC", "mp3": "MP3",
    "ogg": "Ogg", "ogg_vorbis": "Ogg Vorbis", "ogg_opus": "Ogg Opus", "ogg_flac": "Ogg FLAC",
    "ogg_speex": "Ogg Speex", "webm": "WebM", "matroska": "Matroska (MKA/MKV)",
    "mp4": "MP4/M4A (AAC or ALAC)", "3gp": "3GP (MP4 family)", "quicktime": "QuickTime (MOV)",
    "aac": "AAC (ADTS)", "caf": "Core Audio (CAF)", "au": "Sun/NeXT AU", "amr": "AMR",
    "wavpack": "WavPack", "ape": "Monkey's Audio", "tta": "TTA", "asf": "WMA/ASF",
    "musepack": "Musepack", "dsf": "DSD (DSF)", "dff": "DSD (DFF)", "midi": "MIDI",
    "8svx": "IFF 8SVX", "pdf": "a PDF document", "png": "a PNG image", "jpeg": "a JPEG image",
    "gif": "a GIF image", "zip": "a ZIP archive", "gzip": "a gzip archive", "avi": "AVI video",
}
ACCEPTED_CONTAINERS = ("wav", "aiff", "flac", "mp3")

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
AIFC_CODECS = {
    b"ulaw": "mu-law", b"ULAW": "mu-law", b"alaw": "A-law", b"ALAW": "A-law",
    b"ima4": "IMA ADPCM", b"MAC3": "MACE 3:1", b"MAC6": "MACE 6:1", b"GSM ": "GSM 6.10",
    b"Qclp": "QCELP", b"QDMC": "QDesign", b"QDM2": "QDesign 2", b"sdx2": "SDX2", b"G722": "G.722",
}
WAVE_PCM, WAVE_FLOAT, WAVE_EXTENSIBLE = 0x0001, 0x0003, 0xFFFE
_KSDATAFORMAT_TAIL = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"
_W64_RIFF = b"riff\x2e\x91\xcf\x11\xa5\xd6\x28\xdb\x04\xc1\x00\x00"
_W64_WAVE = b"wave\xf3\xac\xd3\x11\x8c\xd1\x00\xc0\x4f\x8e\xdb\x8a"


@dataclass(frozen=True)
class AudioInfo:
    """What the header says, validated against every header-level rule."""
    container: str                      # "wav", "aiff", "flac", "mp3"
    sample_rate: int
    channels: int
    frames: int | None                  # WAV/AIFF: frames present; FLAC: STREAMINFO total;
                                        # MP3: tag or frame-walk count; None when unknown
    declared_duration_s: float | None   # what the header claims, when it claims anything
    subtype: str                        # soundfile-style: PCM_16, FLOAT, MPEG_LAYER_III...

    @property
    def truncated(self) -> bool:
        return (self.frames is not None and self.declared_duration_s is not None
                and self.frames / self.sample_rate < self.declared_duration_s - 1e-9)


@dataclass(frozen=True)
class _Layout:
    """Where the raw samples are, for the numpy path (uncompressed WAV/AIFF)."""
    offset: int
    nbytes: int            # bytes present for whole frames
    dtype: str             # numpy dtype of one stored sample, e.g. "<i2", ">f4", "u1", "<i3"
    block_align: int


# --- sniffing --------------------------------------------------------------

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


# --- limits ----------------------------------------------------------------

def check_size(size: int, container: str) -> None:
    """Refuse a file over its format's size limit (spec section 8): `file_too_large`."""
    limit = SIZE_LIMITS.get(container, DEFAULT_SIZE_LIMIT)
    if size > limit:
        name = CONTAINER_NAMES.get(container, container.upper())
        raise LimitError(f"the file is {size / MIB:.1f} MiB; {name} files may be at most "
                         f"{limit // MIB} MiB", code="file_too_large")


def declared_container(file_name: str) -> str | None:
    """The container `file_name`'s extension declares, or None."""
    stem, dot, extension = file_name.rpartition(".")
    return EXTENSION_CONTAINERS.get(extension.lower()) if dot and stem else None


def check_declared_size(size: int, file_name: str) -> None:
    """The size limit of the format `file_name` declares, before any sniffing
    (a 49 MiB `.mp3` is too large whatever its bytes are)."""
    check_size(size, declared_container(file_name) or "")


def _check_duration_limit(seconds: float, what: str) -> None:
    if seconds > MAX_DURATION_S:
        raise LimitError(f"{what} {_minutes(seconds)} long; the limit is 20 minutes per file")


def _check_min_duration(seconds: float, declared_s: float | None) -> None:
    if seconds <= 0:
        raise AudioError("the file contains no audio data")
    if seconds < MIN_DURATION_S:
        if declared_s is not None and declared_s > seconds + 1e-6:
            raise AudioError(f"the file is truncated: only {seconds:.2f} s of audio present "
                             f"(the header declares {declared_s:.2f} s); at least "
                             f"{MIN_DURATION_S:.0f} s are needed")
        raise AudioError(f"the audio is too short ({seconds:.2f} s); at least "
                         f"{MIN_DURATION_S:.0f} s are needed")


def _minutes(seconds: float) -> str:
    return f"{int(seconds // 60)}:{int(seconds % 60):02d}"


# --- header parsing --------------------------------------------------------

def probe(data: bytes, *, file_name: str) -> AudioInfo:
    """Read and validate the header only (no sample decoding). Raises
    AudioError (`unprocessable_audio`) or LimitError (`file_too_large`,
    `file_rejected`) for anything the header already rules out."""
    info, _ = _probe(data, file_name)
    return info


def _probe(data: bytes, file_name: str) -> tuple[AudioInfo, _Layout | None]:
    if len(data) == 0:
        raise AudioError(f"{file_name!r} is empty (0 bytes)")
    container = sniff_container(data)
    if container is None:
        raise AudioError(f"{file_name!r} is not a recognised audio file ({len(data)} bytes); "
                         f"{ACCEPTED}")
    if container not in ACCEPTED_CONTAINERS:
        name = CONTAINER_NAMES[container]
        raise AudioError(f"{name} is not an accepted format; {ACCEPTED}")
    check_size(len(data), container)
    parse = {"wav": _parse_wav, "aiff": _parse_aiff, "flac": _parse_flac, "mp3": _parse_mp3}
    try:
        info, layout = parse[container](data)
    except (struct.error, ValueError, IndexError, OverflowError) as exc:
        # the parsers bounds-check; this is the boundary's last line of defence
        raise AudioError(f"the {CONTAINER_NAMES[container]} header is malformed ({exc})") from None
    _validate(info)
    return info, layout


def _validate(info: AudioInfo) -> None:
    if not MIN_SAMPLE_RATE <= info.sample_rate <= MAX_SAMPLE_RATE:
        raise AudioError(f"sample rate {info.sample_rate} Hz is not supported; "
                         f"send 8 kHz to 192 kHz audio")
    if info.channels < 1:
        raise AudioError("the header declares no audio channels")
    if info.channels > MAX_CHANNELS:
        raise AudioError(f"the file has {info.channels} channels; send a mono or stereo mix")
    if info.container == "mp3":
        # an exact count: the Xing/Info/VBRI tag, or the frame headers walked
        if info.declared_duration_s is not None and info.declared_duration_s > MAX_DURATION_S:
            raise LimitError("the MP3 runs past 20 minutes; the limit is 20 minutes per file")
        return
    if info.container == "flac":
        if info.declared_duration_s is not None:
            _check_duration_limit(info.declared_duration_s, "the FLAC header declares the audio")
            _check_min_duration(info.declared_duration_s, None)
        return
    present_s = info.frames / info.sample_rate
    _check_duration_limit(present_s, "the audio is")
    _check_min_duration(present_s, info.declared_duration_s)


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


def _pcm_subtype(is_float: bool, bits: int) -> str | None:
    if is_float:
        return {32: "FLOAT", 64: "DOUBLE"}.get(bits)
    return {8: "PCM_U8", 16: "PCM_16", 24: "PCM_24", 32: "PCM_32"}.get(bits)


def _numpy_dtype(subtype: str, endian: str) -> str:
    return {"PCM_U8": "u1", "PCM_S8": "i1", "PCM_16": endian + "i2", "PCM_24": endian + "i3",
            "PCM_32": endian + "i4", "FLOAT": endian + "f4", "DOUBLE": endian + "f8"}[subtype]


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


def _parse_mp3(data: bytes) -> tuple[AudioInfo, _Layout | None]:
    """libsndfile reads the stream parameters; the length comes from the
    Xing/Info/VBRI tag when there is one, else from walking the frame headers
    (libsndfile's own count is then a bitrate estimate, and it stops reading
    there: a VBR file without a tag would be cut short)."""
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


# --- decoding --------------------------------------------------------------

def decode(data: bytes, *, file_name: str, parallel: bool = True) -> DecodedAudio:
    """The caller's bytes (never a file) -> float32 (frames, channels) in [-1, 1].

    `declared_duration_s` is set only when `truncated` (what the header
    promised, as features.Features documents it); `probe` always reports it.
    Raises AudioError (`unprocessable_audio`) for anything that is not
    analyzable audio, LimitError for size (`file_too_large`) and duration
    (`file_rejected`) limits."""
    info, layout = _probe(data, file_name)
    if layout is not None:
        samples, truncated = _read_raw(data, layout, info.channels), info.truncated
    else:
        samples, truncated = _read_soundfile(data, info, parallel=parallel)
    seconds = samples.shape[0] / info.sample_rate
    _check_duration_limit(seconds, "the audio is")
    _check_min_duration(seconds, info.declared_duration_s if truncated else None)
    _clip_and_check_not_silent(samples)
    return DecodedAudio(samples=samples, sample_rate=info.sample_rate, container=info.container,
                        subtype=info.subtype, truncated=bool(truncated),
                        declared_duration_s=info.declared_duration_s if truncated else None)


def _read_raw(data: bytes, layout: _Layout, channels: int) -> np.ndarray:
    """Uncompressed samples straight from the bytes: one float32 allocation."""
    count = layout.nbytes // layout.block_align * channels
    if layout.dtype.endswith("i3"):
        out = _int24_to_float(data, layout.offset, count, big=layout.dtype[0] == ">")
    else:
        raw = np.frombuffer(data, dtype=layout.dtype, count=count, offset=layout.offset)
        kind, width = raw.dtype.kind, raw.dtype.itemsize
        if kind == "f":
            out = raw.astype(np.float32)
        elif kind == "u":     # WAV 8-bit is unsigned: x / 128 - 1, exact in float32
            out = np.multiply(raw, np.float32(1 / 128), dtype=np.float32)
            out -= np.float32(1.0)
        else:
            out = np.multiply(raw, np.float32(1.0 / 2 ** (8 * width - 1)), dtype=np.float32)
    return out.reshape(-1, channels)


def _int24_to_float(data: bytes, offset: int, count: int, *, big: bool) -> np.ndarray:
    """24-bit samples read as overlapping 32-bit words (stride 3) whose spare
    byte is masked off, in chunks so the int32 temporary stays small."""
    start = offset if big else offset - 1               # LE: the spare byte is below the sample
    strided = count - 1 if big and offset + 3 * count + 1 > len(data) else count
    words = np.ndarray(shape=(strided,), dtype=">i4" if big else "<i4", buffer=data,
                       offset=start, strides=(3,))
    out = np.empty(count, dtype=np.float32)
    scale = np.float32(1.0 / 2 ** 31)
    for lo in range(0, strided, _CHUNK_SAMPLES):
        hi = min(lo + _CHUNK_SAMPLES, strided)
        np.multiply(np.bitwise_and(words[lo:hi], np.int32(-256)), scale, out=out[lo:hi])
    if strided < count:                                 # BE: the last word would overrun the bytes
        last = offset + 3 * strided
        out[-1] = int.from_bytes(data[last:last + 3], "big", signed=True) * np.float32(2.0 ** -23)
    return out


def _read_soundfile(data: bytes, info: AudioInfo, *,
                    parallel: bool = True) -> tuple[np.ndarray, bool]:
    """FLAC/MP3 through libsndfile, block-wise into one buffer, never past the
    duration limit. A stream that breaks off keeps what decoded (truncated)."""
    cap = int(MAX_DURATION_S * info.sample_rate) + 1
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
    # a header's length is believed up to what the bytes could plausibly hold:
    # a 50-byte FLAC claiming 19 minutes must not reserve 19 minutes of samples
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
    if pos >= cap:
        raise LimitError("the audio is longer than 20 minutes; the limit is 20 minutes per file")
    if broken and pos == 0:
        raise AudioError(f"the {name} file could not be decoded: {broken}")
    samples = out[:pos] if pos >= out.shape[0] * 0.9 else out[:pos].copy()
    # Truncated means the header promised more than decoded; a FLAC without a
    # total sample count (libsndfile fails its last read) promised nothing.
    declared = info.frames if info.container == "flac" else None
    return samples, declared is not None and pos < declared


_HALVES_FROM_S = 60.0    # FLACs at least this long decode as two halves on two threads


def _decode_flac_in_halves(handle: sf.SoundFile, payload: bytes) -> np.ndarray | None:
    """A long FLAC of known length decoded as two halves at once: FLAC frames
    decode independently, libsndfile seeks sample-exactly, and cffi releases
    the GIL during the C calls, so the halves run on two cores. The samples are
    those of one sequential decode. None when any read falls short or fails
    (a damaged stream): the caller then decodes sequentially and keeps what is
    readable. Closes nothing; the caller still owns `handle`."""
    frames, channels = handle.frames, handle.channels
    out = np.empty((frames, channels), dtype=np.float32)
    middle = frames // 2

    def read(part: sf.SoundFile, start: int, end: int) -> bool:
        try:
            part.seek(start)
            pos = start
            while pos < end:
                got = part.read(out=out[pos:min(end, pos + _BLOCK_FRAMES)]).shape[0]
                if got == 0:
                    return False
                pos += got
            return True
        except (sf.LibsndfileError, RuntimeError):
            return False

    try:
        second = sf.SoundFile(io.BytesIO(payload))
    except (sf.LibsndfileError, RuntimeError, ValueError):
        return None
    with second, ThreadPoolExecutor(max_workers=1) as pool:
        later = pool.submit(read, second, middle, frames)
        first_ok = read(handle, 0, middle)
        ok = later.result() and first_ok
    return out if ok else None


def _open_soundfile(data: bytes, name: str) -> sf.SoundFile:
    try:
        return sf.SoundFile(io.BytesIO(data))
    except (sf.LibsndfileError, RuntimeError, ValueError) as exc:
        raise AudioError(f"the {name} file could not be decoded: {exc}") from None


def _grow(out: np.ndarray, frames: int) -> np.ndarray:
    bigger = np.empty((frames, out.shape[1]), dtype=np.float32)
    bigger[:out.shape[0]] = out
    return bigger


def _channel_extremes(samples: np.ndarray, width: int = 1024) -> tuple[np.ndarray, np.ndarray]:
    """Per-channel max and min, float32 (channels,), one contiguous pass each:
    the interleaved frames are read as rows of ~`width` samples (numpy's
    axis-0 reduction of a narrow (N, 2) array is ~50x slower than of a wide
    one, and per-column reductions stride over the memory twice)."""
    n, n_ch = samples.shape
    k = max(1, width // n_ch)
    body = n - n % k
    maxs = np.full(n_ch, -np.inf, dtype=np.float32)
    mins = np.full(n_ch, np.inf, dtype=np.float32)
    if body:
        rows = samples[:body].reshape(-1, k * n_ch)
        maxs = rows.max(axis=0).reshape(k, n_ch).max(axis=0)
        mins = rows.min(axis=0).reshape(k, n_ch).min(axis=0)
    if body < n:
        maxs = np.maximum(maxs, samples[body:].max(axis=0))
        mins = np.minimum(mins, samples[body:].min(axis=0))
    return maxs, mins


def _clip_and_check_not_silent(samples: np.ndarray) -> None:
    """In place: NaN/inf (float files) -> 0, overs (float files, hot MP3
    decodes) clipped to [-1, 1]; refuse digital silence (peak < -100 dBFS)
    and a constant DC offset (no channel moves by -100 dBFS)."""
    maxs, mins = _channel_extremes(samples)
    top, bottom = float(maxs.max()), float(mins.min())
    if not (np.isfinite(top) and np.isfinite(bottom)):      # max/min propagate NaN and inf
        np.nan_to_num(samples, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
        maxs, mins = _channel_extremes(samples)
        top, bottom = float(maxs.max()), float(mins.min())
    if top > 1.0 or bottom < -1.0:
        np.clip(samples, -1.0, 1.0, out=samples)
        maxs, mins = np.minimum(maxs, np.float32(1.0)), np.maximum(mins, np.float32(-1.0))
    peak = min(max(top, -bottom), 1.0)
    if peak < SILENCE_PEAK:
        what = "digital silence" if peak == 0 else f"silent (peak {20 * np.log10(peak):.0f} dBFS)"
        raise AudioError(f"the audio is {what}; nothing to analyze")
    # a constant (DC offset only) is silence to the ear and to every measure
    # (the K-weighting removes it): refuse it like silence rather than grade
    # the filters' start-up transient
    swing = float((maxs - mins).max())
    if swing < SILENCE_PEAK:
        raise AudioError(f"the audio is a constant DC offset ({float(samples[0].max()):+.2f}) "
                         "with no sound; nothing to analyze")
