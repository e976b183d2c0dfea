"""Key detection from the long spectrum.

Chroma: an HPCP-like pitch-class profile built from the spectral peaks of each
~1.5 s frame of `frames.long_spectrum` between 50 Hz and 3.5 kHz. Each peak's
frequency is refined by parabolic interpolation, mapped to a pitch in 10-cent
steps, and also credited (with decaying weight) to the pitches of which it
could be the 2nd..4th harmonic. The reference tuning is the circular mean of
the peaks' deviations from equal temperament; the fine profile is folded to
12 pitch classes with a cosine window around the tuned semitone centres.
Frames are normalised to unit energy (L2) and averaged; the zero-padded frame over
a track's last samples counts for the share of its window that holds them.

Key: correlation of `key_chroma` with the 24 rotations of a major and a
minor profile (`key_profiles`: Faraldo et al. 2016 "EDM-A", blended with Temperley's), the
best one wins; beside it the same chroma is read with Temperley's profiles
alone, and the more decisive reading (the larger margin between its best
and second-best key) is the key (`decisive_correlations`, issue 27), or
its relative when the frame where the loop starts on its tonic chord (the
first that fits a key, past a drum intro: `start_index`) fits the relative
better and a melody over the chords does not keep the reading, then its
subdominant when the start fits that and the clip nearly does (`loop_start_mode`);
where a bass line or a wobble carries the clip, its dominant the same way, and
where one alone fills it, the tonic is the bass's first note (`bass_line_key`).
`key_chroma` is the textbook constant-Q chroma done on our own spectrum
(`semitones`: the long spectrum on a semitone grid from B0, 31 Hz, to B7),
so a bass line's notes count as much as a chord's; the peak chroma above
(from 50 Hz, with subharmonic credit) only decides whether there is pitch
and is the reported `chroma` (issue 27, benchmarks/results/key.md).

No key (`key=None`) only without pitch: drums only, noise, silence, click
trains. Pitch is any of: partials of notes (`pitch.pitched_share`: peaks that
stand above the bins 6-16 away, so a 0.15 s stab or a plucked bass note counts,
on one tuning grid), steady sub partials (`pitch.sustained_low_share`: a held
sub, a wobble's fundamental), or sustained prominent peaks with a chroma that fits a
key (the earlier rule), or notes of the bass register that come and go
between frames where drums repeat (`pitch.note_rise_db`: a bass line under
drums), or, from the samples, a low line that fills the gaps between kicks and
moves (`pitch.holds_low_line`: a sub bass under drums). Partials of a drum
loop's comb and a lone ring are not notes
(`pitch.comb_lines`, `pitch.second_note_power`). A single held note keeps its
note as tonic, with a confidence scaled down by the chroma's spread.
"""

from __future__ import annotations

from functools import lru_cache
from typing import NamedTuple

import numpy as np

from trackgrade.engine.features import Key, Tonality
from trackgrade.engine.frames import Spectrogram
from trackgrade.engine.key_profiles import (decisive_correlations, dominant_of, key_correlations,
                                            key_templates, relative_of, subdominant_of, zscore)
from trackgrade.engine.pitch import (MIN_NOTE_RISE_DB, MIN_PITCHED_SHARE, MIN_SUSTAINED_LOW,
                                     TONAL_MIN_HZ, holds_low_line, note_rise_db, pitched_share,
                                     sustained_low_share)
from trackgrade.engine.semitones import (bass_note, bass_share, fold_octaves, melody_frames,
                                         semitone_magnitude)
from trackgrade.musical_keys import SCALES, TONICS, camelot

PITCH_CLASSES = TONICS

F_MIN_HZ = 50.0
F_MAX_HZ = 3500.0
FINE_PER_SEMITONE = 10
N_FINE = 12 * FINE_PER_SEMITONE
HARMONICS = 4
HARMONIC_SLOPE = 0.6
PEAK_FLOOR_DB = 30.0          # peaks more than this below the frame's maximum are ignored
WEIGHT_EXPONENT = 0.5         # peak weight = power ** this (0.5: magnitude)
MIN_TONALNESS = 0.01          # share of 100 Hz-3.5 kHz power in prominent peaks
MIN_CORRELATION = 0.6
ALT_TEMPERATURE = 0.05        # correlation behind the best per e-fold of an alternative's confidence
MIN_START_SPREAD = 5.0        # the first frame decides the mode only with this many pitch classes
MELODY_MARGIN = 0.2           # a melody keeps the reading against the start when it fits it this much better
FIFTH_WITHIN = 0.1            # the start turns a reading a fifth down (or up) only if the clip fits that this nearly
DOMINANT_BASS_SHARE = 0.2     # ... a fifth up only where the bass register holds this share (`bass_share`),
DOMINANT_START_MARGIN = 0.1   # ... and the start fits the key a fifth up by this much more
BASS_LINE_SHARE = 0.6         # a bass register holding this share: the bass's first note is the tonic


@lru_cache(maxsize=16)
def _bin_range(n_fft: int, sample_rate: int) -> tuple[int, int]:
    """First bin >= F_MIN_HZ and first bin above min(F_MAX_HZ, 0.45 fs)."""
    bin_hz = sample_rate / n_fft
    top = min(F_MAX_HZ, 0.45 * sample_rate)
    return int(np.ceil(F_MIN_HZ / bin_hz)), int(np.floor(top / bin_hz)) + 1


def tonal_band(spec: Spectrogram) -> tuple[int, int]:
    """Bins of TONAL_MIN_HZ up to the chroma's top: where notes' partials are counted."""
    lo, hi = _bin_range(spec.n_fft, spec.sample_rate)
    return max(lo, int(np.ceil(TONAL_MIN_HZ * spec.n_fft / spec.sample_rate))), hi


def _peaks(spec: Spectrogram) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Spectral peaks of every frame in F_MIN_HZ..F_MAX_HZ within PEAK_FLOOR_DB
    of the frame's maximum: (frame, freq Hz, power, prominent), one entry per peak."""
    lo, hi = _bin_range(spec.n_fft, spec.sample_rate)
    p = spec.power[:, lo - 1:hi + 1]
    mid = p[:, 1:-1]
    floor = mid.max(axis=1, keepdims=True) * np.float32(10 ** (-PEAK_FLOOR_DB / 10))
    is_peak = mid > p[:, :-2]
    is_peak &= mid >= p[:, 2:]
    is_peak &= mid > np.maximum(floor, np.float32(1e-30))
    frame, k = np.nonzero(is_peak)
    a = p[frame, k].astype(np.float64)
    b = mid[frame, k].astype(np.float64)
    c = p[frame, k + 2].astype(np.float64)
    la, lb, lc = np.log(a + 1e-30), np.log(b), np.log(c + 1e-30)
    den = la - 2 * lb + lc
    delta = np.where(den < 0, 0.5 * (la - lc) / np.where(den < 0, den, -1.0), 0.0)
    delta = np.clip(delta, -0.5, 0.5)
    freq = (lo + k + delta) * (spec.sample_rate / spec.n_fft)
    # Prominence: a tonal peak stands well above the bins 3 and 4 away on both
    # sides (a steady sinusoid's Hann main lobe is +-2 bins wide).
    last = spec.power.shape[1] - 1
    neigh = np.zeros_like(b)
    for off in (-4, -3, 3, 4):
        neigh += spec.power[frame, np.clip(lo + k + off, 0, last)]
    prominent = b > 2.0 * neigh
    return frame, freq, b, prominent


def _fine_profile(frame: np.ndarray, semis: np.ndarray, weight: np.ndarray,
                  n_frames: int) -> np.ndarray:
    """(frames, 120) pitch-class histogram in 10-cent steps (index 0 = C),
    linear interpolation between neighbouring steps."""
    pos = np.mod((semis + 9.0) * FINE_PER_SEMITONE, N_FINE)
    i0 = np.floor(pos).astype(np.intp)
    frac = pos - i0
    base = frame * N_FINE
    out = np.bincount(base + i0, weights=weight * (1 - frac), minlength=n_frames * N_FINE)
    out += np.bincount(base + (i0 + 1) % N_FINE, weights=weight * frac,
                       minlength=n_frames * N_FINE)
    return out.reshape(n_frames, N_FINE)


def _tuning_steps(fine: np.ndarray) -> float:
    """Reference-tuning offset in 10-cent steps (-5..5) from the summed fine profile."""
    folded = fine.reshape(-1, 12, FINE_PER_SEMITONE).sum(axis=(0, 1))
    angle = np.angle(np.sum(folded * np.exp(2j * np.pi * np.arange(FINE_PER_SEMITONE)
                                            / FINE_PER_SEMITONE)))
    return float(angle / (2 * np.pi) * FINE_PER_SEMITONE)


def _fold(fine: np.ndarray, tuning: float) -> np.ndarray:
    """(frames, 120) -> (frames, 12) with a cosine window of +-1 semitone
    centred on each tuned semitone."""
    steps = np.arange(N_FINE)
    centres = np.arange(12) * FINE_PER_SEMITONE + tuning
    d = (steps[:, None] - centres[None, :] + N_FINE / 2) % N_FINE - N_FINE / 2
    d = d / FINE_PER_SEMITONE
    w = np.where(np.abs(d) < 1.0, np.cos(0.5 * np.pi * d) ** 2, 0.0)
    return fine @ w


def chroma_frames(spec: Spectrogram) -> tuple[np.ndarray, float, float, float]:
    """Per-frame chroma (frames, 12), tuning offset in cents, tonalness
    (share of the 100 Hz-3.5 kHz power in prominent peaks, 0..1) and the
    share in partials of notes (`pitch.pitched_share`)."""
    n = spec.power.shape[0]
    frame, freq, power, prominent = _peaks(spec)
    if frame.size == 0:
        return np.zeros((n, 12)), 0.0, 0.0, 0.0
    semis = 12.0 * np.log2(freq / 440.0)
    mag = power ** WEIGHT_EXPONENT
    fine = _fine_profile(frame, semis, mag, n)
    tuning = _tuning_steps(fine)
    for h in range(2, HARMONICS + 1):
        keep = freq / h >= F_MIN_HZ
        fine += _fine_profile(frame[keep], semis[keep] - 12.0 * np.log2(h),
                              mag[keep] * HARMONIC_SLOPE ** (h - 1), n)
    chroma = _fold(fine, tuning)
    lo, hi = tonal_band(spec)
    total = float(spec.power[:, lo:hi].sum(dtype=np.float64))
    tonal = prominent & (freq >= TONAL_MIN_HZ)
    tonalness = float(power[tonal].sum() / total) if total > 0 else 0.0
    return (chroma, tuning * 100.0 / FINE_PER_SEMITONE, tonalness,
            pitched_share(spec, frame, freq, power, (lo, hi)))


def _unit_max(x: np.ndarray) -> np.ndarray:
    m = x.max(axis=-1, keepdims=True)
    return x / np.where(m > 0, m, 1.0)


def _unit_energy(x: np.ndarray) -> np.ndarray:
    """Each row scaled to unit Euclidean norm (zeros stay zeros): a frame counts
    by the shape of its pitch content, and a frame that one loud note fills no
    longer leaves its other notes near zero as unit maximum did (a melody's
    passing notes, a chord's upper voices); see benchmarks/RESULTS.md."""
    n = np.linalg.norm(x, axis=-1, keepdims=True)
    return x / np.where(n > 0, n, 1.0)


def mean_chroma(spec: Spectrogram) -> tuple[np.ndarray, float]:
    """Mean chroma (12,), C first, unit max (zeros for silence), and tonalness.
    Frames count alike (each at unit energy), save a zero-padded tail frame,
    which counts for the share of its window over samples."""
    chroma, _, tonalness, _ = chroma_frames(spec)
    return _averaged(spec, chroma), tonalness


def _averaged(spec: Spectrogram, frames: np.ndarray) -> np.ndarray:
    """The frames' chroma (frames, 12) averaged, each frame at unit energy and
    weighted by `spec.frame_weights()`, then scaled to unit maximum."""
    return _unit_max(spec.frame_weights() @ _unit_energy(frames))


def loop_start_mode(corr: np.ndarray, first: np.ndarray, melody: np.ndarray | None = None) -> int:
    """The key read from `corr`, or its relative when the first frame's chroma
    (`first`: where a loop or phrase starts, on its tonic chord) fits the
    relative better (the blended templates); then that key, or its
    subdominant when the first frame fits that better and the whole clip
    (`corr`) nearly as well (within FIFTH_WITHIN): a minor loop that
    dwells on its VII reads as the key a fifth up. Read only when the first
    frame holds a chord's worth of pitch classes (`pitch_spread` of its energy
    >= MIN_START_SPREAD): a riff or a bass line that starts off the tonic
    does not decide it. A major loop that starts on its vi chord reads as its
    relative minor unless a `melody` over the chords (`semitones.melody_frames`,
    averaged) fits the reading better than the relative by MELODY_MARGIN: its
    riff, on the major key's degrees, tells the two apart. Issue 27's "minor
    or relative major"; benchmarks/results/key.md has each gain and cost. The
    confidence stays that of the templates' best key."""
    best = int(np.argmax(corr))
    if pitch_spread(np.square(first)) < MIN_START_SPREAD:
        return best
    relative = relative_of(best)
    start = key_correlations(first)
    tune = key_correlations(melody) if melody is not None else None
    kept = tune is not None and tune[best] - tune[relative] > MELODY_MARGIN
    key = relative if start[relative] > start[best] and not kept else best
    below = subdominant_of(key)
    return below if start[below] > start[key] and corr[below] > corr[key] - FIFTH_WITHIN else key


def bass_line_key(corr: np.ndarray, key: int, first: np.ndarray, share: float,
                  start_note: int | None = None) -> int:
    """Where the bass register holds BASS_LINE_SHARE of the semitones'
    magnitude (a bass line or a wobble alone, `semitones.bass_share`), the
    bass's note in the first frame (`start_note`, `semitones.bass_note`) is
    the tonic, in the mode `corr` prefers: a line of roots starts its loop
    on the tonic, and the profiles alone read it as its relative, its
    subdominant or its third. Otherwise the reading `key`, or the key a
    fifth up (`dominant_of`) where a bass line or a wobble carries the clip
    (the semitones below C3 hold DOMINANT_BASS_SHARE of the magnitude), the
    first frame (a chord's worth of pitch classes) fits that key better by
    DOMINANT_START_MARGIN and the whole clip (`corr`) nearly as well (within
    FIFTH_WITHIN). A root line alone (B G E F#) fits the key a fifth below
    (E minor's v III i II) as well as its own (B minor's i VI iv v); the
    line starts on its tonic. Ungated, the turn costs guitar and melody
    loops, whose first frame fits the key a fifth up too; the bass
    register's share keeps it to bass lines and wobbles
    (benchmarks/results/key.md, round 6)."""
    if start_note is not None and share >= BASS_LINE_SHARE:
        return start_note if corr[start_note] >= corr[start_note + 12] else start_note + 12
    if share < DOMINANT_BASS_SHARE or pitch_spread(np.square(first)) < MIN_START_SPREAD:
        return key
    up, start = dominant_of(key), key_correlations(first)
    return up if start[up] > start[key] + DOMINANT_START_MARGIN and corr[up] > corr[key] - FIFTH_WITHIN \
        else key


def _key_of(index: int, confidence: float) -> Key:
    tonic, scale = PITCH_CLASSES[index % 12], SCALES[index // 12]
    return Key(tonic=tonic, scale=scale, camelot=camelot(tonic, scale),
               confidence=round(float(np.clip(confidence, 0.0, 1.0)), 3))


def key_alternatives(corr: np.ndarray, confidence: float, n: int = 2,
                     reading: int | None = None) -> tuple[Key, ...]:
    """The `n` next-best keys after the reading (default: the best one).
    Confidence: the reading's `confidence` times exp(-(correlation behind
    the best) / ALT_TEMPERATURE), so a near tie is nearly as likely and 0.1
    behind is about a seventh of it (capped at the reading's)."""
    order = [int(j) for j in np.argsort(corr)[::-1]]
    reading = order[0] if reading is None else reading
    best = float(corr[order[0]])
    return tuple(_key_of(j, confidence * min(1.0, float(np.exp(-(best - corr[j]) / ALT_TEMPERATURE))))
                 for j in order if j != reading)[:n]


def pitch_spread(chroma: np.ndarray) -> float:
    """Effective number of pitch classes in a chroma (exp of its entropy):
    1 for one pitch class, 12 for all alike. A key needs a scale's worth."""
    p = np.asarray(chroma, dtype=np.float64)
    total = float(p.sum())
    if total <= 0:
        return 0.0
    p = p[p > 0] / total
    return float(np.exp(-(p * np.log(p)).sum()))


def start_index(frames: np.ndarray) -> int:
    """The index in `frames` (each at unit energy) of the frame where the
    music starts: when most of them fit a key (their best correlation with
    the key templates at least MIN_CORRELATION, as pitch must fit a key),
    the first that does; otherwise the first frame. A track that opens on
    drums alone, a riser or silence starts its loop where the harmony enters:
    a drum intro's near-flat chroma (the README demo's four bars of kick and
    hats) says nothing about the mode."""
    fit = (key_templates() @ zscore(frames).T).max(axis=0)
    if not np.median(fit) >= MIN_CORRELATION:
        return 0
    return int(np.argmax(fit >= MIN_CORRELATION))


class KeyChroma(NamedTuple):
    chroma: np.ndarray               # (12,) the whole clip's, unit maximum
    first: np.ndarray                # (12,) the start frame's, unit energy
    melody: np.ndarray | None        # (12,) a melody's over the chords, averaged, or None
    bass_share: float                # the semitones' magnitude below C3 over all (`semitones.bass_share`)
    start_note: int                  # the start frame's bass note, a pitch class (`semitones.bass_note`)


def key_chroma(spec: Spectrogram) -> KeyChroma:
    """The chroma keys are read from: the semitone magnitudes B0..B7 of
    the long spectrum (`semitones`, on the A440 grid) folded to pitch
    classes, each frame at unit energy, averaged by `spec.frame_weights()`,
    unit maximum; the start frame's at unit energy (`start_index`); and a
    melody's over the chords (`semitones.melody_frames`) averaged alike;
    the bass register's share of the magnitude (`semitones.bass_share`)
    and its note in the start frame (`semitones.bass_note`).
    The bass's register counts like any other."""
    semis = semitone_magnitude(spec, 0.0)
    frames, melody = _unit_energy(fold_octaves(semis)), melody_frames(semis)
    start = start_index(frames)
    return KeyChroma(_averaged(spec, frames), frames[start],
                     None if melody is None else _averaged(spec, _unit_energy(melody)),
                     bass_share(semis), bass_note(semis[start]))


def measure_tonality(spec: Spectrogram, samples: np.ndarray | None = None) -> Tonality:
    """Mean chroma and key (None when the audio has no pitched content).
    The key: the best of 24 correlations of `key_chroma` with the key
    templates or Temperley's, whichever is more decisive
    (`decisive_correlations`), or its relative if the first frame says so
    (`loop_start_mode`); under a bass line its first note, or else a fifth
    up (`bass_line_key`). Whether there is pitch is judged as before
    from the peaks of the long spectrum (`chroma_frames`). `samples` (the audio `spec` was
    taken from, at its rate) let a sub bass line under drums that no rule of
    the long spectrum sees have pitch (`pitch.holds_low_line`); read only
    when nothing else found pitch."""
    frames, tuning_cents, tonalness, pitched = chroma_frames(spec)
    upper = _averaged(spec, frames)
    total = upper.sum()
    out_chroma = upper / total if total > 0 else np.full(12, 1.0 / 12)
    if not total > 0:
        return Tonality(key=None, chroma=out_chroma)
    peaks_fit = float(key_correlations(upper).max()) >= MIN_CORRELATION
    has_pitch = (pitched >= MIN_PITCHED_SHARE
                 or sustained_low_share(spec, tonal_band(spec)[1]) >= MIN_SUSTAINED_LOW
                 or tonalness >= MIN_TONALNESS and peaks_fit
                 or note_rise_db(spec, tuning_cents) >= MIN_NOTE_RISE_DB
                 or samples is not None and holds_low_line(samples, spec.sample_rate))
    if not has_pitch:
        return Tonality(key=None, chroma=out_chroma)
    chroma, first, melody, share, start_note = key_chroma(spec)
    corr = decisive_correlations(chroma)
    order = np.argsort(corr)[::-1]
    best_index = bass_line_key(corr, loop_start_mode(corr, first, melody), first, share, start_note)
    best, runner_up = float(corr[order[0]]), float(corr[order[1]])
    margin = best - runner_up
    confidence = float(np.clip(best, 0.0, 1.0) * np.clip(0.5 + margin / 0.2, 0.0, 1.0))
    # one tone or a bare interval fits many keys equally: a held note keeps
    # its note as tonic, with a confidence that says how little it means
    confidence *= float(np.clip((pitch_spread(upper) - 1.5) / 2.5, 0.1, 1.0))
    key = _key_of(best_index, confidence)
    return Tonality(key=Key(tonic=key.tonic, scale=key.scale, camelot=key.camelot,
                            confidence=key.confidence,
                            alternatives=key_alternatives(corr, confidence, reading=best_index)),
                    chroma=out_chroma)
