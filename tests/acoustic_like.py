"""An acoustic-like recording, synthesised: a played melody (harmonic tones
with vibrato, notes up to ~12 ms off the beat grid, no drums) at 92 BPM. No
electronic profile fits it; it is long enough (70 s) to be a full piece."""

from __future__ import annotations

import io

import numpy as np
import soundfile as sf

R = 44100


def acoustic(seconds=70.0, seed=5):
    rng = np.random.default_rng(seed)
    n = int(seconds * R); x = np.zeros(n)
    t_note = 0.0; beat = 60 / 92
    scale = [220.0, 246.9, 261.6, 293.7, 329.6, 349.2, 392.0, 440.0]
    while t_note < seconds - 1:
        f0 = scale[rng.integers(len(scale))] * (2 ** rng.integers(0, 2))
        dur = beat * rng.choice([0.5, 1, 1, 2])
        start = t_note + rng.normal(0, 0.012)          # played: ~12 ms off the grid
        m = int(min(dur * 1.6, seconds - start) * R)
        if m <= 0: break
        tt = np.arange(m) / R
        vib = 1 + 0.004 * np.sin(2 * np.pi * 5.5 * tt)
        tone = sum(np.sin(2 * np.pi * f0 * k * np.cumsum(vib) / R) / k ** 1.5 for k in range(1, 7))
        env = (1 - np.exp(-tt / 0.03)) * np.exp(-tt / (0.8 * dur + 0.2))
        i = max(0, int(start * R)); x[i:i + m] += (0.3 * rng.uniform(0.6, 1.0)) * tone[:n - i] * env[:n - i]
        t_note += dur
    x = x / np.abs(x).max() * 0.5
    buf = io.BytesIO(); sf.write(buf, np.stack([x, 0.97 * x], 1), R, format="WAV", subtype="PCM_16")
    return buf.getvalue()
