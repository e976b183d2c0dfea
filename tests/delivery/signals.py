"""Synthetic tracks for the delivery known-answer tests (float32, 44.1 kHz stereo)."""

from __future__ import annotations

import io

import numpy as np
import soundfile as sf
from scipy.signal import butter, sosfilt

RATE = 44100


def club_loop(seconds: float = 12.0, *, seed: int = 3) -> np.ndarray:
    """Kick on every beat at 120 BPM, a 55 Hz bass, a triad and bright hats;
    (frames, 2), peak 0.7, the hats a little wider than the rest."""
    n = int(seconds * RATE)
    t = np.arange(n) / RATE
    rng = np.random.default_rng(seed)
    kick = np.zeros(n)
    for s in range(0, n, RATE // 2):
        m = min(RATE // 4, n - s)
        tt = np.arange(m) / RATE
        kick[s:s + m] += 0.8 * np.sin(2 * np.pi * (50 + 80 * np.exp(-tt * 30)) * tt) * np.exp(-tt * 12)
    bass = 0.3 * np.sin(2 * np.pi * 55 * t) * (0.6 + 0.4 * np.sin(2 * np.pi * 2 * t))
    hats = sosfilt(butter(4, 6000, "hp", fs=RATE, output="sos"), rng.standard_normal((n, 2)), axis=0) * 0.08
    chord = 0.1 * sum(np.sin(2 * np.pi * f * t) for f in (440, 554, 659))
    centre = kick + bass + chord
    x = np.stack([centre + hats[:, 0], centre + 0.6 * hats[:, 0] + 0.4 * hats[:, 1]], axis=1)
    return (x / np.abs(x).max() * 0.7).astype(np.float32)


def high_passed(x: np.ndarray, hz: float = 120.0) -> np.ndarray:
    return sosfilt(butter(4, hz, "hp", fs=RATE, output="sos"), x, axis=0).astype(np.float32)


def wav_bytes(x: np.ndarray) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, x, RATE, format="WAV", subtype="FLOAT")
    return buf.getvalue()


def gained(x: np.ndarray, db: float) -> np.ndarray:
    return (x * 10 ** (db / 20)).astype(np.float32)
