"""The synthetic tracks test_rhythm.py and test_structure.py share (one list,
so one cached render), and how both load them: through the real decoder."""

from __future__ import annotations

from trackgrade.engine.decode import decode
from trackgrade.engine.frames import mono_mix

from tests.truth import render_specs

SPECS = [
    {"name": "house_124", "style": "house", "bpm": 124, "key": "A", "seconds": 45, "seed": 1},
    {"name": "house_124_nokick", "style": "house", "bpm": 124, "key": "A", "seconds": 30, "seed": 1,
     "defects": ["no_kick"]},
    {"name": "house_124_drift", "style": "house", "bpm": 124, "key": "A", "seconds": 30, "seed": 1,
     "defects": [{"type": "tempo_drift", "value": 4}]},
    {"name": "dnb_174", "style": "drum_and_bass", "bpm": 174, "key": "F", "seconds": 30, "seed": 2},
    {"name": "dubstep_140", "style": "dubstep", "bpm": 140, "key": "G", "seconds": 30, "seed": 3},
    {"name": "downtempo_92", "style": "downtempo", "bpm": 92, "key": "D", "seconds": 30, "seed": 4},
    {"name": "techno_132p5", "style": "techno", "bpm": 132.5, "key": "C", "seconds": 30, "seed": 5,
     "first_beat_s": 0.3},
    {"name": "ambient_72", "style": "ambient", "bpm": 72, "key": "E", "seconds": 30, "seed": 6},
    {"name": "trance_138", "style": "trance", "bpm": 138, "key": "D", "seconds": 45, "seed": 7},
]


def load(path):
    """(samples, sample_rate) of a rendered file, decoded from its bytes."""
    audio = decode(path.read_bytes(), file_name=path.name)
    return audio.samples, audio.sample_rate


def rendered():
    """(truth entry, mono mix, sample rate, duration) for every track of SPECS."""
    out, truth = render_specs(SPECS)
    for entry in truth:
        samples, rate = load(out / entry["file"])
        yield entry, mono_mix(samples), rate, samples.shape[0] / rate
