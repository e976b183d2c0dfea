"""Audio above the analysis rate in bounded memory: decoded chunk by chunk,
measured at its native rate where that matters, analysed at 44.1/48 kHz.

20 minutes at 192 kHz stereo are 1.8 GB of float32 samples, more than a
worker may hold (CONTRACT.md section 5, "bounded work": 1.5 GB). So a file
above `resample.MAX_ANALYSIS_RATE` is never decoded whole. One pass over its
chunks (`decode.decode_chunks`, ~1.6 s each) measures at the native rate what
depends on the native samples:

- the K-weighted hop energies (`loudness.HopEnergies`, the filter's state
  carried across chunks) -> integrated loudness, LRA, the loudness curves;
- the true peak (`loudness.TruePeakStream`, each chunk with its neighbours'
  frames as context: the same value as the whole signal's) and sample peak;
- clipping, and the channel Gram matrix (width, correlation, RMS);

and resamples each chunk to the analysis rate (`resample.Resampler`, scipy's
`resample_poly` chunk by chunk), the only copy of the signal that is kept.
Everything else (spectrum, rhythm, key, structure) reads those samples: it
looks at 20 kHz at most. At or below 48 kHz nothing changes: `decode`.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

from trackgrade.engine.decode import ChunkedAudio, decode, decode_chunks, probe, sniff_container
from trackgrade.engine.decode.limits import MAX_DURATION_S
from trackgrade.engine.dynamics import clipped_samples
from trackgrade.engine.extract import InlineExecutor
from trackgrade.engine.features import DecodedAudio, NativeMeasures
from trackgrade.engine.loudness import (CURVE_HOP_S, HopEnergies, TruePeakStream, amplitude_db,
                                        loudness_from_energies, single_thread_blas)
from trackgrade.engine.resample import MAX_ANALYSIS_RATE, Resampler, analysis_rate
from trackgrade.engine.stereo import channel_gram

CHUNK_HOPS = 16               # frames per chunk: 16 loudness hops (1.6 s, 2.3 MB at 192 kHz stereo)


def decode_for_analysis(data: bytes, *, file_name: str, parallel: bool = True) -> DecodedAudio:
    """`decode` for audio up to 48 kHz; above it, the samples at the analysis
    rate with `native` holding what was measured at the native rate. Raises
    what `decode` raises, for the same inputs."""
    if sniff_container(data) != "mp3":          # MPEG audio stops at 48 kHz
        rate = probe(data, file_name=file_name).sample_rate      # a header read: microseconds
        if rate > MAX_ANALYSIS_RATE:
            return _stream(decode_chunks(data, file_name=file_name,
                                         chunk_frames=CHUNK_HOPS * int(round(CURVE_HOP_S * rate))),
                           parallel=parallel)
    return decode(data, file_name=file_name, parallel=parallel)


def _stream(chunks: ChunkedAudio, *, parallel: bool) -> DecodedAudio:
    """One pass over the chunks: native measures, and the resampled copy (on
    a second thread when `parallel`)."""
    rate, channels = chunks.sample_rate, chunks.channels
    target = analysis_rate(rate)
    resampler = Resampler(rate, target, channels)
    energies = HopEnergies(rate, channels)
    peak = TruePeakStream()
    # room for the longest accepted file; pages never written take no memory
    capacity = -(-(int(MAX_DURATION_S * rate) + 1) * resampler.up // resampler.down)
    out = np.empty((capacity, channels), dtype=np.float32)
    filled = 0
    gram = (np.zeros((channels, channels)), np.zeros(channels), 0)
    clipped = 0
    sample_peak = 0.0

    def keep(part: np.ndarray) -> None:
        nonlocal filled
        out[filled:filled + part.shape[0]] = part
        filled += part.shape[0]

    with single_thread_blas(), ThreadPoolExecutor(1) if parallel else InlineExecutor() as pool:
        for chunk in chunks:
            resampled = pool.submit(resampler.feed, chunk)
            energies.feed(chunk)
            peak.feed(chunk)
            products, sums, frames = channel_gram(chunk)
            gram = (gram[0] + products, gram[1] + sums, gram[2] + frames)
            clipped += clipped_samples(chunk)
            sample_peak = max(sample_peak, float(chunk.max()), -float(chunk.min()))
            keep(resampled.result())
        chunks.finish()                 # too short, silence, DC: refused as `decode` does
        keep(resampler.flush())
        true_peak = peak.true_peak_dbtp()
    loudness = loudness_from_energies(
        energies.energies(), energies.hop, true_peak_dbtp=true_peak,
        sample_peak_dbfs=amplitude_db(sample_peak))
    native = NativeMeasures(sample_rate=rate, frames=chunks.frames, loudness=loudness, gram=gram,
                            clipping_pct=100.0 * clipped / max(1, chunks.frames * channels))
    info = chunks.info
    return DecodedAudio(samples=out[:filled], sample_rate=target, container=info.container,
                        subtype=info.subtype, truncated=chunks.truncated,
                        declared_duration_s=info.declared_duration_s if chunks.truncated else None,
                        native=native)
