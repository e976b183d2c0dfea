"""K-weighting (ITU-R BS.1770-4, Annex 1) and the K-weighted energy of each
100 ms hop, the one pass every loudness figure is computed from.

BS.1770-4 measures loudness on the K-weighted signal: a pre-filter (a high
shelf of about +4 dB above 1.5 kHz modelling the head, Table 1) followed by
the RLB high-pass (about 38 Hz, Table 2). Both are biquads whose 48 kHz
coefficients the standard lists; `k_weighting_sos` derives them for any rate
from the analog prototype (the derivation of libebur128, which reproduces
the 48 kHz tables).

Speed (5-minute stereo 44.1 kHz track, one core: ~0.11 s, against ~0.45 s
for two channels of ``sosfilt``): instead of a sample-by-sample ``sosfilt``
the signal is cut into blocks of ``B`` frames (B divides the 100 ms hop) and
filtered with matrix products, the block-state-space form of an IIR filter:
within a block the zero-state response is a Toeplitz product ``X @ T``, plus
``s @ P`` from the filter state ``s`` at the block start; the states follow
``s[k+1] = A^B s[k] + X[k] @ G``, solved exactly as first-order recursions
over the modes of ``A`` (float64; the states are those of transposed direct
form II biquads, well conditioned). Only the per-100 ms energies are kept;
agreement with float64 ``sosfilt`` ~1e-5.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from trackgrade.engine.loudness.arrays import as_2d, single_thread_blas

CURVE_HOP_S = 0.1             # Tech 3341: meters update at least 10 times a second

# BS.1770 analog prototype (libebur128 derivation; matches the 48 kHz table)
_SHELF_F0, _SHELF_G_DB, _SHELF_Q = 1681.974450955533, 3.999843853973347, 0.7071752369554196
_HP_F0, _HP_Q = 38.13547087602444, 0.5003270373238773


def k_weighting_sos(sample_rate: int) -> np.ndarray:
    """The BS.1770 K-weighting filter (pre-filter shelf, then RLB high-pass)
    for any rate, as second-order sections of shape (2, 6), float64.

    Both stages are bilinear transforms of the analog prototypes with
    K = tan(pi f0 / fs) (BS.1770-4 Annex 1, Tables 1 and 2 at 48 kHz)."""
    # stage 1, the pre-filter (Table 1): a high shelf of G dB at f0, quality Q
    k = math.tan(math.pi * _SHELF_F0 / sample_rate)
    vh = 10.0 ** (_SHELF_G_DB / 20.0)
    vb = vh ** 0.4996667741545416
    a0 = 1.0 + k / _SHELF_Q + k * k
    shelf = [(vh + vb * k / _SHELF_Q + k * k) / a0, 2.0 * (k * k - vh) / a0,
             (vh - vb * k / _SHELF_Q + k * k) / a0,
             1.0, 2.0 * (k * k - 1.0) / a0, (1.0 - k / _SHELF_Q + k * k) / a0]
    # stage 2, the RLB weighting (Table 2): a second-order high-pass, b = (1, -2, 1)
    k = math.tan(math.pi * _HP_F0 / sample_rate)
    a0 = 1.0 + k / _HP_Q + k * k
    highpass = [1.0, -2.0, 1.0, 1.0, 2.0 * (k * k - 1.0) / a0, (1.0 - k / _HP_Q + k * k) / a0]
    return np.array([shelf, highpass])


def channel_weights(channels: int) -> np.ndarray:
    """BS.1770 channel weights G_i (Table 3): 1.0 for L, R, C; 1.41 for the
    surrounds of a 5.0 (L R C Ls Rs) or 5.1 (L R C LFE Ls Rs) file, the LFE
    excluded."""
    if channels == 5:
        return np.array([1.0, 1.0, 1.0, 1.41, 1.41])
    if channels == 6:
        return np.array([1.0, 1.0, 1.0, 0.0, 1.41, 1.41])
    return np.ones(channels)


def block_size(hop: int, lo: int = 20, hi: int = 64) -> int:
    """The divisor of `hop` in [lo, hi] closest to 42 (GEMM-friendly); for a
    hop with none (odd rates, e.g. a prime hop), its largest divisor <= hi."""
    divisors = [b for b in range(lo, hi + 1) if hop % b == 0]
    if divisors:
        return min(divisors, key=lambda b: abs(b - 42))
    return max(b for b in range(1, hi + 1) if hop % b == 0)


@functools.lru_cache(maxsize=256)
def _recursion_matrices(lam: complex, size: int) -> tuple[np.ndarray, np.ndarray]:
    """lam^0..lam^size and the transposed Toeplitz matrix lam^(i-j) (i >= j, else
    0) of `first_order_recursion`, read-only: a track's segments and modes
    reuse the same few poles (and their powers), so each pair is built once."""
    powers = lam ** np.arange(size + 1)
    lag = np.arange(size)[:, None] - np.arange(size)[None, :]
    toeplitz = np.where(lag >= 0, powers[np.clip(lag, 0, size)], 0.0)   # lam^(i-j), i >= j
    toeplitz_t = toeplitz.T
    for array in (powers, toeplitz_t):
        array.flags.writeable = False
    return powers, toeplitz_t


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
    powers, toeplitz_t = _recursion_matrices(complex(lam), size)
    m = -(-n // size)
    padded = np.zeros(lead + (m * size,), dtype=complex)
    padded[..., :n] = z
    zero_state = padded.reshape(lead + (m, size)) @ toeplitz_t
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


@functools.lru_cache(maxsize=8)
def _filter_matrices(sample_rate: int, block: int):
    """`_block_filter_matrices` of the K-filter at `sample_rate`, with T, G and
    P as the float32 operands the products use: (T32, G32, P32, lam, V, Vinv)."""
    T, G, P, lam, V, Vinv = _block_filter_matrices(k_weighting_sos(sample_rate), block)
    return T.astype(np.float32), G.T.astype(np.float32), P.T.astype(np.float32), lam, V, Vinv


def _kweighted_energy_gemm(samples: np.ndarray, sample_rate: int, block: int,
                           segment_blocks: int = 2048, *,
                           carry: np.ndarray | None = None) -> np.ndarray:
    """Sum of squared K-weighted samples per block of `block` frames and per
    channel, shape (blocks, channels), float64; complete blocks only.
    Segment by segment (the mode values carried across), so the extra memory
    is a few MB whatever the length. `carry` (modes, channels), complex: the
    filter's state at the first frame (zeros: silence before), updated in
    place to the state after the last block (for the next part of a signal)."""
    n_ch = samples.shape[1]
    n_blocks = samples.shape[0] // block
    T32, G32, P32, lam, V, Vinv = _filter_matrices(sample_rate, block)
    order = G32.shape[0]
    ones = np.ones(block, dtype=np.float32)
    if carry is None:
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
        y *= y                                      # y_i^2, summed per block: BS.1770-4 eq. (1)
        energy[:, b0:b1] = (y @ ones).reshape(n_ch, nb)
    return energy.T


def hop_energies(samples: np.ndarray, sample_rate: int, hop_s: float = CURVE_HOP_S) -> np.ndarray:
    """Channel-weighted energy (sum of squares) of the K-weighted signal in
    consecutive hops of round(hop_s * rate) frames; complete hops only.

    Per hop, sum_i G_i sum_t y_i[t]^2: the numerator of BS.1770-4 eq. (2)
    before the division by the window length, so that any window of whole
    hops (400 ms, 3 s) is a sum of hops."""
    samples = as_2d(samples)
    hop = max(1, int(round(hop_s * sample_rate)))
    n_hops = samples.shape[0] // hop
    if n_hops == 0:
        return np.zeros(0)
    weights = channel_weights(samples.shape[1])
    block = block_size(hop)
    with single_thread_blas():
        energy = _kweighted_energy_gemm(samples[:n_hops * hop], sample_rate, block,
                                        segment_blocks=max(2048, 86016 // block)) @ weights
    return energy.reshape(n_hops, hop // block).sum(axis=1)


class HopEnergies:
    """`hop_energies` of a signal fed in chunks of any length: the K-filter's
    state is carried from chunk to chunk, the frames of an incomplete hop wait
    for the next chunk. The caller pins BLAS (`single_thread_blas`) around the
    whole pass, not each chunk."""

    def __init__(self, sample_rate: int, channels: int, hop_s: float = CURVE_HOP_S) -> None:
        self.sample_rate = sample_rate
        self.hop = max(1, int(round(hop_s * sample_rate)))
        self._block = block_size(self.hop)
        self._weights = channel_weights(channels)
        order = _filter_matrices(sample_rate, self._block)[1].shape[0]
        self._carry = np.zeros((order, channels), dtype=complex)
        self._pending = np.zeros((0, channels), dtype=np.float32)
        self._parts: list[np.ndarray] = []

    def feed(self, chunk: np.ndarray) -> None:
        if self._pending.shape[0]:
            chunk = np.concatenate([self._pending, chunk])
        usable = chunk.shape[0] - chunk.shape[0] % self.hop
        self._pending = chunk[usable:].copy()
        if usable:
            energy = _kweighted_energy_gemm(chunk[:usable], self.sample_rate, self._block,
                                            segment_blocks=max(2048, 86016 // self._block),
                                            carry=self._carry) @ self._weights
            self._parts.append(energy.reshape(usable // self.hop, -1).sum(axis=1))

    def energies(self) -> np.ndarray:
        """The energy of every complete hop fed so far (an incomplete last hop is left out)."""
        return np.concatenate(self._parts) if self._parts else np.zeros(0)
