"""Codec preview: the true peak after an MP3, AAC and Opus round trip, in memory.

Lossy encoders drop and smear high-frequency detail, so a master that peaks
just under 0 dBTP can pass it once encoded. Each codec of `CODECS` encodes
the audio with PyAV (FFmpeg's LAME, AAC and libopus encoders) straight into
packets and decodes them again: no container, no file, nothing but arrays
and packets in memory. PyAV is imported only here, and only when a preview
is asked for.

To stay fast the MP3 and Opus round trips cover the loudest passages
(`passages`): the PASSAGES windows of PASSAGE_S with the highest short-term
loudness, the window holding the highest sample peak and the first window (a
whole-track encode starts cold there), each encoded on its own with MARGIN_S
of context either side. benchmarks/bench_delivery.py (RESULTS.md, issue 19)
compares them with encodes of whole tracks: within 0.5 dB on every item.
FFmpeg's AAC encoder has sporadic overshoots on long limited masters that no
passage rule finds (2 dB above the passages' figure on the 5-minute track), so
AAC (WHOLE_TRACK_CODECS) is always encoded whole: slower, but the figure the
contract asks for.
"""

from __future__ import annotations

import numpy as np

from trackgrade.engine.features import CodecPeak, Loudness
from trackgrade.engine.loudness import true_peak_dbtp

# (codec, FFmpeg encoder, FFmpeg decoder, kbps): CONTRACT.md section 5
CODECS = (("mp3", "libmp3lame", "mp3float", 320), ("aac", "aac", "aac", 256),
          ("opus", "libopus", "libopus", 160))
PASSAGE_S = 2.0          # one window of the loudest passages
PASSAGES = 3             # windows by short-term loudness (plus the sample-peak window)
MARGIN_S = 0.5           # context encoded on each side of a window and left out of the peak
WHOLE_TRACK_CODECS = ("aac",)   # no passage rule agrees with their whole-track encode
_RATES = {"mp3": (32000, 44100, 48000), "opus": (48000,), "aac": (44100, 48000, 88200, 96000)}


def _codec_rate(codec: str, rate: int) -> int:
    """The rate the codec runs at: the track's own when it supports it, else 48 kHz."""
    return rate if rate in _RATES[codec] else 48000


def passages(samples: np.ndarray, rate: int, loudness: Loudness) -> list[tuple[int, int]]:
    """[start, end) sample spans of the windows to encode, in time order, each
    with MARGIN_S of context on both sides (clipped to the track): the
    PASSAGES windows of PASSAGE_S with the highest mean short-term loudness,
    the window holding the highest sample peak and the first window (where a
    whole-track encode starts cold); one span, the whole track, when it is no
    longer than those windows together."""
    n = samples.shape[0]
    win, margin = int(PASSAGE_S * rate), int(MARGIN_S * rate)
    count = n // win
    if count <= PASSAGES + 2:
        return [(0, n)]
    curve = np.asarray(loudness.short_term_lufs, dtype=np.float64)
    per = max(1, int(round(PASSAGE_S / loudness.curve_hop_s)))
    usable = min(count, curve.size // per)
    chosen = set()
    if usable:
        level = curve[:usable * per].reshape(usable, per).mean(axis=1)
        chosen.update(int(i) for i in np.argsort(-level, kind="stable")[:PASSAGES])
    peak_frame = int(np.argmax(np.max(np.abs(samples), axis=1)))
    chosen.add(min(peak_frame // win, count - 1))
    chosen.add(0)        # the encoder starts cold against the first hit: its own overshoot
    return [(max(i * win - margin, 0), min((i + 1) * win + margin, n)) for i in sorted(chosen)]


def round_trip(samples: np.ndarray, rate: int, codec: str) -> tuple[np.ndarray, int]:
    """(decoded (frames, channels) float32, its rate): `samples` encoded with
    `codec` (a key of CODECS) at its bitrate and decoded, packets in memory."""
    import av  # only a codec preview pays for loading FFmpeg

    _, encoder, decoder, kbps = next(c for c in CODECS if c[0] == codec)
    channels = min(samples.shape[1], 2)
    layout = "stereo" if channels == 2 else "mono"
    out_rate = _codec_rate(codec, rate)
    enc = av.CodecContext.create(encoder, "w")
    enc.sample_rate, enc.layout, enc.bit_rate = out_rate, layout, kbps * 1000
    enc.format = enc.codec.audio_formats[0].name
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


def passage_peak_dbtp(samples: np.ndarray, rate: int, codec: str, span: tuple[int, int]) -> float:
    """True peak after `codec` of the span, leaving out MARGIN_S at each end
    that is not the track's own start or end (the encoder's warm-up and its
    delay stay inside the margin)."""
    start, end = span
    decoded, out_rate = round_trip(samples[start:end], rate, codec)
    margin = int(MARGIN_S * out_rate)
    lo = margin if start > 0 else 0
    hi = decoded.shape[0] - margin if end < samples.shape[0] else decoded.shape[0]
    return true_peak_dbtp(decoded[lo:max(hi, lo + 1)])


def codec_peaks(samples: np.ndarray, rate: int, loudness: Loudness, *,
                whole_track: bool = False) -> tuple[CodecPeak, ...]:
    """The true peak after each codec of CODECS: of the loudest passages, or
    of the whole track with `whole_track` and for WHOLE_TRACK_CODECS."""
    whole = [(0, samples.shape[0])]
    quick = whole if whole_track else passages(samples, rate, loudness)
    return tuple(CodecPeak(codec=codec, bitrate_kbps=kbps,
                           true_peak_dbtp=max(passage_peak_dbtp(samples, rate, codec, span)
                                              for span in (whole if codec in WHOLE_TRACK_CODECS
                                                           else quick)))
                 for codec, _, _, kbps in CODECS)
