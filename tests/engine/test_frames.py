"""The shared frames: the reduced short STFT that extract() uses gives rhythm
and structure exactly what the full STFT gives them, at any rate and length."""

import numpy as np
import pytest

from trackgrade.engine.frames import (long_spectrum, mono_mix, short_freqs, short_reduced,
                                      short_stft, short_stft_hop_s)
from trackgrade.engine.rhythm import measure_rhythm
from trackgrade.engine.rhythm import short_reductions as rhythm_reductions
from trackgrade.engine.structure import measure_structure
from trackgrade.engine.structure import short_reductions as structure_reductions

from tests.truth import render_specs

from .rhythm_specs import load


def _both(mono, rate):
    freqs, hop_s = short_freqs(rate), short_stft_hop_s(rate)
    reduced = short_reduced(mono, rate, rhythm_reductions(freqs) + structure_reductions(freqs, hop_s))
    return short_stft(mono, rate), reduced


@pytest.mark.parametrize("rate,seconds", [(44100, 7.3), (48000, 3.01), (22050, 12.0), (8000, 2.5)])
def test_reduced_and_full_stft_feed_rhythm_identically(rate, seconds):
    rng = np.random.default_rng(rate)
    t = np.arange(int(seconds * rate)) / rate
    clicks = (np.sin(2 * np.pi * 2.0 * t) > 0.995).astype(np.float32)       # 120 BPM pulses
    mono = (clicks + 0.05 * rng.standard_normal(t.size)).astype(np.float32)
    full, reduced = _both(mono, rate)
    a, b = measure_rhythm(full, seconds), measure_rhythm(reduced, seconds)
    assert a.bpm == b.bpm and a.regularity == b.regularity and a.onset_rate == b.onset_rate
    np.testing.assert_array_equal(a.beat_times, b.beat_times)


FRAMES_TRACK = {"name": "fr_trance", "style": "trance", "bpm": 138, "key": "D", "seconds": 40, "seed": 7}


def test_reduced_and_full_stft_give_the_same_rhythm_and_sections_on_music():
    out, tracks = render_specs([FRAMES_TRACK])
    samples, rate = load(out / tracks[0]["file"])
    duration = samples.shape[0] / rate
    full, reduced = _both(mono_mix(samples), rate)
    results = []
    for spec in (full, reduced):
        rhythm = measure_rhythm(spec, duration)
        structure = measure_structure(spec, duration, beat_times=rhythm.beat_times, bpm=rhythm.bpm)
        results.append((rhythm.bpm, tuple(rhythm.beat_times), structure.sections))
    assert results[0] == results[1]


@pytest.mark.parametrize("seconds,channels", [(9.0, 2), (60.3, 2), (47.0, 3), (50.0, 1)])
def test_long_spectrum_with_a_worker_thread_is_bit_identical(seconds, channels):
    """The worker thread takes the later half of the frames (from 32 whole
    frames on): the same values as one pass, the tail frame included."""
    from concurrent.futures import ThreadPoolExecutor
    rng = np.random.default_rng(3)
    samples = (0.3 * rng.standard_normal((int(44100 * seconds), channels))).astype(np.float32)
    serial = long_spectrum(samples, 44100)
    with ThreadPoolExecutor(1) as pool:
        threaded = long_spectrum(samples, 44100, executor=pool)
    np.testing.assert_array_equal(serial.power, threaded.power)
    assert threaded.tail_share == serial.tail_share


@pytest.mark.parametrize("seconds,whole,tail", [(2.0, 1, 1), (0.5, 1, 0), (65536 * 3 / 44100, 5, 0),
                                                (65536 * 3 / 44100 + 0.01, 5, 1)])
def test_long_spectrum_covers_the_last_samples_with_one_padded_frame(seconds, whole, tail):
    # A 2 s clip has one whole 1.49 s frame; its last 0.5 s gets a zero-padded
    # frame of its own, which holds exactly the tail's spectrum.
    rate = 44100
    n = int(round(seconds * rate))
    t = np.arange(n) / rate
    x = np.where(t >= whole * 32768 / rate, np.sin(2 * np.pi * 440.0 * t), 0.0).astype(np.float32)
    spec = long_spectrum(x[:, None], rate)
    assert spec.power.shape[0] == whole + tail
    assert spec.whole_frames().power.shape[0] == whole
    assert (spec.tail_share > 0) == bool(tail)
    if tail:
        start = whole * 32768
        frame = np.zeros(65536, np.float32)
        frame[:n - start] = x[start:]
        expected = np.abs(np.fft.rfft(frame * np.hanning(65536).astype(np.float32))) ** 2
        np.testing.assert_allclose(spec.power[-1], expected, rtol=1e-3, atol=1e-3 * expected.max())
        window = np.hanning(65536)
        assert spec.frame_weights()[-1] == pytest.approx(window[:n - start].sum() / window.sum())
    assert np.all(spec.frame_weights()[:whole] == 1.0)


@pytest.mark.parametrize("channels,invert,seconds", [(2, False, 9.7), (2, True, 9.7), (1, False, 3.3),
                                                     (3, False, 5.0), (2, False, 0.05)])
def test_the_mix_taken_chunk_by_chunk_is_the_whole_tracks_mix(channels, invert, seconds):
    """short_reduced(samples) equals short_reduced(mono_mix(samples)) bit for bit,
    without a mono copy of the track (a stereo file, a phase-inverted one, mono,
    three channels, a clip shorter than one frame)."""
    rate = 44100
    rng = np.random.default_rng(channels * 10 + invert)
    samples = (0.3 * rng.standard_normal((int(seconds * rate), channels))).astype(np.float32)
    freqs, hop_s = short_freqs(rate), short_stft_hop_s(rate)
    reductions = rhythm_reductions(freqs) + structure_reductions(freqs, hop_s)
    chunked = short_reduced(samples, rate, reductions, invert_second=invert)
    whole = short_reduced(mono_mix(samples, invert_second=invert), rate, reductions)
    assert chunked.parts.keys() == whole.parts.keys() and chunked.n_frames == whole.n_frames
    for r in whole.parts:
        np.testing.assert_array_equal(chunked.parts[r], whole.parts[r])
