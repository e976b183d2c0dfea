"""The metrical level: which of a tempo's relatives (2/3, 3/4, 4/3, 3/2, half,
double) is the beat, and the other plausible readings."""

from __future__ import annotations

import numpy as np

from trackgrade.engine.features import TEMPO_RELATIONS, TempoReading
from trackgrade.engine.rhythm.beats import onset_offsets
from trackgrade.engine.rhythm.periodicity import (BPM_MAX, BPM_MIN, LOOP_MAX_S, comb_scores,
                                                 interp_lags, tempo_prior)

_FAMILY = (2.0 / 3.0, 0.75, 4.0 / 3.0, 1.5)    # the non-octave relatives the comb can lock onto
_METER_BEATS = (3, 4)                          # bar lengths tried: ternary and binary


def grid_strength(env: np.ndarray, period: float) -> float:
    """How much onset strength a beat grid of `period` frames collects at its
    best phase, relative to the envelope's mean (1 = no better than chance)."""
    n = len(env)
    mean = float(env.mean()) if n else 0.0
    if period <= 0 or 2 * period > n or mean <= 0:
        return 0.0
    # each grid point takes the strongest frame within one frame of it: a grid
    # whose period is not a whole number of frames drifts across sharp onsets
    near = np.maximum(env, np.maximum(np.roll(env, 1), np.roll(env, -1)))
    phases = np.arange(0.0, period, 0.5)
    k = np.arange(0.0, (n - 1) // period + 1)
    idx = phases[:, None] + k[None, :] * period
    inside = idx <= n - 1
    vals = np.where(inside, near[np.minimum(np.round(idx), n - 1).astype(np.intp)], 0.0)
    folded = vals.sum(axis=1) / np.maximum(inside.sum(axis=1), 1)
    return float(folded.max() / mean)


def metrical_evidence(ac: np.ndarray, env: np.ndarray, fps: float, bpm: float,
                      duration_s: float | None) -> float:
    """Evidence that `bpm` is the beat, whatever the meter: periodicity at the
    beat level (autocorrelation at 1 and 2 beats), at the bar level (3 or 4
    beats and twice that, whichever is stronger: waltzes and swung or
    ternary material have 3-beat bars), the onset strength a beat grid
    collects (log of `grid_strength`), and for clips under 12 s how nearly
    the clip is a whole number of 4-beat bars (sample loops are cut so).
    A weak log-prior around 125 BPM breaks ties.""" 
    lag = 60.0 * fps / bpm
    max_lag = 0.75 * len(ac)

    def level(*beats: float) -> float:
        lags = np.array([b * lag for b in beats if b * lag <= max_lag])
        return float(np.maximum(interp_lags(ac, lags), 0.0).mean()) if lags.size else 0.0

    beat = level(1, 2)
    bar = max(level(m, 2 * m) for m in _METER_BEATS)
    evidence = beat + bar + 0.5 * np.log(max(grid_strength(env, lag), 1e-3))
    evidence += 0.1 * float(np.log(tempo_prior(np.array([bpm]))[0]))
    if duration_s and 0 < duration_s <= LOOP_MAX_S:
        beats = duration_s * bpm / 60.0
        miss = abs(beats - 4.0 * max(1.0, round(beats / 4.0)))     # beats off whole 4-beat bars
        evidence += float(np.exp(-0.5 * (miss / 0.12) ** 2))
    return float(evidence)


def metrical_level(ac: np.ndarray, env: np.ndarray, fps: float, bpm: float,
                   duration_s: float | None, stay: float = 0.2) -> float:
    """The comb weighs the bar as 4 beats, so a 3-beat bar (a waltz, swung or
    ternary material) or a sparse loop can make it lock onto 4/3 or 3/2 of the
    beat. Score the comb's tempo against its 2/3, 3/4, 4/3 and 3/2 relatives
    (`metrical_evidence`) and move only when a relative wins by more than
    `stay`; the winner is then sharpened within 4 % and its octave chosen by
    the comb, as for the first reading."""
    if bpm <= 0 or len(env) < 8:
        return bpm
    best, best_score = bpm, metrical_evidence(ac, env, fps, bpm, duration_s) + stay
    for ratio in _FAMILY:
        other = bpm * ratio
        if BPM_MIN <= other <= BPM_MAX:
            score = metrical_evidence(ac, env, fps, other, duration_s)
            if score > best_score:
                best, best_score = other, score
    if best == bpm:
        return float(bpm)
    # a relative won: sharpen it (the comb's peak was for another level), then let
    # the comb choose its octave as it chose the first reading's
    near = best * np.linspace(0.96, 1.04, 33)
    near = near[(near >= BPM_MIN) & (near <= BPM_MAX)]
    best = float(near[int(np.argmax([metrical_evidence(ac, env, fps, b, duration_s) for b in near]))])
    octaves = np.array([b for b in (0.5 * best, best, 2.0 * best) if BPM_MIN <= b <= BPM_MAX])
    comb = comb_scores(ac, fps, octaves, 0.75 * len(ac)) * tempo_prior(octaves)
    return float(octaves[int(np.argmax(comb))])


# Ambiguous beat level (CONTRACT.md section 5): when every second beat of the
# reading carries under this share of the onset strength of the others, the
# beats come in strong/weak pairs (a samba surdo, a waltz, swung or sparse
# percussion read at the eighth-note level, a half-time backbeat), so half the
# tempo is about as plausible: the confidence is held at AMBIGUOUS_CONFIDENCE
# and the half reading is among the alternatives. Four-on-the-floor and steady
# grids measure 0.7-1.0 (benchmarks/RESULTS.md, issue 17).
AMBIGUOUS_ALTERNATION = 0.55
AMBIGUOUS_CONFIDENCE = 0.5


def beat_alternation(env: np.ndarray, beats_f: np.ndarray, period: float) -> float:
    """Onset strength on every second beat against the others (the weaker pair
    over the stronger, 0..1; 1 when there are under 4 beats): how far the beats
    come in strong/weak pairs."""
    if len(beats_f) < 4 or period <= 0:
        return 1.0
    _, strength = onset_offsets(env, beats_f, period)
    even, odd = float(strength[0::2].mean()), float(strength[1::2].mean())
    top = max(even, odd)
    return min(even, odd) / top if top > 0 else 1.0


def with_relation(readings: tuple[TempoReading, ...], bpm: float, confidence: float,
                  relation: str, share: float = 0.9) -> tuple[TempoReading, ...]:
    """The alternatives with `relation`'s reading (e.g. "half", "double")
    among them (at least `share` of `confidence`; at 1.0, first), best
    first, at most 3."""
    others = [r for r in readings if r.relation != relation]
    own = next((r.confidence for r in readings if r.relation == relation), 0.0)
    other = TempoReading(round(bpm * TEMPO_RELATIONS[relation], 2), relation,
                         round(max(own, share * confidence), 4))
    return tuple(sorted([other, *others], key=lambda r: -r.confidence)[:3])


def tempo_alternatives(ac: np.ndarray | None, env: np.ndarray, fps: float, bpm: float,
                       confidence: float, duration_s: float | None) -> tuple[TempoReading, ...]:
    """Up to 3 other readings of the tempo (half, double, 2/3, 3/2, 3/4, 4/3 of
    `bpm`), best first. Each one's confidence is the reading's confidence
    scaled by exp(evidence difference / 0.5) (`metrical_evidence`), capped just
    under it; readings under a tenth of the reading's confidence are left out."""
    if ac is None or bpm <= 0 or confidence <= 0 or len(env) < 8:
        return ()
    own = metrical_evidence(ac, env, fps, bpm, duration_s)
    found = []
    for name, ratio in TEMPO_RELATIONS.items():
        other = bpm * ratio
        if 30.0 <= other <= 300.0:
            rel = float(np.exp((metrical_evidence(ac, env, fps, other, duration_s) - own) / 0.5))
            found.append((min(rel, 0.95), name, other))
    found.sort(reverse=True)
    return tuple(TempoReading(round(float(other), 2), name, round(float(confidence * rel), 4))
                 for rel, name, other in found[:3] if rel >= 0.1)
