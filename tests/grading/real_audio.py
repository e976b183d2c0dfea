"""Real clips (../shared/truth/real, read in place) and the defects the
real-audio tests apply to them, in memory.

`electronic_clips()` are the clips whose manifest genre names an electronic
style and that last at least 8 s, `electronic_loops()` those of 8 s or less;
`non_electronic_clips()` those annotated with
an acoustic genre (orchestra, trumpet, country, waltz, ragtime, folk...).
One row per distinct clip (the manifest's `original` variant). Clips in
formats the product refuses (Ogg Vorbis) are decoded here with soundfile, so
the grading rules see them too; everything else goes through the product's
own decoder. `DEFECTS` are general transformations of any clip: no per-clip
parameters.
"""

from __future__ import annotations

import io
import re
from functools import lru_cache
from pathlib import Path

import numpy as np
import scipy.fft
import soundfile as sf
from scipy.signal import lfilter

from trackgrade.engine.decode import decode
from trackgrade.engine.extract import extract
from trackgrade.engine.features import DecodedAudio, Features
from trackgrade.errors import TrackgradeError

from tests.truth import real_manifest

ELECTRONIC = re.compile(r"electronic|breakbeat|breaks|trance|techno|house|drum ?& ?bass|dubstep", re.I)
ACOUSTIC = re.compile(r"classical|jazz|country|waltz|ragtime|folk", re.I)
MIN_SECONDS = 8.0          # electronic clips: long enough to judge a mix
MIN_ACOUSTIC_SECONDS = 5.0  # the solo trumpet is 5.3 s
MIN_DECODED_SECONDS = 1.0   # engine.decode.limits.MIN_DURATION_S: shorter clips are refused


def _originals() -> list[dict]:
    return [r for r in real_manifest() if r["variant"] == "original" and r["category"] != "edge-case"]


def electronic_clips() -> list[str]:
    return [r["file"] for r in _originals()
            if ELECTRONIC.search(r["genre_truth"]) and float(r["duration_s"] or 0) >= MIN_SECONDS]


def electronic_loops() -> list[str]:
    """The clips with an electronic genre of 8 s or less that the product decodes
    (1 s or more): loops, breaks, samples and short excerpts."""
    return [r["file"] for r in _originals()
            if ELECTRONIC.search(r["genre_truth"])
            and MIN_DECODED_SECONDS <= float(r["duration_s"] or 0) <= MIN_SECONDS]


def non_electronic_clips() -> list[str]:
    return [r["file"] for r in _originals()
            if ACOUSTIC.search(r["genre_truth"]) and not ELECTRONIC.search(r["genre_truth"])
            and float(r["duration_s"] or 0) >= MIN_ACOUSTIC_SECONDS]


def genre_truth(file: str) -> str:
    return next(r["genre_truth"] for r in real_manifest() if r["file"] == file)


@lru_cache(maxsize=None)
def load(file: str) -> DecodedAudio:
    """The clip's samples: the product's decoder, or soundfile for formats it refuses."""
    row = next(r for r in real_manifest() if r["file"] == file)
    data = Path(row["path"]).read_bytes()
    try:
        return decode(data, file_name=Path(file).name)
    except TrackgradeError:
        samples, rate = sf.read(io.BytesIO(data), dtype="float32", always_2d=True)
        return DecodedAudio(samples=samples, sample_rate=rate, container="ogg", subtype="VORBIS")


def _with(audio: DecodedAudio, samples: np.ndarray) -> DecodedAudio:
    return DecodedAudio(samples=np.ascontiguousarray(samples, dtype=np.float32),
                        sample_rate=audio.sample_rate, container=audio.container, subtype=audio.subtype)


def _stereo(x: np.ndarray) -> np.ndarray:
    return x if x.shape[1] == 2 else np.repeat(x[:, :1], 2, axis=1)


def hard_clip(audio: DecodedAudio) -> DecodedAudio:
    """Driven 6 dB past full scale (peak normalised first) and hard-clipped."""
    x = audio.samples.astype(np.float64)
    x = x / max(float(np.abs(x).max()), 1e-9) * 10 ** (6 / 20)
    return _with(audio, np.clip(x, -1.0, 1.0))


def low_cut(audio: DecodedAudio, hz: float = 150.0) -> DecodedAudio:
    """Everything below `hz` removed (brick-wall, FFT). The transform is zero-padded
    to a length with small prime factors: a clip's own length can be a large
    prime times a few, and an FFT of that length takes seconds instead of ms."""
    x = audio.samples                       # float32: single-precision transforms
    n = scipy.fft.next_fast_len(x.shape[0], real=True)
    spec = scipy.fft.rfft(x, n=n, axis=0)
    spec[scipy.fft.rfftfreq(n, 1.0 / audio.sample_rate) < hz] = 0
    return _with(audio, scipy.fft.irfft(spec, n=n, axis=0)[:x.shape[0]])


def _unclipped(audio: DecodedAudio, y: np.ndarray) -> DecodedAudio:
    """`y` at most -0.9 dBFS peak (a boost that clips would be two defects)."""
    return _with(audio, y * min(1.0, 0.9 / max(float(np.abs(y).max()), 1e-9)))


def _biquad(audio: DecodedAudio, b: list, den: list) -> DecodedAudio:
    """The audio through one biquad, `_unclipped`."""
    return _unclipped(audio, lfilter(b, den, audio.samples.astype(np.float64), axis=0))


def low_shelf(audio: DecodedAudio, db: float = 12.0, hz: float = 100.0) -> DecodedAudio:
    """An RBJ low shelf (shelf slope 1): `db` of gain under `hz`."""
    a, w = 10.0 ** (db / 40.0), 2.0 * np.pi * hz / audio.sample_rate
    cos, alpha = np.cos(w), np.sin(w) / 2.0 * np.sqrt(2.0)
    root = 2.0 * np.sqrt(a) * alpha
    b = [a * ((a + 1) - (a - 1) * cos + root), 2 * a * ((a - 1) - (a + 1) * cos), a * ((a + 1) - (a - 1) * cos - root)]
    den = [(a + 1) + (a - 1) * cos + root, -2 * ((a - 1) + (a + 1) * cos), (a + 1) + (a - 1) * cos - root]
    return _biquad(audio, b, den)


def peaking(audio: DecodedAudio, db: float = -6.0, lo_hz: float = 250.0, hi_hz: float = 2000.0
            ) -> DecodedAudio:
    """An RBJ peaking EQ of `db` centred between `lo_hz` and `hi_hz` (geometric
    mean), its bandwidth the octaves between them."""
    a, w = 10.0 ** (db / 40.0), 2.0 * np.pi * np.sqrt(lo_hz * hi_hz) / audio.sample_rate
    octaves = np.log2(hi_hz / lo_hz)
    alpha = np.sin(w) * np.sinh(np.log(2.0) / 2.0 * octaves * w / np.sin(w))
    cos = np.cos(w)
    b = [1 + alpha * a, -2 * cos, 1 - alpha * a]
    den = [1 + alpha / a, -2 * cos, 1 - alpha / a]
    return _biquad(audio, b, den)


def band_gain(audio: DecodedAudio, db: float, lo_hz: float, hi_hz: float) -> DecodedAudio:
    """`db` of gain on lo_hz..hi_hz and nothing else (a flat linear-phase EQ, FFT,
    as `low_cut`), `_unclipped`."""
    x = audio.samples
    n = scipy.fft.next_fast_len(x.shape[0], real=True)
    spec = scipy.fft.rfft(x, n=n, axis=0)
    hz = scipy.fft.rfftfreq(n, 1.0 / audio.sample_rate)
    spec[(hz >= lo_hz) & (hz < hi_hz)] *= 10.0 ** (db / 20.0)
    return _unclipped(audio, scipy.fft.irfft(spec, n=n, axis=0)[:x.shape[0]])


def polarity_inverted(audio: DecodedAudio) -> DecodedAudio:
    """The right channel's polarity flipped (a mono file is made stereo first)."""
    x = _stereo(audio.samples).astype(np.float64)
    x[:, 1] = -x[:, 1]
    return _with(audio, x)


def added_noise(audio: DecodedAudio, dbfs: float = -30.0) -> DecodedAudio:
    """White noise with an RMS of `dbfs` added to every channel (fixed seed)."""
    rng = np.random.default_rng(1234)
    x = audio.samples.astype(np.float64)
    return _with(audio, np.clip(x + rng.standard_normal(x.shape) * 10 ** (dbfs / 20), -1, 1))


def turned_down(audio: DecodedAudio, db: float = 14.0) -> DecodedAudio:
    return _with(audio, audio.samples.astype(np.float64) * 10 ** (-db / 20))


DEFECTS = {"clipping": hard_clip, "low_cut": low_cut, "polarity": polarity_inverted,
           "noise": added_noise, "quiet": turned_down}


@lru_cache(maxsize=None)
def features(file: str, defect: str | None = None) -> Features:
    """Features of a clip, clean (None) or with one of `DEFECTS`, cached per session."""
    audio = load(file)
    if defect is not None:
        audio = DEFECTS[defect](audio)
    return extract(audio, parallel=False)
