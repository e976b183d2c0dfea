"""delivery.mono: per-band correlation and mono loss from the long spectrum's transforms."""

import numpy as np

from tests.delivery.signals import RATE, club_loop, wav_bytes
from trackgrade.engine.features import BAND_NAMES
from trackgrade.pipeline import analyze


def mono_of(x):
    return analyze(wav_bytes(x), file_name="x.wav", enhanced=False)


def test_a_centred_mix_loses_nothing_in_the_low_end():
    a = mono_of(club_loop())
    mono = a.delivery.mono
    assert mono.low_end_mono is True
    assert mono.bands.sub_bass.mono_loss_db < 0.1 and mono.bands.bass.mono_loss_db < 0.1
    assert mono.bands.sub_bass.correlation > 0.99
    assert not [f for f in a.feedback if f.category == "stereo" and "Summed to mono" in f.text]


def test_a_bass_line_in_anti_phase_loses_10_db_and_raises_the_warn():
    x = club_loop()
    t = np.arange(x.shape[0]) / RATE
    # a 73 Hz bass line (with its octave), left against right inverted
    bass = (0.25 * np.sin(2 * np.pi * 73 * t) + 0.1 * np.sin(2 * np.pi * 146 * t)).astype(np.float32)
    x = x.copy()
    x[:, 0] += bass
    x[:, 1] -= bass
    a = mono_of(x / np.abs(x).max() * 0.8)
    mono = a.delivery.mono
    assert mono.bands.bass.mono_loss_db >= 10.0
    assert mono.bands.bass.correlation < -0.8
    assert mono.low_end_mono is False
    assert mono.bands.mid.mono_loss_db < 1.0            # the centred chord is untouched
    warns = [f for f in a.feedback if f.type == "warn" and f.category == "stereo"
             and "Summed to mono" in f.text]
    assert len(warns) == 1 and "bass (60-250 Hz)" in warns[0].text
    assert "mids" not in warns[0].text


def test_unrelated_channels_lose_3_db_and_identical_ones_nothing():
    rng = np.random.default_rng(0)
    noise = (0.1 * rng.standard_normal((RATE * 8, 2))).astype(np.float32)
    bands = mono_of(noise).delivery.mono.bands
    for name in BAND_NAMES:
        assert abs(getattr(bands, name).mono_loss_db - 3.0) < 0.3, name
        assert abs(getattr(bands, name).correlation) < 0.1, name
    same = np.repeat(noise[:, :1], 2, axis=1)
    bands = mono_of(same).delivery.mono.bands
    assert all(getattr(bands, n).mono_loss_db == 0.0 for n in BAND_NAMES)
    assert all(getattr(bands, n).correlation == 1.0 for n in BAND_NAMES)


def test_a_mono_file_reads_as_mono():
    a = mono_of(club_loop()[:, :1].copy())
    assert a.delivery.mono.low_end_mono is True
    assert a.delivery.mono.bands.air.mono_loss_db == 0.0


def test_the_fold_down_does_not_depend_on_threads():
    x = wav_bytes(club_loop(6.0))
    one = analyze(x, file_name="x.wav", enhanced=False, parallel=False).delivery
    two = analyze(x, file_name="x.wav", enhanced=False, parallel=True).delivery
    assert one == two
