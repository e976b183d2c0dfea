"""The tempo level from the groove: the backbeat falls on beats 2 and 4.

A snare on 2 and 4 at 85 with hats in sixteenths is 85; the same snare every
other beat over a 170 pulse is drum & bass at 170 (research/rhythm-patterns.md).
Read at 85, drum & bass puts its snares on the "and" of every beat and its
second kick (the two-step's, or a break's) on an "e", which no backbeat at 85
does. `backbeat_double` reads the snare band (onsets.Onsets.mid, beyond the
kick band's rise) and the kick band at the four sixteenths of the beat grid
and says when the reading moves to twice the tempo.
"""

from __future__ import annotations

import numpy as np

from trackgrade.engine.groove import sample_at

DOUBLE_FROM_MAX = 95.0       # only a slow reading doubles, and to at most DOUBLE_TO_MAX
DOUBLE_TO_MAX = 190.0
SNARE_AND_MIN = 1.4          # the snare on the "and" over on the beat and on the "e"
KICK_E_MIN = 0.4             # the kick on the "e" against on the beat (the two-step's second kick)


def sixteenths(env: np.ndarray, beats_f: np.ndarray, period: float) -> np.ndarray:
    """(4,) mean onset strength of `env` at each sixteenth of the beats
    (`beats_f` in frames), each the largest value within 6 % of a beat."""
    reach = max(1, int(round(0.06 * period)))
    out = []
    for q in range(4):
        at = beats_f + q * period / 4.0
        at = at[at < len(env) - 1]
        out.append(float(sample_at(env, at, reach).mean()) if at.size else 0.0)
    return np.array(out)


def backbeat_double(bpm: float, mid: np.ndarray, low: np.ndarray, beats_f: np.ndarray,
                    period: float) -> bool:
    """Whether the beat is twice the reading: at a slow reading the snare sits
    on the "and" of the beats (drum & bass's 2 and 4 of the fast bar) and the
    kick also on the "e" (the two-step's or the break's second kick, which a
    dembow or an off-beat skank lacks)."""
    if bpm > DOUBLE_FROM_MAX or 2.0 * bpm > DOUBLE_TO_MAX or len(beats_f) < 4 or period <= 0:
        return False
    snare, kick = sixteenths(mid, beats_f, period), sixteenths(low, beats_f, period)
    if snare[2] <= 0 or kick[0] <= 0:
        return False
    return bool(snare[2] >= SNARE_AND_MIN * max(snare[0], snare[1]) and kick[1] >= KICK_E_MIN * kick[0])
