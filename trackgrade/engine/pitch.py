"""Whether audio has pitch: what tells notes from drums in the long spectrum.

Two tests beside `tonal.pitched_share` and `tonal.sustained_low_share`:

* `comb_lines` and `second_note_power` clean the partials `pitched_share`
  counts. A drum loop repeats its kick every beat, and the kick's pitch sweep
  (~170 Hz down to its 45-60 Hz ring) then shows in a 1.5 s frame as a comb of
  lines the beat rate apart, some of which stand above their neighbours like a
  note's partial. Such lines come in pairs of equal strength a few Hz apart in
  one frame (`comb_lines`, below COMB_TOP_HZ, where the sweep lies; a bass
  note repeated every eighth draws such a pair too, around its pitch, where
  the smoothed spectrum has a bump and the sweep's has none), and what is
  left of a drum loop is one ring (the kick's, a snare's body) in a few
  frames: one note. Notes have a second one (`second_note_power`).
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
