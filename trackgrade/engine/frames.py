"""The shared time-frequency representations, computed once per track.

Two resolutions serve every spectral feature:

* `short_stft`: the mono mix, ~93 ms Hann frames every ~23 ms (4096/1024 at
  44.1 kHz, scaled with the rate). Onsets, tempo, beats, structure, energy.
* `long_spectrum`: ~1.5 s Hann frames (65536 at 44.1 kHz) with 50 % overlap,
  the power summed over channels. Band balance, centroid and chroma; its
  resolution (0.67 Hz) separates semitones down to the sub-bass.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.fft
from numpy.lib.stride_tricks import sliding_window_view


@dataclass(frozen=True, eq=False)
class Spectrogram:
    power: np.ndarray      # (frames, bins) float32, |X|^2 of a Hann-windowed frame
    freqs: np.ndarray      # (bins,) Hz
    hop_s: float           # seconds between frame starts
    n_fft: int
    sample_rate: int

    @property
    def times(self) -> np.ndarray:
        """Centre time of each frame in seconds, shape (frames,)."""
        n = self.power.shape[0]
        return (np.arange(n) * self.hop_s + 0.5 * self.n_fft / self.sample_rate)


def _pow2_for(seconds: float, sample_rate: int) -> int:
    return int(2 ** round(np.log2(seconds * sample_rate)))


def mono_mix(samples: np.ndarray, *, invert_second: bool = False) -> np.ndarray:
    """Average of the channels, shape (frames,), float32. With `invert_second`
    the second channel's polarity is flipped first, so a phase-inverted stereo
    file does not cancel its centre (kick, bass) in the analysis mix."""
    if samples.shape[1] == 1:
        return np.ascontiguousarray(samples[:, 0])
    mono = samples[:, 0] - samples[:, 1] if invert_second else samples[:, 0] + samples[:, 1]
    for ch in range(2, samples.shape[1]):
        mono += samples[:, ch]
    mono *= np.float32(1.0 / samples.shape[1])
    return mono


def _framed_power(x: np.ndarray, n_fft: int, hop: int, chunk: int = 512) -> np.ndarray:
    """Power spectra of Hann frames of a 1-D float32 signal, (frames, n_fft//2+1).
    The signal is zero-padded so at least one frame exists."""
    if x.shape[0] < n_fft:
        x = np.pad(x, (0, n_fft - x.shape[0]))
    frames = sliding_window_view(x, n_fft)[::hop]
    window = np.hanning(n_fft).astype(np.float32)
    out = np.empty((frames.shape[0], n_fft // 2 + 1), dtype=np.float32)
    for i in range(0, frames.shape[0], chunk):
        spec = scipy.fft.rfft(frames[i:i + chunk] * window, axis=1, workers=-1)
        np.square(spec.real, out=out[i:i + chunk])
        out[i:i + chunk] += np.square(spec.imag)
    return out


def short_stft(mono: np.ndarray, sample_rate: int) -> Spectrogram:
    """Power STFT of the mono mix: ~93 ms frames, ~23 ms hop."""
    n_fft = _pow2_for(0.0929, sample_rate)
    hop = n_fft // 4
    power = _framed_power(np.ascontiguousarray(mono, dtype=np.float32), n_fft, hop)
    freqs = np.fft.rfftfreq(n_fft, 1.0 / sample_rate)
    return Spectrogram(power, freqs, hop / sample_rate, n_fft, sample_rate)


def long_spectrum(samples: np.ndarray, sample_rate: int) -> Spectrogram:
    """Power spectra of ~1.5 s Hann frames, 50 % overlap, summed over channels."""
    n_fft = _pow2_for(1.486, sample_rate)
    hop = n_fft // 2
    power = None
    for ch in range(samples.shape[1]):
        p = _framed_power(np.ascontiguousarray(samples[:, ch]), n_fft, hop, chunk=16)
        power = p if power is None else power + p
    freqs = np.fft.rfftfreq(n_fft, 1.0 / sample_rate)
    return Spectrogram(power, freqs, hop / sample_rate, n_fft, sample_rate)
