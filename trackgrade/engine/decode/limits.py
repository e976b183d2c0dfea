"""The limits every input must meet (spec section 8): size per format, 20-minute
maximum, 1-second minimum, 8-192 kHz, mono or stereo, not digital silence."""

from __future__ import annotations

import numpy as np

from trackgrade.engine.decode.info import AudioInfo, CONTAINER_NAMES
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
MIN_DURATION_S = 1.0
MIN_SAMPLE_RATE = 8000
MAX_SAMPLE_RATE = 192000
MAX_CHANNELS = 2
SILENCE_PEAK = 10 ** (-100 / 20)     # -100 dBFS
NEAR_SILENCE_DBFS = -60.0            # a peak under this is near-silence: refused like silence
NEAR_SILENCE_PEAK = 10 ** (NEAR_SILENCE_DBFS / 20)
ACCEPTED = "send WAV, MP3, AIFF or FLAC"


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


def sanitise(samples: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """In place: NaN/inf -> 0, samples clipped to [-1, 1]. Returns the
    per-channel max and min afterwards (float32 (channels,))."""
    maxs, mins = _channel_extremes(samples)
    top, bottom = float(maxs.max()), float(mins.min())
    if not (np.isfinite(top) and np.isfinite(bottom)):      # max/min propagate NaN and inf
        np.nan_to_num(samples, copy=False, nan=0.0, posinf=0.0, neginf=0.0)
        maxs, mins = _channel_extremes(samples)
        top, bottom = float(maxs.max()), float(mins.min())
    if top > 1.0 or bottom < -1.0:
        np.clip(samples, -1.0, 1.0, out=samples)
        maxs, mins = np.minimum(maxs, np.float32(1.0)), np.maximum(mins, np.float32(-1.0))
    return maxs, mins


def check_not_silent(maxs: np.ndarray, mins: np.ndarray, first: float) -> None:
    """Refuse digital silence (peak < -100 dBFS), a constant DC offset (no
    channel moves by -100 dBFS) and near-silence (peak < NEAR_SILENCE_DBFS:
    a -80 dBFS hum has nothing to judge), from the per-channel extremes of
    the whole (sanitised) signal; `first` is the first frame's largest value."""
    peak = min(max(float(maxs.max()), -float(mins.min())), 1.0)
    if peak < SILENCE_PEAK:
        what = "digital silence" if peak == 0 else f"silent (peak {20 * np.log10(peak):.0f} dBFS)"
        raise AudioError(f"the audio is {what}; nothing to analyze")
    # a constant (DC offset only) is silence to the ear and to every measure
    # (the K-weighting removes it): refuse it like silence rather than grade
    # the filters' start-up transient
    swing = float((maxs - mins).max())
    if swing < SILENCE_PEAK:
        raise AudioError(f"the audio is a constant DC offset ({first:+.2f}) "
                         "with no sound; nothing to analyze")
    if peak < NEAR_SILENCE_PEAK:
        raise AudioError(f"the audio is near-silence (peak {20 * np.log10(peak):.1f} dBFS, under "
                         f"{NEAR_SILENCE_DBFS:g} dBFS); nothing to analyze")
