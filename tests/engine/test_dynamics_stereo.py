"""Loudness, dynamics and stereo on rendered synthetic tracks (exact truth from
the shared generator) and on constructed signals with known answers."""

from __future__ import annotations

import math

import numpy as np
import pytest
import soundfile as sf

from tests import truth
from trackgrade.engine import loudness as L
from trackgrade.engine.dynamics import (clipping_pct, clipping_ruled_out, dynamic_complexity_db,
                                       measure_dynamics)
from trackgrade.engine.stereo import channel_gram, measure_stereo

SPECS = [
    {"name": "lt_mono", "style": "house", "bpm": 124, "key": "A", "scale": "minor", "seconds": 16,
     "channels": 1, "target_lufs": -10, "seed": 1},
    {"name": "lt_48k", "style": "techno", "bpm": 130, "key": "D", "scale": "minor", "seconds": 16,
     "sample_rate": 48000, "target_lufs": -8, "seed": 2},
    {"name": "lt_phase", "style": "trance", "bpm": 138, "key": "E", "scale": "minor", "seconds": 16,
     "target_lufs": -11, "seed": 3, "defects": ["phase_invert_right"]},
    {"name": "lt_clip", "style": "drum_and_bass", "bpm": 174, "key": "F", "scale": "minor",
     "seconds": 16, "target_lufs": -9, "seed": 4, "defects": [{"type": "clip_db", "value": 6}]},
]


@pytest.fixture(scope="module")
def rendered():
    directory, entries = truth.render_specs(SPECS)
    out = {}
    for entry in entries:
        samples, sr = sf.read(str(directory / entry["file"]), dtype="float32", always_2d=True)
        loud = L.measure_loudness(samples, sr)
        gram = channel_gram(samples)
        out[entry["name"]] = (samples, sr, entry, loud,
                              measure_dynamics(samples, sr, loud, gram=gram),
                              measure_stereo(samples, gram=gram))
    return out


@pytest.mark.parametrize("name", [s["name"] for s in SPECS])
def test_synthetic_track_matches_truth(rendered, name):
    samples, sr, entry, loud, dyn, st = rendered[name]
    assert loud.integrated_lufs == pytest.approx(entry["lufs_integrated"], abs=0.01)
    assert loud.loudness_range_lu == pytest.approx(entry["loudness_range_lu"], abs=0.01)
    # the truth is the 4x grid's maximum; the 64x search around it reads that or
    # more, never more than 1 - cos(pi/8) = 0.69 dB above it
    assert entry["true_peak_dbtp"] - 0.01 <= loud.true_peak_dbtp <= entry["true_peak_dbtp"] + 0.69
    assert loud.sample_peak_dbfs == pytest.approx(entry["sample_peak_dbfs"], abs=0.01)
    assert dyn.rms_dbfs == pytest.approx(entry["rms_dbfs"], abs=0.01)
    assert dyn.clipping_pct == pytest.approx(entry["clipping_pct"], abs=1e-4)
    assert st.width == pytest.approx(entry["stereo_width"], abs=1e-4)
    expected_corr = entry["stereo_correlation"] if entry["channels"] == 2 else 1.0
    assert st.correlation == pytest.approx(expected_corr, abs=1e-4)
    assert dyn.crest_factor_db == pytest.approx(loud.sample_peak_dbfs - dyn.rms_dbfs)
    n_hops = samples.shape[0] // int(round(0.1 * sr))
    assert loud.momentary_lufs.shape == loud.short_term_lufs.shape == (n_hops,)


def test_defect_signatures(rendered):
    assert rendered["lt_mono"][5].width == 0.0
    assert rendered["lt_phase"][5].correlation < -0.5 and rendered["lt_phase"][5].width > 0.8
    assert rendered["lt_48k"][5].correlation > 0.5 and rendered["lt_48k"][5].width < 0.2
    assert rendered["lt_clip"][4].clipping_pct > 1.0
    assert rendered["lt_48k"][4].clipping_pct == 0.0
    # a limited master has a low crest factor; the clipped one lower still
    assert rendered["lt_clip"][4].crest_factor_db < rendered["lt_48k"][4].crest_factor_db


def test_dual_mono_file_reads_3_db_louder_and_is_centred(rendered):
    samples, sr, entry, loud, dyn, _ = rendered["lt_mono"]
    dual = np.repeat(samples, 2, axis=1)
    dual_loud = L.measure_loudness(dual, sr)
    assert dual_loud.integrated_lufs - loud.integrated_lufs == pytest.approx(10 * math.log10(2), abs=1e-3)
    stereo = measure_stereo(dual)
    assert stereo.correlation == pytest.approx(1.0, abs=1e-6)
    assert stereo.width == pytest.approx(0.0, abs=1e-6)
    assert measure_dynamics(dual, sr, dual_loud).rms_mean == pytest.approx(dyn.rms_mean, rel=1e-5)


def _noise(seconds=4.0, sr=44100, seed=0):
    return (0.1 * np.random.default_rng(seed).standard_normal(int(seconds * sr))).astype(np.float32)


def test_phase_inverted_and_silent_channels():
    left = _noise()
    inverted = measure_stereo(np.stack([left, -left], axis=1))
    assert inverted.correlation == pytest.approx(-1.0, abs=1e-6)
    assert inverted.width == pytest.approx(1.0, abs=1e-6)
    one_silent = measure_stereo(np.stack([left, np.zeros_like(left)], axis=1))
    assert one_silent.correlation == 0.0
    assert one_silent.width == pytest.approx(0.5, abs=1e-6)
    both_silent = measure_stereo(np.zeros((44100, 2), np.float32))
    assert (both_silent.correlation, both_silent.width) == (1.0, 0.0)
    independent = measure_stereo(np.stack([left, _noise(seed=1)], axis=1))
    assert abs(independent.correlation) < 0.01
    assert independent.width == pytest.approx(0.5, abs=0.01)
    mono = measure_stereo(left[:, None])
    assert (mono.correlation, mono.width) == (1.0, 0.0)


def test_gram_precision_on_a_long_signal():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((44100 * 120, 2)).astype(np.float32) * 0.3
    x[:, 1] = 0.6 * x[:, 0] + 0.8 * x[:, 1] + 0.01
    st = measure_stereo(x)
    x64 = x.astype(np.float64)
    assert st.correlation == pytest.approx(np.corrcoef(x64[:, 0], x64[:, 1])[0, 1], abs=1e-5)
    mid, side = (x64[:, 0] + x64[:, 1]) / 2, (x64[:, 0] - x64[:, 1]) / 2
    width = (side ** 2).sum() / ((mid ** 2).sum() + (side ** 2).sum())
    assert st.width == pytest.approx(width, abs=1e-5)


def test_sine_dynamics():
    sr = 48000
    t = np.arange(sr * 6) / sr
    sine = (0.5 * np.sin(2 * np.pi * 997 * t)).astype(np.float32)
    x = np.stack([sine, -sine], axis=1)
    loud = L.measure_loudness(x, sr)
    dyn = measure_dynamics(x, sr, loud)
    assert dyn.crest_factor_db == pytest.approx(10 * math.log10(2), abs=0.01)
    assert dyn.rms_dbfs == pytest.approx(20 * math.log10(0.5 / math.sqrt(2)), abs=0.01)
    assert dyn.rms_mean == pytest.approx(0.0, abs=1e-6)           # L + R cancels
    assert dyn.clipping_pct == 0.0
    assert dyn.dynamic_complexity_db < 0.05                       # a steady level


def test_clipping_counts_samples_at_full_scale():
    x = np.zeros((1000, 2), np.float32)
    x[:10, 0] = 1.0
    x[:5, 1] = -0.9995
    x[10:20, 1] = 0.998                                           # below the 0.999 level
    assert clipping_pct(x) == pytest.approx(100.0 * 15 / 2000)
    assert clipping_pct(np.zeros((0, 2), np.float32)) == 0.0


def test_a_sample_peak_under_the_clip_level_rules_clipping_out():
    """extract skips counting clipped samples when the sample peak rules them
    out; wherever it does, the count is 0, and it never rules out a clipped file."""
    for peak in (0.5, 0.998, 0.99899, np.nextafter(np.float32(0.999), np.float32(0)), 0.999, 1.0):
        x = np.zeros((1000, 2), np.float32)
        x[7, 1] = -np.float32(peak)
        ruled_out = clipping_ruled_out(L.sample_peak_dbfs(x))
        assert ruled_out == (peak < 0.999 - 1e-6)
        if ruled_out or peak >= 0.999:
            assert (clipping_pct(x) == 0.0) == ruled_out


def test_extract_counts_clipping_only_where_the_peak_allows_it():
    from trackgrade.engine.extract import extract
    from trackgrade.engine.features import DecodedAudio

    rng = np.random.default_rng(5)
    x = np.clip(0.6 * rng.standard_normal((44100 * 4, 2)), -1, 1).astype(np.float32)
    for gain, clipped in ((1.0, True), (0.5, False)):
        y = x * np.float32(gain)
        audio = DecodedAudio(samples=y, sample_rate=44100, container="wav", subtype="FLOAT")
        assert extract(audio, parallel=False).dynamics.clipping_pct == clipping_pct(y)
        assert (clipping_pct(y) > 0) == clipped


def test_dynamic_complexity_tracks_level_changes():
    hop = 0.1
    steady = np.full(300, -12.0)
    assert dynamic_complexity_db(steady, hop_s=hop) == pytest.approx(0.0, abs=1e-9)
    alternating = np.concatenate([np.full(150, -10.0), np.full(150, -30.0)])
    varied = dynamic_complexity_db(alternating, hop_s=hop)
    assert 8.0 < varied < 12.0
    # silence (at the floor) does not count
    with_gap = np.concatenate([steady, np.full(100, L.SILENCE_LUFS), steady])
    assert dynamic_complexity_db(with_gap, hop_s=hop) == pytest.approx(0.0, abs=1e-9)
    assert dynamic_complexity_db(np.full(50, L.SILENCE_LUFS), hop_s=hop) == 0.0


def test_silence_gives_finite_dynamics():
    x = np.zeros((44100 * 4, 2), np.float32)
    loud = L.measure_loudness(x, 44100)
    dyn = measure_dynamics(x, 44100, loud)
    for value in (dyn.crest_factor_db, dyn.dynamic_complexity_db, dyn.clipping_pct,
                  dyn.rms_dbfs, dyn.rms_mean):
        assert math.isfinite(value)
    assert dyn.rms_mean == 0.0 and dyn.clipping_pct == 0.0
