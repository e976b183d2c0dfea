"""The shared time-frequency representations, computed once per track.

Two resolutions serve every spectral feature:

* `short_stft`: the mono mix, ~93 ms Hann frames every ~23 ms (4096/1024 at
  44.1 kHz, scaled with the rate). Onsets, tempo, beats, structure, energy.
* `long_spectrum`: ~1.5 s Hann frames (65536 at 44.1 kHz) with 50 % overlap,
  the power summed over channels, plus a zero-padded frame over the samples
  after the last whole one (chroma reads every sample; band balance, like
  Welch, only the whole frames). Band balance, centroid and chroma; its
  resolution (0.67 Hz) separates semitones down to the sub-bass.

`short_reduced` computes the short STFT without keeping it: each chunk of
frames is reduced at once to what the rhythm and structure stages read (sums
of power over bin segments, a range of raw bins), declared up front as
`Reduction`s. The values are bit-identical to reducing `short_stft`'s power,
without writing and re-reading the (frames, bins) array (~100 MB for 5
minutes). `segment_sums` and `bin_power` read either form.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from functools import lru_cache

import numpy as np
from numpy.lib.stride_tricks import sliding_window_view

from trackgrade.engine.fft import rfft_rows


@dataclass(frozen=True, eq=False)
class Spectrogram:
    power: np.ndarray      # (frames, bins) float32, |X|^2 of a Hann-windowed frame
    freqs: np.ndarray      # (bins,) Hz
    hop_s: float           # seconds between frame starts
    n_fft: int
    sample_rate: int
    tail_share: float = 0.0   # > 0: the last row is a zero-padded frame over the samples
                              # after the whole frames, this share of its window over them

    @property
    def times(self) -> np.ndarray:
        """Centre time of each frame in seconds, shape (frames,)."""
        n = self.power.shape[0]
        return (np.arange(n) * self.hop_s + 0.5 * self.n_fft / self.sample_rate)

    def whole_frames(self) -> "Spectrogram":
        """This spectrogram without its zero-padded tail frame (a view): the
        frames Welch's estimate averages."""
        if not self.tail_share:
            return self
        return replace(self, power=self.power[:-1], tail_share=0.0)

    def frame_weights(self) -> np.ndarray:
        """(frames,) how much of a frame's worth of signal each frame holds:
        1, and the tail frame's `tail_share`."""
        weights = np.ones(self.power.shape[0])
        if self.tail_share:
            weights[-1] = self.tail_share
        return weights


@dataclass(frozen=True)
class Reduction:
    """What to keep of each `step`-th frame: `starts` given -> power summed over
    the bin segments [starts[i], starts[i+1]) and [starts[-1], bins) (the
    segments of np.add.reduceat); else the raw power of bins [lo, hi)."""
    starts: tuple[int, ...] = ()
    lo: int = 0
    hi: int = 0
    step: int = 1

    def apply(self, power: np.ndarray) -> np.ndarray:
        """The reduction of a (frames, bins) power block whose first row is a kept frame."""
        power = power[::self.step]
        if self.starts:
            return np.add.reduceat(power, np.asarray(self.starts), axis=1)
        return power[:, self.lo:self.hi]


@dataclass(frozen=True, eq=False)
class ReducedSpectrogram:
    """A spectrogram kept only as the `Reduction`s declared when computing it."""
    parts: dict            # Reduction -> (kept frames, segments or bins) float32
    freqs: np.ndarray      # (bins,) Hz of the full spectrum
    hop_s: float
    n_fft: int
    sample_rate: int
    n_frames: int

    @property
    def times(self) -> np.ndarray:
        """Centre time of each frame in seconds, shape (frames,)."""
        return np.arange(self.n_frames) * self.hop_s + 0.5 * self.n_fft / self.sample_rate


ShortFrames = Spectrogram | ReducedSpectrogram     # what rhythm and structure accept


def segment_sums(spec, starts, step: int = 1) -> np.ndarray:
    """(frames[::step], len(starts)) power summed over the bin segments of
    `starts` (see `Reduction`), from a `Spectrogram` or a `ReducedSpectrogram`."""
    return _reduced(spec, Reduction(starts=tuple(int(b) for b in starts), step=step))


def log_band_edges(freqs: np.ndarray, n_bands: int) -> np.ndarray:
    """Bin indices splitting 30 Hz..min(16 kHz, Nyquist) into `n_bands`
    log-spaced bands (fewer when bins coincide; at least the first and last bin)."""
    top = min(16000.0, float(freqs[-1]))
    edges = np.unique(np.searchsorted(freqs, np.geomspace(30.0, top, n_bands + 1)))
    edges = edges[edges < len(freqs)]
    if len(edges) < 2:
        edges = np.array([0, len(freqs) - 1])
    return edges


def bin_power(spec, lo: int, hi: int, step: int = 1) -> np.ndarray:
    """(frames[::step], hi - lo) power of bins [lo, hi), from either form."""
    return _reduced(spec, Reduction(lo=int(lo), hi=int(hi), step=step))


def _reduced(spec, reduction: Reduction) -> np.ndarray:
    if isinstance(spec, ReducedSpectrogram):
        if reduction not in spec.parts:
            raise KeyError(f"{reduction} was not declared when reducing the spectrogram")
        return spec.parts[reduction]
    return reduction.apply(spec.power)


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


@lru_cache(maxsize=8)
def _hann(n_fft: int) -> np.ndarray:
    window = np.hanning(n_fft).astype(np.float32)
    window.flags.writeable = False
    return window


def _power_chunks(x: np.ndarray, n_fft: int, hop: int, chunk: int, workers: int,
                  cover_tail: bool = False, *, invert_second: bool = False, on_spectrum=None):
    """Yield (first frame, (m, n_fft//2+1) float32 power) for consecutive chunks
    of Hann frames of a signal (zero-padded so one frame exists): `x` is 1-D,
    or (frames, channels) samples whose `mono_mix` is taken chunk by chunk
    (the same values, without a mono copy of the whole track). With
    `cover_tail`, samples left after the last whole frame get one more frame,
    zero-padded (see `_frame_count`). The power block is one reused buffer,
    valid until the next chunk; the frames are windowed into a preallocated
    buffer that the FFT overwrites, so nothing of the signal's size is allocated.
    `on_spectrum(first frame, complex spectrum, power)` sees each chunk's
    transform before it is yielded (the stereo fold-down of engine.mono)."""
    if x.ndim == 2 and x.shape[1] == 1:
        x = x[:, 0]

    def segment(lo: int, hi: int) -> np.ndarray:
        part = x[lo:hi] if x.ndim == 1 else mono_mix(x[lo:hi], invert_second=invert_second)
        if part.shape[0] < n_fft and lo == 0:      # shorter than one frame: zero-padded
            part = np.pad(part, (0, n_fft - part.shape[0]))
        return part

    length = x.shape[0]
    n = _frame_count(length, n_fft, hop)
    window = _hann(n_fft)
    buf = np.empty((min(chunk, n), n_fft), dtype=np.float32)
    power = np.empty((min(chunk, n), n_fft // 2 + 1), dtype=np.float32)

    def transform(first: int, m: int) -> np.ndarray:
        spec = rfft_rows(buf[:m], workers=workers)
        np.square(spec.real, out=power[:m])
        power[:m] += np.square(spec.imag)
        if on_spectrum is not None:
            on_spectrum(first, spec, power[:m])
        return power[:m]

    for i in range(0, n, chunk):
        m = min(chunk, n - i)
        frames = sliding_window_view(segment(i * hop, (i + m - 1) * hop + n_fft), n_fft)[::hop]
        np.multiply(frames[:m], window, out=buf[:m])
        yield i, transform(i, m)
    if cover_tail and _frame_count(length, n_fft, hop, cover_tail=True) > n:
        rest = segment(n * hop, length)
        buf[0, :rest.shape[0]] = rest
        buf[0, rest.shape[0]:] = 0.0
        buf[0] *= window
        yield n, transform(n, 1)


def _frame_count(length: int, n_fft: int, hop: int, cover_tail: bool = False) -> int:
    """Frames of a signal of `length` samples: every whole frame (at least one,
    zero-padded); with `cover_tail` one more when samples are left after the
    last whole frame, so every sample is analysed (a 2 s clip keeps its last
    0.5 s in the 1.5 s frames of `long_spectrum`)."""
    whole = (max(length, n_fft) - n_fft) // hop + 1
    return whole + int(cover_tail and length > (whole - 1) * hop + n_fft)


def _tail_share(length: int, n_fft: int, hop: int) -> float:
    """Share of the Hann window of the zero-padded tail frame (see
    `_frame_count`) that lies over samples; 0 when there is no tail frame."""
    whole = _frame_count(length, n_fft, hop)
    if _frame_count(length, n_fft, hop, cover_tail=True) == whole:
        return 0.0
    window = np.hanning(n_fft)
    return float(window[:length - whole * hop].sum() / window.sum())


def _framed_power(x: np.ndarray, n_fft: int, hop: int, chunk: int) -> np.ndarray:
    """Power spectra of Hann frames of a 1-D float32 signal, (frames, n_fft//2+1)."""
    out = np.empty((_frame_count(x.shape[0], n_fft, hop), n_fft // 2 + 1), dtype=np.float32)
    for i, power in _power_chunks(x, n_fft, hop, chunk, workers=-1):
        out[i:i + power.shape[0]] = power
    return out


def _short_grid(sample_rate: int) -> tuple[int, int]:
    n_fft = _pow2_for(0.0929, sample_rate)
    return n_fft, n_fft // 4


def short_freqs(sample_rate: int) -> np.ndarray:
    """(bins,) Hz of the short STFT at this rate."""
    return np.fft.rfftfreq(_short_grid(sample_rate)[0], 1.0 / sample_rate)


def short_stft_hop_s(sample_rate: int) -> float:
    """Seconds between the short STFT's frames at this rate."""
    return _short_grid(sample_rate)[1] / sample_rate


def short_stft(mono: np.ndarray, sample_rate: int) -> Spectrogram:
    """Power STFT of the mono mix: ~93 ms frames, ~23 ms hop."""
    n_fft, hop = _short_grid(sample_rate)
    power = _framed_power(np.ascontiguousarray(mono, dtype=np.float32), n_fft, hop, chunk=64)
    freqs = np.fft.rfftfreq(n_fft, 1.0 / sample_rate)
    return Spectrogram(power, freqs, hop / sample_rate, n_fft, sample_rate)


def short_reduced(signal: np.ndarray, sample_rate: int, reductions, *,
                  invert_second: bool = False) -> ReducedSpectrogram:
    """The short STFT of the mono mix reduced chunk by chunk to `reductions`
    (the same values as applying them to `short_stft(mono, rate).power`).
    `signal` is the mono mix, or the (frames, channels) samples, whose mix
    (`mono_mix(samples, invert_second=...)`) is then taken chunk by chunk: no
    mono copy of the track is made (on a fresh process its ~50 MB of new pages
    cost more than the mix itself). One FFT thread: it runs beside the
    loudness stage (see extract)."""
    n_fft, hop = _short_grid(sample_rate)
    x = np.ascontiguousarray(signal, dtype=np.float32)
    n = _frame_count(x.shape[0], n_fft, hop)
    chunk = 64          # a multiple of every step: each chunk starts on a kept frame
    reductions = list(dict.fromkeys(reductions))
    parts = {}
    for r in reductions:
        if chunk % r.step:
            raise ValueError(f"frame step {r.step} does not divide the chunk of {chunk}")
        width = len(r.starts) if r.starts else r.hi - r.lo
        parts[r] = np.empty((-(-n // r.step), width), dtype=np.float32)
    for i, power in _power_chunks(x, n_fft, hop, chunk, workers=1, invert_second=invert_second):
        for r in reductions:
            part = r.apply(power)
            parts[r][i // r.step:i // r.step + part.shape[0]] = part
    return ReducedSpectrogram(parts, np.fft.rfftfreq(n_fft, 1.0 / sample_rate),
                              hop / sample_rate, n_fft, sample_rate, n)


class _ChunkQueue:
    """The first frames of the chunks, each handed out once, to whichever
    thread asks first (threads sharing one transform take turns this way)."""

    def __init__(self, frames: int, chunk: int) -> None:
        self._starts = iter(range(0, frames, chunk))
        self._lock = threading.Lock()

    def __iter__(self) -> "_ChunkQueue":
        return self

    def __next__(self) -> int:
        with self._lock:
            return next(self._starts)


LONG_CHUNK = 16         # frames per chunk of the long spectrum (4 MB of frames at 44.1 kHz)


def _summed_power(samples: np.ndarray, n_fft: int, hop: int, out: np.ndarray,
                  starts: _ChunkQueue, workers: int = 1, sink=None) -> None:
    """Rows of `out`: the Hann-frame power of every channel of (frames,
    channels) `samples` summed (the first channel's written, the others'
    added, in channel order), for each chunk of LONG_CHUNK frames whose first
    frame `starts` hands out; the last chunk also covers the tail (see
    `_frame_count`). Threads sharing `starts` fill disjoint rows, so the
    values do not depend on which thread did which chunk. The frames are read
    straight from the strided channel columns (no copies). `sink.take(frame,
    channel, spectrum, power)` sees the first two channels' transforms."""
    length = samples.shape[0]
    whole = _frame_count(length, n_fft, hop)
    for first in starts:
        last = first + LONG_CHUNK >= whole
        part = samples[first * hop:length if last else (first + LONG_CHUNK - 1) * hop + n_fft]
        for ch in range(samples.shape[1]):
            seen = None
            if sink is not None and ch < 2:
                def seen(i, spec, power, ch=ch, first=first):
                    sink.take(first + i, ch, spec, power)
            for i, power in _power_chunks(part[:, ch], n_fft, hop, LONG_CHUNK, workers,
                                          cover_tail=last, on_spectrum=seen):
                rows = out[first + i:first + i + power.shape[0]]
                if ch == 0:
                    rows[...] = power
                else:
                    rows += power


def long_grid(sample_rate: int, length: int) -> tuple[np.ndarray, int]:
    """(bins,) Hz and the frame count (tail frame included) of `long_spectrum`
    for a signal of `length` samples."""
    n_fft = _pow2_for(1.486, sample_rate)
    return (np.fft.rfftfreq(n_fft, 1.0 / sample_rate),
            _frame_count(length, n_fft, n_fft // 2, cover_tail=True))


def long_spectrum(samples: np.ndarray, sample_rate: int, *, executor=None,
                  workers: int = -1, sink=None) -> Spectrogram:
    """Power spectra of ~1.5 s Hann frames, 50 % overlap, summed over channels;
    samples after the last whole frame get one more, zero-padded frame.
    With `executor` (a concurrent.futures executor) a task there and the
    calling thread take chunks of frames in turn, into the one result (the
    same values as one pass: each frame's channels are summed in the same
    order), so the caller never waits for a busy executor's share; without
    one, `workers` FFT threads share each transform (-1: all cores). `sink`
    (e.g. `engine.mono.ChannelBands`) is shown each frame's transforms of the
    first two channels, so stereo measures need no second pass."""
    n_fft = _pow2_for(1.486, sample_rate)
    hop = n_fft // 2
    length = samples.shape[0]
    power = np.empty((_frame_count(length, n_fft, hop, cover_tail=True), n_fft // 2 + 1),
                     dtype=np.float32)
    starts = _ChunkQueue(_frame_count(length, n_fft, hop), LONG_CHUNK)
    if executor is not None:
        helper = executor.submit(_summed_power, samples, n_fft, hop, power, starts, 1, sink)
        _summed_power(samples, n_fft, hop, power, starts, 1, sink)
        helper.result()
    else:
        _summed_power(samples, n_fft, hop, power, starts, workers, sink)
    freqs = np.fft.rfftfreq(n_fft, 1.0 / sample_rate)
    return Spectrogram(power, freqs, hop / sample_rate, n_fft, sample_rate,
                       tail_share=_tail_share(samples.shape[0], n_fft, hop))
