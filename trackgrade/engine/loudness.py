"""Loudness per ITU-R BS.1770-4 / EBU R128, EBU Tech 3342 loudness range and
4x-oversampled true peak.

All functions are pure: ``samples`` is float32 of shape (frames, channels)
in [-1, 1], ``sample_rate`` in Hz. Nothing here returns NaN or inf: a
loudness below the -70 LUFS absolute gate (silence) reads ``SILENCE_LUFS``.

Speed (5-minute stereo 44.1 kHz track, one core: ~0.11 s K-weighting,
~0.09 s true peak, against ~0.45 s for two channels of ``sosfilt`` and
seconds for a full 4x ``resample_poly``):

* K-weighting is an IIR cascade; instead of a sample-by-sample ``sosfilt``
  the signal is cut into blocks of ``B`` frames (B divides the 100 ms hop)
  and filtered with matrix products, the block-state-space form of an IIR
  filter: within a block the zero-state response is a Toeplitz product
  ``X @ T``, plus ``s @ P`` from the filter state ``s`` at the block start;
  the states follow ``s[k+1] = A^B s[k] + X[k] @ G``, solved exactly as
  first-order recursions over the modes of ``A`` (float64; the states are
  those of transposed direct form II biquads, well conditioned). Only the
  per-100 ms energies are kept; agreement with float64 ``sosfilt`` ~1e-5.
* True peak evaluates the 4x polyphase interpolator only on blocks whose
  proven upper bound (`_tp_bound_constants`) can beat the running best; the
  result equals brute-force filtering of every sample. The candidate windows
  are gathered as rows of a strided view of each channel (building index
  arrays for them cost 4x the interpolation itself).
"""

from __future__ import annotations

import contextlib
import functools
import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from trackgrade.engine.features import SILENCE_LUFS, Loudness   # SILENCE_LUFS: the floor of every loudness value

try:                                   # optional: pin BLAS to one thread (see single_thread_blas)
    from threadpoolctl import threadpool_limits
except ImportError:                    # pragma: no cover - threadpoolctl ships with most stacks
    threadpool_limits = None

ABSOLUTE_GATE_LUFS = -70.0
RELATIVE_GATE_LU = -10.0      # BS.1770-4 integrated loudness
LRA_RELATIVE_GATE_LU = -20.0  # EBU Tech 3342
CURVE_HOP_S = 0.1
MOMENTARY_S = 0.4
SHORT_TERM_S = 3.0
SILENCE_DBTP = -120.0         # true/sample peak reported for digital silence

# BS.1770 analog prototype (libebur128 derivation; matches the 48 kHz table)
_SHELF_F0, _SHELF_G_DB, _SHELF_Q = 1681.974450955533, 3.999843853973347, 0.7071752369554196
_HP_F0, _HP_Q = 38.13547087602444, 0.5003270373238773


def single_thread_blas():
    """Context pinning BLAS to one thread. The many mid-sized products here run
    10x slower with a 2-thread OpenBLAS on a busy 2-core machine (threads
    spin-waiting for each other) and gain little when it is idle."""
    if threadpool_limits is None:
        return contextlib.nullcontext()
    return threadpool_limits(1, user_api="blas")


# --------------------------------------------------------------------------- K-weighting

def k_weighting_sos(sample_rate: int) -> np.ndarray:
    """The BS.1770 K-weighting filter (pre-filter shelf, then RLB high-pass)
    for any rate, as second-order sections of shape (2, 6), float64."""
    k = math.tan(math.pi * _SHELF_F0 / sample_rate)
    vh = 10.0 ** (_SHELF_G_DB / 20.0)
    vb = vh ** 0.4996667741545416
    a0 = 1.0 + k / _SHELF_Q + k * k
    shelf = [(vh + vb * k / _SHELF_Q + k * k) / a0, 2.0 * (k * k - vh) / a0,
             (vh - vb * k / _SHELF_Q + k * k) / a0,
             1.0, 2.0 * (k * k - 1.0) / a0, (1.0 - k / _SHELF_Q + k * k) / a0]
    k = math.tan(math.pi * _HP_F0 / sample_rate)
    a0 = 1.0 + k / _HP_Q + k * k
    highpass = [1.0, -2.0, 1.0, 1.0, 2.0 * (k * k - 1.0) / a0, (1.0 - k / _HP_Q + k * k) / a0]
    return np.array([shelf, highpass])


def channel_weights(channels: int) -> np.ndarray:
    """BS.1770 channel weights: 1.0 for L, R, C; 1.41 for the surrounds of a
    5.0 (L R C Ls Rs) or 5.1 (L R C LFE Ls Rs) file, the LFE excluded."""
    if channels == 5:
        return np.array([1.0, 1.0, 1.0, 1.41, 1.41])
    if channels == 6:
        return np.array([1.0, 1.0, 1.0, 0.0, 1.41, 1.41])
    return np.ones(channels)


def _block_size(hop: int, lo: int = 20, hi: int = 64) -> int:
    """The divisor of `hop` in [lo, hi] closest to 42 (GEMM-friendly); for a
    hop with none (odd rates, e.g. a prime hop), its largest divisor <= hi."""
    divisors = [b for b in range(lo, hi + 1) if hop % b == 0]
    if divisors:
        return min(divisors, key=lambda b: abs(b - 42))
    return max(b for b in range(1, hi + 1) if hop % b == 0)


def first_order_recursion(z: np.ndarray, lam: complex, init: np.ndarray,
                          chunk: int = 16) -> np.ndarray:
    """y[k] = lam y[k-1] + z[k] along the last axis of the complex `z`, with
    y[-1] = `init` (shape z.shape[:-1]): the one-pole filter
    lfilter([1], [1, -lam], z, zi=lam*init), exact to rounding. Chunks of
    `chunk` values take their zero-state response from one small Toeplitz
    product; the values at the chunk ends follow the same recursion with
    lam**chunk, solved recursively, and feed each chunk's start."""
    n = z.shape[-1]
    lead = z.shape[:-1]
    init = np.asarray(init, dtype=complex).reshape(lead + (1,))
    if n == 0:
        return np.zeros(z.shape, dtype=complex)
    size = min(chunk, n)
    powers = lam ** np.arange(size + 1)
    lag = np.arange(size)[:, None] - np.arange(size)[None, :]
    toeplitz = np.where(lag >= 0, powers[np.clip(lag, 0, size)], 0.0)   # lam^(i-j), i >= j
    m = -(-n // size)
    padded = np.zeros(lead + (m * size,), dtype=complex)
    padded[..., :n] = z
    zero_state = padded.reshape(lead + (m, size)) @ toeplitz.T
    starts = init
    if m > 1:
        ends = first_order_recursion(zero_state[..., :-1, -1], lam ** size, init[..., 0], chunk)
        starts = np.concatenate((init, ends), axis=-1)
    y = zero_state + starts[..., None] * powers[1:]
    return y.reshape(lead + (m * size,))[..., :n]


def _cascade_state_space(sos: np.ndarray):
    """(A, B, C, D) of a cascade of biquads in transposed direct form II: the
    states stay of the order of the signal (well conditioned, unlike the
    companion form, for the K-filter's nearly double high-pass pole)."""
    A = np.zeros((0, 0))
    Bv = np.zeros(0)
    C = np.zeros(0)
    D = 1.0
    for b0, b1, b2, _, a1, a2 in sos:
        As = np.array([[-a1, 1.0], [-a2, 0.0]])
        Bs = np.array([b1 - a1 * b0, b2 - a2 * b0])
        Cs = np.array([1.0, 0.0])
        k = A.shape[0]
        A_new = np.zeros((k + 2, k + 2))
        A_new[:k, :k] = A
        A_new[k:, :k] = np.outer(Bs, C)
        A_new[k:, k:] = As
        A, Bv, C, D = A_new, np.concatenate([Bv, Bs * D]), np.concatenate([b0 * C, Cs]), b0 * D
    return A, Bv, C, D


def _block_filter_matrices(sos: np.ndarray, block: int):
    """Block-state-space form of the K-filter for blocks of `block` frames.

    Returns (T, G, P, lam, V, Vinv) with y_block = x_block @ T + s @ P.T and
    s_next = (A^B) s + x_block @ G, where A^B = V diag(lam) Vinv."""
    A, Bv, C, D = _cascade_state_space(sos)
    order = A.shape[0]
    powers = [np.eye(order)]
    for _ in range(block):
        powers.append(powers[-1] @ A)
    impulse = np.array([D] + [C @ powers[n - 1] @ Bv for n in range(1, block)])
    idx = np.arange(block)
    lag = idx[None, :] - idx[:, None]                     # T[i, t] = h[t - i]
    T = np.where(lag >= 0, impulse[np.clip(lag, 0, None)], 0.0)
    G = np.stack([powers[block - 1 - i] @ Bv for i in range(block)])   # (B, order)
    P = np.stack([C @ powers[t] for t in range(block)])                # (B, order)
    poles, V = np.linalg.eig(A)            # A^B = V diag(poles^B) V^-1 (A^B itself can be
    return T, G, P, poles ** block, V, np.linalg.inv(V)   # numerically defective)


def _block_states(u: np.ndarray, lam: np.ndarray, V: np.ndarray, Vinv: np.ndarray,
                  carry: np.ndarray) -> np.ndarray:
    """Solve s[k+1] = Phi s[k] + u[k] along the last axis of u (order,
    channels, blocks), float64, Phi = V diag(lam) Vinv: one first-order
    recursion per mode, one of each complex-conjugate pair kept (doubled).
    `carry` (modes, channels) holds the mode values at the first block and is
    updated in place for the next segment."""
    order, n_ch, n_blocks = u.shape
    keep = [m for m in range(order) if lam[m].imag >= -1e-12]
    drive = np.vstack([Vinv[keep].real, Vinv[keep].imag]) @ u.reshape(order, -1)
    k = len(keep)
    modes = np.empty((k, n_ch, n_blocks), dtype=complex)
    for i, m in enumerate(keep):
        gain = 2.0 if lam[m].imag > 1e-12 else 1.0
        z = gain * (drive[i] + 1j * drive[k + i]).reshape(n_ch, n_blocks)
        # modes[k] = carry * lam^k + sum_{j<k} lam^(k-1-j) z[j]
        out = first_order_recursion(z, lam[m], carry[i])
        modes[i, :, 0] = carry[i]
        modes[i, :, 1:] = out[:, :-1]
        carry[i] = out[:, -1]
    modes = modes.reshape(k, -1)
    states = V[:, keep].real @ modes.real - V[:, keep].imag @ modes.imag
    return states.reshape(order, n_ch, n_blocks)


def _kweighted_energy_gemm(samples: np.ndarray, sample_rate: int, block: int,
                           segment_blocks: int = 2048) -> np.ndarray:
    """Sum of squared K-weighted samples per block of `block` frames and per
    channel, shape (blocks, channels), float64; complete blocks only.
    Segment by segment (the mode values carried across), so the extra memory
    is a few MB whatever the length."""
    n_ch = samples.shape[1]
    n_blocks = samples.shape[0] // block
    T, G, P, lam, V, Vinv = _block_filter_matrices(k_weighting_sos(sample_rate), block)
    order = G.shape[1]
    G32, T32, P32 = G.T.astype(np.float32), T.astype(np.float32), P.T.astype(np.float32)
    ones = np.ones(block, dtype=np.float32)
    carry = np.zeros((order, n_ch), dtype=complex)
    energy = np.empty((n_ch, n_blocks))
    for b0 in range(0, n_blocks, segment_blocks):
        b1 = min(n_blocks, b0 + segment_blocks)
        nb = b1 - b0
        # one row per (channel, block): `block` consecutive frames of one channel
        rows = np.ascontiguousarray(np.asarray(samples[b0 * block:b1 * block], dtype=np.float32).T)
        rows = rows.reshape(n_ch * nb, block)
        u = (G32 @ rows.T).astype(np.float64).reshape(order, n_ch, nb)
        states = _block_states(u, lam, V, Vinv, carry).reshape(order, n_ch * nb)
        y = rows @ T32
        y += states.T.astype(np.float32) @ P32
        y *= y
        energy[:, b0:b1] = (y @ ones).reshape(n_ch, nb)
    return energy.T


def hop_energies(samples: np.ndarray, sample_rate: int, hop_s: float = CURVE_HOP_S) -> np.ndarray:
    """Channel-weighted energy (sum of squares) of the K-weighted signal in
    consecutive hops of round(hop_s * rate) frames; complete hops only."""
    samples = _as_2d(samples)
    hop = max(1, int(round(hop_s * sample_rate)))
    n_hops = samples.shape[0] // hop
    if n_hops == 0:
        return np.zeros(0)
    weights = channel_weights(samples.shape[1])
    block = _block_size(hop)
    with single_thread_blas():
        energy = _kweighted_energy_gemm(samples[:n_hops * hop], sample_rate, block,
                                        segment_blocks=max(2048, 86016 // block)) @ weights
    return energy.reshape(n_hops, hop // block).sum(axis=1)


# --------------------------------------------------------------------------- gating

def _to_lufs(mean_power):
    with np.errstate(divide="ignore"):
        return -0.691 + 10.0 * np.log10(mean_power)


def _floor(lufs):
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
    lufs = _to_lufs(block_power)
    above = lufs > ABSOLUTE_GATE_LUFS
    if not above.any():
        return SILENCE_LUFS
    relative = _to_lufs(block_power[above].mean()) + RELATIVE_GATE_LU
    gated = above & (lufs > relative)
    return float(max(_to_lufs(block_power[gated].mean()), SILENCE_LUFS))


def integrated_from_energies(energies: np.ndarray, hop: int) -> float:
    """BS.1770-4 integrated loudness from 100 ms hop energies (400 ms blocks,
    75 % overlap, -70 LUFS absolute and -10 LU relative gates)."""
    return _gated_integrated(window_power(energies, 4) / (4 * hop))


def lra_from_energies(energies: np.ndarray, hop: int) -> float:
    """EBU Tech 3342 loudness range from 100 ms hop energies: 3 s short-term
    values every 0.1 s, -70 LUFS absolute and -20 LU relative gates, 95th minus
    10th percentile (nearest rank, as the Tech 3342 listing)."""
    short_term = _to_lufs(window_power(energies, 30) / (30 * hop))
    short_term = short_term[short_term >= ABSOLUTE_GATE_LUFS]
    if short_term.size == 0:
        return 0.0
    integrated = 10.0 * np.log10(np.mean(10.0 ** (short_term / 10.0)))
    kept = np.sort(short_term[short_term >= integrated + LRA_RELATIVE_GATE_LU])
    k = kept.size
    lo = kept[int(round((k - 1) * 0.10 + 1)) - 1]
    hi = kept[int(round((k - 1) * 0.95 + 1)) - 1]
    return float(max(hi - lo, 0.0))


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
    energies = hop_energies(samples, sample_rate, hop_s)
    return _floor(_to_lufs(window_power(energies, n, partial=True) / (n * hop)))


def momentary_loudness(samples: np.ndarray, sample_rate: int, *, hop_s: float = CURVE_HOP_S) -> np.ndarray:
    """Ungated momentary loudness (400 ms window) in LUFS, one value per hop;
    value i covers the 400 ms ending at (i + 1) * hop_s (silence before the start)."""
    return _curve(samples, sample_rate, MOMENTARY_S, hop_s)


def short_term_loudness(samples: np.ndarray, sample_rate: int, *, hop_s: float = CURVE_HOP_S) -> np.ndarray:
    """Ungated short-term loudness (3 s window) in LUFS, one value per hop;
    value i covers the 3 s ending at (i + 1) * hop_s (silence before the start)."""
    return _curve(samples, sample_rate, SHORT_TERM_S, hop_s)


# --------------------------------------------------------------------------- peaks

_TP_TAPS = 193                # 48 taps per phase (BS.1770 Annex 2 uses 12; longer = flatter)
_TP_BLOCK = 32                # frames per candidate block
_TP_FILTER = None


def kaiser_lowpass(taps: int, cutoff: float, beta: float) -> np.ndarray:
    """Windowed-sinc low-pass FIR, `cutoff` relative to Nyquist, Kaiser window,
    unit gain at DC: scipy.signal.firwin(taps, cutoff, window=("kaiser", beta))."""
    m = np.arange(taps) - (taps - 1) / 2.0
    h = cutoff * np.sinc(cutoff * m) * np.kaiser(taps, beta)
    return h / h.sum()


def _tp_phases() -> np.ndarray:
    """Phases 1..3 of the 4x interpolation low-pass (Kaiser, cutoff at the
    original Nyquist), as coefficient rows c[r, j] for x[n + j], j = -23..24."""
    global _TP_FILTER
    if _TP_FILTER is None:
        h = kaiser_lowpass(_TP_TAPS, 0.25, 9.0) * 4.0
        # phase r output at n is sum_k h[r + 4k] x[n + 24 - k]  (group delay 24 samples)
        _TP_FILTER = np.stack([h[r::4][:48][::-1] for r in (1, 2, 3)])   # index j + 23
    return _TP_FILTER


@functools.lru_cache(maxsize=4)
def _tp_matrix(block: int) -> np.ndarray:
    """(block + 47, 3 * block) matrix: window of x[start-23 : start+block+24] -> the
    three interpolated phases at each of the block's frames."""
    c = _tp_phases()
    m = np.zeros((block + 47, 3, block))
    for t in range(block):
        m[t:t + 48, :, t] = c.T
    return m.reshape(block + 47, 3 * block).astype(np.float32)


@functools.lru_cache(maxsize=1)
def _tp_bound_constants() -> tuple[float, float]:
    """Constants (a, w) of the bound
        |y_r[n]| <= a max(|x[n]|, |x[n+1]|) + w max|e[m]|,  m = n-22 .. n+23,
    e the second difference x[m+1] - 2x[m] + x[m-1]. Summing by parts twice:
    y_r[n] = S (1-al) x[n] + S al x[n+1] + sum_m g[m] e[m] with S = sum c,
    al = sum j c_j / S in [0, 1]; so a = max |S| and w = max sum |g|."""
    c = _tp_phases().astype(np.float64)
    j = np.arange(-23, 25)
    a = w = 0.0
    for row in c:
        total = row.sum()
        alpha = float((j * row).sum() / total)
        resid = row.copy()
        resid[23] -= total * (1.0 - alpha)
        resid[24] -= total * alpha
        g = np.cumsum(np.cumsum(resid))[:-2]          # g[m] for m = -22..23
        a = max(a, abs(total))
        w = max(w, float(np.abs(g).sum()))
    return a * (1 + 1e-6), w * (1 + 1e-6)


def _block_amplitude_and_curvature(flat: np.ndarray, n_ch: int, block: int,
                                   chunk_blocks: int = 2048) -> tuple[np.ndarray, np.ndarray]:
    """Per block of frames (all channels of the interleaved `flat`): max |x|,
    and max |E[k]| with E[k] = x[k] - 2 x[k-1] + x[k-2] (the second difference
    centred on frame k-1; x = 0 outside), k = 0..n+1. Returns ceil(n / block)
    and n // block + 2 values. One pass over cache-sized chunks; the channels
    share a bound (per-channel maxima cost more than they save)."""
    n = flat.shape[0] // n_ch
    amp = np.empty(-(-n // block), dtype=np.float32)
    curv = np.zeros(n // block + 2, dtype=np.float32)
    step = chunk_blocks * block
    width = block * n_ch
    for f0 in range(0, n, step):
        f1 = min(n, f0 + step)
        b0 = f0 // block
        starts = np.arange(0, (f1 - f0) * n_ch, width)
        part = np.maximum.reduceat(np.abs(flat[f0 * n_ch:f1 * n_ch]), starts)
        amp[b0:b0 + part.size] = part
        if f0 == 0:
            xs = np.concatenate([np.zeros(2 * n_ch, np.float32), flat[:f1 * n_ch]])
        else:
            xs = flat[(f0 - 2) * n_ch:f1 * n_ch]
        e = xs[2 * n_ch:] + xs[:-2 * n_ch]
        e -= xs[n_ch:-n_ch]
        e -= xs[n_ch:-n_ch]
        np.abs(e, out=e)
        part = np.maximum.reduceat(e, starts)
        curv[b0:b0 + part.size] = part
    last = flat[(n - 1) * n_ch:]
    before = flat[(n - 2) * n_ch:(n - 1) * n_ch] if n >= 2 else np.zeros(n_ch, np.float32)
    curv[n // block] = max(curv[n // block], float(np.abs(before - 2 * last).max()))
    curv[(n + 1) // block] = max(curv[(n + 1) // block], float(np.abs(last).max()))
    return amp, curv


def _true_peak_bounds(flat: np.ndarray, n_ch: int, block: int) -> tuple[np.ndarray, np.ndarray]:
    """Per block of `block` frames (all channels): the sample peak and a proven
    upper bound of every 4x-interpolated value (see `_tp_bound_constants`):
    tight on loud, bass-heavy material, where the second difference is small."""
    amp, emax = _block_amplitude_and_curvature(flat, n_ch, block)
    n_blocks = amp.size
    anchor = np.maximum(amp, np.append(amp[1:], np.float32(0.0)))
    # E index k = m + 1 with m in n-22 .. n+23: for the frames of block b,
    # k in bB-21 .. bB+B+23, i.e. blocks b-before .. b+after
    before, after = -(-21 // block), 1 + 23 // block
    padded = np.concatenate([np.zeros(before, np.float32), emax, np.zeros(after + 2, np.float32)])
    ewin = padded[:n_blocks].copy()
    for shift in range(1, before + after + 1):
        np.maximum(ewin, padded[shift:shift + n_blocks], out=ewin)
    a, w = _tp_bound_constants()
    return amp, a * anchor + w * ewin


def _interpolated_block_peaks(flat: np.ndarray, n_ch: int, blocks: np.ndarray, block: int,
                              per_block: bool = False):
    """Exact max |interpolated value| (phases 1-3) over the given blocks, all channels.
    The windows of the inner blocks are rows of a strided view of each
    channel (one row copy per block, no index arrays); the few blocks whose
    window runs past either end are zero-padded through an index array.
    With `per_block`: (the inner blocks, each one's max) instead."""
    n = flat.shape[0] // n_ch
    width = block + 47
    matrix = _tp_matrix(block)
    start = block - 23                     # block b's window starts at frame b*block - 23
    rows = (n - start - width) // block + 1 if n >= start + width else 0
    inner = (blocks >= 1) & (blocks <= rows)
    peak = 0.0
    if per_block:
        per_block = np.zeros(int(inner.sum()), dtype=np.float32)
        blocks = blocks[inner]
        inner = np.ones(blocks.size, dtype=bool)
    else:
        per_block = None
    if inner.any():
        row = blocks[inner] - 1
        for ch in range(n_ch):
            col = flat[ch::n_ch]
            step = col.strides[0]
            view = as_strided(col[start:], shape=(rows, width), strides=(block * step, step),
                              writeable=False)
            values = view[row] @ matrix
            top = max(float(values.max()), -float(values.min()))
            peak = max(peak, top)
            if per_block is not None:
                np.maximum(per_block, np.maximum(values.max(axis=1), -values.min(axis=1)),
                           out=per_block)
    if per_block is not None:
        return blocks, per_block
    edge = blocks[~inner]
    if edge.size:
        peak = max(peak, _edge_block_peaks(flat, n_ch, edge, block))
    return peak


def _edge_block_peaks(flat: np.ndarray, n_ch: int, blocks: np.ndarray, block: int) -> float:
    """`_interpolated_block_peaks` for blocks whose window may run past the signal."""
    n = flat.shape[0] // n_ch
    frames = blocks[:, None] * block - 23 + np.arange(block + 47)[None, :]
    outside = (frames < 0) | (frames >= n)
    index = np.clip(frames, 0, n - 1) * n_ch
    peak = 0.0
    for ch in range(n_ch):
        windows = flat[index + ch] if ch else flat[index]
        windows[outside] = 0.0
        peak = max(peak, float(np.abs(windows @ _tp_matrix(block)).max()))
    return peak


def true_peak_dbtp(samples: np.ndarray, *, block: int = _TP_BLOCK) -> float:
    """True peak in dBTP: max over channels of |x| 4x oversampled (polyphase
    FIR, 48 taps per phase); SILENCE_DBTP for digital silence.

    Exact (same value as filtering everything), but the interpolator runs only
    on blocks whose upper bound can beat the best value found so far (the
    blocks with the highest bounds first)."""
    samples = _as_2d(samples)
    if samples.shape[0] == 0:
        return SILENCE_DBTP
    n_ch = samples.shape[1]
    flat = np.ascontiguousarray(samples, dtype=np.float32).reshape(-1)
    amp, bound = _true_peak_bounds(flat, n_ch, block)
    best = float(amp.max())
    candidates = np.flatnonzero(bound > best)
    chunk = max(64, 8192 // n_ch)
    if candidates.size > chunk:          # the most promising chunk first, the rest in order
        top = np.argpartition(-bound[candidates], chunk)[:chunk]
        first = np.zeros(candidates.size, dtype=bool)
        first[top] = True
        candidates = np.concatenate([candidates[top], candidates[~first]])
    parts = []                                       # (chunk's blocks, its 4x max)
    with single_thread_blas():
        for i0 in range(0, candidates.size, chunk):
            part = candidates[i0:i0 + chunk]
            part = part[bound[part] > best]
            if part.size:
                peak = _interpolated_block_peaks(flat, n_ch, part, block)
                parts.append((part, peak))
                best = max(best, peak)
        best = max(best, _fine_block_peaks(flat, n_ch, _fine_candidates(flat, n_ch, block, amp,
                                                                        parts), block))
    return _to_db(best)


def _fine_candidates(flat: np.ndarray, n_ch: int, block: int, amp: np.ndarray,
                     parts: list) -> np.ndarray:
    """The blocks to search on the 64x grid: the `_FINE_BLOCKS` with the highest
    4x values within the two chunks that reached the highest, and those with
    the highest samples."""
    chosen = [np.flatnonzero(amp >= amp[_top(amp, _FINE_BLOCKS)].min())[:4 * _FINE_BLOCKS]]
    for part, _ in sorted(parts, key=lambda p: -p[1])[:2]:
        inner, per_block = _interpolated_block_peaks(flat, n_ch, part, block, per_block=True)
        chosen.append(inner[_top(per_block, _FINE_BLOCKS)])
        chosen.append(np.setdiff1d(part, inner))                      # edge blocks, if any
    return np.unique(np.concatenate(chosen))


# A 4x grid can miss a peak by up to 1 - cos(pi/8) of its height (0.69 dB, a
# tone just under Nyquist; 0.17 dB at fs/4): the EBU 3341 inter-sample cases
# read 0.035 dB under their band-limited peak on the 4x grid alone. So after
# the exact 4x search, the 16 blocks with the highest 4x values in each of the
# two chunks that reached the highest, and the 16 blocks with the highest
# samples, are searched again on a 64x grid (same Kaiser design). That finds
# a tone's or an isolated transient's peak; on dense material with many
# blocks within a fraction of a dB of each other it can still miss a higher
# point elsewhere (never reading below the 4x maximum).
_FINE = 64
_FINE_BLOCKS = 16             # the blocks with the highest 4x values searched finely (x2)


@functools.lru_cache(maxsize=1)
def _fine_phases() -> np.ndarray:
    """(64, 48) rows: phase r of the 64x interpolator, coefficients for x[n-23..n+24]."""
    h = kaiser_lowpass(48 * _FINE + 1, 1.0 / _FINE, 9.0) * _FINE
    return np.stack([h[r::_FINE][:48][::-1] for r in range(_FINE)])


def _top(values: np.ndarray, k: int) -> np.ndarray:
    """Indices of the k largest values (all of them when there are fewer), unordered."""
    if values.size <= k:
        return np.arange(values.size)
    return np.argpartition(values, values.size - k)[values.size - k:]


def _fine_block_peaks(flat: np.ndarray, n_ch: int, blocks: np.ndarray, block: int) -> float:
    """Max |x(t)| on the 64x grid over the frames of `blocks` (and one before)."""
    if blocks.size == 0:
        return 0.0
    n = flat.shape[0] // n_ch
    frames = (blocks[:, None] * block + np.arange(-1, block)[None, :]).reshape(-1)
    frames = np.unique(np.clip(frames, 0, n - 1))
    taps = frames[:, None] - 23 + np.arange(48)[None, :]           # x[n-23..n+24]
    outside = (taps < 0) | (taps >= n)
    index = np.clip(taps, 0, n - 1) * n_ch
    fine = _fine_phases()
    peak = 0.0
    for ch in range(n_ch):
        windows = flat[index + ch].astype(np.float64)
        windows[outside] = 0.0
        peak = max(peak, float(np.abs(windows @ fine.T).max()))
    return peak


def sample_peak_dbfs(samples: np.ndarray) -> float:
    """Largest |sample| over all channels in dBFS (SILENCE_DBTP for silence)."""
    if samples.size == 0:
        return SILENCE_DBTP
    return _to_db(max(float(samples.max()), -float(samples.min())))


def _to_db(amplitude: float) -> float:
    return max(20.0 * math.log10(amplitude), SILENCE_DBTP) if amplitude > 0 else SILENCE_DBTP


def _as_2d(samples: np.ndarray) -> np.ndarray:
    return samples[:, None] if samples.ndim == 1 else samples


# --------------------------------------------------------------------------- all at once

def measure_loudness(samples: np.ndarray, sample_rate: int) -> Loudness:
    """Every loudness figure of a track from one K-weighting pass."""
    samples = _as_2d(samples)
    hop = int(round(CURVE_HOP_S * sample_rate))
    energies = hop_energies(samples, sample_rate, CURVE_HOP_S)
    n_m = int(round(MOMENTARY_S / CURVE_HOP_S))
    n_s = int(round(SHORT_TERM_S / CURVE_HOP_S))
    momentary = _floor(_to_lufs(window_power(energies, n_m, partial=True) / (n_m * hop)))
    short_term = _floor(_to_lufs(window_power(energies, n_s, partial=True) / (n_s * hop)))
    return Loudness(
        integrated_lufs=integrated_from_energies(energies, hop),
        loudness_range_lu=lra_from_energies(energies, hop),
        true_peak_dbtp=true_peak_dbtp(samples),
        sample_peak_dbfs=sample_peak_dbfs(samples),
        momentary_lufs=momentary.astype(np.float32),
        short_term_lufs=short_term.astype(np.float32),
        curve_hop_s=CURVE_HOP_S,
    )
