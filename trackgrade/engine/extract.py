"""Decoded audio -> every measurement, computing the shared frames once.

The order matters only for sharing: the loudness curves feed dynamics and
structure; the beat grid feeds structure; the short STFT feeds rhythm and
structure; the long spectrum feeds bands, centroid and key.

Two threads share the two cores (numpy, scipy.fft and BLAS release the GIL):
a worker thread runs the loudness stage (K-weighting and true peak, one core,
BLAS pinned to one thread, ~0.2 s for 5 minutes) and then joins the long
spectrum, taking chunks of its frames in turn with the main thread; the main
thread meanwhile runs the channel Gram matrix, the short STFT (of the mono
mix, taken chunk by chunk) and the rhythm, then the long spectrum. The stage
timings therefore overlap and add up to more than the wall time
("dynamics_stereo" includes any wait for the worker). The worker is joined
before the spectrum and key, whose BLAS products would otherwise be summed
differently depending on the worker's BLAS pinning (results must not depend
on timing); once it is, the worker computes the content cues and then the
structure and noise floor while the main thread takes the tonality (each
reads only finished results: ~0.05 s less wall time on 5 minutes). The
short STFT is kept only as the reductions rhythm and structure read
(`frames.short_reduced`: a few MB instead of ~100 MB), so it can wait for
the loudness curve while the long spectrum is computed; the loudness stage
works in chunks of a few MB. Measured on the 5-minute stereo
track: ~0.35 s from decoded samples to Features in a fresh process against
~0.6 s serially.
"""

from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable

import numpy as np

from trackgrade.engine.content import measure_content
from trackgrade.engine.dynamics import clipping_ruled_out, measure_dynamics
from trackgrade.engine.features import DecodedAudio, Features
from trackgrade.engine.frames import (long_grid, long_spectrum, short_freqs, short_reduced,
                                      short_stft_hop_s)
from trackgrade.engine.groove import measure_groove
from trackgrade.engine.groove import short_reductions as groove_reductions
from trackgrade.engine.loudness import measure_loudness
from trackgrade.engine.mono import ChannelBands, measure_mono
from trackgrade.engine.noise import measure_noise_floor
from trackgrade.engine.rhythm import measure_rhythm
from trackgrade.engine.rhythm import short_reductions as rhythm_reductions
from trackgrade.engine.spectrum import measure_spectrum
from trackgrade.engine.stereo import channel_gram, measure_stereo
from trackgrade.engine.structure import measure_structure
from trackgrade.engine.structure import short_reductions as structure_reductions
from trackgrade.engine.tonal import measure_tonality


class _Stopwatch:
    """Records the seconds each stage takes into a dict."""

    def __init__(self, timings: dict[str, float]) -> None:
        self.timings = timings
        self._last = time.perf_counter()

    def lap(self, stage: str) -> None:
        now = time.perf_counter()
        self.timings[stage] = round(now - self._last, 4)
        self._last = now


def _loudness_stage(samples: np.ndarray, rate: int, timings: dict[str, float]):
    watch = _Stopwatch(timings)
    loudness = measure_loudness(samples, rate)
    watch.lap("loudness")
    return loudness


def _structure_stage(short, duration: float, rhythm, loudness):
    structure = measure_structure(short, duration, beat_times=rhythm.beat_times,
                                  bpm=rhythm.bpm, short_term_lufs=loudness.short_term_lufs,
                                  curve_hop_s=loudness.curve_hop_s)
    return structure, measure_noise_floor(short)


class InlineExecutor:
    """An executor that runs each task at once in the calling thread."""

    def submit(self, fn, *args, **kwargs) -> Future:
        future: Future = Future()
        future.set_result(fn(*args, **kwargs))
        return future

    def __enter__(self) -> "InlineExecutor":
        return self

    def __exit__(self, *exc) -> None:
        return None


def extract(audio: DecodedAudio, *, parallel: bool = True, codec_preview: bool = False,
            codec_progress: Callable[[int, int], None] | None = None) -> Features:
    """Measure everything an Analysis reports from decoded audio.

    `parallel=False` keeps the whole analysis on one core (no second thread,
    single-threaded FFTs): for callers that run one analysis per core
    themselves, such as `trackgrade batch`'s worker processes. The results
    are the same either way. `codec_preview` adds the true peak after an
    MP3, AAC and Opus round trip of the passages where a codec peaks (engine.codecs,
    loaded only then), started once the loudness is known so that the codecs
    run beside the rest of the analysis (on one thread when not `parallel`);
    `codec_progress(done, total)` follows its passages."""
    if not codec_preview:
        return _extract(audio, parallel, None, None)
    from trackgrade.engine.codecs import WORKERS, PreviewStarter
    with PreviewStarter(audio.samples, audio.sample_rate,
                        workers=WORKERS if parallel else 1) as starter:   # a failure stops it
        return _extract(audio, parallel, starter, codec_progress)


def _extract(audio: DecodedAudio, parallel: bool, starter, codec_progress) -> Features:
    samples, rate, duration = audio.samples, audio.sample_rate, audio.duration_s
    native = audio.native             # resampled audio: loudness, peaks, clipping, the Gram
    timings: dict[str, float] = {}    # matrix were measured at the native rate
    with ThreadPoolExecutor(max_workers=1) if parallel else InlineExecutor() as pool:
        pending = (InlineExecutor().submit(lambda: native.loudness) if native is not None
                   else pool.submit(_loudness_stage, samples, rate, timings))
        if starter is not None:           # the codecs begin the moment the loudness is known
            starter.after(pending)
        watch = _Stopwatch(timings)
        gram = native.gram if native is not None else channel_gram(samples)
        stereo = measure_stereo(samples, gram=gram)
        freqs, hop_s = short_freqs(rate), short_stft_hop_s(rate)
        # the mono mix, taken chunk by chunk; a polarity-inverted channel
        # would cancel the centre of a plain sum
        short = short_reduced(samples, rate, (rhythm_reductions(freqs) + structure_reductions(freqs, hop_s)
                              + groove_reductions(freqs)),
                              invert_second=stereo.correlation < -0.2)
        watch.lap("short_stft")
        rhythm = measure_rhythm(short, duration)
        watch.lap("rhythm")
        groove = measure_groove(short, rhythm.beat_times, tempo_salient=rhythm.tempo_salient)
        watch.lap("groove")
        # the long spectrum's own transforms also give each band's mono fold-down
        channel_bands = (ChannelBands(*long_grid(rate, samples.shape[0]))
                         if audio.channels >= 2 else None)
        long = (long_spectrum(samples, rate, executor=pool, sink=channel_bands) if parallel
                else long_spectrum(samples, rate, workers=1, sink=channel_bands))
        watch.lap("long_spectrum")
        # the loudness thread pins BLAS to one thread while it runs (a global
        # setting): join it first, so the spectrum's products are summed the
        # same way on every run
        loudness = pending.result()
        # the sample peak (read with the true peak) often rules clipping out: one read fewer
        clipping = (native.clipping_pct if native is not None
                    else 0.0 if clipping_ruled_out(loudness.sample_peak_dbfs) else None)
        dynamics = measure_dynamics(samples, rate, loudness, gram=gram, clipping=clipping)
        watch.lap("dynamics_stereo")      # includes any wait for the loudness thread
        spectrum = measure_spectrum(long)
        # the rest only reads what is measured by now: the content cues, then the
        # structure and noise floor, on the second thread beside the tonality
        # (on one thread each stage in turn, so that each lap times its own)
        content_cues = pool.submit(measure_content, short, long, spectrum.bands_pct, samples)
        sections = pool.submit(_structure_stage, short, duration, rhythm, loudness) if parallel else None
        mono = measure_mono(channel_bands, long.frame_weights(), stereo.correlation)
        tonality = measure_tonality(long, samples)
        content = content_cues.result()
        del long
        watch.lap("spectrum_tonal")       # includes any wait for the content cues
        structure, noise_floor = (sections.result() if sections is not None
                                  else _structure_stage(short, duration, rhythm, loudness))
        watch.lap("structure")            # what the structure adds beyond the rest
    codecs = None
    if starter is not None:
        codecs = starter.result(codec_progress)
        watch.lap("codec_preview")         # what the codecs add beyond the rest

    return Features(
        duration_s=duration, sample_rate=native.sample_rate if native is not None else rate,
        channels=audio.channels,
        container=audio.container, truncated=audio.truncated,
        loudness=loudness, dynamics=dynamics, stereo=stereo, spectrum=spectrum,
        rhythm=rhythm, tonality=tonality, structure=structure,
        timings_s=timings, declared_duration_s=audio.declared_duration_s,
        noise_floor=noise_floor, decoder_notes=audio.decoder_notes, groove=groove,
        analysis_rate=rate if native is not None else None, mono=mono, codecs=codecs,
        content=content,
    )
