"""Band balance and centroid against the synth truth and known spectra."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from trackgrade.engine.features import BAND_NAMES
from trackgrade.engine.frames import long_spectrum
from trackgrade.engine.spectrum import (band_balance, band_energy_over_time, measure_spectrum,
                                        spectral_centroid)
from tests.truth import render_specs

SPECS = [
    {"name": "s_house_44k", "style": "house", "bpm": 124, "key": "A", "scale": "minor",
     "seconds": 16},
    {"name": "s_techno_22k", "style": "techno", "bpm": 132, "key": "B", "scale": "minor",
     "seconds": 16, "sample_rate": 22050},
    {"name": "s_trance_48k_mono", "style": "trance", "bpm": 138, "key": "D", "scale": "minor",
     "seconds": 16, "sample_rate": 48000, "channels": 1},
    {"name": "s_dubstep_highcut", "style": "dubstep", "bpm": 140, "key": "G", "scale": "major",
     "seconds": 16, "defects": {"highcut_hz": 4000}},
]


@pytest.fixture(scope="module")
def measured():
    directory, tracks = render_specs(SPECS)
    out = []
    for t in tracks:
        x, sr = sf.read(str(directory / t["file"]), dtype="float32", always_2d=True)
        spec = long_spectrum(x, sr)
        out.append((t, spec, measure_spectrum(spec)))
    return out


@pytest.mark.parametrize("i", range(len(SPECS)), ids=[s["name"] for s in SPECS])
def test_bands_and_centroid_match_truth(measured, i):
    truth, _, spectrum = measured[i]
    assert list(spectrum.bands_pct) == list(BAND_NAMES)
    assert sum(spectrum.bands_pct.values()) == pytest.approx(100.0, abs=1e-6)
    for band, expected in truth["band_energy_pct"].items():
        assert spectrum.bands_pct[band] == pytest.approx(expected, abs=0.5), band
    assert spectrum.centroid_hz == pytest.approx(truth["spectral_centroid_hz"], rel=0.02)


def test_band_energy_over_time(measured):
    _, spec, spectrum = measured[0]
    curve = spectrum.band_energy_over_time
    assert curve.shape == (spec.whole_frames().power.shape[0], 7)
    assert np.all(np.isfinite(curve))
    assert np.all(curve <= 20.0)
    # The loudest band on average is the one with the largest share of power.
    top_pct = max(spectrum.bands_pct, key=spectrum.bands_pct.get)
    mean_power = (10 ** (curve / 10)).mean(axis=0)
    assert BAND_NAMES[int(np.argmax(mean_power))] == top_pct


def test_band_energy_over_time_of_silence_is_the_floor():
    spec = long_spectrum(np.zeros((44100 * 4, 2), dtype=np.float32), 44100)
    curve = band_energy_over_time(spec)
    assert np.all(curve == pytest.approx(-120.0))


def test_edges_are_lower_inclusive():
    freqs = np.arange(0, 22051, 1.0)
    for band, lo in zip(BAND_NAMES, (20, 60, 250, 500, 2000, 4000, 8000)):
        power = np.zeros_like(freqs)
        power[lo] = 1.0
        pct = band_balance(power, freqs)
        assert pct[band] == pytest.approx(100.0)
    power = np.zeros_like(freqs)
    power[19] = power[20000] = 5.0              # outside 20 Hz-20 kHz
    power[100] = 1.0
    assert band_balance(power, freqs)["bass"] == pytest.approx(100.0)


def test_bands_above_nyquist_are_zero():
    sr = 8000
    freqs = np.fft.rfftfreq(8192, 1.0 / sr)
    power = np.ones_like(freqs)
    pct = band_balance(power, freqs)
    assert pct["high"] == 0.0 and pct["air"] == 0.0
    assert sum(pct.values()) == pytest.approx(100.0, abs=1e-6)
    # Flat power: each band's share is its width over 20 Hz..4 kHz.
    assert pct["mid"] == pytest.approx(100 * 1500 / 3980, abs=0.1)


def test_silence_gives_zero_bands():
    freqs = np.fft.rfftfreq(1024, 1 / 44100)
    pct = band_balance(np.zeros_like(freqs), freqs)
    assert set(pct.values()) == {0.0}
    assert spectral_centroid(np.zeros_like(freqs), freqs) == 0.0


def test_centroid_of_two_tones():
    sr, n = 44100, 65536
    t = np.arange(sr * 6) / sr
    x = (np.sin(2 * np.pi * 1000 * t) + np.sin(2 * np.pi * 3000 * t)).astype(np.float32)
    spec = long_spectrum(x[:, None], sr)
    s = measure_spectrum(spec)
    assert spec.n_fft == n
    assert s.centroid_hz == pytest.approx(2000.0, rel=0.005)
    assert s.bands_pct["mid"] == pytest.approx(50.0, abs=0.5)
    assert s.bands_pct["upper_mid"] == pytest.approx(50.0, abs=0.5)


def test_half_length_frames_reproduce_welch_65536():
    # At 22.05 kHz the long frames are 32768 samples; the average must still
    # follow Welch with 65536-sample segments (the truth's definition), whose
    # time weighting matters when the spectrum changes over time.
    from scipy import signal
    sr = 22050
    rng = np.random.default_rng(3)
    t = np.arange(int(sr * 23.3)) / sr
    freq = np.select([t < 7, t < 15], [110.0, 1000.0], 3000.0)
    x = (np.sin(2 * np.pi * np.cumsum(freq) / sr) * (1 + 0.8 * np.sin(2 * np.pi * t / 5.3))
         + 0.01 * rng.standard_normal(t.size)).astype(np.float32)
    spec = long_spectrum(x[:, None], sr)
    assert spec.n_fft == 32768
    f, pxx = signal.welch(x.astype(np.float64), fs=sr, window="hann", nperseg=65536,
                          noverlap=32768, detrend=False, scaling="spectrum")
    ours = measure_spectrum(spec)
    assert ours.centroid_hz == pytest.approx(spectral_centroid(pxx, f), rel=0.01)
    for band, pct in band_balance(pxx, f).items():
        assert ours.bands_pct[band] == pytest.approx(pct, abs=0.5), band
