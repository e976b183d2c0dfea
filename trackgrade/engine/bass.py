"""The low register's pitch: which note a bass sits on, from the long spectrum.

Subharmonic summation over the fundamentals of the bass register (MIDI 24-59,
C1-B3, on the tuned semitone grid): for each frame and candidate fundamental
f0, the power at its harmonics h*f0 (h = 1..HARMONICS, weight
HARMONIC_DECAY**(h-1)) less the power half-way to a neighbouring harmonic,
the lesser of (h-0.5)*f0 and (h+0.5)*f0. The comb's spacing names the root
whichever harmonics are loud, so a filter sweeping across the harmonics of a
wobble bass moves the weight among them but not the root; the half-way term
keeps the octave below (its odd "harmonics" fall between the partials) and
the octave above (both its half-way points land on odd partials) from
winning, while one foreign line on one side (a kick's ring a fifth above the
root, at 1.5*f0) no longer cancels a harmonic. Power, not magnitude: the
note the bass sits on is its loudest partial, and in magnitude a kick's ring
plus the few partials the fifth above shares with the root tied with it.
The power is smoothed over +-SMOOTH_HZ first, so an amplitude-modulated
partial (a wobble's sidebands) or a detuned unison counts as one.

`harmonicity`: per frame, the best candidate's comb contrast over harmonics
2..HARMONICS, (on - between) / (on + between), 0 for a smooth spectrum
(noise, drums, a lone sine such as a kick's ring), near 1 for a harmonic tone.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from trackgrade.engine.frames import Spectrogram

ROOT_MIDI = (17, 60)          # candidate fundamentals: F0 (21.8 Hz) .. B3 (247 Hz)
HARMONICS = 8
HARMONIC_DECAY = 0.8
SMOOTH_HZ = 3.0               # +- half-width of the magnitude's smoothing (Hann)


@lru_cache(maxsize=16)
def _kernel(n_fft: int, sample_rate: int) -> np.ndarray:
    half = max(1, int(round(SMOOTH_HZ * n_fft / sample_rate)))
    w = np.hanning(2 * half + 3)[1:-1]
    return (w / w.sum()).astype(np.float32)


def smoothed_at(spec: Spectrogram, freq_hz: np.ndarray) -> np.ndarray:
    """(frames, *freq_hz.shape) power smoothed over +-SMOOTH_HZ (Hann),
    read at `freq_hz` by linear interpolation. Smoothing and interpolation
    are one set of weights on the bins around each point (they commute), so
    only the points read are computed: one gather, one weighted sum."""
    k = _kernel(spec.n_fft, spec.sample_rate).astype(np.float64)
    half = k.size // 2
    bins = freq_hz.ravel() / (spec.sample_rate / spec.n_fft)
    i0 = np.floor(bins).astype(np.intp)
    frac = bins - i0
    taps = np.arange(-half, half + 2)                       # bins i0-half .. i0+half+1
    weights = np.zeros((bins.size, taps.size))
    weights[:, :-1] += k * (1 - frac)[:, None]
    weights[:, 1:] += k * frac[:, None]
    index = np.clip(i0[:, None] + taps, 0, None)
    hi = int(index.max()) + 1
    power = np.ascontiguousarray(spec.power[:, :hi])
    out = np.einsum("fpt,pt->fp", power[:, index], weights.astype(np.float32))
    return out.reshape((power.shape[0],) + freq_hz.shape)


def root_salience(spec: Spectrogram, tuning_cents: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """(frames, 12) salience of each pitch class as the bass's root (C first,
    summed over the candidate octaves, >= 0) and (frames,) harmonicity 0..1."""
    midi = np.arange(*ROOT_MIDI, dtype=np.float64) + tuning_cents / 100.0
    f0 = 440.0 * 2.0 ** ((midi - 69) / 12)
    h = np.arange(1, HARMONICS + 1, dtype=np.float64)
    weight = (HARMONIC_DECAY ** (h - 1)).astype(np.float32)
    top = 0.45 * spec.sample_rate
    half_way = np.arange(0.5, HARMONICS + 1)                                 # (h -+ 0.5), H+1 points
    freq = np.minimum(f0[:, None] * np.concatenate([h, half_way])[None, :], top)
    both = smoothed_at(spec, freq)                                           # (frames, cands, 2H+1)
    on, between = both[:, :, :HARMONICS], both[:, :, HARMONICS:]
    mid = np.minimum(between[:, :, :-1], between[:, :, 1:])                  # lesser side, (.., H)
    contrast = ((on - mid) * weight).sum(axis=2)
    salience = np.maximum(contrast, 0.0)
    upper_on = (on[:, :, 1:] * weight[1:]).sum(axis=2)
    upper_mid = (mid[:, :, 1:] * weight[1:]).sum(axis=2)
    ratio = (upper_on - upper_mid) / np.maximum(upper_on + upper_mid, 1e-20)
    best = np.argmax(salience, axis=1)
    harmonicity = np.clip(ratio[np.arange(ratio.shape[0]), best], 0.0, 1.0)
    pcs = np.zeros((salience.shape[0], 12))
    np.add.at(pcs.T, np.arange(*ROOT_MIDI) % 12, salience.T)
    return pcs, harmonicity
