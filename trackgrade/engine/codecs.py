"""Codec preview: the true peak after an MP3, AAC and Opus round trip, in memory.

Lossy encoders drop and smear high-frequency detail, so a master that peaks
just under 0 dBTP can pass it once encoded. Each codec of `CODECS` encodes
the audio with PyAV (FFmpeg's LAME, AAC and libopus encoders) straight into
packets and decodes them again: no container, no file, nothing but arrays
and packets in memory. PyAV is imported only here, and only when a preview
is asked for.

To stay fast every round trip covers passages (`passages`): the CANDIDATES
blocks of BLOCK_S where a codec's peak is likeliest, ranked by the block's
true peak plus SLOPE_WEIGHT times the RMS of its first difference (a codec's
error grows with the high frequencies it quantizes and lands on the peaks
already there; over the `defects` grid the 16 blocks with the highest true
peak alone missed a whole-track encode's peak by up to 0.32 dB (MP3), 0.44
(AAC) and 0.29 (Opus), with the slope by 0.14, 0.24, 0.14). Each block is
encoded with MARGIN_S of context either side (`encode_spans`), its span
starting on the frame grid of a whole-track encode (FRAME) so both quantize
it in the same frames, and read with the decoded audio around it as the
true-peak interpolator's context (PRIMING: AAC's decoded output starts
late). A codec whose spans would cover WHOLE_SHARE of the track encodes it
whole. The codecs' passages run on WORKERS threads at once (PyAV lets go of
the GIL while FFmpeg encodes), started as soon as the loudness is known so
they overlap the rest of the analysis (`CodecPreview`).

The bound, per codec, is the sum of two measured terms: the highest of the
chosen blocks in a whole-track encode is within 0.14 dB (MP3), 0.24 (AAC),
0.14 (Opus) of that encode's highest block, over the 14 renders of the
`defects` grid the rule was chosen on; a block encoded on its own reads
within 0.13 (MP3), 0.18 (AAC), 0.00 (Opus) of the same block of the
whole-track encode. So the preview is within 0.27, 0.42 and 0.14 dB of a
whole-track encode; benchmarks/bench_delivery.py `agreement` checks it on
data the rule was not chosen on (real clips, the `visible` grid, the speed
track: benchmarks/results/ux2.md).

FFmpeg's own AAC encoder (the one AAC encoder in PyAV's FFmpeg) codes
stereo as intensity where it judges the channels alike: its decoded peaks
then jump by up to 3 dB at places that depend on the encoder's state since
the start of the track, so no passage, however chosen, reproduces them (on
the 5-minute speed track the second at 96 s peaks 3.3 dB over the original
in a whole-track encode and 0.3 dB when encoded with 2 s of context).
Measured on that track (whole-track encodes, highest true peak): the default
coder +3.34 dBTP, the fast coder +2.11, fast without noise substitution
+2.11, without TNS +1.41, without intensity stereo +0.60, without all three
+0.51, the last in 6.1 s of CPU against the default's 14.8. Intensity stereo
and noise substitution are low-bitrate tools: at 256 kbps the bands are
coded. AAC_OPTIONS is that last set: the peaks are a property of the audio
again.
"""

from __future__ import annotations

import math
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable

import numpy as np

from trackgrade.engine.features import CodecPeak
from trackgrade.engine.loudness import (SILENCE_DBTP, amplitude_db, single_thread_blas,
                                        true_peak_amplitude, true_peak_dbtp)

# (codec, FFmpeg encoder, FFmpeg decoder, kbps): CONTRACT.md section 5
CODECS = (("mp3", "libmp3lame", "mp3float", 320), ("aac", "aac", "aac", 256),
          ("opus", "libopus", "libopus", 160))
# FFmpeg AAC encoder options: the fast coder, no noise substitution, intensity stereo or TNS
AAC_OPTIONS = {"aac_coder": "fast", "aac_pns": "0", "aac_is": "0", "aac_tns": "0"}
ENCODER_OPTIONS = {"aac": AAC_OPTIONS}
WORKERS = 2              # threads encoding passages at once (the codecs run in parallel)
BLOCK_S = 0.1            # the grain of the passages: one candidate block
CANDIDATES = 16          # blocks measured per codec (benchmarks/results/ux2.md)
SHORTLIST = 64           # blocks whose true peak is taken to rank them
SLOPE_WEIGHT = 0.25      # weight of a block's first-difference RMS beside its true peak
CHUNK_BLOCKS = 2048      # blocks of features computed at once
# share of the track the spans may cover before a codec encodes it whole
# (benchmarks/results/ux2.md: a 15 s clip in spans covering 0.9 of it took
# 1.67 s of CPU, whole 1.46 s; 30 s in spans covering 0.47-0.67, 1.2 s against 1.73)
WHOLE_SHARE = 0.75
TP_REACH = 24            # frames the true-peak interpolator reaches each way
# context encoded on each side of a window and left out of the peak: the
# encoder's state (LAME's reservoir, FFmpeg AAC's rate control, Opus's VBR)
# settles within it, so a window reads as the same stretch of a whole-track encode
MARGIN_S = {"mp3": 0.5, "aac": 1.0, "opus": 0.5}
# samples per frame at the codec's rate: a span starts on the frame grid of a
# whole-track encode, so both quantize the window's audio in the same frames
FRAME = {"mp3": 1152, "aac": 1024, "opus": 960}
# decoded samples ahead of the audio: without a container FFmpeg's AAC
# decoder keeps the encoder's priming (its MP3 and Opus decoders drop theirs)
PRIMING = {"aac": 1024}
_RATES = {"mp3": (32000, 44100, 48000), "opus": (48000,), "aac": (44100, 48000, 88200, 96000)}


def _codec_rate(codec: str, rate: int) -> int:
    """The rate the codec runs at: the track's own when it supports it, else 48 kHz."""
    return rate if rate in _RATES[codec] else 48000


def grid_step(codec: str, rate: int) -> int:
    """Track samples between the starts that fall on `codec`'s frame grid
    (at the codec's rate, after resampling)."""
    out = _codec_rate(codec, rate)
    g = math.gcd(rate, out)
    return (rate // g) * (FRAME[codec] // math.gcd(FRAME[codec], out // g))


def encode_spans(windows: list[tuple[int, int]], codec: str, rate: int, n: int
                 ) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """(span to encode, stretch to measure) for `codec`, in track samples:
    each window with MARGIN_S of context either side, its start moved back
    onto the codec's frame grid; windows whose spans overlap share one. The
    whole track, once, when the spans would cover WHOLE_SHARE of it: each
    span starts an encoder and a decoder of its own, so beyond that the
    passages cost as much as the whole track and only approximate it."""
    margin, step = int(MARGIN_S[codec] * rate), grid_step(codec, rate)
    out: list[tuple[tuple[int, int], tuple[int, int]]] = []
    for lo, hi in sorted(windows):
        start, end = (max(lo - margin, 0) // step) * step, min(hi + margin, n)
        if out and start <= out[-1][0][1]:
            (s0, _), (w0, w1) = out[-1]
            out[-1] = ((s0, end), (w0, max(w1, hi)))
        else:
            out.append(((start, end), (lo, hi)))
    if not out or sum(end - start for (start, end), _ in out) >= WHOLE_SHARE * n:
        return [((0, n), (0, n))]
    return out


def block_features(samples: np.ndarray, block: int) -> tuple[np.ndarray, np.ndarray]:
    """Per block of `block` frames (the last one may be short): the sample
    peak and the RMS of the first difference, over all channels, taken
    CHUNK_BLOCKS blocks at a time (no copy of the track)."""
    n = samples.shape[0]
    count = -(-n // block)
    peak, slope = np.zeros(count), np.zeros(count)
    for first in range(0, count, CHUNK_BLOCKS):
        last = min(first + CHUNK_BLOCKS, count)
        lo, hi = first * block, min(last * block, n)
        part = np.asarray(samples[lo:hi], dtype=np.float32)
        prev = samples[lo - 1:lo] if lo else part[:1]
        step = np.diff(part, axis=0, prepend=prev)
        full = (hi - lo) // block * block
        for out, values in ((peak, np.abs(part)), (slope, step * step)):
            head = values[:full].reshape(-1, block * values.shape[1])
            got = head.max(axis=1) if out is peak else head.mean(axis=1)
            if full < hi - lo:
                tail = values[full:]
                got = np.append(got, tail.max() if out is peak else tail.mean())
            out[first:last] = got
    return peak, np.sqrt(slope)


def passages(samples: np.ndarray, rate: int) -> list[tuple[int, int]]:
    """[start, end) sample windows to measure, in time order: the CANDIDATES
    blocks of BLOCK_S whose true peak plus SLOPE_WEIGHT times the RMS of
    their first difference is highest (a codec's error grows with the high
    frequencies it quantizes, and lands on the peaks already there), the
    true peak found among the SHORTLIST blocks with the highest sample peak
    plus that term (encode_spans turns them into what each codec encodes)."""
    samples = samples[:, :2]                     # the channels the codecs encode
    n = samples.shape[0]
    block = max(int(BLOCK_S * rate), 1)
    peak, slope = block_features(samples, block)
    short = np.argsort(-(peak + SLOPE_WEIGHT * slope), kind="stable")[:SHORTLIST]
    with single_thread_blas():
        true = np.array([_block_true_peak(samples, int(b) * block, min((int(b) + 1) * block, n))
                         for b in short])
    chosen = short[np.argsort(-(true + SLOPE_WEIGHT * slope[short]), kind="stable")[:CANDIDATES]]
    return [(int(b) * block, min((int(b) + 1) * block, n)) for b in sorted(chosen)]


def _block_true_peak(samples: np.ndarray, lo: int, hi: int) -> float:
    """Linear true peak of frames lo..hi-1, the frames around them as context."""
    start = max(lo - TP_REACH, 0)
    part = samples[start:hi + TP_REACH]
    return true_peak_amplitude(part, first=lo - start, last=hi - start)


def round_trip(samples: np.ndarray, rate: int, codec: str,
               options: dict[str, str] | None = None) -> tuple[np.ndarray, int]:
    """(decoded (frames, channels) float32, its rate): `samples` encoded with
    `codec` (a key of CODECS) at its bitrate and decoded, packets in memory;
    `options`: the encoder's (default ENCODER_OPTIONS)."""
    import av  # only a codec preview pays for loading FFmpeg

    _, encoder, decoder, kbps = next(c for c in CODECS if c[0] == codec)
    channels = min(samples.shape[1], 2)
    layout = "stereo" if channels == 2 else "mono"
    out_rate = _codec_rate(codec, rate)
    enc = av.CodecContext.create(encoder, "w")
    enc.sample_rate, enc.layout, enc.bit_rate = out_rate, layout, kbps * 1000
    enc.format = enc.codec.audio_formats[0].name
    enc.options = dict(ENCODER_OPTIONS.get(codec, {}) if options is None else options)
    enc.open()
    dec = av.CodecContext.create(decoder, "r")
    dec.sample_rate, dec.layout = out_rate, layout
    if enc.extradata:
        dec.extradata = enc.extradata
    resampler = av.AudioResampler(format=enc.format.name, layout=layout, rate=out_rate,
                                  frame_size=enc.frame_size or None)
    source = np.ascontiguousarray(samples[:, :channels].T, dtype=np.float32)
    frame = av.AudioFrame.from_ndarray(source, format="fltp", layout=layout)
    frame.sample_rate = rate
    decoded: list[np.ndarray] = []

    def decode(packets) -> None:
        for packet in packets:
            for out in dec.decode(packet):
                decoded.append(_as_float(out))

    for chunk in resampler.resample(frame) + resampler.resample(None):
        decode(enc.encode(chunk))
    decode(enc.encode(None))
    for out in dec.decode(None):
        decoded.append(_as_float(out))
    if not decoded:
        return np.zeros((0, channels), dtype=np.float32), out_rate
    return np.concatenate(decoded, axis=0), out_rate


def _as_float(frame) -> np.ndarray:
    """(frames, channels) float32 of a decoded AudioFrame (planar or packed)."""
    data = frame.to_ndarray()
    channels = len(frame.layout.channels)
    if frame.format.is_planar:
        data = data.T
    else:
        data = data.reshape(-1, channels)
    if data.dtype.kind == "i":
        data = data.astype(np.float32) / np.float32(np.iinfo(data.dtype).max + 1)
    return np.ascontiguousarray(data, dtype=np.float32)


def passage_peak_dbtp(samples: np.ndarray, rate: int, codec: str, span: tuple[int, int],
                     stretch: tuple[int, int]) -> float:
    """True peak after `codec` of the `stretch` of the track, from an encode
    of the `span` around it (encode_spans); the whole decoded output when
    the span is the whole track."""
    start, end = span
    decoded, out_rate = round_trip(samples[start:end], rate, codec)
    if (start, end) == (0, samples.shape[0]):
        return true_peak_dbtp(decoded)
    lag = PRIMING.get(codec, 0)
    lo = lag + (stretch[0] - start) * out_rate // rate
    hi = lag + -(-(stretch[1] - start) * out_rate // rate)
    hi = decoded.shape[0] if stretch[1] == samples.shape[0] else min(hi, decoded.shape[0])
    if hi <= lo:
        return SILENCE_DBTP
    # the decoded audio around the stretch is the interpolator's context: a
    # slice would start from silence, and that step alone overshoots
    with single_thread_blas():
        return amplitude_db(true_peak_amplitude(decoded, first=lo, last=hi))


class CodecPreview:
    """The round trips of every codec over the spans, running on `workers`
    threads from construction (none: all of them in `result`)."""

    def __init__(self, samples: np.ndarray, rate: int, *, whole_track: bool = False,
                 workers: int = WORKERS) -> None:
        n = samples.shape[0]
        windows = [(0, n)] if whole_track else passages(samples, rate)
        # MP3 first: LAME is the slowest, so the threads finish together
        self.tasks = [(codec, span, stretch) for codec, *_ in CODECS
                      for span, stretch in encode_spans(windows, codec, rate, n)]
        self._pool = ThreadPoolExecutor(max_workers=workers) if workers > 1 else None
        self._args = (samples, rate)
        self._futures: list[Future] = ([self._pool.submit(passage_peak_dbtp, samples, rate,
                                                          *task)
                                        for task in self.tasks] if self._pool else [])

    def __enter__(self) -> "CodecPreview":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def close(self) -> None:
        """Stop: spans not yet begun are dropped, running ones finish."""
        if self._pool:
            self._pool.shutdown(wait=True, cancel_futures=True)

    def result(self, on_progress: Callable[[int, int], None] | None = None
               ) -> tuple[CodecPeak, ...]:
        """The true peak after each codec of CODECS (its highest over the
        spans); `on_progress(done, total)` after each span."""
        total = len(self.tasks)
        peaks: dict[str, float] = {}
        try:
            for i, task in enumerate(self.tasks):
                codec = task[0]
                peak = (self._futures[i].result() if self._pool
                        else passage_peak_dbtp(*self._args, *task))
                peaks[codec] = max(peaks.get(codec, -np.inf), peak)
                if on_progress is not None:
                    on_progress(i + 1, total)
        finally:
            self.close()
        return tuple(CodecPeak(codec=codec, bitrate_kbps=kbps, true_peak_dbtp=peaks[codec])
                     for codec, _, _, kbps in CODECS)


class PreviewStarter:
    """A CodecPreview made, its encodes begun, the moment the loudness is
    known (`after(future of the Loudness)`), beside whatever the caller does
    meanwhile; `result` waits for it. Leaving the `with` stops it."""

    def __init__(self, samples: np.ndarray, rate: int, *, workers: int = WORKERS) -> None:
        self._samples, self._rate, self._workers = samples, rate, workers
        self._made: Future = Future()

    def after(self, loudness: Future) -> None:
        def start(done: Future) -> None:
            try:
                done.result()                # a failed loudness stage: nothing to start
                self._made.set_result(CodecPreview(self._samples, self._rate,
                                                   workers=self._workers))
            except BaseException as exc:     # noqa: BLE001 - handed to result()
                self._made.set_exception(exc)
        loudness.add_done_callback(start)

    def result(self, on_progress: Callable[[int, int], None] | None = None
               ) -> tuple[CodecPeak, ...]:
        return self._made.result().result(on_progress)

    def __enter__(self) -> "PreviewStarter":
        return self

    def __exit__(self, *exc) -> None:
        if self._made.done() and self._made.exception() is None:
            self._made.result().close()


def codec_peaks(samples: np.ndarray, rate: int, *, whole_track: bool = False,
                workers: int = WORKERS) -> tuple[CodecPeak, ...]:
    """The true peak after each codec of CODECS: of the passages, or of the
    whole track with `whole_track`."""
    return CodecPreview(samples, rate, whole_track=whole_track, workers=workers).result()
