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

The package, one module per concern: `sniff` (magic bytes), `info` (what a
header says), `limits` (every limit and its message), `pcm` (the chunk walk
and numpy read shared by WAV and AIFF), `wav` (RIFF/RIFX/RF64/BW64/Wave64),
`aiff` (AIFF/AIFF-C), `flac` (STREAMINFO), `mp3` (frame walk and tags),
`stream` (libsndfile reading of FLAC and MP3), `chunks` (the samples chunk
by chunk, for audio too large to hold at its native rate), `stderr`
(libmpg123's notes kept off the terminal). This module only orders them.
"""

from __future__ import annotations

import struct
from contextlib import nullcontext

from trackgrade.engine.decode.aiff import _parse_aiff
from trackgrade.engine.decode.chunks import ChunkedAudio
from trackgrade.engine.decode.flac import _parse_flac
from trackgrade.engine.decode.info import ACCEPTED_CONTAINERS, AudioInfo, CONTAINER_NAMES, _Layout
from trackgrade.engine.decode.limits import (ACCEPTED, MAX_DURATION_S, MIN_DURATION_S, SIZE_LIMITS,
                                             _check_duration_limit, _check_min_duration,
                                             _validate, check_not_silent, sanitise,
                                             check_size, check_declared_size)
from trackgrade.engine.decode.mp3 import _parse_mp3
from trackgrade.engine.decode.pcm import read_sanitised
from trackgrade.engine.decode.sniff import sniff_container
from trackgrade.engine.decode.stderr import decoder_notes
from trackgrade.engine.decode.stream import _read_soundfile
from trackgrade.engine.decode.wav import _parse_wav
from trackgrade.engine.features import DecodedAudio
from trackgrade.errors import AudioError

__all__ = ["ACCEPTED", "ACCEPTED_CONTAINERS", "CONTAINER_NAMES", "MAX_DURATION_S", "MIN_DURATION_S",
           "SIZE_LIMITS", "AudioInfo", "ChunkedAudio", "check_declared_size", "check_size", "decode",
           "decode_chunks", "probe", "sniff_container"]


def probe(data: bytes, *, file_name: str) -> AudioInfo:
    """Read and validate the header only (no sample decoding). Raises
    AudioError (`unprocessable_audio`) or LimitError (`file_too_large`,
    `file_rejected`) for anything the header already rules out."""
    with _quiet(data):
        info, _ = _probe(data, file_name)
    return info


def _quiet(data: bytes):
    """MP3s decode with libmpg123's notes captured (see `stderr`); others as they are."""
    return decoder_notes() if sniff_container(data) == "mp3" else nullcontext([])


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


def decode(data: bytes, *, file_name: str, parallel: bool = True) -> DecodedAudio:
    """The caller's bytes (never a file) -> float32 (frames, channels) in [-1, 1].

    `declared_duration_s` is set only when `truncated` (what the header
    promised, as features.Features documents it); `probe` always reports it.
    Raises AudioError (`unprocessable_audio`) for anything that is not
    analyzable audio, LimitError for size (`file_too_large`) and duration
    (`file_rejected`) limits. An MP3 decoder's complaints about damaged
    frames are counted in `decoder_notes`, never printed. `parallel=False`
    keeps a long FLAC on one thread (an analysis worker's one core)."""
    with _quiet(data) as notes:
        info, layout = _probe(data, file_name)
        if layout is not None:           # sanitised as it is read
            samples, maxs, mins = read_sanitised(data, layout, info.channels)
            truncated = info.truncated
        else:
            samples, truncated = _read_soundfile(data, info, parallel=parallel)
            maxs, mins = sanitise(samples)
    seconds = samples.shape[0] / info.sample_rate
    _check_duration_limit(seconds, "the audio is")
    _check_min_duration(seconds, info.declared_duration_s if truncated else None)
    check_not_silent(maxs, mins, float(samples[0].max()))
    return DecodedAudio(samples=samples, sample_rate=info.sample_rate, container=info.container,
                        subtype=info.subtype, truncated=bool(truncated),
                        declared_duration_s=info.declared_duration_s if truncated else None,
                        decoder_notes=len(notes))


def decode_chunks(data: bytes, *, file_name: str, chunk_frames: int) -> ChunkedAudio:
    """The header read and validated as `decode` does, the samples left to be
    read chunk by chunk (`ChunkedAudio`: iterate once, then `finish()`)."""
    with _quiet(data):
        info, layout = _probe(data, file_name)
    return ChunkedAudio(data, info, layout, chunk_frames=chunk_frames)
