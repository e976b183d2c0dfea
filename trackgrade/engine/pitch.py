"""Whether audio has pitch: what tells notes from drums in the long spectrum.

* `pitched_share`: the share of power in partials of notes, peaks standing
  well above the bins 6-16 away (a 0.15 s stab, a plucked bass note) on one
  tuning grid; `sustained_low_share`: steady sub partials standing alone (a
  held sub, a wobble's fundamental). `tonal.measure_tonality` weighs them
  against MIN_PITCHED_SHARE and MIN_SUSTAINED_LOW.
* `comb_lines` and `second_note_power` clean the partials `pitched_share`
  counts. A drum loop repeats its kick every beat, and the kick's pitch sweep
  (~170 Hz down to its 45-60 Hz ring) then shows in a 1.5 s frame as a comb of
  lines the beat rate apart, some of which stand above their neighbours like a
  note's partial. Such lines come in pairs of equal strength a few Hz apart in
  one frame (`comb_lines`, below COMB_TOP_HZ, where the sweep lies; a bass
  note repeated every eighth draws such a pair too, around its pitch, where
  the smoothed spectrum has a bump and the sweep's has none), and what is
  left of a drum loop is one ring (the kick's, a snare's body) in a few
  frames: one note. Notes have a second one (`second_note_power`), or a
  fundamental standing alone an octave below (`fundamental_lines`: a wobble
  whose filter lets one harmonic stand over a kick's comb).
* `note_rise_db`: a bass line under drums moves between notes, a drum loop
  repeats. Per frame and semitone of the bass register (C1-B3 fundamentals on
  the tuned grid), the power smoothed over +-3 Hz (`bass.smoothed_at`, so a
  short note is one bump) is compared with the clip's median frame, less the
  frame's overall change (a louder bar, a fill) and less the change beside it
  on either side (a quarter tone off, and at least the smoothing's +-3 Hz,
  which spans two semitones at 40 Hz): a note that comes and goes rises at
  its semitone only. A semitone's rise is its mean over the RISE_TOP_SHARE of
  frames where it rises most (the largest one in a clip under 20 frames; a
  noise's largest grows with the number of frames, this mean does not). The
  score is the rise of the second-best semitone (a bass line has several
  notes; one ring that comes and goes, a snare in a half-time bar, is one)
  above the upper quartile of all semitones' rises: noise rises at every
  semitone alike, so its score is the spread of its fluctuation, not its
  size. Drums repeat and score low. A root the bass holds in most frames does
  not rise: a bass line that never moves is left to the other rules.
* `low_hold`: a sub bass under a kick that covers its notes in the long
  spectrum still fills the gaps between the kicks. In short frames
  (HOLD_FRAME_S, of the audio decimated to about HOLD_RATE_HZ) the power of
  the HOLD_BAND_HZ register in the quiet moments (its HOLD_FLOOR_PERCENTILES
  low one) stays within a few dB of the loud ones, while a kick's ring has
  decayed (drum loops: 10 dB and more below). Noise also fills the gaps, but
  with no tone: in the quiet frames a tone's bin stands HOLD_PEAK above the
  bins HOLD_SIDE_BINS away on both sides, past its main lobe (against the
  register's mean, brown noise's slope passed). A held low tone that never
  moves (an 808 kick's long ring, a loop's steady sub) fills the gaps too, so
  the rule asks for a line: the quiet frames' strongest bin lies MOVE_HZ off
  its most common place in MIN_HOLD_MOVES of them. A wobble that sits on one
  note is therefore not caught here. Clips over HOLD_MAX_S are read in
  HOLD_EXCERPTS parts.
"""

from __future__ import annotations

import numpy as np

from trackgrade.engine.bass import SMOOTH_HZ, smoothed_at
from trackgrade.engine.frames import Spectrogram

COMB_TOP_HZ = 200.0            # comb lines are looked for below this (a kick's sweep)
COMB_SPACING_HZ = (1.5, 12.0)  # ... a partial with another this far away in its frame
COMB_EQUAL_DB = 2.0            # ... within this much of its power is a comb line
COMB_NEIGHBOURS = 3            # partials compared on each side (in frequency order)
COMB_NOTE_DB = 3.0             # a pair whose midpoint stands this far above the semitones
                               # on either side (smoothed power) straddles a repeated note
RISE_MIDI = (24, 72)           # semitones whose change makes a frame's overall change
RISE_NOTES = (24, 60)          # ... and the fundamentals scored: C1-B3
MIN_RISE_FRAMES = 3            # fewer whole frames than this: no rise is measured
RISE_TOP_SHARE = 0.1           # a note's rise: its mean over this share of the frames where it
                               # rises most (at least one), so noise's does not grow with length
RISE_FLOOR_PERCENTILE = 75     # the rise is measured above this percentile of the semitones'
HOLD_RATE_HZ = 2000.0          # low_hold reads the audio decimated to about this rate
HOLD_FRAME_S = 0.186           # ... in frames this long (5.4 Hz apart)
HOLD_HOP_S = 0.046             # ... this far apart
HOLD_BAND_HZ = (30.0, 150.0)   # ... in this register (a kick's ring, a sub bass)
MIN_HOLD_FRAMES = 8            # fewer frames than this: nothing is held
HOLD_MAX_S = 40.0              # longer clips are read in HOLD_EXCERPTS parts of this much in all
HOLD_EXCERPTS = 4
HOLD_FLOOR_PERCENTILES = (20, 90)   # the register's quiet moments against its loud ones
HOLD_QUIET_PERCENTILE = 30     # frames at or under this percentile are the quiet ones
HOLD_SIDE_BINS = (3, 4)        # a tone's main lobe ends 2 bins away (Hann); noise has no lobe
MOVE_HZ = 10.0                 # the quiet frames' strongest bin this far off its usual place moved
MIN_HOLD_FLOOR_DB = -9.0       # a held low line: quiet moments at most this far under the loud ones
MIN_HOLD_PEAK = 10.0           # ... a bin this many times the bins HOLD_SIDE_BINS away
MIN_HOLD_MOVES = 0.1           # ... and moving in at least this share of the quiet frames

# what counts as the partials of notes (pitched_share, sustained_low_share)
TONAL_MIN_HZ = 100.0          # partials of notes from here up (below: pure sub tones, tuned kicks)
PITCHED_OFFSETS = ((-8, -6, 6, 8), (-16, -12, 12, 16))   # bins (0.67 Hz at 44.1 kHz)
PITCHED_FACTOR = 8.0
MIN_PITCHED_SHARE = 0.006     # share of power in partials of notes (pitched_share)
MIN_PITCHED_PEAKS = 3         # ... counted from this many partials (over all frames) up
MIN_COHERENCE = 0.2           # ... lying on one tuning grid (_share_of_notes)
SECOND_NOTE_SHARE = 0.1       # ... the second note's power at least this times MIN_PITCHED_SHARE
MIN_NOTE_RISE_DB = 5.0        # a bass-register note coming and going this much (note_rise_db)
LOW_MIN_HZ = 25.0
LOW_ALONE_BINS = (5, 18)      # a steady sub partial has no line this many bins away (3-12 Hz)
LOW_ALONE_FACTOR = 4.0        # ... within a quarter of its power
MIN_SUSTAINED_LOW = 0.005     # share of power in steady sub partials (sustained_low_share)


def pitched_share(spec: Spectrogram, frame: np.ndarray, freq: np.ndarray,
                  power: np.ndarray, band: tuple[int, int]) -> float:
    """Share of the power in `band` (bins from TONAL_MIN_HZ to the chroma's
    top) in the peaks (`frame`, `freq`, `power`: `tonal._peaks`) that stand
    PITCHED_FACTOR times above the sum of the bins 6-8 or 12-16 away on both
    sides: partials of notes from ~0.15 s up (a stab, a plucked bass note),
    whose main lobe the +-3-4 bin test of `tonal._peaks` takes for a slope,
    while noise and the comb a drum loop repeats at the beat rate stay under
    it. Lines of that comb that still stand (`comb_lines`) are dropped, a pair
    around a repeated note counts at the note; the rest count when they hold
    two notes (the second's power at least SECOND_NOTE_SHARE of the share's
    threshold: what is left of a drum loop is one ring; a lone line an
    octave below a partial, `fundamental_lines`, is its note's fundamental
    and counts as a second) and at least
    MIN_PITCHED_PEAKS partials (`_share_of_notes`)."""
    lo, hi = band
    total = float(spec.power[:, lo:hi].sum(dtype=np.float64))
    if total <= 0 or freq.size == 0:
        return 0.0
    upper = freq >= TONAL_MIN_HZ
    frame, power = frame[upper], power[upper]
    k = np.rint(freq[upper] * spec.n_fft / spec.sample_rate).astype(np.intp)
    last = spec.power.shape[1] - 1
    stands = np.zeros(power.size, dtype=bool)
    for offsets in PITCHED_OFFSETS:
        # the nearest offset alone rules most peaks out before the sum is taken
        todo = np.flatnonzero(~stands)
        nearest = spec.power[frame[todo], np.clip(k[todo] + offsets[-1], 0, last)]
        todo = todo[power[todo] > PITCHED_FACTOR * nearest]
        neigh = sum(spec.power[frame[todo], np.clip(k[todo] + o, 0, last)] for o in offsets)
        stands[todo] = power[todo] > PITCHED_FACTOR * neigh
    comb, freq = comb_lines(spec, frame[stands], freq[upper][stands], power[stands])
    frame, freq, power = frame[stands][~comb], freq[~comb], power[stands][~comb]
    floor = SECOND_NOTE_SHARE * MIN_PITCHED_SHARE * total
    if second_note_power(freq, power) < floor:
        below = fundamental_lines(spec, frame, freq)      # read only for one note
        heard = below > 0
        if second_note_power(np.concatenate([freq, 0.5 * freq[heard]]),
                             np.concatenate([power, below[heard]])) < floor:
            return 0.0
    return _share_of_notes(freq, power, total)


def fundamental_lines(spec: Spectrogram, frame: np.ndarray, freq: np.ndarray) -> np.ndarray:
    """(n,) the power of the line an octave below each partial (`freq` in
    its `frame`), 0 where there is none: a peak within a bin of half the
    frequency that stands LOW_ALONE_FACTOR times above every bin
    LOW_ALONE_BINS away (`sustained_low_share`'s test of a lone line, which
    a drum loop's comb fails). A held note whose only partial above
    TONAL_MIN_HZ that stands is its second harmonic (a wobble's filter
    passes little else) then has its fundamental as a second note; a drum's
    ring is one mode, with no line an octave below it."""
    out = np.zeros(freq.size)
    if freq.size == 0:
        return out
    p = spec.power
    last = p.shape[1] - 1
    near, far = LOW_ALONE_BINS
    k = np.rint(0.5 * freq * spec.n_fft / spec.sample_rate).astype(np.intp)
    around = p[frame[:, None], np.clip(k[:, None] + np.arange(-1, 2), 0, last)]
    j = k - 1 + np.argmax(around, axis=1)
    value = p[frame, j]
    peak = (value > p[frame, np.clip(j - 1, 0, last)]) & (value >= p[frame, np.clip(j + 1, 0, last)])
    offsets = np.concatenate([np.arange(-far, -near + 1), np.arange(near, far + 1)])
    others = p[frame[:, None], np.clip(j[:, None] + offsets, 0, last)].max(axis=1)
    alone = peak & (value > LOW_ALONE_FACTOR * others)
    out[alone] = value[alone]
    return out


def sustained_low_share(spec: Spectrogram, top: int) -> float:
    """Share of the power from LOW_MIN_HZ up to bin `top` (the chroma's top)
    in steady sub partials: peaks between LOW_MIN_HZ and TONAL_MIN_HZ that
    stand PITCHED_FACTOR times above the sum of the bins 3 and 4 away on both
    sides and LOW_ALONE_FACTOR times above any bin 5-18 away (a held sub or a
    wobble's fundamental; a kick's decaying ring is wider, and a click train's
    or a drum loop's comb has a line every beat-rate Hz). Fewer than
    MIN_PITCHED_PEAKS such peaks count as none."""
    bin_hz = spec.sample_rate / spec.n_fft
    lo, hi = int(np.ceil(LOW_MIN_HZ / bin_hz)), int(np.ceil(TONAL_MIN_HZ / bin_hz))
    p = spec.power
    if lo < LOW_ALONE_BINS[1] or hi + LOW_ALONE_BINS[1] >= p.shape[1]:
        return 0.0
    mid = p[:, lo:hi]
    peak = (mid > p[:, lo - 1:hi - 1]) & (mid >= p[:, lo + 1:hi + 1])
    neigh = p[:, lo - 4:hi - 4] + p[:, lo - 3:hi - 3] + p[:, lo + 3:hi + 3] + p[:, lo + 4:hi + 4]
    # alone in its neighbourhood: no line within LOW_ALONE_BINS as strong (a
    # click train's or a drum loop's comb has one every beat-rate Hz)
    frame, k = np.nonzero(peak & (mid > PITCHED_FACTOR * neigh))
    near, far = LOW_ALONE_BINS
    offsets = np.concatenate([np.arange(-far, -near + 1), np.arange(near, far + 1)])
    value = mid[frame, k]
    others = p[frame[:, None], lo + k[:, None] + offsets].max(axis=1) if k.size else value
    alone = value > LOW_ALONE_FACTOR * others
    total = float(p[:, lo:top].sum(dtype=np.float64))
    if total <= 0:
        return 0.0
    return _share_of_notes((lo + k[alone]) * bin_hz, value[alone].astype(np.float64), total)


def _share_of_notes(freq: np.ndarray, power: np.ndarray, total: float) -> float:
    """`power`'s share of `total` when its peaks are notes: at least
    MIN_PITCHED_PEAKS of them (not a lone ring: a tom, a snare's body) on a
    common tuning grid (the magnitude-weighted resultant of their semitone
    phases at least MIN_COHERENCE; the lines of a click train or a drum loop,
    spaced by the beat rate, fall anywhere between the semitones)."""
    if freq.size < MIN_PITCHED_PEAKS:
        return 0.0
    w = np.sqrt(power)
    phase = np.exp(2j * np.pi * 12.0 * np.log2(freq / 440.0))
    if abs(np.sum(w * phase)) < MIN_COHERENCE * w.sum():
        return 0.0
    return float(power.sum() / total)


def comb_lines(spec: Spectrogram, frame: np.ndarray, freq: np.ndarray,
               power: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(n,) bool: partials under COMB_TOP_HZ with another partial of the same
    frame COMB_SPACING_HZ away whose power is within COMB_EQUAL_DB of theirs
    (the lines a rhythm's repetition draws), unless the pair straddles a note:
    the power smoothed over +-3 Hz at its midpoint stands COMB_NOTE_DB above
    the smoothed power a semitone away on both sides. A note repeated every
    eighth draws such a pair around its pitch, off the semitone grid by the
    repetition rate; a kick's sweep has no pitch. Also (n,) the partials'
    frequencies with each such pair moved to its note (the midpoint)."""
    out = np.zeros(freq.size, dtype=bool)
    low = np.flatnonzero(freq < COMB_TOP_HZ)
    if low.size < 2:
        return out, freq
    order = low[np.lexsort((freq[low], frame[low]))]
    fr, f, db = frame[order], freq[order], 10.0 * np.log10(np.maximum(power[order], 1e-30))
    lo, hi = COMB_SPACING_HZ
    firsts, seconds = [], []
    for shift in range(1, min(COMB_NEIGHBOURS, f.size - 1) + 1):
        gap = f[shift:] - f[:-shift]
        pair = np.flatnonzero((fr[:-shift] == fr[shift:]) & (gap > lo) & (gap < hi)
                              & (np.abs(db[:-shift] - db[shift:]) < COMB_EQUAL_DB))
        firsts.append(pair)
        seconds.append(pair + shift)
    a, b = np.concatenate(firsts), np.concatenate(seconds)
    if a.size == 0:
        return out, freq
    mid = 0.5 * (f[a] + f[b])
    around = smoothed_at(spec, mid[:, None] * 2.0 ** (np.array([-1.0, 0.0, 1.0]) / 12.0))
    around = around[fr[a], np.arange(a.size)]
    note = around[:, 1] > 10 ** (COMB_NOTE_DB / 10) * np.maximum(around[:, 0], around[:, 2])
    out[order[a[~note]]] = True
    out[order[b[~note]]] = True
    moved = freq.copy()
    moved[order[a[note]]] = mid[note]
    moved[order[b[note]]] = mid[note]
    return out, moved


def second_note_power(freq: np.ndarray, power: np.ndarray) -> float:
    """Power of the second-strongest note among partials (their power summed
    per equal-tempered semitone over all frames); 0 for fewer than two notes."""
    if freq.size == 0:
        return 0.0
    semis = np.rint(12.0 * np.log2(freq / 440.0)).astype(np.intp)
    per_note = np.bincount(semis - semis.min(), weights=power)
    return float(np.sort(per_note)[-2]) if per_note.size > 1 else 0.0


def note_rise_db(spec: Spectrogram, tuning_cents: float) -> float:
    """Rise in dB of the second-best semitone of the bass register over the
    clip's median frame, above the RISE_FLOOR_PERCENTILE of all semitones'
    (see the module's docstring); 0 under MIN_RISE_FRAMES whole frames."""
    whole = spec.whole_frames()
    if whole.power.shape[0] < MIN_RISE_FRAMES:
        return 0.0
    midi = np.arange(*RISE_MIDI) + tuning_cents / 100.0
    note = 440.0 * 2.0 ** ((midi - 69) / 12)
    quarter = 2.0 ** (0.5 / 12)
    beside = np.stack([np.minimum(note / quarter, note - SMOOTH_HZ), note,
                       np.maximum(note * quarter, note + SMOOTH_HZ)], axis=1)
    power = smoothed_at(whole, beside).astype(np.float64) + 1e-30       # (frames, notes, 3)
    rise = 10.0 * np.log10(power / np.median(power, axis=0))
    rise -= np.median(rise[:, :, 1], axis=1)[:, None, None]
    cells = rise[:, :, 1] - np.maximum(rise[:, :, 0], rise[:, :, 2])
    cells = cells[:, :RISE_NOTES[1] - RISE_NOTES[0]]                    # (frames, C1..B3)
    top = max(1, int(RISE_TOP_SHARE * cells.shape[0]))
    notes = np.partition(cells, cells.shape[0] - top, axis=0)[-top:].mean(axis=0)
    return float(np.sort(notes)[-2] - np.percentile(notes, RISE_FLOOR_PERCENTILE))


def _hold_excerpts(samples: np.ndarray, sample_rate: int) -> list[np.ndarray]:
    """The whole clip, or HOLD_EXCERPTS evenly spaced parts of HOLD_MAX_S in
    all when it is longer (the cost stays that of a short clip)."""
    if samples.shape[0] <= HOLD_MAX_S * sample_rate:
        return [samples]
    length = int(HOLD_MAX_S / HOLD_EXCERPTS * sample_rate)
    starts = np.linspace(0, samples.shape[0] - length, HOLD_EXCERPTS).astype(np.intp)
    return [samples[s:s + length] for s in starts]


def _hold_frames(samples: np.ndarray, step: int, n: int, hop: int) -> np.ndarray:
    """(frames, n) Hann frames of the mono mix decimated by `step`."""
    from scipy.signal import resample_poly

    mono = (samples if samples.ndim == 1 else samples.sum(axis=1, dtype=np.float64)
            / samples.shape[1]).astype(np.float64)
    x = resample_poly(mono, 1, step) if step > 1 else mono
    if x.size < n:
        return np.zeros((0, n))
    return np.lib.stride_tricks.sliding_window_view(x, n)[::hop] * np.hanning(n)


def low_hold(samples: np.ndarray, sample_rate: int) -> tuple[float, float, float]:
    """The low register between the kicks (see the module's docstring), from
    samples ((n,) or (n, channels)): the HOLD_BAND_HZ power's low percentile
    over short frames against its high one in dB, the median over the quiet
    frames of their most prominent bin's power over the mean of the bins
    HOLD_SIDE_BINS away on both sides, and the share
    of quiet frames whose strongest bin moved MOVE_HZ off the most common
    one. (-inf, 0, 0) for silence or under MIN_HOLD_FRAMES frames."""
    step = max(1, int(sample_rate // HOLD_RATE_HZ))
    rate = sample_rate / step
    n, hop = int(round(HOLD_FRAME_S * rate)), int(round(HOLD_HOP_S * rate))
    frames = np.concatenate([_hold_frames(part, step, n, hop)
                             for part in _hold_excerpts(samples, sample_rate)])
    if frames.shape[0] < MIN_HOLD_FRAMES:
        return float("-inf"), 0.0, 0.0
    freqs = np.fft.rfftfreq(n, 1.0 / rate)
    band = np.flatnonzero((freqs >= HOLD_BAND_HZ[0]) & (freqs < HOLD_BAND_HZ[1]))
    reach = max(HOLD_SIDE_BINS)
    wide = np.abs(np.fft.rfft(frames, axis=1)[:, band[0] - reach:band[-1] + reach + 1]) ** 2
    low = wide[:, reach:-reach]
    energy = low.sum(axis=1)
    quiet_db, loud_db = np.percentile(energy, HOLD_FLOOR_PERCENTILES)
    if not loud_db > 0:
        return float("-inf"), 0.0, 0.0
    floor_db = 10.0 * np.log10(max(quiet_db, 1e-30) / loud_db)
    quiet = energy <= np.percentile(energy, HOLD_QUIET_PERCENTILE)
    q, m = wide[quiet], band.size
    sides = sum(q[:, reach + o:reach + o + m] + q[:, reach - o:reach - o + m]
                for o in HOLD_SIDE_BINS)
    contrast = q[:, reach:reach + m] / np.maximum(sides / (2 * len(HOLD_SIDE_BINS)), 1e-30)
    peak = float(np.median(contrast.max(axis=1)))
    strongest = low[quiet].argmax(axis=1)
    where = freqs[band][strongest]
    usual = freqs[band][np.bincount(strongest).argmax()]
    return float(floor_db), peak, float(np.mean(np.abs(where - usual) >= MOVE_HZ))


def holds_low_line(samples: np.ndarray, sample_rate: int) -> bool:
    """A bass line that fills the gaps between the kicks (`low_hold`)."""
    floor_db, peak, moves = low_hold(samples, sample_rate)
    return floor_db > MIN_HOLD_FLOOR_DB and peak > MIN_HOLD_PEAK and moves >= MIN_HOLD_MOVES
