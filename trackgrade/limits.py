"""Every threshold the grading speaks of, defined once.

Scores, the band table, the diagnosis and the feedback all import these, so
the same track never hears two ceilings or two ranges. Where each number
comes from: benchmarks/GENRES.md ("Tolerances and limits").
"""

from __future__ import annotations

from typing import NamedTuple

from trackgrade.engine.features import BAND_EDGES_HZ, BAND_NAMES

MASTERING_STATUSES = ("pre-master", "master")

# How far (dB, log ratio of band shares) a good track may sit from its ideal:
# at least the measured one-sigma spread between commercial tracks (a tilt of
# +-1.09 dB/oct moves sub 3, bass 1.5, low_mid 0.3, mid 1.3, upper_mid 3, high
# 4, air 5 dB; the 2.5-12.5 kHz level varies 3.7 dB; the sub region's shape is
# uncertain by ~8 dB), never under 2 dB; widest at the extremes.
BAND_TOLERANCE_DB = {"sub_bass": 5.0, "bass": 2.0, "low_mid": 2.0, "mid": 2.0,
                     "upper_mid": 3.0, "high": 4.0, "air": 5.0}
# A cut/boost suggestion only well outside the tolerance: a tip beyond 1.5x,
# a warning beyond 2x. The suggested size brings the band back inside it.
SUGGEST_BEYOND = 1.5
WARN_BEYOND = 2.0
BAND_SHARE_FLOOR_PCT = 0.05      # an empty band counts as 0.05 % (a finite miss)
BAND_DB_CAP = 15.0
# The frequency pillar counts the low end once (issue 26; benchmarks/results/
# hearing.md): the bands from 250 Hz up are judged by their shape among
# themselves, the low end by its share against them (sub + bass over the upper
# total, the bass band's tolerance) and by the sub/bass split. Too much low end
# costs at most LOW_SHARE_EXCESS_CAP_DB (a boomy mix scores 80 at best on it
# alone; the band advice still names it), so taking the low end away can win
# back no more than that; a sub under the bass by more than
# SUB_DEFICIT_TOLERANCE_DB against the ideal's split costs SUB_DEFICIT_WEIGHT x
# the dB beyond (a high-pass takes the kick's fundamental first), a sub over it
# by more than its band tolerance 1 x.
LOW_SHARE_EXCESS_CAP_DB = 4.0
SUB_DEFICIT_TOLERANCE_DB = 3.0
SUB_DEFICIT_WEIGHT = 3.0



def _span(lo: float, hi: float) -> str:
    """"20-60 Hz", "500 Hz-2 kHz", "2-4 kHz"."""
    if hi < 1000:
        return f"{lo:g}-{hi:g} Hz"
    if lo >= 1000:
        return f"{lo / 1000:g}-{hi / 1000:g} kHz"
    return f"{lo:g} Hz-{hi / 1000:g} kHz"


class BandWords(NamedTuple):
    """How one band is named: a table row, a chart label, a narrow column header,
    and in a sentence (lower case; BAND_LABELS adds its span)."""
    title: str
    chart: str
    short: str
    sentence: str


# The one table of band names: the terminal, the report, the genre table and
# the words of the diagnosis and the feedback all read it.
BAND_WORDS = {
    "sub_bass": BandWords("Sub bass", "Sub", "sub", "sub-bass"),
    "bass": BandWords("Bass", "Bass", "bass", "bass"),
    "low_mid": BandWords("Low mids", "Low mid", "lo-m", "low mids"),
    "mid": BandWords("Mids", "Mid", "mid", "mids"),
    "upper_mid": BandWords("Upper mids", "Upper mid", "hi-m", "upper mids"),
    "high": BandWords("Highs", "High", "high", "highs"),
    "air": BandWords("Air", "Air", "air", "air"),
}
BAND_LABELS = {name: f"{BAND_WORDS[name].sentence} ({_span(lo, hi)})"
               for name, (lo, hi) in zip(BAND_NAMES, BAND_EDGES_HZ)}


def sentence_start(text: str) -> str:
    """`text` with its first letter capitalised and the rest kept ("Highs (4-8 kHz)",
    never str.capitalize()'s "Highs (4-8 khz)")."""
    return text[:1].upper() + text[1:]

# Loudness and peaks. Master ceiling: AES TD1004 / streaming delivery specs.
# Pre-master: the mastering engineer's usual request (-18 LUFS, 6 dB headroom).
TRUE_PEAK_MAX_DBTP = {"master": -1.0, "pre-master": -3.0}
PRE_MASTER_IDEAL_PEAK_DBTP = -6.0
PRE_MASTER_LUFS = (-23.0, -14.0)
PRE_MASTER_SEND_LUFS = -18.0
STREAMING_REFERENCE_LUFS = -14.0     # Spotify, YouTube, Tidal, Amazon Music

# Delivery checks (CONTRACT.md section 5): a band that loses this much summed to
# mono gets a `stereo` warn; the low end is mono when sub_bass and bass each
# lose less than LOW_END_MONO_LOSS_DB.
MONO_LOSS_WARN_DB = 3.0
LOW_END_MONO_LOSS_DB = 1.0
LOW_END_BANDS = ("sub_bass", "bass")
# `trackgrade album`: a track this far from the album's median loudness, or a
# band this far from the album's (loudness-matched) median, is an outlier.
ALBUM_LOUDNESS_OUTLIER_LU = 1.0
ALBUM_BAND_OUTLIER_DB = 2.0
# `trackgrade compare`: B is A at another level only (a gain change, nothing else)
# when the loudness differs by at least LEVEL_ONLY_MIN_DB while, once loudness is
# matched, every band stays within LEVEL_ONLY_BAND_DB, width and correlation within
# LEVEL_ONLY_STEREO and the loudness range within LEVEL_ONLY_LRA_LU.
LEVEL_ONLY_MIN_DB = 0.5
LEVEL_ONLY_BAND_DB = 0.5
LEVEL_ONLY_STEREO = 0.02
LEVEL_ONLY_LRA_LU = 0.5
TOO_QUIET_MASTER_LU = 3.0        # a master further under its range costs headline points

# Audio shorter than this is a part (a loop, an excerpt, a stem, a one-bar
# break), not a track: its sections are reported, its arrangement is not judged
# (structure.judged false, the structure pillar out of the headline).
PART_MAX_S = 60.0
UNCLEAR_BELOW = 0.1     # a reading (tempo, key, genre, kind) under this confidence shows as "unclear"

# The low end: where the spectrum starts (engine spectrum.low_rolloff_hz). Real
# mixes reach 20-80 Hz (Pestana: a low cut near 60 Hz); a high-pass filter
# above ~100 Hz removes the kick and bass fundamentals.
LOW_ROLLOFF_OK_HZ = 90.0
LOW_ROLLOFF_CUT_HZ = 130.0
# Defects never help (CONTRACT.md section 5): a spectrum that starts at or above
# the 90 Hz sixth-octave band (a 100-200 Hz high-pass reads 90-180 Hz; full
# mixes read 20-80 Hz, benchmarks/RESULTS.md, issue 17) has no low end for the
# balance to be judged on, so the frequency pillar gets no credit: its cap
# falls from 100 at the 80 Hz band to 0 just under the 90 Hz one. Removing the
# low end can then never raise the pillar, whatever it does to the band shares.
LOW_END_MISSING_HZ = (80.0, 89.0)

# The noise floor (engine noise.measure_noise_floor): the 5 kHz+ power of the
# quietest 5 % of 46 ms frames against the mean power, and how steady it is.
HISS_FLOOR_DB = (-30.0, -24.0)   # from no hiss to full hiss
HISS_STEADY_DB = (8.0, 4.0)      # median - P5: music's top comes and goes, hiss stays
# The frequency pillar scores the music's bands with the noise floor's estimate
# taken out; a floor also veils the top end, counted as this many dB outside
# the tolerances at a full hiss share (the estimate is ~1 dB low: the P5 of a
# steady noise's frame power sits under its mean).
HISS_BALANCE_DB = 4.0

# Stereo
PHASE_CORRELATION_LOW = 0.3
# Out of phase: summed to mono, L+R keeps (1 + correlation) / 2 of the energy;
# at 0 (unrelated channels) that is -3 dB, as for any wide stereo, at -0.5 it is
# -6 dB and towards -1 the track vanishes. Between -0.5 and 0 the channels are
# only slightly opposed: worth a polarity check, never "out of phase".
OUT_OF_PHASE_CORRELATION = -0.5
MONO_WIDTH = 0.01
WIDE_WIDTH = 0.35
