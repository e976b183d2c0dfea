"""`measure_rhythm`: tempo, beats, regularity, onset rate, pulse strength,
danceability and timing from one short STFT."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from trackgrade.engine.features import Rhythm
from trackgrade.engine.frames import ShortFrames
from trackgrade.engine.rhythm.backbeat import backbeat_double, half_time_backbeat, slow_backbeat
from trackgrade.engine.rhythm.beats import extend_to_start, track_beats
from trackgrade.engine.rhythm.metrical import (AMBIGUOUS_ALTERNATION, AMBIGUOUS_CONFIDENCE,
                                               beat_alternation, tempo_alternatives, with_relation)
from trackgrade.engine.rhythm.onsets import onset_envelope, pick_onsets
from trackgrade.engine.rhythm.periodicity import BPM_MAX, BPM_MIN, autocorrelation, comb_scores
from trackgrade.engine.rhythm.pulse import beat_regularity, danceability_dfa, onset_scale
from trackgrade.engine.rhythm.tempo import estimate_tempo
from trackgrade.engine.timing import onset_peak_times, timing_spread_ms


def measure_rhythm(spec: ShortFrames, duration_s: float) -> Rhythm:
    """Tempo, beats, regularity, onset rate, pulse strength, danceability."""
    on = onset_envelope(spec)
    env, fps = on.envelope, on.fps
    if not np.all(np.isfinite(env)):
        env = np.nan_to_num(env)
    est = estimate_tempo(env, fps, on.low, duration_s)
    # the kick band counts as much as all the rest: it puts the beat on the kick,
    # not on the off-beat bass and hats
    combined = env / onset_scale(env) + on.low / onset_scale(on.low)
    beats_f, period_f = track_beats(combined, fps, est.bpm, on.low)
    doubled, double_unsure = backbeat_double(est.bpm, on.mid, on.low, beats_f, period_f)
    if doubled:   # the backbeat on 2 and 4 of the fast level (engine/rhythm/backbeat.py)
        est = replace(est, bpm=2.0 * est.bpm)
        beats_f, period_f = track_beats(combined, fps, est.bpm, on.low)
    halved, half_unsure = (False, False) if doubled else slow_backbeat(est.bpm, on.mid, on.low, on.high,
                                                                       beats_f, period_f)
    if halved:    # the backbeat on 2 and 4 of the slow level (engine/rhythm/backbeat.py)
        est = replace(est, bpm=0.5 * est.bpm)
        beats_f, period_f = track_beats(combined, fps, est.bpm, on.low)
    half_time = not (doubled or halved) and half_time_backbeat(est.bpm, on.mid, beats_f, period_f)
    beats_s = beats_f / fps + on.t0
    beats_s = extend_to_start(beats_s, period_f / fps)
    beats_s = beats_s[(beats_s >= 0) & (beats_s <= max(duration_s, 0.0))]
    # the BPM from a least-squares line through the beats (the mean tempo when
    # it drifts); the fitted grid period for a handful of beats
    bpm = est.bpm
    if len(beats_f) >= 8:
        slope = float(np.polyfit(np.arange(len(beats_f)), beats_f, 1)[0])
        if slope > 0 and abs(60.0 * fps / slope - est.bpm) < 0.06 * est.bpm:
            bpm = 60.0 * fps / slope
    elif period_f > 0:
        bpm = 60.0 * fps / period_f
    bpm = float(np.clip(bpm, BPM_MIN, BPM_MAX))
    onsets = pick_onsets(env, fps)
    onset_rate = float(len(onsets) / duration_s) if duration_s > 0 else 0.0
    ac_full = autocorrelation(env)
    ac_low = autocorrelation(on.low) if np.any(on.low > 0) else np.zeros_like(ac_full)
    # pulse salience: the comb (1, 2, 4, 8 beats) at the tempo, full band and kick band
    bpm_arr, max_lag = np.array([bpm]), 0.75 * len(env)
    sal_full = float(comb_scores(ac_full, fps, bpm_arr, max_lag)[0])
    sal_low = float(comb_scores(ac_low, fps, bpm_arr, max_lag)[0])
    # a pulse needs percussion: high-frequency transients (hats, snares) or a kick
    # pulse. Ambient bells on a grid, a few tonal notes a second, are not a beat.
    # A kick-band pulse counts when its onsets are real rises (kicks rise by
    # several dB; a drone's beating or leakage wobbles by under 1 dB)
    kick_rise = float(np.percentile(on.low, 99)) if on.low.size else 0.0
    kick = float(np.clip(sal_low / 0.4, 0.0, 1.0)) * float(np.clip((kick_rise - 0.5) / 1.0, 0.0, 1.0))
    percussive = max(float(np.clip((on.hf_activity - 0.6) / 0.8, 0.0, 1.0)), kick)
    density = float(np.clip((onset_rate - 0.5) / 1.5, 0.0, 1.0))
    beat_strength = float(np.clip(0.5 * sal_full + 0.5 * sal_low, 0.0, 1.0)) ** 0.75 * percussive * density
    confidence = float(np.clip(0.5 * est.confidence + 0.5 * min(1.0, beat_strength / 0.4), 0.0, 1.0))
    salient = bool(confidence >= 0.35 and sal_full >= 0.12 and onset_rate >= 1.0 and percussive >= 0.5)
    if not salient:
        confidence = min(confidence, 0.2)
    ambiguous = salient and (half_time or half_unsure or double_unsure
                             or beat_alternation(combined, beats_f, period_f) < AMBIGUOUS_ALTERNATION)
    if ambiguous:
        confidence = min(confidence, AMBIGUOUS_CONFIDENCE)
    alternatives = tempo_alternatives(est.ac, env, fps, bpm, confidence, duration_s)
    if double_unsure:   # the fast level as plausible as the reading: first among the alternatives
        alternatives = with_relation(alternatives, bpm, confidence, "double", share=1.0)
    elif halved:
        alternatives = with_relation(alternatives, bpm, confidence, "double")
    elif ambiguous or doubled:
        alternatives = with_relation(alternatives, bpm, confidence, "half")
    regularity = beat_regularity(combined, beats_f, period_f)
    if not salient:
        regularity *= 0.5
    dance = danceability_dfa(on.energy_db, fps)
    inner = onsets[(onsets > 0) & (onsets < len(env) - 1)]
    spread, timed = timing_spread_ms(onset_peak_times(env, fps, on.t0, inner), env[inner], beats_s)
    return Rhythm(bpm=round(bpm, 2), regularity=round(regularity, 4), beat_times=beats_s,
                  onset_rate=round(onset_rate, 3), beat_strength=round(beat_strength, 4),
                  danceability=round(dance, 4), tempo_confidence=round(confidence, 4),
                  tempo_salient=salient,
                  tempo_alternatives=alternatives,
                  timing_spread_ms=None if spread is None else round(spread, 2), timed_onsets=timed)
