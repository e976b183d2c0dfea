"""The decoder: bytes in memory -> float32 samples, or a clear TrackgradeError.

Inputs are generated in memory (soundfile writes to BytesIO; hand-built byte
strings for the odd cases) and the real odd files of ../shared/truth/real are
read in place.
"""

from __future__ import annotations

import io
import os
import struct
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from trackgrade.engine.decode import (
    MAX_DURATION_S, SIZE_LIMITS, AudioInfo, check_size, decode, probe, sniff_container,
)
from trackgrade.errors import AudioError, LimitError, TrackgradeError
from tests.truth import REAL, need_real, real_manifest, real_params

BAD_INPUT = REAL / "bad-input"
KS_TAIL = b"\x00\x00\x00\x00\x10\x00\x80\x00\x00\xaa\x00\x38\x9b\x71"


# --- helpers -----------------------------------------------------------------

def tone(seconds: float, rate: int, channels: int = 2, amp: float = 0.5) -> np.ndarray:
    """A 441 Hz-ish sine per channel (different phase per channel), float64."""
    t = np.arange(int(round(seconds * rate))) / rate
    freq = min(441.0, rate / 8)
    return np.stack([amp * np.sin(2 * np.pi * freq * t + c) for c in range(channels)], axis=1)


def encode(x: np.ndarray, rate: int, fmt: str, subtype: str | None = None,
           endian: str | None = None) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, x, rate, format=fmt, subtype=subtype, endian=endian)
    return buf.getvalue()


def chunk(cid: bytes, payload: bytes, *, pad: bool = True, size: int | None = None) -> bytes:
    body = struct.pack("<4sI", cid, len(payload) if size is None else size) + payload
    return body + (b"\0" if pad and len(payload) % 2 else b"")


def fmt_payload(tag: int = 1, channels: int = 2, rate: int = 44100, bits: int = 16,
                guid: bytes | None = None) -> bytes:
    align = channels * bits // 8
    base = struct.pack("<HHIIHH", tag, channels, rate, rate * align, align, bits)
    if guid is None:
        return base
    return base + struct.pack("<HHI", 22, bits, 3) + guid


def wav(chunks: list[bytes], *, riff_size: int | None = None) -> bytes:
    body = b"WAVE" + b"".join(chunks)
    return struct.pack("<4sI", b"RIFF", len(body) if riff_size is None else riff_size) + body


def pcm16(seconds: float, rate: int = 44100, channels: int = 2) -> bytes:
    return (tone(seconds, rate, channels) * 32767).astype("<i2").tobytes()


def expect_error(data: bytes, code: str, word: str, name: str = "x.wav") -> TrackgradeError:
    with pytest.raises(TrackgradeError) as info:
        decode(data, file_name=name)
    assert info.value.code == code, info.value.message
    assert word.lower() in info.value.message.lower(), info.value.message
    return info.value


# --- every accepted format, subtype and rate ---------------------------------

FORMATS = [  # (format, subtype, endian, expected container, expected subtype)
    ("WAV", "PCM_U8", None, "wav", "PCM_U8"),
    ("WAV", "PCM_16", None, "wav", "PCM_16"),
    ("WAV", "PCM_24", None, "wav", "PCM_24"),
    ("WAV", "PCM_32", None, "wav", "PCM_32"),
    ("WAV", "FLOAT", None, "wav", "FLOAT"),
    ("WAV", "DOUBLE", None, "wav", "DOUBLE"),
    ("WAV", "PCM_24", "BIG", "wav", "PCM_24"),           # RIFX
    ("WAVEX", "PCM_16", None, "wav", "PCM_16"),
    ("WAVEX", "PCM_24", None, "wav", "PCM_24"),
    ("WAVEX", "FLOAT", None, "wav", "FLOAT"),
    ("RF64", "PCM_16", None, "wav", "PCM_16"),
    ("RF64", "FLOAT", None, "wav", "FLOAT"),
    ("W64", "PCM_16", None, "wav", "PCM_16"),
    ("AIFF", "PCM_S8", None, "aiff", "PCM_S8"),
    ("AIFF", "PCM_16", None, "aiff", "PCM_16"),
    ("AIFF", "PCM_24", None, "aiff", "PCM_24"),
    ("AIFF", "PCM_32", None, "aiff", "PCM_32"),
    ("AIFF", "PCM_16", "LITTLE", "aiff", "PCM_16"),      # AIFF-C 'sowt'
    ("AIFF", "FLOAT", None, "aiff", "FLOAT"),            # AIFF-C 'fl32'
    ("AIFF", "DOUBLE", None, "aiff", "DOUBLE"),          # AIFF-C 'fl64'
    ("FLAC", "PCM_16", None, "flac", "PCM_16"),
    ("FLAC", "PCM_24", None, "flac", "PCM_24"),
    ("MP3", None, None, "mp3", "MPEG_LAYER_III"),
]
RATES = [8000, 22050, 44100, 48000, 96000, 192000]
MP3_RATES = [8000, 22050, 44100, 48000]


def _grid():
    for fmt, subtype, endian, container, expected in FORMATS:
        for rate in (MP3_RATES if fmt == "MP3" else RATES):
            for channels in ((1, 2) if rate == 44100 else (2,)):
                yield pytest.param(fmt, subtype, endian, container, expected, rate, channels,
                                   id=f"{fmt}-{subtype}-{endian or 'file'}-{rate}-{channels}ch")


@pytest.mark.parametrize("fmt,subtype,endian,container,expected,rate,channels", list(_grid()))
def test_every_accepted_format_decodes_like_libsndfile(fmt, subtype, endian, container, expected,
                                                       rate, channels):
    data = encode(tone(2.5, rate, channels), rate, fmt, subtype, endian)
    audio = decode(data, file_name="track.bin")
    assert (audio.container, audio.subtype, audio.sample_rate) == (container, expected, rate)
    assert audio.samples.dtype == np.float32 and audio.samples.ndim == 2
    assert audio.samples.flags.c_contiguous
    assert audio.channels == channels and not audio.truncated
    assert float(np.abs(audio.samples).max()) <= 1.0
    if fmt == "MP3":   # lossy: encoder delay/padding, so compare level and length only
        assert abs(audio.duration_s - 2.5) < 0.15
        assert 0.4 < float(np.abs(audio.samples).max()) < 0.7
        return
    reference, _ = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    assert audio.frames == reference.shape[0] == int(round(2.5 * rate))
    np.testing.assert_array_equal(audio.samples, reference)
    assert audio.declared_duration_s is None          # set only for truncated files
    assert probe(data, file_name="track.bin").declared_duration_s == pytest.approx(2.5)


def test_probe_reads_the_header_only():
    data = encode(tone(3.0, 48000), 48000, "WAV", "PCM_24")
    info = probe(data, file_name="a.wav")
    assert info == AudioInfo("wav", 48000, 2, 144000, 3.0, "PCM_24")
    flac = probe(encode(tone(3.0, 44100, 1), 44100, "FLAC"), file_name="a.flac")
    assert (flac.container, flac.channels, flac.frames, flac.subtype) == ("flac", 1, 132300,
                                                                         "PCM_16")
    mp3 = probe(encode(tone(3.0, 44100), 44100, "MP3"), file_name="a.mp3")
    assert (mp3.container, mp3.sample_rate, mp3.channels) == ("mp3", 44100, 2)


# --- container detection from the bytes --------------------------------------

def test_container_comes_from_the_bytes_not_the_name():
    x = tone(2.5, 44100)
    for fmt, name, container in (("WAV", "song.mp3", "wav"), ("FLAC", "song.wav", "flac"),
                                 ("MP3", "song.flac", "mp3"), ("AIFF", "song.wav", "aiff")):
        audio = decode(encode(x, 44100, fmt), file_name=name)
        assert audio.container == container


def test_the_real_mislabelled_file_is_sniffed_as_what_it_is():
    """A float WAV named .mp3 (1.96 s)."""
    need_real()
    dali = (BAD_INPUT / "wrong_extension__dali_float_wav_named.mp3").read_bytes()
    assert sniff_container(dali) == "wav"


def _ogg_page(packet: bytes) -> bytes:
    return b"OggS\x00\x02" + b"\0" * 20 + bytes([1, len(packet)]) + packet


@pytest.mark.parametrize("data,container,name", [
    (_ogg_page(b"\x01vorbis" + b"\0" * 22), "ogg_vorbis", "Ogg Vorbis"),
    (_ogg_page(b"OpusHead\x01\x02" + b"\0" * 9), "ogg_opus", "Ogg Opus"),
    (_ogg_page(b"\x7fFLAC\x01\x00" + b"\0" * 40), "ogg_flac", "Ogg FLAC"),
    (b"\x1a\x45\xdf\xa3\x9f\x42\x86\x81\x01\x42\x82\x84webm" + b"\0" * 40, "webm", "WebM"),
    (b"\x00\x00\x00\x20ftypM4A \x00\x00\x02\x00" + b"\0" * 40, "mp4", "MP4"),
    (b"\xff\xf1\x50\x80\x02\x1f\xfc" + b"\0" * 40, "aac", "AAC"),
    (b"caff\x00\x01\x00\x00" + b"\0" * 40, "caf", "CAF"),
    (b"%PDF-1.4\n" + b"\0" * 40, "pdf", "PDF"),
])
def test_unaccepted_formats_are_named(data, container, name):
    assert sniff_container(data) == container
    err = expect_error(data, "unprocessable_audio", name, name="track.mp3")
    assert "send WAV, MP3, AIFF or FLAC" in err.message


def test_sniff_accepted_containers():
    x = tone(2.5, 44100)
    assert sniff_container(encode(x, 44100, "WAV")) == "wav"
    assert sniff_container(encode(x, 44100, "RF64")) == "wav"
    assert sniff_container(encode(x, 44100, "W64")) == "wav"
    assert sniff_container(encode(x, 44100, "WAV", endian="BIG")) == "wav"
    assert sniff_container(encode(x, 44100, "AIFF", "FLOAT")) == "aiff"
    assert sniff_container(encode(x, 44100, "FLAC")) == "flac"
    assert sniff_container(encode(x, 44100, "MP3")) == "mp3"
    assert sniff_container(b"") is None
    assert sniff_container(b"\0" * 5000) is None
    assert sniff_container(np.random.default_rng(1).bytes(5000)) is None


def test_flac_behind_an_id3_tag_decodes():
    flac = encode(tone(2.5, 44100), 44100, "FLAC")
    tag = b"ID3\x03\x00\x00" + bytes([0, 0, 0, 20]) + b"\0" * 20
    audio = decode(tag + flac, file_name="a.flac")
    assert (audio.container, audio.frames) == ("flac", 110250)


# --- compressed codecs inside WAV / AIFF-C -------------------------------------

@pytest.mark.parametrize("tag,name", [
    (0x0055, "MPEG Layer 3"), (0x0002, "MS ADPCM"), (0x0011, "IMA ADPCM"),
    (0x0031, "GSM 6.10"), (0x0007, "mu-law"), (0x0006, "A-law"), (0x0050, "MPEG Layer 1/2"),
    (0x0161, "WMA"), (0x7A21, "0x7A21"),
])
def test_compressed_codecs_in_wav_are_refused_by_name(tag, name):
    data = wav([chunk(b"fmt ", fmt_payload(tag, 1, 8000, 8)), chunk(b"data", b"\x55" * 40000)])
    expect_error(data, "unprocessable_audio", name)
    with pytest.raises(AudioError):
        probe(data, file_name="x.wav")


def test_mu_law_wav_is_refused_although_libsndfile_decodes_it():
    data = encode(tone(3.0, 8000), 8000, "WAV", "ULAW")
    assert sf.read(io.BytesIO(data))[0].shape == (24000, 2)     # libsndfile would accept it
    expect_error(data, "unprocessable_audio", "mu-law")


@pytest.mark.parametrize("subtype,name", [("ULAW", "mu-law"), ("ALAW", "A-law"),
                                          ("IMA_ADPCM", "IMA ADPCM")])
def test_compressed_aifc_is_refused_by_name(subtype, name):
    data = encode(tone(3.0, 8000), 8000, "AIFF", subtype)
    assert data[8:12] == b"AIFC"
    expect_error(data, "unprocessable_audio", name, name="x.aif")


def test_extensible_with_a_compressed_or_foreign_subformat_is_refused():
    mp3_guid = struct.pack("<H", 0x0055) + KS_TAIL
    data = wav([chunk(b"fmt ", fmt_payload(0xFFFE, 2, 44100, 16, mp3_guid)),
                chunk(b"data", pcm16(3))])
    expect_error(data, "unprocessable_audio", "MPEG Layer 3")
    ambisonic = bytes.fromhex("010000000000 2100 0000 0000 0000 0000".replace(" ", "")) + b"\0" * 2
    data = wav([chunk(b"fmt ", fmt_payload(0xFFFE, 2, 44100, 16, ambisonic[:16])),
                chunk(b"data", pcm16(3))])
    expect_error(data, "unprocessable_audio", "subformat")
    pcm_guid = struct.pack("<H", 1) + KS_TAIL
    data = wav([chunk(b"fmt ", fmt_payload(0xFFFE, 2, 44100, 16, pcm_guid)),
                chunk(b"data", pcm16(3))])
    assert decode(data, file_name="x.wav").frames == 3 * 44100


# --- the RIFF chunk walk --------------------------------------------------------

def test_odd_chunks_padded_unpadded_and_fmt_after_data():
    audio = pcm16(3)
    padded = wav([chunk(b"junk", b"abc"), chunk(b"fmt ", fmt_payload()), chunk(b"data", audio)])
    unpadded = wav([chunk(b"junk", b"abc", pad=False), chunk(b"fmt ", fmt_payload()),
                    chunk(b"data", audio)])
    late_fmt = wav([chunk(b"data", audio), chunk(b"LIST", b"INFOxxxx"),
                    chunk(b"fmt ", fmt_payload())])
    for data in (padded, unpadded, late_fmt):
        decoded = decode(data, file_name="x.wav")
        assert decoded.frames == 3 * 44100 and not decoded.truncated


def test_trailing_chunks_after_data_are_not_audio():
    data = wav([chunk(b"fmt ", fmt_payload()), chunk(b"data", pcm16(3)),
                chunk(b"id3 ", b"\x7f" * 5000)])
    assert decode(data, file_name="x.wav").frames == 3 * 44100


@pytest.mark.parametrize("chunks,word", [
    ([chunk(b"LIST", b"x" * 10, size=0xFFFFFF00), chunk(b"fmt ", fmt_payload())], "fmt"),
    ([chunk(b"data", pcm16(3))], "fmt"),
    ([chunk(b"fmt ", fmt_payload())], "no audio data"),
    ([chunk(b"fmt ", fmt_payload()), chunk(b"data", b"")], "no audio data"),
    ([chunk(b"fmt ", b"\x01\x00\x02\x00")], "fmt"),
    ([chunk(b"fmt ", fmt_payload(1, 2, 44100, 12)), chunk(b"data", b"\1" * 60000)], "12 bits"),
    ([chunk(b"fmt ", fmt_payload(3, 2, 44100, 16)), chunk(b"data", b"\1" * 60000)], "16 bits"),
    ([chunk(b"fmt ", fmt_payload(1, 6, 44100, 16)), chunk(b"data", pcm16(3, 44100, 6))],
     "6 channels"),
    ([chunk(b"fmt ", fmt_payload(1, 2, 4000, 16)), chunk(b"data", pcm16(3, 4000))],
     "sample rate"),
    ([chunk(b"fmt ", fmt_payload(1, 2, 384000, 16)), chunk(b"data", pcm16(3, 384000))],
     "sample rate"),
    ([chunk(b"fmt ", fmt_payload(1, 0, 44100, 16)), chunk(b"data", pcm16(3))], "inconsistent"),
])
def test_broken_wav_headers_get_a_clear_error(chunks, word):
    expect_error(wav(chunks), "unprocessable_audio", word)


def test_streaming_wav_sizes_read_to_the_end():
    audio = pcm16(3)
    for size in (0xFFFFFFFF, 0):
        data = wav([chunk(b"fmt ", fmt_payload()), chunk(b"data", audio, size=size)],
                   riff_size=0xFFFFFFFF)
        assert decode(data, file_name="x.wav").frames == 3 * 44100


def test_rf64_ds64_sizes_are_used():
    data = bytearray(encode(tone(3.0, 44100), 44100, "RF64"))
    assert data[:4] == b"RF64" and data[12:16] == b"ds64"
    assert decode(bytes(data), file_name="x.wav").frames == 3 * 44100
    struct.pack_into("<Q", data, 28, 600 * 44100 * 4)          # ds64 data size: 10 minutes
    audio = decode(bytes(data), file_name="x.wav")
    assert audio.truncated and audio.declared_duration_s == pytest.approx(600)
    assert audio.frames == 3 * 44100


def test_flac_without_a_total_sample_count_decodes():
    data = bytearray(encode(tone(3.0, 44100), 44100, "FLAC"))
    packed = int.from_bytes(data[18:26], "big") & ~((1 << 36) - 1)
    data[18:26] = packed.to_bytes(8, "big")
    info = probe(bytes(data), file_name="x.flac")
    assert info.frames is None and info.declared_duration_s is None
    audio = decode(bytes(data), file_name="x.flac")
    assert not audio.truncated and 2.9 < audio.duration_s <= 3.0


def test_every_short_prefix_gets_a_clear_error():
    x = tone(2.2, 22050)
    for fmt, subtype in (("WAV", "PCM_16"), ("WAVEX", "FLOAT"), ("RF64", "PCM_16"),
                         ("W64", "PCM_16"), ("AIFF", "PCM_24"), ("AIFF", "FLOAT"),
                         ("FLAC", "PCM_16"), ("MP3", None)):
        data = encode(x, 22050, fmt, subtype)
        for cut in range(0, 400):
            with pytest.raises(TrackgradeError) as info:
                decode(data[:cut], file_name="prefix.wav")
            assert info.value.code == "unprocessable_audio"


def test_random_damage_never_escapes_as_another_exception():
    rng = np.random.default_rng(7)
    x = tone(2.2, 22050)
    sources = [encode(x, 22050, f, s) for f, s in (("WAV", "PCM_16"), ("WAVEX", "FLOAT"),
                                                     ("AIFF", "PCM_24"), ("FLAC", "PCM_16"),
                                                     ("MP3", None), ("RF64", "PCM_16"))]
    for data in sources:
        for _ in range(40):
            damaged = bytearray(data[:int(rng.integers(0, len(data) + 1))])
            for _ in range(int(rng.integers(0, 6))):
                if damaged:
                    damaged[int(rng.integers(0, min(len(damaged), 200)))] = int(rng.integers(256))
            try:
                audio = decode(bytes(damaged), file_name="fuzz.wav")
            except TrackgradeError as exc:
                assert exc.code in ("unprocessable_audio", "file_rejected", "file_too_large")
            else:
                assert audio.samples.dtype == np.float32 and audio.duration_s >= 1.0
                assert np.isfinite(audio.samples).all() and np.abs(audio.samples).max() <= 1.0


# --- truncation -----------------------------------------------------------------

def test_wav_header_claiming_25_minutes_with_10_s_present_is_a_truncated_file():
    data = wav([chunk(b"fmt ", fmt_payload()),
                chunk(b"data", pcm16(10), size=25 * 60 * 44100 * 4)])
    info = probe(data, file_name="x.wav")
    assert info.frames == 441000 and info.declared_duration_s == pytest.approx(1500)
    audio = decode(data, file_name="x.wav")
    assert audio.truncated and audio.duration_s == pytest.approx(10)
    assert audio.declared_duration_s == pytest.approx(1500)


def test_cut_files_decode_what_is_present():
    x = tone(5.0, 44100)
    for fmt, subtype in (("WAV", "PCM_24"), ("AIFF", "PCM_16"), ("FLAC", "PCM_16")):
        data = encode(x, 44100, fmt, subtype)
        audio = decode(data[:int(len(data) * 0.7)], file_name="cut")
        assert audio.truncated and audio.declared_duration_s == pytest.approx(5.0)
        assert 2.0 <= audio.duration_s < 4.0
        expect_error(data[:int(len(data) * 0.2)], "unprocessable_audio", "truncated")
    mp3 = encode(x, 44100, "MP3")
    audio = decode(mp3[:int(len(mp3) * 0.7)], file_name="cut.mp3")
    assert 2.0 <= audio.duration_s < 4.5


# --- duration limits --------------------------------------------------------------

def _long_u8_wav(seconds: float) -> bytes:
    period = (128 + 100 * np.sin(np.arange(80) * 2 * np.pi / 80)).astype(np.uint8).tobytes()
    frames = int(seconds * 8000)
    audio = (period * (frames // 80 + 1))[:frames]
    return wav([chunk(b"fmt ", fmt_payload(1, 1, 8000, 8)), chunk(b"data", audio)])


def test_twenty_minutes_is_accepted_and_one_second_more_is_rejected():
    audio = decode(_long_u8_wav(MAX_DURATION_S), file_name="twenty.wav")
    assert audio.duration_s == MAX_DURATION_S
    over = _long_u8_wav(MAX_DURATION_S + 1)
    for call in (probe, decode):
        with pytest.raises(LimitError) as info:
            call(over, file_name="long.wav")
        assert info.value.code == "file_rejected" and "20 minutes" in info.value.message


def test_flac_claiming_20_hours_is_rejected_from_the_header():
    data = bytearray(encode(tone(3.0, 44100), 44100, "FLAC"))
    assert data[:4] == b"fLaC" and data[4] & 0x7F == 0
    si = 8
    packed = int.from_bytes(data[si + 10:si + 18], "big")
    packed = (packed & ~((1 << 36) - 1)) | (20 * 3600 * 44100)
    data[si + 10:si + 18] = packed.to_bytes(8, "big")
    # only 3 s of frames exist: decoding them would yield a "truncated" 3-s file,
    # so this error can only come from the header, before any decoding
    for call in (probe, decode):
        with pytest.raises(LimitError) as info:
            call(bytes(data), file_name="long.flac")
        assert info.value.code == "file_rejected" and "1200:00" in info.value.message


def test_mp3_over_20_minutes_is_rejected_before_decoding():
    n = int((MAX_DURATION_S + 30) * 8000)
    x = (0.3 * np.sin(np.arange(n) * 0.05)).astype(np.float32)
    data = encode(x, 8000, "MP3")
    assert b"Info" in data[:200] or b"Xing" in data[:200]      # LAME's exact frame count
    untagged = data[:200].replace(b"Info", b"XXXX").replace(b"Xing", b"XXXX") + data[200:]
    assert sf.info(io.BytesIO(untagged)).duration < MAX_DURATION_S     # libsndfile's estimate
    for mp3 in (data, untagged):          # from the tag; from walking the frame headers
        for call in (probe, decode):
            with pytest.raises(LimitError) as info:
                call(mp3, file_name="long.mp3")
            assert info.value.code == "file_rejected" and "20 minutes" in info.value.message


def test_untagged_vbr_mp3_is_read_to_its_end():
    x = tone(60.0, 8000, 1) * np.linspace(0.05, 1, 480000)[:, None]
    data = encode(x, 8000, "MP3")
    untagged = data[:200].replace(b"Info", b"XXXX").replace(b"Xing", b"XXXX") + data[200:]
    assert sf.info(io.BytesIO(untagged)).duration < 30     # libsndfile would stop there
    audio = decode(untagged, file_name="vbr.mp3")
    assert abs(audio.duration_s - 60.0) < 0.2


def test_stream_without_a_length_is_cut_at_the_limit():
    """A FLAC whose STREAMINFO has no total (streamed encode) is decoded at
    most to 20 minutes + 1 frame, then refused."""
    n = int((MAX_DURATION_S + 20) * 8000)
    x = (0.3 * np.sin(np.arange(n) * 0.05)).astype(np.float32)
    data = bytearray(encode(x, 8000, "FLAC", "PCM_16"))
    packed = int.from_bytes(data[18:26], "big") & ~((1 << 36) - 1)
    data[18:26] = packed.to_bytes(8, "big")
    assert probe(bytes(data), file_name="s.flac").declared_duration_s is None
    with pytest.raises(LimitError) as info:
        decode(bytes(data), file_name="s.flac")
    assert info.value.code == "file_rejected" and "longer than 20 minutes" in info.value.message


def test_mp3_with_a_corrupt_first_frame_is_not_refused_on_an_estimate():
    data = bytearray(encode(tone(3.0, 44100), 44100, "MP3"))
    data[2] = (data[2] & 0x0F) | 0x10              # first frame: 32 kbit/s instead of 128
    try:
        audio = decode(bytes(data), file_name="odd.mp3")
    except TrackgradeError as exc:
        assert exc.code == "unprocessable_audio"
    else:
        assert audio.duration_s < 10


# --- size limits ---------------------------------------------------------------------

def test_size_limits_per_format():
    mib = 1024 * 1024
    assert SIZE_LIMITS == {"wav": 200 * mib, "aiff": 200 * mib, "mp3": 48 * mib,
                           "flac": 140 * mib}
    for container, limit in SIZE_LIMITS.items():
        check_size(limit, container)
        with pytest.raises(LimitError) as info:
            check_size(limit + 1, container)
        assert info.value.code == "file_too_large" and info.value.http_status == 413


def test_oversized_mp3_is_refused_before_decoding():
    mp3 = encode(tone(3.0, 44100), 44100, "MP3")
    data = mp3 + b"\0" * (48 * 1024 * 1024 + 1 - len(mp3))
    with pytest.raises(LimitError) as info:
        decode(data, file_name="big.mp3")
    assert info.value.code == "file_too_large" and "48 MiB" in info.value.message


# --- short, empty, silent --------------------------------------------------------------

def test_empty_tiny_and_garbage_inputs():
    expect_error(b"", "unprocessable_audio", "empty")
    expect_error(b"R", "unprocessable_audio", "not a recognised")
    expect_error(np.random.default_rng(3).bytes(100_000), "unprocessable_audio",
                 "not a recognised")
    expect_error(b"RIFF\x24\x00\x00\x00WAVE", "unprocessable_audio", "fmt")
    expect_error(b"fLaC\x00\x00", "unprocessable_audio", "STREAMINFO")
    expect_error(b"FORM\x00\x00\x00\x04AIFF", "unprocessable_audio", "COMM")


def test_one_second_is_the_minimum():
    # a one-bar break (1.4-1.9 s) is a part to grade, not an error (CONTRACT 5, parts)
    assert decode(encode(tone(1.0, 44100), 44100, "WAV"), file_name="a.wav").frames == 44100
    assert decode(encode(tone(1.5, 44100), 44100, "FLAC"), file_name="a.flac").frames == 66150
    assert decode(encode(tone(1.5, 44100), 44100, "MP3"), file_name="a.mp3").duration_s > 1.0
    expect_error(encode(tone(0.99, 44100), 44100, "WAV"), "unprocessable_audio", "too short")
    expect_error(encode(tone(0.5, 44100), 44100, "FLAC"), "unprocessable_audio", "too short")
    expect_error(encode(tone(0.5, 44100), 44100, "MP3"), "unprocessable_audio", "too short")


def test_silence_is_refused_and_quiet_audio_is_not():
    expect_error(encode(np.zeros((44100 * 3, 2)), 44100, "WAV"), "unprocessable_audio",
                 "digital silence")
    expect_error(encode(np.zeros((44100 * 3, 2)), 44100, "FLAC"), "unprocessable_audio",
                 "silence")
    expect_error(encode(tone(3, 44100, amp=10 ** (-110 / 20)), 44100, "WAV", "FLOAT"),
                 "unprocessable_audio", "silent")
    quiet = decode(encode(tone(3, 44100, amp=10 ** (-55 / 20)), 44100, "WAV", "FLOAT"),
                   file_name="quiet.wav")
    assert 0 < float(np.abs(quiet.samples).max()) < 10 ** (-54 / 20)


def test_near_silence_is_refused_naming_its_peak():
    """CONTRACT.md section 6: a peak under -60 dBFS is refused like silence."""
    expect_error(encode(tone(3, 44100, amp=10 ** (-80 / 20)), 44100, "WAV", "FLOAT"),
                 "unprocessable_audio", "near-silence (peak -80.0 dBFS")
    expect_error(encode(tone(3, 44100, amp=10 ** (-61 / 20)), 44100, "FLAC"),
                 "unprocessable_audio", "near-silence")
    decode(encode(tone(3, 44100, amp=10 ** (-59 / 20)), 44100, "WAV", "FLOAT"), file_name="ok.wav")


def test_float_overs_are_clipped_and_nan_zeroed():
    x = tone(3, 44100, amp=1.5)
    x[100, 0], x[200, 1] = np.nan, np.inf
    audio = decode(encode(x, 44100, "WAV", "FLOAT"), file_name="hot.wav")
    assert np.isfinite(audio.samples).all()
    assert float(audio.samples.max()) == 1.0 and float(audio.samples.min()) == -1.0
    assert audio.samples[100, 0] == 0.0


# --- no temporary files ----------------------------------------------------------------

def test_decoding_never_writes_temporary_files(empty_tmpdir):
    tmp = empty_tmpdir
    x = tone(2.5, 44100)
    for fmt in ("WAV", "FLAC", "MP3", "AIFF"):
        data = encode(x, 44100, fmt)
        assert decode(data, file_name=f"a.{fmt.lower()}").duration_s > 2.0
        probe(data, file_name=f"a.{fmt.lower()}")
    assert os.listdir(tmp) == []


# --- the real odd files ------------------------------------------------------------------

# file -> ("ok", sample_rate, channels) or (error code, a word of the message)
BAD_INPUT_EXPECTED = {
    "audiomentations__bus.opus": ("unprocessable_audio", "Ogg Opus"),
    "audiomentations__mono_float64.wav": ("unprocessable_audio", "too short"),
    "audiomentations__ms_adpcm.wav": ("unprocessable_audio", "MS ADPCM"),
    "audiomentations__stereo_24bit.WAV": ("ok", 16000, 2),
    "audiomentations__testing.m4a": ("unprocessable_audio", "3GP"),
    "madmom__stereo_sample.m4a": ("unprocessable_audio", "MP4"),
    "madmom__stereo_sample_rg.flac": ("ok", 44100, 2),
    "pydub__bach.ogg": ("unprocessable_audio", "Ogg FLAC"),
    "pydub__test-192khz-32bit.flac": ("ok", 192000, 2),
    "pydub__test-dc_offset.wav": ("ok", 22050, 2),
    "pydub__test1-8bit.wav": ("ok", 32000, 2),
    "pydub__test1.raw": ("unprocessable_audio", "not a recognised"),
    "pydub__test1_empty.wav": ("unprocessable_audio", "no audio data"),
    "pydub__test5.webm": ("unprocessable_audio", "WebM"),
    "pydub__wrong_extension.aac": ("unprocessable_audio", "MP4"),
    "tinytag__8khz_5s.opus": ("unprocessable_audio", "Ogg Opus"),
    "tinytag__M1F1-mulawC-AFsp.afc": ("unprocessable_audio", "mu-law"),
    "tinytag__adpcm.wav": ("unprocessable_audio", "MS ADPCM"),
    "tinytag__adpcm_no_byterate.wav": ("unprocessable_audio", "MS ADPCM"),
    "tinytag__empty_file.wav": ("unprocessable_audio", "empty"),
    "tinytag__gsm_6_10.wav": ("unprocessable_audio", "GSM 6.10"),
    "tinytag__id3_header_with_a_zero_byte.wav": ("ok", 22050, 1),
    "tinytag__incomplete.mp3": ("unprocessable_audio", "not a recognised"),
    "tinytag__invalid_file.wav": ("unprocessable_audio", "not a recognised"),
    "tinytag__mp3_audio.wav": ("unprocessable_audio", "MPEG Layer 3"),
    "tinytag__no_audio_data_compressed.wav": ("unprocessable_audio", "MPEG Layer 3"),
    "tinytag__no_audio_data_uncompressed.wav": ("unprocessable_audio", "no audio data"),
    "tinytag__non_ascii_filename_äää.mp3": ("unprocessable_audio", "digital silence"),
    "tinytag__riff_extra_zero.wav": ("unprocessable_audio", "too short"),
    "tinytag__test_flac.oga": ("unprocessable_audio", "Ogg FLAC"),
    "tinytag__wav_with_image.wav": ("ok", 8000, 1),
    "wrong_extension__dali_float_wav_named.mp3": ("ok", 48000, 2),
}


def test_every_bad_input_file_has_an_expectation():
    need_real()
    assert sorted(p.name for p in BAD_INPUT.iterdir()) == sorted(BAD_INPUT_EXPECTED)


@pytest.mark.parametrize("name", sorted(BAD_INPUT_EXPECTED))
def test_real_bad_input(name):
    need_real()
    data = (BAD_INPUT / name).read_bytes()
    expected = BAD_INPUT_EXPECTED[name]
    if expected[0] == "ok":
        audio = decode(data, file_name=name)
        assert (audio.sample_rate, audio.channels) == expected[1:]
        assert audio.samples.dtype == np.float32 and audio.duration_s >= 1.0
        assert float(np.abs(audio.samples).max()) <= 1.0
    else:
        expect_error(data, *expected, name=name)


ACCEPTED_EXTENSIONS = (".wav", ".flac", ".mp3", ".aif", ".aiff")
CLIPS = [row for row in real_manifest()
         if row["file"].startswith("clips/") and row["file"].lower().endswith(ACCEPTED_EXTENSIONS)]


@pytest.mark.parametrize("row", real_params(CLIPS, ids=lambda r: Path(r["file"]).name))
def test_real_clips_decode(row):
    data = Path(row["path"]).read_bytes()
    duration = float(row["duration_s"])
    if duration < 1.0:
        expect_error(data, "unprocessable_audio", "too short", name=row["file"])
        return
    audio = decode(data, file_name=Path(row["file"]).name)
    assert audio.sample_rate == int(row["sample_rate"])
    assert audio.channels == int(row["channels"])
    tolerance = 0.25 if audio.container == "mp3" else 0.01   # MP3: encoder delay, gapless trim
    assert abs(audio.duration_s - duration) < tolerance
    assert not audio.truncated


def _long_flac(seconds: float = 75.0, rate: int = 22050) -> tuple[bytes, np.ndarray]:
    rng = np.random.default_rng(75)
    t = np.arange(int(seconds * rate)) / rate
    x = np.stack([0.4 * np.sin(2 * np.pi * 220 * t), 0.3 * np.sin(2 * np.pi * 331 * t)], axis=1)
    x += 0.05 * rng.standard_normal(x.shape)
    buffer = io.BytesIO()
    sf.write(buffer, x.astype(np.float32), rate, format="FLAC", subtype="PCM_16")
    data = buffer.getvalue()
    reference, _ = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
    return data, reference


def test_a_long_flac_decoded_in_two_halves_equals_one_sequential_decode():
    data, reference = _long_flac()
    audio = decode(data, file_name="long.flac")
    assert not audio.truncated
    np.testing.assert_array_equal(audio.samples, reference)


def test_a_long_flac_cut_short_still_decodes_what_is_there_and_says_so():
    data, reference = _long_flac()
    audio = decode(data[: len(data) * 2 // 3], file_name="cut.flac")
    assert audio.truncated and audio.declared_duration_s == pytest.approx(75.0)
    assert 40.0 < audio.duration_s < 60.0
    np.testing.assert_array_equal(audio.samples, reference[: audio.frames])
