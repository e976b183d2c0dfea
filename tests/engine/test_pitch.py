"""What tells notes from drums (trackgrade/engine/pitch.py): a rhythm's comb
lines, one ring, notes of the bass register that come and go, and a bass line
that fills the gaps between the kicks."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.parts import render_part
from tests.truth import render_recorded
from trackgrade.engine.frames import Spectrogram, long_spectrum
from trackgrade.engine.pitch import (COMB_TOP_HZ, MIN_HOLD_FLOOR_DB, MIN_HOLD_PEAK,
                                     MIN_NOTE_RISE_DB, MIN_PITCHED_SHARE, comb_lines,
                                     fundamental_lines, holds_low_line, low_hold, note_rise_db,
                                     second_note_power, sustained_low_share)
from trackgrade.engine.tonal import chroma_frames, measure_tonality, tonal_band

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import key_material  # noqa: E402

SR = 44100


def _smooth_spectrum(bump_hz: float | None = None, frames: int = 8) -> Spectrogram:
    """A spectrogram without notes (flat power), or with a note's bump at bump_hz."""
    n_fft = 65536
    freqs = np.arange(n_fft // 2 + 1) * SR / n_fft
    power = np.ones((frames, freqs.size), dtype=np.float32)
    if bump_hz is not None:
        power += (20.0 * np.exp(-0.5 * ((freqs - bump_hz) / 2.0) ** 2)).astype(np.float32)
    return Spectrogram(power=power, freqs=freqs, hop_s=n_fft / 2 / SR, n_fft=n_fft,
                       sample_rate=SR)


def test_equal_lines_a_few_hz_apart_in_one_frame_are_a_comb():
    # the kick's sweep repeated every beat at 140 BPM: lines 4.67 Hz apart, equal
    frame = np.array([6, 6, 6, 2, 3, 4, 4])
    freq = np.array([105.0, 109.7, 114.3, 130.8, 130.8, 150.0, 154.7])
    power = np.array([4.5, 4.3, 4.0, 3.0, 3.0, 4.0, 1.0])
    assert comb_lines(_smooth_spectrum(), frame, freq, power)[0].tolist() == [
        True, True, True,
        False,            # one line a frame
        False,            # the same line in another frame
        False, False]     # 6 dB apart


def test_a_pair_around_a_note_is_the_note_repeated():
    # a C3 repeated every eighth at 174 BPM: lines 2.9 Hz either side of it
    frame, freq, power = np.array([5, 5]), np.array([127.9, 133.7]), np.array([6.6, 10.3])
    assert comb_lines(_smooth_spectrum(), frame, freq, power)[0].all()
    comb, moved = comb_lines(_smooth_spectrum(bump_hz=130.8), frame, freq, power)
    assert not comb.any()
    assert moved == pytest.approx([130.8, 130.8])      # counted at the note, on the grid


def test_comb_lines_are_looked_for_only_under_the_kicks_sweep():
    # above it, partials of a chord's notes and detuned unisons lie a few Hz apart
    freq = np.array([COMB_TOP_HZ + 300.0, COMB_TOP_HZ + 304.0])
    assert not comb_lines(_smooth_spectrum(), np.zeros(2, int), freq, np.ones(2))[0].any()


def test_one_ring_in_many_frames_is_one_note():
    # a snare's body at 185 Hz in three frames, a few faint hat lines
    ring = second_note_power(np.array([185.5, 185.5, 185.6, 3182.8]),
                             np.array([3.0, 3.0, 2.0, 0.02]))
    assert ring == pytest.approx(0.02)                 # the hat line, not the ring again
    chord = second_note_power(np.array([261.6, 329.6, 392.0, 523.3]),
                              np.array([4.0, 3.0, 2.0, 1.0]))
    assert chord == pytest.approx(3.0)
    assert second_note_power(np.array([440.0]), np.array([1.0])) == 0.0


def test_a_lone_line_an_octave_below_a_partial_is_its_fundamental():
    """A partial at 138.6 Hz over a line at 69.3 Hz that stands alone: the
    fundamental's power; the same over a comb of equal lines 2 Hz apart (a
    kick repeated at 120 BPM) or over nothing: none."""
    spec = _smooth_spectrum()
    bin_hz = SR / spec.n_fft
    alone = spec.power.copy()
    alone[:, int(round(69.3 / bin_hz))] = 50.0
    comb = spec.power.copy()
    for hz in np.arange(55.3, 85.0, 2.0):
        comb[:, int(round(hz / bin_hz))] = 50.0
    frame, freq = np.array([0, 3]), np.array([138.6, 138.6])
    for power, expected in ((alone, 50.0), (comb, 0.0), (spec.power, 0.0)):
        got = fundamental_lines(Spectrogram(power=power, freqs=spec.freqs, hop_s=spec.hop_s,
                                            n_fft=spec.n_fft, sample_rate=SR), frame, freq)
        assert got.tolist() == [expected, expected]


@pytest.mark.parametrize("name", ["wobble_C#_major_38_d_r2", "wobble_C#_minor_38_d_r2"])
def test_a_wobble_held_on_one_note_over_drums_has_pitch(name):
    """A synth bass held on C#2 (69.3 Hz) under a 1/16 wobble over a four-to-
    the-floor kit at 120 BPM: its only partial above 100 Hz that stands is
    the second harmonic (one note, like a drum's ring), its fundamental sits
    on the kick's comb. The fundamental standing alone an octave below names
    it a note: the key's tonic is C# (no key before)."""
    item = next(i for i in key_material.items() if i["spec"]["name"] == name)
    path, = render_recorded([item["spec"]])
    x, sr = sf.read(path, dtype="float32", always_2d=True)
    key = measure_tonality(long_spectrum(x, sr), x).key
    assert key is not None and key.tonic == "C#", key


def _rise(x: np.ndarray, sr: int = SR) -> float:
    spec = long_spectrum(x[:, None].astype(np.float32), sr)
    return note_rise_db(spec, chroma_frames(spec)[1])


def test_a_bass_line_rises_where_a_drum_loop_repeats():
    # the two sub bass lines under drums that got no key on the fit seeds, and drum loops
    # alone: only the bass's notes come and go between frames
    for seed, pc, scale in ((0, 5, "major"), (1, 2, "minor")):
        x = render_part("bass", pc, scale, seed=seed, sr=SR, drums=True)
        assert _rise(x) >= MIN_NOTE_RISE_DB
    for seed in range(4):
        x = render_part("drums", 0, "minor", seed=seed, sr=SR, bpm=(128, 174, 95, 140)[seed])
        assert _rise(x) < 0.5 * MIN_NOTE_RISE_DB


@pytest.mark.parametrize("seconds", [5, 15, 60])
def test_noise_does_not_rise_however_long(seconds):
    # noise rises at every semitone alike: its score is the spread of its
    # fluctuation over the semitones (the largest rise reached 7.7 dB over 5 minutes)
    for seed in range(3):
        x = np.random.default_rng([seconds, seed]).standard_normal(seconds * SR)
        assert _rise(x) < MIN_NOTE_RISE_DB - 1.0


def test_a_sub_bass_under_drums_gets_its_key_from_its_moving_notes():
    # benchmark fit seed 0, F major: no partial stands (the kick's sweep covers
    # the bass's octave), no steady sub, the chroma fits no key; no key before
    x = render_part("bass", 5, "major", seed=0, sr=SR, drums=True)
    spec = long_spectrum(x[:, None], SR)
    _, tuning, _, pitched = chroma_frames(spec)
    assert pitched < MIN_PITCHED_SHARE and sustained_low_share(spec, tonal_band(spec)[1]) == 0.0
    assert note_rise_db(spec, tuning) >= MIN_NOTE_RISE_DB
    assert measure_tonality(spec).key is not None


def test_too_few_frames_measure_no_rise():
    x = np.random.default_rng(0).standard_normal(2 * SR)
    assert _rise(x) == 0.0


def _kicks_over(tone: np.ndarray, bpm: float = 128.0, sr: int = SR) -> np.ndarray:
    """A low tone under a kick on every beat (a 50 Hz ring decaying in ~0.15 s)."""
    t = np.arange(int(0.4 * sr)) / sr
    kick = np.sin(2 * np.pi * np.cumsum(50 + 110 * np.exp(-t / 0.03)) / sr) * np.exp(-t / 0.15)
    out = 0.3 * tone
    for s in range(0, tone.size, int(60.0 / bpm * sr)):
        out[s:s + kick.size] += kick[:tone.size - s]
    return out


def test_a_bass_line_fills_the_gaps_between_the_kicks_a_held_tone_does_not_move():
    t = np.arange(8 * SR) / SR
    line = np.sin(2 * np.pi * np.where((t * 2.0).astype(int) % 2 == 0, 41.2, 61.7) * t)
    held = np.sin(2 * np.pi * 48.0 * t)                  # an 808's long ring, a steady sub
    floor_db, peak, moves = low_hold(_kicks_over(line), SR)
    assert floor_db > MIN_HOLD_FLOOR_DB and peak > MIN_HOLD_PEAK and moves > 0.3
    assert holds_low_line(_kicks_over(line), SR)
    assert not holds_low_line(_kicks_over(held), SR)
    assert low_hold(_kicks_over(np.zeros(t.size)), SR)[0] < MIN_HOLD_FLOOR_DB - 5.0
    assert not holds_low_line(_kicks_over(np.zeros(t.size)), SR)


@pytest.mark.parametrize("colour", [0.0, 0.5, 1.0])
def test_noise_of_any_colour_holds_no_low_line(colour):
    # white, pink and brown noise fill the gaps too, but with no tone standing
    # above the bins beside it (brown noise's slope beat a test against the mean)
    for seconds, seed in ((3, 0), (3, 1), (12, 2)):
        w = np.random.default_rng([seed, seconds]).standard_normal(seconds * SR)
        spectrum = np.fft.rfft(w)
        f = np.maximum(np.fft.rfftfreq(w.size, 1.0 / SR), 1.0)
        x = np.fft.irfft(spectrum / f ** colour, w.size)
        assert not holds_low_line(x[:, None], SR)


def test_a_sub_bass_line_the_kick_covers_gets_a_key_from_the_gaps():
    # benchmark seed 3, G minor: no rule of the long spectrum finds pitch, so no
    # key from the spectrum alone; the samples' low register between the kicks
    # holds its moving notes
    x = render_part("bass", 7, "minor", seed=3, sr=SR, drums=True)[:, None]
    spec = long_spectrum(x, SR)
    assert measure_tonality(spec).key is None
    assert holds_low_line(x, SR)
    assert measure_tonality(spec, x).key is not None
    for seed in range(4):
        d = render_part("drums", 0, "minor", seed=seed, sr=SR, bpm=(128, 174, 95, 140)[seed])
        assert measure_tonality(long_spectrum(d[:, None], SR), d[:, None]).key is None


def test_a_long_clip_is_read_in_excerpts_with_the_same_verdict():
    # a 5-minute input costs what 40 s cost; a bass line under kicks holds either way
    t = np.arange(20 * SR) / SR
    line = _kicks_over(np.sin(2 * np.pi * np.where((t * 2.0).astype(int) % 2 == 0, 41.2, 61.7) * t))
    long = np.tile(line, 15)
    assert np.allclose(low_hold(long, SR), low_hold(line, SR), rtol=0.1, atol=0.5)
    assert holds_low_line(long, SR)


def test_too_short_a_clip_holds_nothing():
    x = np.random.default_rng(0).standard_normal(SR // 2)
    assert low_hold(x, SR) == (float("-inf"), 0.0, 0.0)
