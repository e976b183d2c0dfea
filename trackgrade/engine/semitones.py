"""Chroma that hears the bass: the long spectrum on a semitone grid.

A long-window log-frequency transform: each bin of `frames.long_spectrum`
(~1.5 s Hann frames, 0.67 Hz apart at 44.1 kHz, so neighbouring semitones
are 2.7 bins apart even at B0, 31 Hz) is shared between the two nearest
tuned semitone centres by linear interpolation, from B0 to B7 (MIDI 23-107,
the range of a constant-Q chroma from C1 with the octave below's top note).
A semitone's energy is the power summed over its bins and its magnitude the
square root (a constant-Q bin's magnitude); the chroma folds the octaves
together. Below C3 (`LINE_BELOW_MIDI`) a note is a spectral line: there the
bins of lines (peaks that stand above the bins 3-4 away, and their +-2-bin
lobes) count fully and every other bin BROADBAND_SHARE of its power, so
the broad low hump a moving filter or a kick leaves between F1 and A1 no
longer outweighs a wobble's or a bass's notes (issue 27,
benchmarks/results/key.md, round 3); below C2 a held note (`held_notes`)
counts whole on the semitone nearest its own frequency (round 5: a sub
playing sharp). Computed from the spectrum the other features share: one
matrix product per track, no second transform of the audio. `melody_frames`
reads a melody over the chords from the register above C5 (round 5).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
from trackgrade.engine.frames import Spectrogram

MIDI_RANGE = (23, 108)        # B0 (30.9 Hz) .. B7 (3951 Hz), upper bound exclusive
LINE_BELOW_MIDI = 48          # C3: below it semitones are read from spectral lines
BROADBAND_SHARE = 0.15        # share of the bins' own power kept below C3
LINE_PROMINENCE = 1.0         # a line's peak > this x the power of the bins 3 and 4 away
LINE_LOBE = 2                 # bins either side of a line's peak counted as the line
HELD_BELOW_MIDI = 36          # C2: below it a held note counts at its own pitch,
HELD_SHARE = 0.3              # ... a line holding this share of its frame's power below C3,
HELD_SEMITONES = 0.5          # ... with a line within this many semitones in a neighbouring frame
MELODY_FROM_MIDI = 72         # C5: a melody over chords is read from this register up,
MELODY_SHARE = (0.25, 0.5)    # ... when it holds this share of the magnitude (a line, not overtones)
MAX_MELODY_COVARIATION = 0.25  # ... and moves apart from the register below (not a chord's top voices)


@lru_cache(maxsize=4)
def semitone_weights(n_fft: int, sample_rate: int, tuning_cents: int
                     ) -> tuple[np.ndarray, int, int]:
    """(bins, semitones) float32 interpolation weights (at most two per bin;
    dense, ~2 MB at 44.1 kHz: one BLAS product beats the sparse one) and the
    bin range [first, last) they cover, for a reference tuning in whole cents."""
    lo, hi = MIDI_RANGE
    shift = tuning_cents / 100.0                        # semitones
    edge = np.array([lo - 0.5, hi - 0.5]) - 69 + shift
    bounds = 440.0 * 2.0 ** (edge / 12) * n_fft / sample_rate
    first, last = int(np.ceil(bounds[0])), min(int(np.floor(bounds[1])) + 1, n_fft // 2 + 1)
    freqs = np.arange(first, last) * (sample_rate / n_fft)
    pos = 69 + 12 * np.log2(freqs / 440.0) - shift - lo
    i0 = np.floor(pos).astype(np.intp)
    frac = pos - i0
    matrix = np.zeros((freqs.size, hi - lo + 2), np.float32)     # a column either side
    rows = np.arange(freqs.size)
    matrix[rows, i0 + 1] = 1 - frac
    matrix[rows, i0 + 2] = frac
    return np.ascontiguousarray(matrix[:, 1:-1]), first, last


@lru_cache(maxsize=4)
def line_cut(n_fft: int, sample_rate: int, tuning_cents: int) -> int:
    """The first bin above the semitones below LINE_BELOW_MIDI."""
    edge = LINE_BELOW_MIDI - 0.5 - 69 + tuning_cents / 100.0
    return int(np.floor(440.0 * 2.0 ** (edge / 12) * n_fft / sample_rate)) + 1


def line_peaks(power: np.ndarray, first: int, cut: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The spectral lines' peaks in [first, cut): (frame, bin from `first`,
    that bin refined by a parabola through the log power), each peak that
    stands above LINE_PROMINENCE x the summed power of the bins 3 and 4 away."""
    p = power[:, first - 5:cut + 5]                   # 5: the bins 3-4 away, and a peak's neighbour
    mid = p[:, 1:-1]
    frame, k = np.nonzero((mid > p[:, :-2]) & (mid >= p[:, 2:]))
    k = k + 1                                         # index into p
    keep = (k >= 5) & (k < p.shape[1] - 5)
    frame, k = frame[keep], k[keep]
    neigh = sum(p[frame, k + o].astype(np.float64) for o in (-4, -3, 3, 4))
    line = p[frame, k] > LINE_PROMINENCE * neigh
    frame, k = frame[line], k[line]
    a, b, c = (np.log(p[frame, k + o].astype(np.float64) + 1e-30) for o in (-1, 0, 1))
    den = a - 2 * b + c
    delta = np.clip(np.where(den < 0, 0.5 * (a - c) / np.where(den < 0, den, -1.0), 0.0), -0.5, 0.5)
    return frame, k - 5, k - 5 + delta


def _lobes(frame: np.ndarray, k: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(frame, bin, which peak) of every bin within +-LINE_LOBE of the peaks, inside [0, width)."""
    o = np.arange(-LINE_LOBE, LINE_LOBE + 1)
    j = (k[:, None] + o).ravel()
    f = np.repeat(frame, o.size)
    which = np.repeat(np.arange(k.size), o.size)
    inside = (j >= 0) & (j < width)
    return f[inside], j[inside], which[inside]


def line_bins(frame: np.ndarray, k: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """`shape` (frames, bins) True on the bins of the spectral lines whose
    peaks (`line_peaks`) are at (frame, k): each peak and its lobe (+-LINE_LOBE bins)."""
    mask = np.zeros(shape, bool)
    f, j, _ = _lobes(frame, k, shape[1])
    mask[f, j] = True
    return mask


def held_notes(low: np.ndarray, frame: np.ndarray, k: np.ndarray, midi: np.ndarray,
               total: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The low lines that are held notes: below HELD_BELOW_MIDI, with a line
    within HELD_SEMITONES in the frame before or after (a note, not a kick's
    sweep), whose lobe in `low` (frames, bins) holds HELD_SHARE of its frame's
    `total`. Per lobe bin: (frame, index into `low`'s flat array, MIDI number
    of the semitone nearest the line); a bin in two lobes goes to the first."""
    key = frame * 256.0 + midi                       # frames apart by more than any pitch
    order = np.sort(key)
    held = np.zeros(frame.size, bool)
    for step in (-1, 1):
        near = key + 256.0 * step
        held |= np.searchsorted(order, near + HELD_SEMITONES, "right") > \
            np.searchsorted(order, near - HELD_SEMITONES, "left")
    held &= midi < HELD_BELOW_MIDI
    f, j, which = _lobes(frame[held], k[held], low.shape[1])
    flat = f * low.shape[1] + j
    flat, first_seen = np.unique(flat, return_index=True)
    f, which = f[first_seen], which[first_seen]
    lobe = np.bincount(which, weights=low.ravel()[flat].astype(np.float64), minlength=int(held.sum()))
    strong = lobe[which] >= HELD_SHARE * total[f]
    return f[strong], flat[strong], np.round(midi[held][which[strong]]).astype(np.intp)


def semitone_magnitude(spec: Spectrogram, tuning_cents: float) -> np.ndarray:
    """(frames, semitones) magnitude of each tuned semitone B0..B7; below
    LINE_BELOW_MIDI the bins of spectral lines count fully, the others
    BROADBAND_SHARE of their power; a held note below HELD_BELOW_MIDI
    (`held_notes`) counts whole on the semitone nearest its own frequency,
    not shared between two by where its bins fall on the grid: a sub 30-50
    cents sharp, wandering between frames, is still one note."""
    cents = int(round(tuning_cents))
    matrix, first, last = semitone_weights(spec.n_fft, spec.sample_rate, cents)
    cut = line_cut(spec.n_fft, spec.sample_rate, cents)
    raw = spec.power[:, first:cut]
    frame, k, fine = line_peaks(spec.power, first, cut)
    low = raw * np.where(line_bins(frame, k, raw.shape), np.float32(1.0), np.float32(BROADBAND_SHARE))
    midi = 69 + 12 * np.log2((first + fine) * spec.sample_rate / spec.n_fft / 440.0) - cents / 100.0
    f, flat, note = held_notes(low, frame, k, midi, raw.sum(axis=1, dtype=np.float64))
    held = np.zeros((raw.shape[0], matrix.shape[1]))
    np.add.at(held, (f, note - MIDI_RANGE[0]), low.ravel()[flat])
    low.ravel()[flat] = 0.0
    power = spec.power[:, cut:last] @ matrix[cut - first:] + low @ matrix[:cut - first]
    return np.sqrt(np.maximum(power + held, 0.0))


def fold_octaves(semitones: np.ndarray) -> np.ndarray:
    """(frames, semitones from MIDI_RANGE[0]) -> (frames, 12), C first."""
    lo, hi = MIDI_RANGE
    out = np.zeros((semitones.shape[0], 12))
    for pc in range(12):
        out[:, pc] = semitones[:, (pc - lo) % 12::12].sum(axis=1)
    return out


def bass_share(semitones: np.ndarray) -> float:
    """The share of the semitones' magnitude (frames, semitones from
    MIDI_RANGE[0]) below LINE_BELOW_MIDI (C3): high for a bass line or a
    wobble, dry or over drums (drums add broadband power there, which the
    line rule keeps at BROADBAND_SHARE, and hats above); low for chords,
    pads, leads and most mixes."""
    total = float(semitones.sum())
    return float(semitones[:, :LINE_BELOW_MIDI - MIDI_RANGE[0]].sum()) / total if total > 0 else 0.0


def bass_note(frame: np.ndarray) -> int:
    """The pitch class (C = 0) of one frame's (semitones from MIDI_RANGE[0])
    strongest semitone below LINE_BELOW_MIDI: the bass's note."""
    return int((np.argmax(frame[:LINE_BELOW_MIDI - MIDI_RANGE[0]]) + MIDI_RANGE[0]) % 12)


def registers(semitones: np.ndarray, split_midi: int) -> tuple[np.ndarray, np.ndarray]:
    """(frames, 12) the pitch classes of the semitones from `split_midi` up,
    and (frames, 12) those of the semitones below it (C first)."""
    upper = np.arange(semitones.shape[1]) >= split_midi - MIDI_RANGE[0]
    return fold_octaves(semitones * upper), fold_octaves(semitones * ~upper)


def covariation(upper: np.ndarray, lower: np.ndarray) -> float:
    """How two registers' chroma frames (frames, 12) move together: the
    correlation over the clip of each frame at unit energy less the clip's
    mean frame. A chord loop's top voices move with its chords (~0.5); a riff
    that repeats over changing chords does not (~0.15)."""
    a, b = (x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-30) for x in (upper, lower))
    a, b = a - a.mean(axis=0), b - b.mean(axis=0)
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float((a * b).sum() / norm) if norm > 0 else 1.0


def melody_frames(semitones: np.ndarray) -> np.ndarray | None:
    """(frames, 12) the pitch classes from MELODY_FROM_MIDI up when they hold
    a line of their own over the register below, else None: a MELODY_SHARE
    of the semitones' magnitude (a bass's or a pad's overtones hold less, a
    lead or a guitar alone more) that moves apart from the register below
    (`covariation` < MAX_MELODY_COVARIATION). A mix's riff over its chords."""
    upper, lower = registers(semitones, MELODY_FROM_MIDI)
    u, v = float(np.linalg.norm(upper)), float(np.linalg.norm(lower))
    share = u / (u + v) if u + v > 0 else 0.0
    if MELODY_SHARE[0] <= share <= MELODY_SHARE[1] and \
            covariation(upper, lower) < MAX_MELODY_COVARIATION:
        return upper
    return None
