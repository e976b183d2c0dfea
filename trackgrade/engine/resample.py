"""The analysis rate, and a resampler that reaches it chunk by chunk.

Every spectral measure reads at most 20 kHz (the top of the `air` band), so
44.1 or 48 kHz is enough to analyse: audio above 48 kHz is analysed at
44.1 kHz (the 44.1 kHz family: 88.2, 176.4 kHz) or 48 kHz (any other rate),
while what depends on the native samples (loudness, true peak, sample peak,
clipping, the channel Gram matrix) is measured at the native rate
(`engine.high_rate`).

`Resampler` is scipy's `resample_poly` (the same Kaiser-windowed low-pass,
the same output samples to float32 rounding) taken chunk by chunk: each
chunk is filtered with `upfirdn` together with the last input frames the
filter still reaches, so the memory is that of one chunk whatever the length.
"""

from __future__ import annotations

import math

import numpy as np
from numpy.lib.stride_tricks import as_strided

from trackgrade.engine.fir import kaiser_lowpass

MAX_ANALYSIS_RATE = 48000        # Hz: above this, the analysis runs resampled
_BLOCK = 32                      # outputs per matrix row in `Resampler._decimate`
_FAMILY_44K = 44100


def analysis_rate(sample_rate: int) -> int:
    """The rate an analysis of audio at `sample_rate` runs at: the native rate
    up to 48 kHz; 44.1 kHz for multiples of 44.1 kHz above it; else 48 kHz."""
    if sample_rate <= MAX_ANALYSIS_RATE:
        return sample_rate
    return _FAMILY_44K if sample_rate % _FAMILY_44K == 0 else MAX_ANALYSIS_RATE


class Resampler:
    """`resample_poly(x, up, down, axis=0)` of a signal fed in chunks.

    `feed(chunk)` takes float32 (frames, channels) and returns the output
    frames that are complete; `flush()` the rest. The outputs concatenated
    are ceil(n * up / down) frames, as `resample_poly`'s (zeros beyond the
    signal, as its default padding)."""

    def __init__(self, rate_in: int, rate_out: int, channels: int) -> None:
        g = math.gcd(rate_in, rate_out)
        self.up, self.down = rate_out // g, rate_in // g
        up, down = self.up, self.down
        half_len = 10 * max(up, down)
        h = kaiser_lowpass(2 * half_len + 1, 1.0 / max(up, down), 5.0) * up
        # zeros in front put the output samples on the input grid: output m is
        # the causal output m + `_skip` (resample_poly's n_pre_pad/n_pre_remove)
        pre = down - half_len % down
        self._h = np.concatenate([np.zeros(pre), h]).astype(np.float32)
        self._toeplitz: np.ndarray | None = None      # `_decimate`'s matrix, made on first use
        self._skip = (half_len + pre) // down
        # input frames kept from one chunk to the next: all the filter reaches,
        # a whole number of `down` periods
        reach = -(-self._h.size // up)
        self._keep = -(-reach // down) * down
        self._history = np.zeros((self._keep, channels), dtype=np.float32)
        self._pending = np.zeros((0, channels), dtype=np.float32)
        self._frames_in = 0
        self._frames_out = 0            # causal outputs produced (skipped ones included)

    def feed(self, chunk: np.ndarray) -> np.ndarray:
        """The resampled frames `chunk` completes (float32 (frames, channels))."""
        self._frames_in += chunk.shape[0]
        if self._pending.shape[0]:
            chunk = np.concatenate([self._pending, chunk])
        usable = chunk.shape[0] - chunk.shape[0] % self.down
        self._pending = chunk[usable:].copy()
        return self._filter(chunk[:usable])

    def flush(self) -> np.ndarray:
        """The last frames: the pending input and the filter's tail (zeros after the end)."""
        wanted = -(-self._frames_in * self.up // self.down)     # resample_poly's length
        tail = self._pending.shape[0]
        needed = self._skip + wanted - self._frames_out          # causal outputs still to come
        frames = max(tail, -(-needed * self.down // self.up))
        padded = np.zeros((-(-frames // self.down) * self.down, self._history.shape[1]),
                          dtype=np.float32)
        padded[:tail] = self._pending
        self._pending = padded[:0]
        out = self._filter(padded)
        excess = self._frames_out - self._skip - wanted
        return out[:out.shape[0] - excess] if excess > 0 else out

    def _filter(self, block: np.ndarray) -> np.ndarray:
        """Causal outputs for `block` (a whole number of `down` periods), the
        first `_skip` of the whole signal dropped."""
        if block.shape[0] == 0:
            return block[:0]
        x = np.concatenate([self._history, block])
        first = self._keep * self.up // self.down
        count = block.shape[0] * self.up // self.down
        if self.up == 1:
            y = self._decimate(x, first, count)
        else:
            # a rate whose ratio to the analysis rate is not whole (64 kHz: 3/4):
            # scipy.signal loads only then
            from scipy.signal import upfirdn

            y = upfirdn(self._h, x, self.up, self.down, axis=0)[first:first + count]
        self._history = x[-self._keep:]
        start = self._frames_out
        self._frames_out += count
        drop = max(0, self._skip - start)
        return np.ascontiguousarray(y[drop:], dtype=np.float32)

    def _decimate(self, x: np.ndarray, first: int, count: int) -> np.ndarray:
        """`upfirdn(h, x, 1, down)[first:first + count]` (the filter never
        reaches before `x`) as matrix products: `_BLOCK` outputs at a time from
        one window of input per channel (rows of a strided view), ~2x faster
        than upfirdn's loop; the few outputs after the last whole block from
        their own windows."""
        h, down, size = self._h, self.down, self._h.size
        if self._toeplitz is None:
            t, i = np.arange(_BLOCK)[None, :], np.arange((_BLOCK - 1) * down + size)[:, None]
            lag = size - 1 + t * down - i                      # M[i, t] = h[L - 1 + t*down - i]
            self._toeplitz = np.where((lag >= 0) & (lag < size), h[np.clip(lag, 0, size - 1)],
                                      0.0).astype(np.float32)
        channels = np.ascontiguousarray(x.T)
        start = first * down - size + 1                      # the first output's first input
        blocks = count // _BLOCK
        width = (_BLOCK - 1) * down + size
        y = np.empty((count, x.shape[1]), dtype=np.float32)
        for c, column in enumerate(channels):
            step = column.strides[0]
            if blocks:
                rows = as_strided(column[start:], shape=(blocks, width),
                                  strides=(_BLOCK * down * step, step), writeable=False)
                y[:blocks * _BLOCK, c] = (rows @ self._toeplitz).reshape(-1)
            rest = np.arange(blocks * _BLOCK, count)
            if rest.size:
                windows = column[(start + rest * down)[:, None] + np.arange(size)[None, :]]
                y[blocks * _BLOCK:, c] = windows @ h[::-1]
        return y
