"""Decoded audio -> every measurement, computing the shared frames once.

The order matters only for sharing: the loudness curves feed dynamics and
structure; the beat grid feeds structure; the short STFT feeds rhythm and
structure; the long spectrum feeds bands, centroid and key.

The stages run one after the other: running the time-domain branch in a second
thread was measured no faster (scipy.fft already uses both cores) and raised
peak memory by about 100 MB.
"""

from __future__ import annotations

import time

import numpy as np

from trackgrade.engine.dynamics import measure_dynamics
from trackgrade.engine.features import DecodedAudio, Features
from trackgrade.engine.frames import long_spectrum, mono_mix, short_stft
from trackgrade.engine.loudness import measure_loudness
from trackgrade.engine.rhythm import measure_rhythm
from trackgrade.engine.spectrum import measure_spectrum
from trackgrade.engine.stereo import channel_gram, measure_stereo
from trackgrade.engine.structure import measure_structure
from trackgrade.engine.tonal import measure_tonality


class _Stopwatch:
    """Records the seconds each stage takes into a dict."""

    def __init__(self, timings: dict[str, float]) -> None:
        self.timings = timings
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = round(now - self._last, 4)
        self._last = now


def _time_domain(samples: np.ndarray, rate: int, timings: dict[str, float]):
    watch = _Stopwatch(timings)
    loudness = measure_loudness(samples, rate)
    watch.lap("loudness")
    gram = channel_gram(samples)
    dynamics = measure_dynamics(samples, rate, loudness, gram=gram)
    stereo = measure_stereo(samples, gram=gram)
    watch.lap("dynamics_stereo")
    return loudness, dynamics, stereo


def extract(audio: DecodedAudio) -> Features:
    """Measure everything an Analysis reports from decoded audio."""
    samples, rate, duration = audio.samples, audio.sample_rate, audio.duration_s
    timings: dict[str, float] = {}
    loudness, dynamics, stereo = _time_domain(samples, rate, timings)
    watch = _Stopwatch(timings)

    # A polarity-inverted channel would cancel the centre of a plain sum.
    short = short_stft(mono_mix(samples, invert_second=stereo.correlation < -0.2), rate)
    watch.lap("short_stft")
    rhythm = measure_rhythm(short, duration)
    watch.lap("rhythm")
    structure = measure_structure(short, duration, beat_times=rhythm.beat_times, bpm=rhythm.bpm,
                                  short_term_lufs=loudness.short_term_lufs,
                                  curve_hop_s=loudness.curve_hop_s)
    watch.lap("structure")
    del short                        # free the short frames before the long ones

    long = long_spectrum(samples, rate)
    watch.lap("long_spectrum")
    spectrum = measure_spectrum(long)
    tonality = measure_tonality(long)
    watch.lap("spectrum_tonal")

    return Features(
        duration_s=duration, sample_rate=rate, channels=audio.channels,
        container=audio.container, truncated=audio.truncated,
        loudness=loudness, dynamics=dynamics, stereo=stereo, spectrum=spectrum,
        rhythm=rhythm, tonality=tonality, structure=structure,
        timings_s=timings, declared_duration_s=audio.declared_duration_s,
    )
