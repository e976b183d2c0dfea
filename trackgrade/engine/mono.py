"""What a mono fold-down does to each band, from the long spectrum's own transforms.

For each band, over the whole track: the left and right energies E_L, E_R and
the real cross-spectrum C = sum Re(X_L conj(X_R)) (Parseval: the band's sum of
l*r). Summing to mono, M = (L + R) / 2 has energy (E_L + E_R + 2C) / 4, against
the mean of the channel energies (E_L + E_R) / 2 (CONTRACT.md section 5):

    mono_loss_db = 10 log10(((E_L + E_R) / 2) / ((E_L + E_R + 2C) / 4))
    correlation  = C / sqrt(E_L E_R)

0 dB and correlation 1 for a mono band, 3 dB for two unrelated channels, large
for anti-phase. `ChannelBands` collects the per-frame band sums while
`frames.long_spectrum` transforms each channel (no second FFT pass): one
sum over each block's frames, then one reduction to seven numbers per block.
"""

from __future__ import annotations

import numpy as np

from trackgrade.engine.features import BAND_NAMES, MonoFold
from trackgrade.engine.spectrum import band_bins, band_sums

MAX_MONO_LOSS_DB = 60.0         # reported for a band that cancels completely
_SILENT = 1e-20                 # band energy below which a band counts as silent


class ChannelBands:
    """Per block of long-spectrum frames (one FFT call of one channel): the
    left and right band energies and the band sums of the real cross-spectrum
    of the first two channels, each summed over the block's frames first (one
    band reduction per block, not per frame). Blocks are keyed by their first
    frame and added in frame order, so the totals do not depend on which
    thread transformed which block."""

    def __init__(self, freqs: np.ndarray, frames: int) -> None:
        self.freqs = freqs
        self.frames = frames
        self._bins = band_bins(freqs)
        self._blocks: dict[int, list] = {}
        self._pending: dict[int, np.ndarray] = {}

    def _bands(self, per_bin: np.ndarray) -> np.ndarray:
        return band_sums(per_bin.astype(np.float64)[None, :], self.freqs)[0]

    def take(self, frame: int, channel: int, spectrum: np.ndarray, power: np.ndarray) -> None:
        """One block of frames' transforms (rows from `frame` on) of `channel` (0 or 1)."""
        energy = self._bands(power.sum(axis=0))
        if channel == 0:
            self._pending[frame] = spectrum            # a fresh array from the FFT
            self._blocks[frame] = [energy, None, None]
            return
        left = self._pending.pop(frame)
        # Re(L conj R) = re*re + im*im: the interleaved float views multiplied
        # and summed over the block's frames in one contiguous pass
        # Re(L conj R) = re*re + im*im: per band, the interleaved float views
        # multiplied and summed along each frame's contiguous bins
        lf, rf = _floats(left), _floats(spectrum)
        cross = np.zeros(len(BAND_NAMES))
        for band, lo, hi in self._bins:
            cross[band] = np.einsum("fb,fb->f", lf[:, 2 * lo:2 * hi],
                                    rf[:, 2 * lo:2 * hi]).sum(dtype=np.float64)
        block = self._blocks[frame]
        block[1], block[2] = energy, cross

    def totals(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(7,) E_L, E_R and C over the frames, each block weighted by its first
        frame's weight (see `Spectrogram.frame_weights`: only the zero-padded
        tail frame, a block of its own, weighs less than 1)."""
        out = np.zeros((3, len(BAND_NAMES)))
        for first in sorted(self._blocks):
            out += weights[first] * np.asarray(self._blocks[first])
        return out[0], out[1], out[2]


def _floats(spectrum: np.ndarray) -> np.ndarray:
    """A C-contiguous complex (frames, bins) array as (frames, 2 * bins) floats (re, im, ...)."""
    spectrum = np.ascontiguousarray(spectrum)
    return spectrum.view(np.float32 if spectrum.dtype == np.complex64 else np.float64)


def mono_loss_db(left: np.ndarray, right: np.ndarray, cross: np.ndarray) -> np.ndarray:
    """(7,) dB a band gets quieter summed to mono (0 for silent bands, at most
    MAX_MONO_LOSS_DB)."""
    mean = (left + right) / 2.0
    mono = np.maximum((left + right + 2.0 * cross) / 4.0, 0.0)
    loss = 10.0 * np.log10(np.maximum(mean, _SILENT) / np.maximum(mono, _SILENT))
    loss = np.where(mean > _SILENT, loss, 0.0)
    return np.clip(loss, 0.0, MAX_MONO_LOSS_DB)


def band_correlation(left: np.ndarray, right: np.ndarray, cross: np.ndarray) -> np.ndarray:
    """(7,) correlation of left and right within each band, -1..1 (1 for a silent band)."""
    denom = np.sqrt(left * right)
    safe = denom > _SILENT
    return np.clip(np.where(safe, cross / np.where(safe, denom, 1.0), 1.0), -1.0, 1.0)


def measure_mono(bands: ChannelBands | None, weights: np.ndarray, correlation: float) -> MonoFold:
    """The per-band fold-down; `bands` None (a one-channel file) is mono: 0 dB, correlation 1."""
    if bands is None:
        return MonoFold.of_mono()
    left, right, cross = bands.totals(weights)
    return MonoFold(correlation=float(correlation),
                    band_correlation=dict(zip(BAND_NAMES, map(float, band_correlation(left, right, cross)))),
                    band_loss_db=dict(zip(BAND_NAMES, map(float, mono_loss_db(left, right, cross)))))
