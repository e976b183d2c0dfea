"""The tempo level from the groove: the backbeat falls on beats 2 and 4.

A snare on 2 and 4 at 85 with hats in sixteenths is 85; the same snare every
other beat over a 170 pulse is drum & bass at 170 (research/rhythm-patterns.md).
Read at 85, drum & bass puts a snare on every beat's "and" (or, when the
grid's phase sits a sixteenth off, on another spot between the beats, the same
on every beat), which no backbeat at 85 does: it comes every other beat, on
it. `backbeat_double` reads the snare band (onsets.Onsets.mid, beyond the
kick band's rise) and the kick band at the four sixteenths of every beat and
says when the reading moves to twice the tempo. The other way, lofi at 70
read at 140 has its hats (onsets.Onsets.high) on every beat of the reading and
none between them: `slow_backbeat` says when the reading moves to half.
"""

from __future__ import annotations

import numpy as np

from trackgrade.engine.groove import sample_at

DOUBLE_FROM_MAX = 95.0       # only a slow reading doubles, and to at most DOUBLE_TO_MAX
DOUBLE_TO_MAX = 185.0        # drum & bass and jungle: 160-180 (a dembow at 95 stays)
SNARE_ONE_SPOT = 1.4         # the snare's sixteenth over every other sixteenth of the beat
SNARE_EVERY_BEAT = 0.5       # the snare there on odd beats against even ones (weaker over stronger)
SNARE_WEAK_PEAK = 0.4        # ... or at least this much when the weaker beats' snare band peaks there
KICK_UNDER_MAX = 0.3         # ... with no kick under that peak (a kick's click rises in the snare band)
KICK_OFF_MIN = 0.3           # a kick between the beats, against on them


def at_sixteenths(env: np.ndarray, beats_f: np.ndarray, period: float) -> np.ndarray:
    """(beats, 4) onset strength of `env` at each sixteenth of each beat
    (`beats_f` in frames), each the largest value within 6 % of a beat."""
    reach = max(1, int(round(0.06 * period)))
    beats_f = beats_f[beats_f + 0.75 * period < len(env) - 1]
    at = beats_f[:, None] + period * np.arange(4)[None, :] / 4.0
    return sample_at(env, at.ravel(), reach).reshape(-1, 4)


def _peaks_at(profile: np.ndarray, spots: slice) -> bool:
    """Whether a beat's sixteenth profile has its largest rise among `spots`."""
    top = int(np.argmax(profile))
    return bool(profile[top] > 0 and spots.start <= top < spots.stop)


def backbeat_double(bpm: float, mid: np.ndarray, low: np.ndarray, beats_f: np.ndarray,
                    period: float) -> tuple[bool, bool]:
    """(double, unsure): whether the beat is twice the reading. At a slow
    reading, drum & bass's snare (2 and 4 of the fast bar) comes once every
    beat at one sixteenth off the beat grid: one spot holds the snare
    (SNARE_ONE_SPOT), on every beat alike, over kicks that also fall between
    the beats (KICK_OFF_MIN). A backbeat on 2 and 4 of the slow bar comes every
    other beat, a dembow's snare moves between two spots from beat to beat.
    On every beat alike: the weaker of the odd and even beats holds
    SNARE_EVERY_BEAT of the stronger's snare at the spot, or SNARE_WEAK_PEAK
    when that is still its largest snare-band rise with no kick under it
    (KICK_UNDER_MAX: the snare just after a kick rises less in the log flux,
    a kick's click rises there too), or its kick band peaks there (a snare
    with a low body: the snare band counts only the rise beyond the kick
    band's, so where no kick came just before, the snare shows in the kick
    band instead). Unsure, and not doubled, when the weaker beats hold it so
    only a sixteenth either side of the spot: a grid between two sixteenths
    on drum & bass, or a dembow's snare moving by a sixteenth. A grid on the
    snare puts the spot on the beat: then SNARE_EVERY_BEAT with no kick under
    the weaker beats' snare (a backbeat at the slow level comes every other
    beat; a dembow's kick is under every beat)."""
    no = (False, False)
    if bpm > DOUBLE_FROM_MAX or 2.0 * bpm > DOUBLE_TO_MAX or len(beats_f) < 4 or period <= 0:
        return no
    snare, kick = at_sixteenths(mid, beats_f, period), at_sixteenths(low, beats_f, period)
    if len(snare) < 4:
        return no
    mean, kmean = snare.mean(axis=0), kick.mean(axis=0)
    spot = int(np.argmax(mean))
    others = np.delete(mean, spot)
    if mean[spot] <= 0 or mean[spot] < SNARE_ONE_SPOT * others.max():
        return no
    if not (kmean.max() > 0 and kmean[1:].max() >= KICK_OFF_MIN * kmean.max()):
        return no
    beats = (snare[0::2].mean(axis=0), snare[1::2].mean(axis=0))
    weak = int(beats[1][spot] < beats[0][spot])
    weak_kick = kick[weak::2].mean(axis=0)
    if spot == 0:
        share = float(beats[weak][0] / beats[1 - weak][0])
        return bool(share >= SNARE_EVERY_BEAT and weak_kick[0] <= KICK_UNDER_MAX * weak_kick.max()), False

    def every_beat(spots: slice) -> bool:
        share = float(beats[weak][spots].max() / beats[1 - weak][spot])
        top = int(np.argmax(beats[weak]))
        no_kick = weak_kick[top] <= KICK_UNDER_MAX * weak_kick.max()
        return share >= SNARE_EVERY_BEAT or (share >= SNARE_WEAK_PEAK and _peaks_at(beats[weak], spots)
                                             and no_kick)

    on_spot = slice(spot, spot + 1)
    if every_beat(on_spot) or _peaks_at(weak_kick, on_spot):
        return True, False
    return False, every_beat(slice(max(1, spot - 1), spot + 2))


# A half-time backbeat: at a fast reading the snare hits one beat in four (beat
# 3 of the bar: dubstep and trap, and slow hip-hop or lofi read at double). Its
# 2 and 4 are then the slow level's, so half the tempo is about as plausible
# (CONTRACT.md section 5): the confidence is held at
# metrical.AMBIGUOUS_CONFIDENCE and the half is among the alternatives. The
# reading stays (halving it took IDM at 130 to 65, benchmarks/results/genre.md)
# unless the hats say the slow level is the beat (`slow_backbeat`, below).
HALF_FROM_MIN = 120.0        # a half-time feel is read at 120 BPM or more
HALF_ONE_IN_FOUR = 2.0       # the strongest of the four beats' snare over the next strongest


def half_time_backbeat(bpm: float, mid: np.ndarray, beats_f: np.ndarray, period: float) -> bool:
    """Whether the snare hits one beat in four, on the beat (a half-time backbeat)."""
    if bpm < HALF_FROM_MIN or len(beats_f) < 8 or period <= 0:
        return False
    snare = at_sixteenths(mid, beats_f, period)
    bars = len(snare) // 4
    if bars < 2:
        return False
    on_beat = snare[:bars * 4, 0].reshape(bars, 4).mean(axis=0)
    mean = snare.mean(axis=0)
    if int(np.argmax(mean)) != 0:
        return False
    ranked = np.sort(on_beat)[::-1]
    return bool(ranked[0] > 0 and ranked[0] >= HALF_ONE_IN_FOUR * ranked[1])


# A backbeat at the slow level read at double: slow hip-hop and lofi (65-80
# BPM) with a snare on 2 and 4 and hats in eighths read at 130-160 show hats
# on every beat of the reading and nothing between them, and a snare on the
# beat that skips beats, one beat of four standing out in the snare band (the
# backbeat) or in the kick band (the slow bar's downbeat). Dubstep and trap
# at 140, drum & bass, house and techno put hats (or shakers, rides) between
# the beats of their own level; IDM breaks at 130 fill the sixteenths; swing
# jazz at 144 walks its bass and feathers its kick on every beat, so a halving
# its snare comping allows is held ambiguous (benchmarks/results/hearing.md).
HALVE_FROM_MIN = 120.0       # a reading at double of 60-80 BPM
HALVE_TO_MAX = 160.0
HATS_BETWEEN_MAX = 0.15      # the high band between the beats, against on them
SNARE_SKIPS_MAX = 0.7        # the weakest beat's snare against the strongest, over 4-beat groups
ONE_BEAT_MAX = 0.75          # the second strongest of 4 beats against the strongest: one stands out


def _on_beat(env: np.ndarray, beats_f: np.ndarray, period: float) -> np.ndarray:
    """(4,) mean onset strength of `env` on each beat of 4-beat groups."""
    on = at_sixteenths(env, beats_f, period)[:, 0]
    groups = len(on) // 4
    return on[:groups * 4].reshape(groups, 4).mean(axis=0)


def slow_backbeat(bpm: float, mid: np.ndarray, low: np.ndarray, high: np.ndarray,
                  beats_f: np.ndarray, period: float) -> tuple[bool, bool]:
    """(halve, ambiguous): whether the beat is half the reading: hats only on
    the beats of a 120-160 reading (HATS_BETWEEN_MAX), the snare on the beat
    and not on every beat alike (SNARE_SKIPS_MAX: a backbeat, not a kick on
    every beat), and one beat of four standing out in the snare or the kick
    band (ONE_BEAT_MAX: not a swing ride, walking bass and feathered kick).
    Ambiguous when the kick does not mark the slow bar: the snare alone also
    fits swing jazz at 140 whose ride shows no eighths (results/hearing.md)."""
    no = (False, False)
    if not HALVE_FROM_MIN <= bpm <= HALVE_TO_MAX or len(beats_f) < 8 or period <= 0:
        return no
    hats, snare = at_sixteenths(high, beats_f, period), at_sixteenths(mid, beats_f, period)
    if len(snare) < 8:
        return no
    hat = hats.mean(axis=0)
    if hat[0] <= 0 or hat[1:].max() > HATS_BETWEEN_MAX * hat[0]:
        return no
    if int(np.argmax(snare.mean(axis=0))) != 0:
        return no
    backbeat, kick = np.sort(_on_beat(mid, beats_f, period)), np.sort(_on_beat(low, beats_f, period))
    if not (backbeat[-1] > 0 and backbeat[0] <= SNARE_SKIPS_MAX * backbeat[-1]):
        return no
    downbeat = bool(kick[-1] > 0 and kick[-2] <= ONE_BEAT_MAX * kick[-1])
    if downbeat or backbeat[-2] <= ONE_BEAT_MAX * backbeat[-1]:
        return True, not downbeat
    return no
