"""The recorded-instrument renderer (tests/truth_gen/recorded.py): notes come
out at their pitch and time, drum hits where they were placed, loops at their
exact length, and every kit has the roles the grooves use."""

from __future__ import annotations

import numpy as np
import soundfile as sf

from tests.truth import recorded_module, render_recorded


def _spec(name, tracks, bpm=120.0, beats=4, **extra):
    return {"name": name, "sr": 44100, "bpm": bpm, "beats": beats, "seed": 3, "tracks": tracks, **extra}


def _dominant_hz(audio: np.ndarray, sr: int) -> float:
    mono = audio.mean(axis=1)
    spectrum = np.abs(np.fft.rfft(mono * np.hanning(len(mono))))
    return float(np.fft.rfftfreq(len(mono), 1 / sr)[np.argmax(spectrum)])


def test_every_kit_has_the_roles_the_grooves_use():
    rec = recorded_module()
    if rec.missing():
        render_recorded([])                     # skips (or fails under CI) naming the packages
    for kit in rec.KITS:
        roles = rec.kit_roles(kit)
        assert set(rec.ROLES) <= set(roles), (kit, set(rec.ROLES) - set(roles))


def test_a_held_note_sounds_at_its_pitch_and_the_loop_has_its_length():
    spec = _spec("a3_organ", [{"type": "notes", "program": 16, "notes": [[0, 4, 57, 100]]}], bpm=100)
    path, = render_recorded([spec])
    audio, sr = sf.read(path, always_2d=True)
    assert len(audio) == round(4 * 60 / 100 * sr)
    semitones = 12 * np.log2(_dominant_hz(audio, sr) / 440.0)
    assert abs(semitones - round(semitones)) < 0.2 and round(semitones) % 12 == 0   # an A (MIDI 57)
    assert 0.88 < np.max(np.abs(audio)) < 0.9                 # normalised to -1 dBFS


def test_drum_hits_land_on_their_beats():
    hits = [[beat, "kick", 120] for beat in (0, 1, 2, 3)]
    spec = _spec("kicks", [{"type": "drums", "kit": "ForzeeStereo", "hits": hits}], bpm=120, beats=4)
    path, = render_recorded([spec])
    audio, sr = sf.read(path, always_2d=True)
    envelope = np.abs(audio.mean(axis=1))
    hop = sr // 100
    energy = np.add.reduceat(envelope ** 2, np.arange(0, len(envelope), hop))
    rises = np.flatnonzero(np.diff(energy) > 0.2 * energy.max()) + 1
    onsets = sorted({round(r * hop / sr, 1) for r in rises})
    assert [t for t in (0.0, 0.5, 1.0, 1.5) if any(abs(t - o) <= 0.02 for o in onsets)] == [0.0, 0.5, 1.0, 1.5]


def test_a_moving_filter_moves_the_brightness():
    rec = recorded_module()
    sr = 44100
    noise = np.random.default_rng(0).standard_normal((sr, 2)).astype(np.float32)
    swept = rec.moving_lowpass(noise, sr, from_hz=200, to_hz=4000, period_s=1.0)
    quarter = sr // 8
    dark, bright = swept[:quarter], swept[sr // 2 - quarter // 2: sr // 2 + quarter // 2]

    def above_2k(x):
        power = np.abs(np.fft.rfft(x.mean(axis=1))) ** 2
        return float(power[np.fft.rfftfreq(len(x), 1 / sr) > 2000].sum() / power.sum())

    assert above_2k(bright) > 10 * above_2k(dark)


def test_renders_are_cached_by_spec():
    spec = _spec("cached", [{"type": "notes", "program": 33, "notes": [[0, 1, 40, 90]]}], beats=2)
    first, = render_recorded([spec])
    stamp = first.stat().st_mtime_ns
    again, = render_recorded([spec])
    assert again == first and again.stat().st_mtime_ns == stamp
    other, = render_recorded([{**spec, "bpm": 110.0}])
    assert other != first
