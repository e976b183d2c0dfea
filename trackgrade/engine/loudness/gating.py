"""Gated loudness from the K-weighted hop energies: integrated loudness
(ITU-R BS.1770-4, Annex 1, eqs. 2-7), the momentary and short-term curves
(EBU Tech 3341) and the loudness range (EBU Tech 3342).

Every figure is a mean power over windows of whole 100 ms hops, so each is a
difference of one cumulative sum of `kweighting.hop_energies`. A loudness
below the -70 LUFS absolute gate (silence) reads ``SILENCE_LUFS``: nothing
here returns NaN or inf.
"""

from __future__ import annotations

import numpy as np

from trackgrade.engine.features import SILENCE_LUFS   # the floor of every loudness value
from trackgrade.engine.loudness.kweighting import CURVE_HOP_S, hop_energies

ABSOLUTE_GATE_LUFS = -70.0    # BS.1770-4 eq. (4) and Tech 3342: Gamma_a = -70 LKFS
RELATIVE_GATE_LU = -10.0      # BS.1770-4 eq. (6): Gamma_r = (mean of absolute-gated blocks) - 10
LRA_RELATIVE_GATE_LU = -20.0  # EBU Tech 3342: relative gate 20 LU below the gated mean
MOMENTARY_S = 0.4             # Tech 3341: momentary loudness, 400 ms sliding window
SHORT_TERM_S = 3.0            # Tech 3341: short-term loudness, 3 s sliding window
_GATE_BLOCK_HOPS = 4          # BS.1770-4: gating blocks of 400 ms (4 hops), 75 % overlap
_LRA_BLOCK_HOPS = 30          # Tech 3342: 3 s short-term blocks, a new one every 100 ms


def to_lufs(mean_power):
    """BS.1770-4 eq. (2): L_K = -0.691 + 10 log10(sum_i G_i z_i) (-inf for 0)."""
    with np.errstate(divide="ignore"):
        return -0.691 + 10.0 * np.log10(mean_power)


def floor_lufs(lufs):
    """Loudness values floored at SILENCE_LUFS (NaN and -inf included)."""
    return np.maximum(np.nan_to_num(lufs, nan=SILENCE_LUFS, neginf=SILENCE_LUFS), SILENCE_LUFS)


def window_power(energies: np.ndarray, hops_per_window: int, *, partial: bool = False) -> np.ndarray:
    """Mean power of windows of `hops_per_window` consecutive hops, one per hop.
    partial=False: only windows that fit (len - n + 1 values, window i starts at
    hop i); partial=True: one value per hop, window ending at that hop, with
    the missing past counted as silence (a meter's view)."""
    cs = np.concatenate([[0.0], np.cumsum(energies)])
    if partial:
        ends = np.arange(1, len(energies) + 1)
        starts = np.maximum(ends - hops_per_window, 0)
    else:
        starts = np.arange(0, max(len(energies) - hops_per_window + 1, 0))
        ends = starts + hops_per_window
    return np.maximum(cs[ends] - cs[starts], 0.0)


def _gated_integrated(block_power: np.ndarray) -> float:
    # l_j of every 400 ms gating block j: BS.1770-4 eq. (3)
    lufs = to_lufs(block_power)
    # the absolute gate: the blocks with l_j > Gamma_a = -70 LKFS, eq. (4)
    above = lufs > ABSOLUTE_GATE_LUFS
    if not above.any():
        return SILENCE_LUFS
    # the relative gate Gamma_r: the loudness of the absolute-gated blocks
    # minus 10 LU, eqs. (5)-(6)
    relative = to_lufs(block_power[above].mean()) + RELATIVE_GATE_LU
    # integrated loudness: the mean power of the blocks above both gates, eq. (7)
    gated = above & (lufs > relative)
    return float(max(to_lufs(block_power[gated].mean()), SILENCE_LUFS))


def integrated_from_energies(energies: np.ndarray, hop: int) -> float:
    """BS.1770-4 integrated loudness from 100 ms hop energies (400 ms blocks,
    75 % overlap, -70 LUFS absolute and -10 LU relative gates)."""
    return _gated_integrated(window_power(energies, _GATE_BLOCK_HOPS)
                             / (_GATE_BLOCK_HOPS * hop))


def lra_from_energies(energies: np.ndarray, hop: int) -> float:
    """EBU Tech 3342 loudness range from 100 ms hop energies: 3 s short-term
    values every 0.1 s, -70 LUFS absolute and -20 LU relative gates, 95th minus
    10th percentile (nearest rank, as the Tech 3342 listing)."""
    # the short-term loudness of every 3 s block (Tech 3342, "blocks of 3 s")
    short_term = to_lufs(window_power(energies, _LRA_BLOCK_HOPS) / (_LRA_BLOCK_HOPS * hop))
    # the absolute gate at -70 LUFS
    short_term = short_term[short_term >= ABSOLUTE_GATE_LUFS]
    if short_term.size == 0:
        return 0.0
    # the relative gate: 20 LU below the power mean of the absolute-gated blocks
    integrated = 10.0 * np.log10(np.mean(10.0 ** (short_term / 10.0)))
    kept = np.sort(short_term[short_term >= integrated + LRA_RELATIVE_GATE_LU])
    # LRA = L_95 - L_10 of the distribution of the gated values (nearest rank)
    k = kept.size
    lo = kept[int(round((k - 1) * 0.10 + 1)) - 1]
    hi = kept[int(round((k - 1) * 0.95 + 1)) - 1]
    return float(max(hi - lo, 0.0))


def curve_from_energies(energies: np.ndarray, hop: int, window_hops: int) -> np.ndarray:
    """Ungated loudness (LUFS, floored) of the window of `window_hops` hops
    ending at each hop (silence before the start): Tech 3341's meter view."""
    return floor_lufs(to_lufs(window_power(energies, window_hops, partial=True)
                              / (window_hops * hop)))


def integrated_loudness(samples: np.ndarray, sample_rate: int) -> float:
    """Integrated loudness in LUFS (BS.1770-4, gated); SILENCE_LUFS when nothing passes the gates."""
    hop = int(round(CURVE_HOP_S * sample_rate))
    return integrated_from_energies(hop_energies(samples, sample_rate), hop)


def loudness_range(samples: np.ndarray, sample_rate: int) -> float:
    """EBU Tech 3342 loudness range in LU (0.0 for tracks shorter than 3 s or silent)."""
    hop = int(round(CURVE_HOP_S * sample_rate))
    return lra_from_energies(hop_energies(samples, sample_rate), hop)


def _curve(samples, sample_rate, window_s, hop_s):
    hop = max(1, int(round(hop_s * sample_rate)))
    n = max(1, int(round(window_s / hop_s)))
    return curve_from_energies(hop_energies(samples, sample_rate, hop_s), hop, n)


def momentary_loudness(samples: np.ndarray, sample_rate: int, *, hop_s: float = CURVE_HOP_S) -> np.ndarray:
    """Ungated momentary loudness (400 ms window) in LUFS, one value per hop;
    value i covers the 400 ms ending at (i + 1) * hop_s (silence before the start)."""
    return _curve(samples, sample_rate, MOMENTARY_S, hop_s)


def short_term_loudness(samples: np.ndarray, sample_rate: int, *, hop_s: float = CURVE_HOP_S) -> np.ndarray:
    """Ungated short-term loudness (3 s window) in LUFS, one value per hop;
    value i covers the 3 s ending at (i + 1) * hop_s (silence before the start)."""
    return _curve(samples, sample_rate, SHORT_TERM_S, hop_s)
