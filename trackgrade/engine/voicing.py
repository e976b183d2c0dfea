"""How many notes sound at once, and where: the cues that tell the pitched
parts apart (a bass line, chords, a lead line, a texture) and from a mix.

Two cheap readings (grading/content.py weighs them with the cues of
engine/content.py):

* `series_cues`, from at most SERIES_FRAMES short Hann frames (~0.19 s at
  44.1 kHz) spread evenly over the audio: per frame, the spectral peaks from
  SERIES_LOW_HZ to SERIES_HIGH_HZ within SERIES_DB of the frame's top are
  explained greedily by harmonic series (a peak belongs to a series when it
  lies within SERIES_CENTS of a whole multiple of its fundamental, up to the
  SERIES_HARMONICS-th). `monophony` is the share of the peaks' power the
  strongest series explains (one voice: near 1; chords and mixes: less),
  `voices` how many series it takes to explain SERIES_EXPLAINED of it (at
  most MAX_VOICES), `pitch_midi` the median fundamental of the strongest
  series (MIDI: a bass line sits low, a lead above the bass register) and
  `pitch_moves` the share of consecutive frames whose strongest fundamental
  moves by a semitone or more (a melody moves, a drone holds);
* `semitone_cues`, from at most SEMITONE_FRAMES frames of the long spectrum
  on the semitone grid (engine/semitones.py, B0..B7), each frame weighted by
  its power: `semitone_peaks` (semitones standing PEAK_STAND_DB over both
  neighbours within PEAK_RANGE_DB of the frame's top: how many notes and
  partials at once), `register_midi` (the power-weighted mean semitone),
  `bass_register` (the share of power under BASS_REGISTER_MIDI, ~250 Hz),
  `chroma_flux` (half the summed change of the pitch-class shares between
  neighbouring frames: chords change per bar, a melody per note),
  `chroma_spread` (effective number of pitch classes) and `octave_spread`
  (effective number of the octaves C1..B7 holding the power: a mix spans
  bass to treble, one part a few octaves).

Every function is pure: arrays in, numbers out.
"""

from __future__ import annotations

import numpy as np

from trackgrade.engine.frames import Spectrogram
from trackgrade.engine.semitones import MIDI_RANGE, semitone_weights

SERIES_FRAME_S = 0.186         # short frame (8192 samples at 44.1 kHz)
SERIES_FRAMES = 96             # at most this many, evenly spaced
SERIES_LOW_HZ, SERIES_HIGH_HZ = 50.0, 4000.0
SERIES_DB = 30.0               # peaks within this of the frame's top are read
SERIES_QUIET_DB = 30.0         # frames this far under the loudest are not read
SERIES_PEAKS = 40              # the strongest peaks of a frame that are read
SERIES_CENTS = 40.0            # a peak within this of a harmonic belongs to the series
SERIES_HARMONICS = 12
SERIES_CANDIDATES = 6          # fundamentals tried: the strongest peaks, their halves and thirds
SERIES_EXPLAINED = 0.85
MAX_VOICES = 6
MIN_F0_HZ = 30.0
SEMITONE_FRAMES = 48
PEAK_STAND_DB, PEAK_RANGE_DB = 3.0, 20.0
BASS_REGISTER_MIDI = 59        # B3, 247 Hz: the bass register lies under it
QUIET_SHARE = 1e-3             # long frames under this share of the loudest are not read


def frame_peaks(power: np.ndarray, freqs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(Hz, power) of the local maxima of one frame's power within SERIES_DB
    of its top, the SERIES_PEAKS strongest."""
    top = power.max()
    inner = power[1:-1]
    idx = np.flatnonzero((inner > power[:-2]) & (inner >= power[2:])
                         & (inner > top * 10 ** (-SERIES_DB / 10))) + 1
    if idx.size > SERIES_PEAKS:
        idx = idx[np.argsort(power[idx])[-SERIES_PEAKS:]]
    return freqs[idx], power[idx]


def series_members(peak_hz: np.ndarray, f0: np.ndarray) -> np.ndarray:
    """(len(f0), peaks): which peaks lie on the harmonic series of each `f0`."""
    ratio = peak_hz[None, :] / np.asarray(f0, dtype=np.float64)[:, None]
    h = np.round(ratio)
    near = np.abs(1200 * np.log2(np.maximum(ratio, 1e-9) / np.maximum(h, 1))) < SERIES_CENTS
    return (h >= 1) & (h <= SERIES_HARMONICS) & near


def explain(peak_hz: np.ndarray, peak_power: np.ndarray) -> tuple[float, int, float]:
    """(share of the power the strongest series explains, series needed for
    SERIES_EXPLAINED of it, the strongest series' fundamental in Hz)."""
    total = float(peak_power.sum())
    left = np.ones(peak_hz.size, bool)
    explained, voices, first_share, first_f0 = 0.0, 0, 0.0, 0.0
    while voices < MAX_VOICES and explained < SERIES_EXPLAINED * total and left.any():
        strongest = peak_hz[left][np.argsort(-peak_power[left])[:SERIES_CANDIDATES]]
        f0s = np.concatenate([strongest / k for k in (1, 2, 3)])
        f0s = f0s[f0s >= MIN_F0_HZ]
        members = series_members(peak_hz, f0s) & left if f0s.size else np.zeros((0, left.size), bool)
        powers = members.astype(np.float64) @ peak_power.astype(np.float64)
        best, pick = 0.0, -1
        for i, power in enumerate(powers.tolist()):     # the first clearly strongest
            if power > best * 1.0001:
                best, pick = power, i
        if pick < 0:
            break
        if voices == 0:
            first_share, first_f0 = best / total, float(f0s[pick])
        left &= ~members[pick]
        explained += best
        voices += 1
    return first_share, voices, first_f0


def series_cues(samples: np.ndarray, sample_rate: int) -> dict[str, float]:
    """`monophony`, `voices`, `pitch_midi`, `pitch_moves` (module doc)."""
    n = 1 << int(round(np.log2(SERIES_FRAME_S * sample_rate)))
    length = samples.shape[0]
    starts = np.unique(np.linspace(0, max(length - n, 0),
                                   min(SERIES_FRAMES, max(length - n, 0) // (n // 4) + 1)).astype(int))
    frames = np.zeros((starts.size, n))
    channels = samples.reshape(length, -1)
    for i, s in enumerate(starts):          # only the frames read are mixed to mono
        piece = channels[s:s + n]
        for c in range(piece.shape[1]):     # channel by channel: a strided mean is slow
            frames[i, :piece.shape[0]] += piece[:, c]
        frames[i] /= piece.shape[1]
    frames *= np.hanning(n)
    freqs = np.fft.rfftfreq(n, 1.0 / sample_rate)
    lo, hi = np.searchsorted(freqs, [SERIES_LOW_HZ, SERIES_HIGH_HZ])
    power = (np.abs(np.fft.rfft(frames, axis=1)) ** 2)[:, lo:hi]
    freqs = freqs[lo:hi]
    energy = power.sum(axis=1)
    read = energy > energy.max() * 10 ** (-SERIES_QUIET_DB / 10) if energy.max() > 0 else energy > 0
    shares, voices, f0s, weights = [], [], [], []
    for row, e in zip(power[read], energy[read]):
        hz, pw = frame_peaks(row, freqs)
        if hz.size == 0:
            continue
        share, count, f0 = explain(hz, pw)
        shares.append(share)
        voices.append(count)
        f0s.append(max(f0, MIN_F0_HZ))
        weights.append(e)
    if not weights:
        return {"monophony": 0.0, "voices": 0.0, "pitch_midi": 0.0, "pitch_moves": 0.0}
    w = np.asarray(weights) / np.sum(weights)
    midi = 69 + 12 * np.log2(np.asarray(f0s) / 440.0)
    moves = float(np.mean(np.abs(np.diff(np.round(midi))) >= 1)) if midi.size > 1 else 0.0
    return {"monophony": float(w @ np.asarray(shares)), "voices": float(w @ np.asarray(voices)),
            "pitch_midi": float(np.median(midi)), "pitch_moves": moves}


def _effective_number(shares: np.ndarray) -> np.ndarray:
    """exp of the entropy of each row of shares (rows sum to 1)."""
    logs = np.log(np.maximum(shares, 1e-12))
    return np.exp(-(np.where(shares > 0, shares * logs, 0.0)).sum(axis=1))


def semitone_power(spec: Spectrogram, rows: np.ndarray) -> np.ndarray:
    """(len(rows), semitones B0..B7) power of those frames on the A440 semitone
    grid (`semitones.semitone_weights`, each bin shared between its two
    nearest semitones), without the key's low-line weighting: these cues
    ask how the power spreads over the register, broad lows included."""
    matrix, first, last = semitone_weights(spec.n_fft, spec.sample_rate, 0)
    return spec.power[rows][:, first:last].astype(np.float64) @ matrix.astype(np.float64)


def semitone_cues(spec: Spectrogram) -> dict[str, float]:
    """`semitone_peaks`, `register_midi`, `bass_register`, `chroma_flux`,
    `chroma_spread`, `octave_spread` (module doc)."""
    empty = {"semitone_peaks": 0.0, "register_midi": 0.0, "bass_register": 0.0,
             "chroma_flux": 0.0, "chroma_spread": 0.0, "octave_spread": 0.0}
    n = spec.power.shape[0]
    if n == 0:
        return empty
    rows = np.unique(np.linspace(0, n - 1, min(n, SEMITONE_FRAMES)).round().astype(int))
    power = semitone_power(spec, rows)
    total = power.sum(axis=1)
    if total.max() <= 0:
        return empty
    keep = total > total.max() * QUIET_SHARE
    power, total = power[keep], total[keep]
    w = total / total.sum()
    midi = np.arange(*MIDI_RANGE)
    db = 10 * np.log10(power + 1e-20)
    inner = db[:, 1:-1]
    peaks = ((inner > db[:, :-2] + PEAK_STAND_DB) & (inner > db[:, 2:] + PEAK_STAND_DB)
             & (inner > db.max(axis=1, keepdims=True) - PEAK_RANGE_DB)).sum(axis=1)
    octaves = np.stack([power[:, (midi >= 24 + 12 * o) & (midi < 36 + 12 * o)].sum(axis=1)
                        for o in range(7)], axis=1) / total[:, None]
    chroma = np.stack([power[:, midi % 12 == pc].sum(axis=1) for pc in range(12)], axis=1) / total[:, None]
    flux = float(np.mean(np.abs(np.diff(chroma, axis=0)).sum(axis=1)) / 2) if len(chroma) > 1 else 0.0
    return {"semitone_peaks": float(w @ peaks), "register_midi": float(w @ ((power @ midi) / total)),
            "bass_register": float(w @ (power[:, midi < BASS_REGISTER_MIDI].sum(axis=1) / total)),
            "chroma_flux": flux, "chroma_spread": float(w @ _effective_number(chroma)),
            "octave_spread": float(w @ _effective_number(octaves))}
