"""How many notes at once, and where (engine/voicing.py, issue 26's second
pass): the cues that tell a bass line, chords and a lead line apart. The
mechanics on generated tones, then the same readings on recorded
instruments (FluidR3 GM through fluidsynth)."""

from __future__ import annotations

import numpy as np
import soundfile as sf

from tests.truth import render_recorded
from trackgrade.engine.frames import long_spectrum
from trackgrade.engine.voicing import semitone_cues, series_cues

SR = 44100


def _tones(midis_per_step, seconds_each=0.5, harmonics=6) -> np.ndarray:
    """Steps of harmonic tones (each step: the MIDI notes sounding together)."""
    t = np.arange(int(SR * seconds_each)) / SR
    env = np.minimum(1.0, np.minimum(t, t[::-1]) / 0.01)
    steps = []
    for notes in midis_per_step:
        step = np.zeros(t.size)
        for m in notes:
            f = 440.0 * 2 ** ((m - 69) / 12)
            step += sum(np.sin(2 * np.pi * f * h * t) / h for h in range(1, harmonics + 1) if f * h < SR / 2)
        steps.append(0.2 * step * env)
    return np.concatenate(steps).astype(np.float32)[:, None]


def _cues(x: np.ndarray) -> dict:
    return {**series_cues(x, SR), **semitone_cues(long_spectrum(x, SR))}


def test_one_voice_is_one_series_at_its_pitch():
    c = _cues(_tones([[45]] * 12))                       # A2 held, 6 s
    assert c["monophony"] > 0.9 and c["voices"] < 1.2
    assert abs(c["pitch_midi"] - 45) < 0.6
    assert c["pitch_moves"] < 0.05 and c["chroma_flux"] < 0.05
    assert c["bass_register"] > 0.8 and c["register_midi"] < 59      # 110 and 220 Hz of 110 Hz's six partials


def test_a_chord_takes_several_series_and_stands_as_several_semitones():
    held = _cues(_tones([[60]] * 12))
    chord = _cues(_tones([[60, 64, 67]] * 12))           # C major triad
    # a triad's partials also fit one series an octave under its root (C3
    # holds C4, G4, C5, E5, G5): two series, and far from one voice's share
    assert chord["voices"] > 1.9 and chord["monophony"] < 0.8 < 0.95 < held["monophony"]
    assert chord["semitone_peaks"] > held["semitone_peaks"] + 3
    assert chord["chroma_spread"] > held["chroma_spread"]
    assert chord["bass_register"] < 0.1


def test_a_melody_moves_and_sits_above_the_bass_register():
    melody = _cues(_tones([[72], [74], [76], [79], [77], [74], [72], [71]] * 2, seconds_each=0.4))
    assert melody["monophony"] > 0.9
    assert melody["pitch_moves"] > 0.2                  # 0.4 s notes, frames 46 ms apart
    assert 70 <= melody["pitch_midi"] <= 80
    assert melody["chroma_flux"] > 0.2
    assert melody["bass_register"] < 0.05


def test_silence_reads_nothing():
    quiet = np.zeros((SR * 2, 2), np.float32)
    c = _cues(quiet)
    assert all(v == 0.0 for v in c.values())


def _spec(name, program, notes, bpm=110.0, beats=8):
    return {"name": name, "sr": SR, "bpm": bpm, "beats": beats, "seed": 26, "swing": 0.0,
            "humanize_ms": 0.0, "reverb": False, "peak_dbfs": -1.0,
            "tracks": [{"type": "notes", "program": program, "notes": notes}]}


def test_recorded_bass_chords_and_lead_are_told_apart():
    """A fingered bass (GM 33) playing eighths on A1 and D2, a piano (GM 0)
    holding triads, a flute (GM 73) playing a line from C5: one low voice, several
    voices, one high moving voice."""
    bass = [[b / 2, 0.45, 33 if b < 8 else 38, 100] for b in range(16)]
    chords = [[0, 3.9, p, 85] for p in (57, 60, 64)] + [[4, 3.9, p, 85] for p in (62, 65, 69)]
    line = [[i * 0.5, 0.45, p, 100] for i, p in enumerate((72, 74, 76, 79, 77, 76, 74, 72) * 2)]
    paths = render_recorded([_spec("voicing_bass", 33, bass), _spec("voicing_chords", 0, chords),
                             _spec("voicing_lead", 73, line)])
    read = []
    for path in paths:
        x, sr = sf.read(path, dtype="float32", always_2d=True)
        read.append({**series_cues(x, sr), **semitone_cues(long_spectrum(x, sr))})
    b, h, lead = read
    assert b["pitch_midi"] < 40 and b["bass_register"] > 0.5
    assert h["semitone_peaks"] > max(b["semitone_peaks"], lead["semitone_peaks"]) + 3
    assert h["monophony"] < min(b["monophony"], lead["monophony"]) and lead["monophony"] > 0.9
    assert lead["pitch_midi"] > 65 and lead["bass_register"] < 0.1
    assert lead["pitch_moves"] > max(b["pitch_moves"], h["pitch_moves"]) + 0.2
    assert lead["chroma_flux"] > h["chroma_flux"]
