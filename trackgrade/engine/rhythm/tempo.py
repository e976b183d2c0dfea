"""The global tempo of an onset envelope: the comb's best tempo under a broad
prior, a whole-bar tempo for short loops, then the metrical level."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trackgrade.engine.features import TEMPO_RELATIONS
from trackgrade.engine.rhythm.metrical import metrical_level
from trackgrade.engine.rhythm.periodicity import (BPM_MAX, BPM_MIN, autocorrelation, comb_scores,
                                                 interp_lags, loop_candidates, smooth3, tempo_prior)


BAR_VIEW_BEATS = 4.0 / 0.75   # the comb reads lags up to 0.75 of the clip: a bar needs 5.33 beats


@dataclass(frozen=True, eq=False)
class TempoEstimate:
    bpm: float
    confidence: float         # 0..1
    salience: float           # normalised autocorrelation at the beat lag, 0..1
    candidates: tuple         # ((bpm, score), ...) best first
    ac: np.ndarray | None = None   # the (blended) envelope autocorrelation the comb read


def one_bar_tempo(bpm: float, duration_s: float | None) -> float:
    """A clip too short for the comb to see a bar (under `BAR_VIEW_BEATS` beats
    at the reading: its 4-beat lag lies past the comb's support) is a one-bar
    part when its length, taken as 4 beats, is the reading or one of its
    metrical relatives (octave, 3:2, 4:3) within 3 %: a break cut to the bar.
    Its tempo is then 4 beats over its length (a 1.42 s break read at 130 is
    168.7 BPM). A clip whose length is no relative of the reading (an excerpt
    cut anywhere) keeps the reading."""
    if not duration_s or duration_s <= 0 or duration_s * bpm / 60.0 >= BAR_VIEW_BEATS:
        return bpm
    bar = 240.0 / duration_s
    if not BPM_MIN <= bar <= BPM_MAX:
        return bpm
    ratios = (1.0, 0.5, 2.0) + tuple(TEMPO_RELATIONS[k] for k in ("two_thirds", "three_halves",
                                                                  "three_quarters", "four_thirds"))
    related = min(abs(bar / (bpm * r) - 1.0) for r in ratios) <= 0.03
    return float(bar) if related else bpm


def estimate_tempo(env: np.ndarray, fps: float, low: np.ndarray | None = None,
                   duration_s: float | None = None) -> TempoEstimate:
    """Global tempo from the onset envelope (and the kick band, weighted in).
    For clips under 12 s, a tempo that makes the clip a whole number of bars
    wins when the comb supports it nearly as well as the best tempo."""
    n = len(env)
    if n < 8 or not np.any(env > 0):
        return TempoEstimate(120.0, 0.0, 0.0, ((120.0, 0.0),))
    ac = autocorrelation(smooth3(env))
    if low is not None and np.any(low > 0):
        ac = 0.6 * ac + 0.4 * autocorrelation(smooth3(low))
    bpms = np.arange(BPM_MIN, BPM_MAX + 0.01, 0.25)
    # lags beyond half the signal are unreliable: restrict the comb's support
    max_lag = 0.75 * n
    comb = comb_scores(ac, fps, bpms, max_lag)
    usable = comb > 0
    score = comb * tempo_prior(bpms)
    i = int(np.argmax(score))
    bpm = float(bpms[i])
    if 0 < i < len(bpms) - 1:
        a, b, c = score[i - 1], score[i], score[i + 1]
        den = a - 2 * b + c
        if den < 0:
            bpm += 0.25 * float(np.clip(0.5 * (a - c) / den, -0.5, 0.5))
    loops = loop_candidates(duration_s)
    if loops.size:
        # the loop tempo's comb at its exact value, against the winner's
        loop_score = comb_scores(ac, fps, loops, max_lag) * tempo_prior(loops)
        j = int(np.argmax(loop_score))
        if loop_score[j] >= 0.7 * score[i] and abs(loops[j] - bpm) > 0.01 * bpm:
            bpm = float(loops[j])
    bpm = metrical_level(ac, env, fps, bpm, duration_s)
    bpm = one_bar_tempo(bpm, duration_s)
    salience = float(np.clip(interp_lags(ac, np.array([60.0 * fps / bpm]))[0], 0.0, 1.0))
    # confidence: how far the winner stands above the typical comb value
    base = float(np.median(comb[usable])) if usable.any() else 0.0
    peak = float(np.max(comb))
    conf = float(np.clip((peak - base) / 0.35, 0.0, 1.0))
    order = np.argsort(score)[::-1]
    cands = []
    for j in order:
        if all(abs(bpms[j] - c[0]) > 3 for c in cands):
            cands.append((float(bpms[j]), float(score[j])))
        if len(cands) == 5:
            break
    return TempoEstimate(bpm, conf, salience, tuple(cands), ac)
