"""Stereo image: mid/side width and L/R correlation, from one Gram matrix.

Definitions (as the synthetic ground truth, shared/truth/synth/README.md):
width = side energy / (mid + side) energy with M = (L+R)/2, S = (L-R)/2, and
correlation = Pearson correlation of L and R over the whole file. Only the
first two channels count. A 1-channel file reads width 0.0, correlation 1.0.
"""

from __future__ import annotations

import numpy as np

from trackgrade.engine.features import Stereo

_SILENT_VARIANCE = 1e-12        # per-sample variance below which a channel is silent (~ -120 dBFS)


def channel_gram(samples: np.ndarray, *, chunk_frames: int = 1 << 16) -> tuple[np.ndarray, np.ndarray, int]:
    """(sums of products x_i x_j (C, C), sums of x_i (C,), frames), float64.
    Float32 BLAS dot products over strided channel views, chunk by chunk,
    the chunk results added in float64 (no copy of the signal); shared by
    stereo and dynamics."""
    x = samples if samples.ndim == 2 else samples[:, None]
    x = np.asarray(x, dtype=np.float32)
    n, n_ch = x.shape
    gram = np.zeros((n_ch, n_ch))
    sums = np.zeros(n_ch)
    for f0 in range(0, n, chunk_frames):
        part = x[f0:f0 + chunk_frames]
        for i in range(n_ch):
            sums[i] += float(part[:, i].sum())
            for j in range(i, n_ch):
                gram[i, j] += float(np.dot(part[:, i], part[:, j]))
    gram = np.triu(gram) + np.triu(gram, 1).T
    return gram, sums, n


def stereo_width(gram: np.ndarray) -> float:
    """Side / (mid + side) energy of the first two channels, 0..1 (0 for mono or silence)."""
    if gram.shape[0] < 2:
        return 0.0
    ll, rr, lr = gram[0, 0], gram[1, 1], gram[0, 1]
    total = 2.0 * (ll + rr)                    # 4 * (mid + side) energy
    if total <= 0.0:
        return 0.0
    return float(np.clip((ll + rr - 2.0 * lr) / total, 0.0, 1.0))


def stereo_correlation(gram: np.ndarray, sums: np.ndarray, frames: int) -> float:
    """Pearson correlation of L and R, -1..1. 1.0 for mono files and for two
    silent (or constant) channels; 0.0 when only one channel is silent."""
    if gram.shape[0] < 2 or frames == 0:
        return 1.0
    mean = sums[:2] / frames
    var_l = gram[0, 0] / frames - mean[0] ** 2
    var_r = gram[1, 1] / frames - mean[1] ** 2
    cov = gram[0, 1] / frames - mean[0] * mean[1]
    silent_l, silent_r = var_l <= _SILENT_VARIANCE, var_r <= _SILENT_VARIANCE
    if silent_l and silent_r:
        return 1.0
    if silent_l or silent_r:
        return 0.0
    return float(np.clip(cov / np.sqrt(var_l * var_r), -1.0, 1.0))


def measure_stereo(samples: np.ndarray, *, gram: tuple | None = None) -> Stereo:
    """Width and correlation of (frames, channels) float32 samples; pass
    `gram=channel_gram(samples)` to share that pass with `measure_dynamics`."""
    products, sums, frames = gram if gram is not None else channel_gram(samples)
    return Stereo(width=stereo_width(products),
                  correlation=stereo_correlation(products, sums, frames))
