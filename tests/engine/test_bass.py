"""The bass's root (engine/bass.py): the note a bass sits on, whatever else rings in the low register."""

from __future__ import annotations

import numpy as np
import pytest

from trackgrade.engine.bass import root_salience
from trackgrade.engine.frames import long_spectrum

SR = 22050


def _tone(f0: float, seconds: float = 6.0, harmonics: int = 8) -> np.ndarray:
    t = np.arange(int(seconds * SR)) / SR
    return sum(np.sin(2 * np.pi * f0 * h * t) / h for h in range(1, harmonics + 1))


@pytest.mark.parametrize("midi", [28, 26, 27, 24])      # E1, D1, Eb1, C1
@pytest.mark.parametrize("ring", [0.3, 0.6])      # the ring's level against the root's
def test_a_ring_a_fifth_above_the_root_does_not_take_the_root(midi, ring):
    # a kick's ring (a lone sine) at 1.5 f0 sat on the root's half-way point and,
    # in magnitude, tied the fifth above with the root (wobbles under drums read
    # as the fifth: E as B, D as A)
    f0 = 440.0 * 2 ** ((midi - 69) / 12)
    t = np.arange(int(6.0 * SR)) / SR
    x = _tone(f0) + ring * np.sin(2 * np.pi * 1.5 * f0 * t)
    salience, harmonicity = root_salience(long_spectrum(x[:, None].astype(np.float32), SR))
    profile = (harmonicity[:, None] * salience / salience.max(axis=1, keepdims=True)).sum(axis=0)
    assert int(np.argmax(profile)) == midi % 12
    assert profile[midi % 12] >= 1.2 * np.sort(profile)[-2]


@pytest.mark.parametrize("midi", [33, 40, 45])
def test_the_octave_above_and_below_do_not_win(midi):
    f0 = 440.0 * 2 ** ((midi - 69) / 12)
    salience, _ = root_salience(long_spectrum(_tone(f0)[:, None].astype(np.float32), SR))
    assert (np.argmax(salience, axis=1) == midi % 12).all()
