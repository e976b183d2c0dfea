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
reduction of each frame's spectra to seven numbers per channel pair.
"""

from __future__ import annotations

import numpy as np

from trackgrade.engine.features import BAND_NAMES, MonoFold
from trackgrade.engine.spectrum import band_sums

MAX_MONO_LOSS_DB = 60.0         # reported for a band that cancels completely
_SILENT = 1e-20                 # band energy below which a band counts as silent


class ChannelBands:
    """Per long-spectrum frame and band: the left and right power and the real
    cross-spectrum of the first two channels. Rows are written by whichever
    thread transforms the frame (disjoint rows: the totals do not depend on
    the threads)."""

    def __init__(self, freqs: np.ndarray, frames: int) -> None:
        self.freqs = freqs
        shape = (frames, len(BAND_NAMES))
        self.left, self.right, self.cross = np.zeros(shape), np.zeros(shape), np.zeros(shape)
        self._pending: dict[int, np.ndarray] = {}

    def take(self, frame: int, channel: int, spectrum: np.ndarray, power: np.ndarray) -> None:
        """One block of frames' transforms (rows from `frame` on) of `channel` (0 or 1)."""
        rows = slice(frame, frame + spectrum.shape[0])
        sums = band_sums(np.asarray(power, dtype=np.float64), self.freqs)
        if channel == 0:
            self.left[rows] = sums
            self._pending[frame] = spectrum            # a fresh array from the FFT
            return
        self.right[rows] = sums
        left = self._pending.pop(frame)
        cross = left.real * spectrum.real
        cross += left.imag * spectrum.imag
        self.cross[rows] = band_sums(cross.astype(np.float64), self.freqs)

    def totals(self, weights: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(7,) E_L, E_R and C over the frames, each frame weighted (see
        `Spectrogram.frame_weights`)."""
        return weights @ self.left, weights @ self.right, weights @ self.cross


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
