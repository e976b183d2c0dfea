"""What the audio is made of: the cues that tell a full mix from one part
(grading/content.py turns them into `content.kind`).

Every cue comes from representations the engine already has, so they cost a
few milliseconds:

* the short STFT's drum-band sums (the reduction `engine.groove` declares:
  30-180 Hz "low", 180-2500 Hz "mid", 2.5-5 kHz "presence", 5-16 kHz "high")
  give, per frame, which registers play and how the level moves:
  `sustain_db` (the median level against the loud level: a drum loop falls
  far between its hits, a pad or a mix stays up), `attacks_per_s` (steep
  rises of the whole level), `attack_count`, `layers` (how many registers play
  at once within a few dB of their own loud level, the median over frames),
  `low_sustain_db` and `high_sustain_db` (the same median for the low
  register, and for presence + high: a bass line holds the low one, a kick
  drops away; hats and snares fall between hits, a pad holds), `peak_at` (where the loudest frame sits, 0..1)
  and `tail_db` (the last fifth's level against the loudest: a one-shot dies away),
  `rebound_db` (from the first frame within REBOUND_START_DB of the loudest,
  how far the level ever climbs back over the lowest it has fallen to since,
  floored at REBOUND_FLOOR_DB: one hit or one note only decays, ~0; a loop
  hits again, 10-40; a held sound neither falls nor climbs, a few dB) and
  `ring_share` (the share of the frames from that first attack on that stay
  within RING_DB of the loudest: a hit rings for a moment and dies, a held
  sound or a loop is heard to the end);
* the long spectrum (at most `LONG_FRAMES` of its frames) gives
  `peak_share` (per octave from 100 Hz to 3.2 kHz, the share of its power in
  its loudest 5 % of bins, averaged over the octaves that hold power:
  partials of notes concentrate power, noise and drums spread it) and
  `partials` (how many semitones from 100 Hz to 2 kHz hold a peak standing
  well over the semitone's mean within 30 dB of the frame's top: one voice
  has a few, chords and mixes many);
* the band balance gives `low_share` (sub-bass + bass, 0..1) and `spread`
  (the effective number of the seven bands, exp of their entropy);
* engine/voicing.py gives how many notes sound at once and where (the
  pitched parts' cues: `monophony`, `voices`, `pitch_midi`, `pitch_moves`
  from short frames of the audio, `semitone_peaks`, `register_midi`,
  `bass_register`, `chroma_flux`, `chroma_spread`, `octave_spread` from the
  long spectrum on the semitone grid).

Every function is pure: arrays in, numbers out.
"""

from __future__ import annotations

import numpy as np

from trackgrade.engine.features import BAND_NAMES, ContentCues
from trackgrade.engine.frames import ShortFrames, Spectrogram, segment_sums
from trackgrade.engine.groove import short_reductions as groove_reductions
from trackgrade.engine.voicing import semitone_cues, series_cues

REGISTERS = ("low", "mid", "presence", "high")
ATTACK_DB = 6.0            # a rise of the whole level this steep within ATTACK_FRAMES is an attack
ATTACK_FRAMES = 2
LAYER_DB = 12.0            # a register plays when it is within this of its own loud level
FLOOR_DB = 60.0            # frames this far under the loudest are silence (not read)
LONG_FRAMES = 48           # the long-spectrum frames the pitch cues read, evenly spaced
PITCH_FROM_HZ, PITCH_TO_HZ = 100.0, 3200.0   # the octaves the pitch cues read
PARTIALS_TO_HZ = 2000.0    # partials are counted by semitone up to here
PEAK_BINS = 0.05           # share of an octave's bins that counts as "its loudest"
OCTAVE_MIN_SHARE = 0.02    # an octave counts when it holds this share of the frame's power
PEAK_OVER_MEAN = 6.0       # a semitone holds a partial when its peak is this far over its mean
PARTIAL_DB = 30.0          # partials count down to this far under a frame's top
REBOUND_START_DB = 6.0     # the first attack: the first frame this near the loudest
REBOUND_FLOOR_DB = 40.0    # levels further under the loudest read as this (a tail's ripple is not a hit)
RING_DB = 30.0             # a sound still rings while it is within this of the loudest frame


def register_power(spec: ShortFrames) -> np.ndarray:
    """(frames, 4) power of the low, mid, presence and high registers (groove's
    reduction: no extra transform); missing registers (low sample rates) are 0."""
    starts = groove_reductions(spec.freqs)[0].starts
    seg = segment_sums(spec, starts).astype(np.float64)
    edges = np.asarray(spec.freqs)[np.asarray(starts)]
    out = np.zeros((seg.shape[0], 4))
    for i, hz in enumerate(edges):        # 30, 90 | 180 | 2500 | 5000, 16000
        col = 0 if hz < 170 else 1 if hz < 2400 else 2 if hz < 4900 else 3
        out[:, col] += seg[:, i]
    return out


def _db(x: np.ndarray, ref: float) -> np.ndarray:
    return 10.0 * np.log10(np.maximum(x, ref * 10.0 ** (-FLOOR_DB / 10.0)) / ref)


def register_sustain_db(power: np.ndarray, heard: np.ndarray) -> float:
    """The median level of one register's heard frames re its loud (P95) level, dB."""
    top = float(np.percentile(power[heard], 95)) if heard.any() else 0.0
    return float(np.median(_db(power[heard], top))) if top > 0 else -FLOOR_DB


def event_cues(level: np.ndarray) -> dict[str, float]:
    """`rebound_db` and `ring_share` (module doc) of a level curve in dB re
    its loudest frame (<= 0): after the first attack, one hit only decays."""
    after = level[int(np.argmax(level >= -REBOUND_START_DB)):]
    if not after.size:
        return {"rebound_db": 0.0, "ring_share": 1.0}
    floored = np.maximum(after, -REBOUND_FLOOR_DB)
    return {"rebound_db": float(np.max(floored - np.minimum.accumulate(floored))),
            "ring_share": float(np.mean(after > -RING_DB))}


def level_cues(reg: np.ndarray, hop_s: float) -> dict[str, float]:
    """The level cues of (frames, 4) register power (see the module doc)."""
    total = reg.sum(axis=1)
    top = float(total.max()) if total.size else 0.0
    if top <= 0 or total.size < 2:
        return {"sustain_db": -FLOOR_DB, "attacks_per_s": 0.0, "attack_count": 0.0, "layers": 0.0,
                "low_sustain_db": -FLOOR_DB, "high_sustain_db": -FLOOR_DB, "peak_at": 0.0, "tail_db": -FLOOR_DB,
                "rebound_db": 0.0, "ring_share": 1.0}
    level = _db(total, top)
    heard = level > -FLOOR_DB + 1.0
    loud = float(np.percentile(level[heard], 95))
    rise = level[ATTACK_FRAMES:] - level[:-ATTACK_FRAMES]
    steep = (rise >= ATTACK_DB) & heard[ATTACK_FRAMES:]
    # one attack per run of steep frames
    attacks = int(np.count_nonzero(steep[1:] & ~steep[:-1]) + (1 if steep.size and steep[0] else 0))
    duration = total.size * hop_s
    layers = []
    for j in range(reg.shape[1]):
        col = reg[:, j]
        ref = float(np.percentile(col[heard], 95)) if heard.any() else 0.0
        # a register plays in a frame when it is near its own loud level and not
        # a faint leak under the frame's loudest register
        layers.append((col > ref * 10 ** (-LAYER_DB / 10)) & (col > total * 0.01) if ref > 0
                      else np.zeros(col.size, bool))
    count = np.sum(layers, axis=0)[heard]
    low_sustain = register_sustain_db(reg[:, 0], heard)
    high_sustain = register_sustain_db(reg[:, 2] + reg[:, 3], heard)
    n = total.size
    tail = level[int(n * 0.8):] if n >= 5 else level[-1:]
    return {"sustain_db": float(np.median(level[heard]) - loud),
            "attacks_per_s": attacks / max(duration, 1e-6),
            "attack_count": float(attacks),
            "layers": float(np.mean(count)) if count.size else 0.0,
            "low_sustain_db": low_sustain, "high_sustain_db": high_sustain,
            "peak_at": float(np.argmax(total)) / max(n - 1, 1),
            "tail_db": float(np.mean(tail)), **event_cues(level)}


def _octave_edges(freqs: np.ndarray, lo_hz: float, hi_hz: float, per_octave: int) -> np.ndarray:
    hz = lo_hz * 2.0 ** (np.arange(int(round(np.log2(hi_hz / lo_hz) * per_octave)) + 1) / per_octave)
    return np.searchsorted(freqs, hz)


def pitch_cues(spec: Spectrogram) -> dict[str, float]:
    """`peak_share` and `partials` (see the module doc) from at most LONG_FRAMES
    evenly spaced frames of the long spectrum, weighted by their power."""
    n = spec.power.shape[0]
    edges = _octave_edges(spec.freqs, PITCH_FROM_HZ, PITCH_TO_HZ, 1)
    if n == 0 or np.any(np.diff(edges) < 20):
        return {"peak_share": 0.0, "partials": 0.0}
    rows = np.unique(np.linspace(0, n - 1, min(n, LONG_FRAMES)).round().astype(int))
    power = spec.power[rows, edges[0]:edges[-1]].astype(np.float64)
    weights = power.sum(axis=1)
    if weights.sum() <= 0:
        return {"peak_share": 0.0, "partials": 0.0}
    shares, held = [], []
    for a, b in zip(edges[:-1] - edges[0], edges[1:] - edges[0]):
        octave = power[:, a:b]
        k = max(1, int(PEAK_BINS * (b - a)))
        top = np.partition(octave, octave.shape[1] - k, axis=1)[:, -k:].sum(axis=1)
        total = octave.sum(axis=1)
        shares.append(top / np.maximum(total, 1e-30))
        held.append(total > weights * OCTAVE_MIN_SHARE)
    shares, held = np.array(shares), np.array(held)
    per_frame = (shares * held).sum(axis=0) / np.maximum(held.sum(axis=0), 1)
    semis = _octave_edges(spec.freqs, PITCH_FROM_HZ, PARTIALS_TO_HZ, 12) - edges[0]
    semis = semis[semis < power.shape[1]]
    peak = np.maximum.reduceat(power, semis[:-1], axis=1)
    mean = np.add.reduceat(power, semis[:-1], axis=1) / np.maximum(np.diff(semis), 1)
    top = power.max(axis=1, keepdims=True)
    count = ((peak > PEAK_OVER_MEAN * mean) & (peak > top * 10 ** (-PARTIAL_DB / 10))).sum(axis=1)
    w = weights / weights.sum()
    return {"peak_share": float(w @ per_frame), "partials": float(w @ count)}


def balance_cues(bands_pct: dict) -> dict[str, float]:
    """`low_share` (sub-bass + bass, 0..1) and `spread` (effective number of bands)."""
    p = np.array([max(float(bands_pct[b]), 0.0) for b in BAND_NAMES])
    total = p.sum()
    if total <= 0:
        return {"low_share": 0.0, "spread": 0.0}
    p = p / total
    nz = p[p > 0]
    return {"low_share": float(p[0] + p[1]), "spread": float(np.exp(-(nz * np.log(nz)).sum()))}


def measure_content(short: ShortFrames, long: Spectrogram, bands_pct: dict,
                    samples: np.ndarray) -> ContentCues:
    """Every cue of the module doc, rounded (4 decimals); `samples` are the
    audio `long` was taken from, at its rate."""
    cues = {**level_cues(register_power(short), short.hop_s), **pitch_cues(long),
            **balance_cues(bands_pct), **series_cues(samples, long.sample_rate),
            **semitone_cues(long)}
    return ContentCues(**{k: round(float(v), 4) for k, v in cues.items()})
