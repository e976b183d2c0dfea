"""The whole library pipeline (decode -> extract -> grade -> words) on odd but
decodable audio, fed as real encoded bytes (WAV/FLAC/MP3/AIFF written in
memory by libsndfile).

Every input ends in one of two ways: a `TrackgradeError` with the right code
and a message that says what is wrong, or a document that passes
`validate_document` with every number finite, no "nan"/"inf" in the words, a
tempo in 60-200 and `key` null for atonal input. RuntimeWarnings (numpy's
divide-by-zero / invalid value) are errors here: they mark NaN paths.

Decisions pinned here:
- A constant DC offset (e.g. 0.3 everywhere) is refused like digital silence
  (`unprocessable_audio`, "constant DC offset"): it is silent to the ear and to
  the K-weighting, and a document would only grade the filters' start-up
  transient. Music riding on a DC offset is analyzed.
- Random bytes after a valid WAV header are PCM samples as far as any decoder
  can tell: they are graded (as full-scale noise). A FLAC whose frames are
  garbage is refused ("could not be decoded"); a WAV whose data stops short
  of 1 s is refused as truncated.
"""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
import soundfile as sf

from trackgrade.errors import TrackgradeError
from tests.document_check import validate_document
from trackgrade.pipeline import analyze

from tests.truth import REAL, need_real

pytestmark = pytest.mark.filterwarnings("error::RuntimeWarning")

R = 44100
_RNG_SEED = 7


# ---------------------------------------------------------------- signals

def _t(seconds: float, rate: int = R) -> np.ndarray:
    return np.arange(int(round(seconds * rate))) / rate


def _music(seconds: float, rate: int = R) -> np.ndarray:
    """An A-major triad with a 120-BPM low thump, stereo."""
    x = _t(seconds, rate)
    chord = sum(a * np.sin(2 * np.pi * f * x) for a, f in ((0.2, 220.0), (0.15, 277.18), (0.15, 329.63)))
    thump = (np.mod(x, 0.5) < 0.05) * np.sin(2 * np.pi * 60 * x) * 0.5
    y = chord + thump
    return np.stack([y, y], axis=1)


def _clicks(bpm: float, seconds: float = 20.0, rate: int = R) -> np.ndarray:
    y = np.zeros(int(seconds * rate))
    for s in np.arange(0.1, seconds, 60.0 / bpm):
        y[int(s * rate):int(s * rate) + 20] = 0.9
    return y


def _enc(y: np.ndarray, rate: int = R, fmt: str = "WAV", subtype: str | None = None) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, y, rate, format=fmt, subtype=subtype)
    return buf.getvalue()


def _noise(shape, level: float) -> np.ndarray:
    return np.random.default_rng(_RNG_SEED).standard_normal(shape) * level


def _square() -> bytes:
    x = _t(20)
    return _enc(np.sign(np.sin(2 * np.pi * 100 * x)), subtype="PCM_16")


def _one_click() -> bytes:
    y = np.zeros(20 * R)
    y[10 * R:10 * R + 10] = 0.9
    return _enc(y)


def _one_channel_silent() -> bytes:
    m = _music(20)
    m[:, 1] = 0.0
    return _enc(m)


def _phase_inverted() -> bytes:
    m = _music(20)
    m[:, 1] = -m[:, 0]
    return _enc(m)


def _alternating() -> bytes:
    x = _t(20)
    return _enc(0.5 * np.sin(2 * np.pi * 440 * x) * (np.floor(x) % 2 == 1))


def _sweep() -> bytes:
    x = _t(20)
    k = np.log(1000.0)       # 20 Hz -> 20 kHz, exponential, over 20 s
    phase = 2 * np.pi * 20 * 20 / k * (np.exp(x / 20 * k) - 1)
    return _enc(0.5 * np.sin(phase))


def _late_start() -> bytes:
    m = _music(20)
    m[:18 * R] = 0.0
    return _enc(m)


def _garbage_after_header() -> bytes:
    v = _enc(_music(20))
    tail = np.random.default_rng(_RNG_SEED).integers(0, 256, len(v) - 44, dtype=np.uint8)
    return v[:44] + tail.tobytes()


def _float_with_nan_inf() -> bytes:
    m = _music(20).astype(np.float32)
    m[1000:1010] = np.nan
    m[5000] = np.inf
    m[6000] = -np.inf
    return _enc(m, subtype="FLOAT")


def _dc_stereo() -> bytes:
    return _enc(np.stack([np.full(20 * R, 0.3), np.full(20 * R, -0.5)], axis=1))


def _flac_garbage_frames() -> bytes:
    f = _enc(_music(20), fmt="FLAC")
    tail = np.random.default_rng(_RNG_SEED).integers(0, 256, len(f) - 200, dtype=np.uint8)
    return f[:200] + tail.tobytes()


# name -> (bytes factory, extra check or None); every one must give a valid document
DOCUMENTS = {
    "exactly_2s.wav": (lambda: _enc(_music(2.0)), None),
    "2_05s.wav": (lambda: _enc(_music(2.05)), None),
    "2_05s.flac": (lambda: _enc(_music(2.05), fmt="FLAC"), None),
    "2_05s.mp3": (lambda: _enc(_music(2.05), fmt="MP3"), None),
    "2_05s.aiff": (lambda: _enc(_music(2.05), fmt="AIFF"), None),
    "square_full_scale.wav": (_square, "clipped"),
    "single_click.wav": (_one_click, "lone_click"),
    "white_noise_0dbfs.wav": (lambda: _enc(np.random.default_rng(1).uniform(-1, 1, (20 * R, 2))), "atonal"),
    "white_noise_-60dbfs_rms.wav": (lambda: _enc(_noise((20 * R, 2), 10 ** (-60 / 20)),
                                                 subtype="PCM_24"), "atonal_quiet"),
    "one_channel_silent.wav": (_one_channel_silent, None),
    "phase_inverted.wav": (_phase_inverted, "anti_phase"),
    "mono_8k.wav": (lambda: _enc(_music(20, 8000)[:, 0], rate=8000), None),
    "stereo_192k_24bit.wav": (lambda: _enc(_music(20, 192000), rate=192000, subtype="PCM_24"), None),
    "silence_tone_alternating.wav": (_alternating, None),
    "sweep_20_20k.wav": (_sweep, "atonal"),
    "silent_first_90pct.wav": (_late_start, None),
    "garbage_after_header.wav": (_garbage_after_header, "atonal"),
    "float_nan_inf.wav": (_float_with_nan_inf, None),
    "float_over_1.wav": (lambda: _enc(_music(20) * 3.0, subtype="FLOAT"), "clipped"),
    "music_on_dc.wav": (lambda: _enc(_music(20) * 0.5 + 0.3), None),
    "aiff_music.aiff": (lambda: _enc(_music(10), fmt="AIFF", subtype="PCM_24"), None),
    "flac_cut_in_half.flac": (lambda: (lambda f: f[:len(f) // 2])(_enc(_music(20), fmt="FLAC")), None),
}

# name -> (bytes factory, code, words the message must contain)
ERRORS = {
    "white_noise_-90dbfs.wav": (lambda: _enc(_noise((20 * R, 2), 10 ** (-90 / 20)), subtype="PCM_24"),
                                "unprocessable_audio", "near-silence (peak -7"),
    "dc_only.wav": (lambda: _enc(np.full(20 * R, 0.3)), "unprocessable_audio", "constant DC offset"),
    "dc_stereo.wav": (_dc_stereo, "unprocessable_audio", "constant DC offset"),
    "digital_silence.flac": (lambda: _enc(np.zeros((20 * R, 2)), fmt="FLAC"), "unprocessable_audio",
                             "digital silence"),
    "just_short_0_99s.wav": (lambda: _enc(_music(0.99)), "unprocessable_audio", "too short"),
    "truncated_half_s.wav": (lambda: _enc(_music(20))[:44 + R * 2], "unprocessable_audio", "truncated"),
    "flac_garbage_frames.flac": (_flac_garbage_frames, "unprocessable_audio", "could not be decoded"),
    "header_only.wav": (lambda: _enc(_music(20))[:44], "unprocessable_audio", "no audio"),
}


# ---------------------------------------------------------------- checks

def _numbers(value, path="doc"):
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _numbers(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _numbers(v, f"{path}[{i}]")
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        yield path, value


def _strings(value):
    if isinstance(value, dict):
        for v in value.values():
            yield from _strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v)
    elif isinstance(value, str):
        yield value


def check_document(doc: dict) -> None:
    """Everything a document must be, whatever the input."""
    assert validate_document(doc) == []
    json.dumps(doc, allow_nan=False)                 # serialisable, no NaN/inf
    for path, v in _numbers(doc):
        assert type(v) in (int, float), (path, type(v))
        assert math.isfinite(v), path
    for text in _strings(doc):
        words = set(text.replace(",", " ").replace(".", " ").replace(";", " ").split())
        assert not {"None", "null"} & words, text              # a missing value printed
        assert not {"nan", "inf", "-inf", "+inf", "infinity"} & {w.lower() for w in words}, text
    assert 60.0 <= doc["tempo"]["bpm"] <= 200.0
    secs = doc["structure"]["sections"]
    assert secs[0]["start"] == 0.0
    assert abs(secs[-1]["end"] - doc["duration_seconds"]) <= 0.011
    assert all(a["end"] == b["start"] for a, b in zip(secs, secs[1:]))


def _run(data: bytes, name: str, mastering_status: str = "pre-master") -> dict:
    return analyze(data, file_name=name, mastering_status=mastering_status).to_dict()


@pytest.mark.parametrize("name", sorted(DOCUMENTS))
def test_odd_audio_gives_a_valid_document(name):
    make, extra = DOCUMENTS[name]
    doc = _run(make(), name)
    check_document(doc)
    mix = doc["mix"]
    if extra in ("atonal", "atonal_quiet", "lone_click"):
        assert doc["key"] is None
    if extra == "atonal_quiet":      # peaks near -48 dBFS: quiet, not near-silence
        assert mix["loudness_lufs"] <= -50.0
    if extra == "clipped":
        assert mix["clipping_pct"] > 1.0
        assert any(f["category"] in ("loudness", "mix") and f["type"] == "warn" for f in doc["feedback"])
    if extra == "anti_phase":
        assert mix["stereo_correlation"] <= -0.9
    if extra == "lone_click":
        assert doc["tempo"]["regularity"] == 0.0     # one click is not a beat grid


def test_durations_at_the_minimum_are_reported_exactly():
    assert _run(_enc(_music(2.0)), "a.wav")["duration_seconds"] == 2.0
    assert _run(_enc(_music(2.05), fmt="FLAC"), "a.flac")["duration_seconds"] == 2.05


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_undecodable_or_empty_audio_is_a_clear_error(name):
    make, code, words = ERRORS[name]
    with pytest.raises(TrackgradeError) as info:
        _run(make(), name)
    assert info.value.code == code
    assert words in info.value.message


@pytest.mark.parametrize("bpm, allowed", [(60, (60, 120)), (180, (90, 180)), (200, (100, 200)),
                                          (250, (62.5, 125))])
def test_click_tracks_read_at_their_tempo_or_an_octave_of_it(bpm, allowed):
    doc = _run(_enc(_clicks(bpm)), f"clicks_{bpm}.wav")
    check_document(doc)
    got = doc["tempo"]["bpm"]
    assert any(abs(got - a) <= 0.02 * a for a in allowed), got
    assert doc["key"] is None
    assert doc["tempo"]["regularity"] >= 0.6


def test_ten_minutes_of_low_level_noise():
    y = _noise(600 * 8000, 0.01)
    doc = _run(_enc(y, rate=8000), "ten_minutes.wav", mastering_status="master")
    check_document(doc)
    assert doc["duration_seconds"] == 600.0
    assert doc["key"] is None
    assert doc["mastering_status"] == "master"


@pytest.mark.slow(seconds=11)
def test_every_decodable_real_clip_gives_a_valid_document():
    need_real()
    clips = sorted(p for p in (REAL / "clips").iterdir() if p.is_file())
    assert clips
    documents = 0
    for path in clips:
        data = path.read_bytes()                     # read in place, never copied
        try:
            doc = _run(data, path.name)
        except TrackgradeError as exc:
            # refused clips (Ogg, samples under 1 s) get a decode-time code and words
            assert exc.code == "unprocessable_audio", (path.name, exc)
            assert len(exc.message) > 20, (path.name, exc.message)
            continue
        check_document(doc)
        documents += 1
    assert documents >= 40
