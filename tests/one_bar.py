"""A one-bar drum break, synthesised: 4 beats of kick, snare and hats cut
exactly to the bar, so its length is 240 / bpm seconds (the shape of the
1.4-1.9 s breaks producers load into a sampler)."""

from __future__ import annotations

import io

import numpy as np
import soundfile as sf

RATE = 44100


def _kick(n: int) -> np.ndarray:
    t = np.arange(n) / RATE
    f = 50.0 + 100.0 * np.exp(-t / 0.03)
    return np.sin(2 * np.pi * np.cumsum(f) / RATE) * np.exp(-t / 0.18)


def _noise_hit(n: int, decay: float, seed: int, tone_hz: float = 0.0) -> np.ndarray:
    t = np.arange(n) / RATE
    rng = np.random.default_rng(seed)
    body = rng.standard_normal(n)
    if tone_hz:
        body = 0.5 * body + np.sin(2 * np.pi * tone_hz * t)
    return body * np.exp(-t / decay)


def one_bar_break(bpm: float) -> np.ndarray:
    """Mono samples of one bar at `bpm`: kick on 1 and the "and" of 2 and on 3,
    snare on 2 and 4, closed hats on every eighth."""
    beat = 60.0 / bpm
    n = int(round(4 * beat * RATE))
    x = np.zeros(n)

    def put(at_beats: float, hit: np.ndarray, gain: float) -> None:
        i = int(round(at_beats * beat * RATE))
        m = min(len(hit), n - i)
        x[i:i + m] += gain * hit[:m]

    for b in (0.0, 1.5, 2.0):
        put(b, _kick(int(0.3 * RATE)), 0.9)
    for b in (1.0, 3.0):
        put(b, _noise_hit(int(0.2 * RATE), 0.06, 3, tone_hz=190.0), 0.5)
    for k in range(8):
        put(k * 0.5, _noise_hit(int(0.05 * RATE), 0.012, 10 + k), 0.15)
    return 0.8 * x / np.abs(x).max()


def one_bar_wav(bpm: float) -> bytes:
    buf = io.BytesIO()
    sf.write(buf, np.repeat(one_bar_break(bpm)[:, None], 2, axis=1), RATE, format="WAV",
             subtype="PCM_16")
    return buf.getvalue()
