"""Audio above 48 kHz in bounded memory (engine/native.py): decoded chunk by
chunk, loudness / true peak / clipping / the Gram matrix measured at the
native rate with the values of the whole signal, the rest analysed at
44.1/48 kHz with the samples of scipy's resample_poly, and every refusal the
whole-signal decode makes. (The 20-minute 192 kHz memory proof is
tests/server/test_bounded_work.py.)"""

from __future__ import annotations

import io

import numpy as np
import pytest
import soundfile as sf
from scipy.signal import resample_poly

from trackgrade import pipeline
from trackgrade.engine.decode import decode, decode_chunks
from trackgrade.engine.dynamics import clipping_pct
from trackgrade.engine.loudness import (HopEnergies, TruePeakStream, hop_energies,
                                        measure_loudness, true_peak_dbtp)
from trackgrade.engine.native import decode_for_analysis
from trackgrade.engine.resample import Resampler, analysis_rate
from trackgrade.engine.stereo import channel_gram
from trackgrade.errors import TrackgradeError

from tests.server.decode_bomb import flac_constant_blocks


def music(seconds: float, rate: int, seed: int = 0) -> np.ndarray:
    """A stereo 128 BPM kick, an A minor triad and a little noise, as a function
    of time (the same music at any rate), some samples clipped."""
    rng = np.random.default_rng(seed)
    t = np.arange(int(seconds * rate)) / rate
    beat = t % (60 / 128)
    kick = np.sin(2 * np.pi * (50 + 80 * np.exp(-30 * beat)) * beat) * np.exp(-8 * beat)
    chord = sum(np.sin(2 * np.pi * f * t) for f in (220.0, 261.63, 329.63)) / 3
    left = 0.7 * kick + 0.25 * chord + 0.01 * rng.standard_normal(t.size)
    right = 0.7 * kick + 0.2 * chord + 0.01 * rng.standard_normal(t.size)
    x = np.stack([left, right], axis=1) * 1.2
    return np.clip(x, -1.0, 1.0).astype(np.float32)


def wav(x: np.ndarray, rate: int, subtype: str = "PCM_24") -> bytes:
    out = io.BytesIO()
    sf.write(out, x, rate, format="WAV", subtype=subtype)
    return out.getvalue()


@pytest.mark.parametrize("rate_in,rate_out", [(192000, 48000), (176400, 44100), (96000, 48000),
                                              (64000, 48000), (96001, 48000)])
def test_the_resampler_gives_resample_polys_samples_chunk_by_chunk(rate_in, rate_out):
    x = np.random.default_rng(1).standard_normal((150001, 2)).astype(np.float32)
    g = np.gcd(rate_in, rate_out)
    expected = resample_poly(x, rate_out // g, rate_in // g, axis=0)
    resampler = Resampler(rate_in, rate_out, 2)
    parts = [resampler.feed(x[i:i + 9973]) for i in range(0, x.shape[0], 9973)]
    got = np.concatenate(parts + [resampler.flush()])
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, atol=2e-6)


def test_the_analysis_rate_is_44k_or_48k_above_48k():
    assert [analysis_rate(r) for r in (8000, 44100, 48000)] == [8000, 44100, 48000]
    assert [analysis_rate(r) for r in (88200, 176400, 96000, 192000, 64000, 50000)] == \
        [44100, 44100, 48000, 48000, 48000, 48000]


@pytest.mark.parametrize("chunk,frames", [(50, 30000), (1000, 200000), (19200, 200000),
                                          (65536, 200000)])
def test_streamed_true_peak_and_energies_equal_the_whole_signals(chunk, frames):
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((frames, 2)) * 0.1).astype(np.float32)
    for edge in range(chunk, x.shape[0] - 64, max(chunk, 19200)):   # inter-sample overs at chunk edges
        for offset in (-30, -1, 0, 2, 24):
            x[edge + offset] = (0.6, -0.6)
            x[edge + offset + 1] = (-0.6, 0.6)
    peak, energies = TruePeakStream(), HopEnergies(192000, 2)
    for i in range(0, x.shape[0], chunk):
        peak.feed(x[i:i + chunk])
        energies.feed(x[i:i + chunk])
    assert peak.true_peak_dbtp() == pytest.approx(true_peak_dbtp(x), abs=1e-9)
    np.testing.assert_allclose(energies.energies(), hop_energies(x, 192000), rtol=1e-6)


def test_high_rate_audio_is_measured_at_its_native_rate_and_analysed_at_48k():
    rate = 96000
    data = wav(music(12.0, rate), rate)
    whole = decode(data, file_name="a.wav")
    audio = decode_for_analysis(data, file_name="a.wav")
    native = audio.native
    assert (audio.sample_rate, native.sample_rate, native.frames) == (48000, rate, whole.frames)
    assert audio.duration_s == pytest.approx(12.0)
    expected = measure_loudness(whole.samples, rate)
    got = native.loudness
    assert got.integrated_lufs == pytest.approx(expected.integrated_lufs, abs=1e-6)
    assert got.loudness_range_lu == pytest.approx(expected.loudness_range_lu, abs=1e-6)
    assert got.true_peak_dbtp == pytest.approx(expected.true_peak_dbtp, abs=1e-6)
    assert got.sample_peak_dbfs == expected.sample_peak_dbfs
    np.testing.assert_allclose(got.short_term_lufs, expected.short_term_lufs, atol=1e-4)
    assert native.clipping_pct == pytest.approx(clipping_pct(whole.samples)) and native.clipping_pct > 0
    gram = channel_gram(whole.samples)
    np.testing.assert_allclose(native.gram[0], gram[0], rtol=1e-7)     # float32 dot products, chunked
    np.testing.assert_allclose(audio.samples, resample_poly(whole.samples, 1, 2, axis=0), atol=2e-6)


def test_a_192k_file_grades_like_the_same_music_at_48k():
    at_48k = pipeline.measure(wav(music(20.0, 48000), 48000), file_name="a.wav")
    at_192k = pipeline.measure(wav(music(20.0, 192000), 192000), file_name="a.wav")
    assert (at_192k.sample_rate, at_192k.analysis_rate) == (192000, 48000)
    assert at_192k.rhythm.bpm == pytest.approx(at_48k.rhythm.bpm, abs=0.5)
    for band, share in at_48k.spectrum.bands_pct.items():
        assert at_192k.spectrum.bands_pct[band] == pytest.approx(share, abs=0.5), band
    assert at_192k.loudness.integrated_lufs == pytest.approx(at_48k.loudness.integrated_lufs, abs=0.1)
    assert at_192k.stereo.width == pytest.approx(at_48k.stereo.width, abs=0.01)
    assert (at_192k.tonality.key and at_192k.tonality.key.tonic) == \
        (at_48k.tonality.key and at_48k.tonality.key.tonic)


def _refusal(data: bytes, read) -> tuple[str, str]:
    with pytest.raises(TrackgradeError) as caught:
        read(data, file_name="x.wav")
    return caught.value.code, caught.value.message


@pytest.mark.parametrize("case", ["silence", "dc", "short"])
def test_the_chunked_path_refuses_what_decode_refuses(case):
    rate = 192000
    x = {"silence": np.zeros((rate * 3, 2), np.float32),
         "dc": np.full((rate * 3, 2), 0.25, np.float32),
         "short": music(0.7, rate)}[case]
    data = wav(x, rate, "FLOAT")
    assert _refusal(data, decode_for_analysis) == _refusal(data, decode)


def test_a_flac_with_no_declared_length_is_refused_past_20_minutes():
    data = flac_constant_blocks(1201, 96000, 1, declare_total=False)
    chunks = decode_chunks(data, file_name="x.flac", chunk_frames=1 << 20)
    with pytest.raises(TrackgradeError) as caught:
        for _ in chunks:
            pass
    assert caught.value.code == "file_rejected" and "20 minutes" in caught.value.message
    assert chunks.frames <= 1200 * 96000 + 1


def test_a_truncated_high_rate_flac_keeps_what_decodes():
    data = flac_constant_blocks(30, 192000, 2)
    audio = decode_for_analysis(data[:len(data) // 2], file_name="x.flac")
    assert audio.truncated and audio.declared_duration_s == pytest.approx(30.0)
    assert 10 < audio.duration_s < 20
