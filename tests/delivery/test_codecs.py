"""delivery.codecs: MP3/AAC/Opus round trips in memory, on the passages where their peaks land."""

import json
import math
import os
import time

import numpy as np
import pytest
from scipy.signal import butter, sosfilt

from tests.delivery.signals import RATE, club_loop, gained, wav_bytes
from tests.truth import GENERATORS, render_specs
from trackgrade.engine.codecs import (BLOCK_S, CANDIDATES, CODECS, FRAME, MARGIN_S, PRIMING,
                                      WHOLE_SHARE, CodecPreview, codec_peaks, encode_spans,
                                      grid_step, passage_peak_dbtp, passages, round_trip)
from trackgrade.engine.decode import decode
from trackgrade.engine.loudness import measure_loudness, true_peak_dbtp
from trackgrade.pipeline import analyze


def limited_bright_master(seconds: float = 24.0) -> np.ndarray:
    """A bright, loud master: a quiet intro, then a drop whose hats and noise
    are boosted and soft-limited under -0.3 dBFS (the codecs overshoot it)."""
    x = club_loop(seconds, seed=7).astype(np.float64)
    rng = np.random.default_rng(11)
    air = sosfilt(butter(2, 5000, "hp", fs=RATE, output="sos"), rng.standard_normal(x.shape), axis=0)
    n = x.shape[0]
    envelope = np.where(np.arange(n) < n // 4, 0.3, 1.0)[:, None]
    x = (x + 0.06 * air) * envelope * 1.6
    ceiling = 10 ** (-0.3 / 20)
    return (ceiling * np.tanh(x / ceiling)).astype(np.float32)


@pytest.mark.slow(seconds=13)
def test_the_passages_agree_with_a_whole_track_encode_within_half_a_db():
    x = limited_bright_master()
    loudness = measure_loudness(x, RATE)
    quick = codec_peaks(x, RATE)
    whole = codec_peaks(x, RATE, whole_track=True)
    assert [c.codec for c in quick] == [c[0] for c in CODECS] == ["mp3", "aac", "opus"]
    assert max(w.true_peak_dbtp for w in whole) > loudness.true_peak_dbtp   # the codecs overshoot
    for q, w in zip(quick, whole):
        assert abs(q.true_peak_dbtp - w.true_peak_dbtp) <= 0.5, (q, w)
    windows = passages(x, RATE)
    assert len(windows) == CANDIDATES
    for codec, *_ in CODECS:
        spans = encode_spans(windows, codec, RATE, x.shape[0])
        assert sum(e - s for (s, e), _ in spans) < WHOLE_SHARE * x.shape[0]


# the items of benchmarks/bench_delivery.py `agreement` that passages missed by
# more than 0.5 dB (benchmarks/results/ux2.md): the loudest and the sample-peak
# windows held a lower codec peak than a beat elsewhere (v07 MP3 -0.53, v10
# Opus -0.55), a slice of the decoded passage overshot on its own step from
# silence (v21, mono: MP3 +0.81)
MISSED = ("v07_tech_house_121_Gm__tempo_drift", "v10_techno_126_Fm", "v21_hardstyle_146_A__mono")


@pytest.mark.slow(seconds=40)
def test_the_renders_the_passages_once_missed_now_agree_within_half_a_db():
    grid = json.loads((GENERATORS / "grids" / "visible.json").read_text())["tracks"]
    folder, tracks = render_specs([t for t in grid if t["name"] in MISSED])
    assert len(tracks) == len(MISSED)
    for track in tracks:
        audio = decode((folder / track["file"]).read_bytes(), file_name=track["file"])
        x = (audio.samples * (10 ** (-0.1 / 20) / np.abs(audio.samples).max())).astype(np.float32)
        quick = codec_peaks(x, audio.sample_rate)
        whole = codec_peaks(x, audio.sample_rate, whole_track=True)
        for q, w in zip(quick, whole):
            assert abs(q.true_peak_dbtp - w.true_peak_dbtp) <= 0.5, (track["name"], q, w)


def test_the_frame_sizes_and_priming_are_ffmpegs():
    """A span starts on the frame grid of a whole-track encode (FRAME, at the
    codec's rate, after resampling), and a stretch is read PRIMING samples
    late: a noise burst comes back exactly that late."""
    import av

    for codec, encoder, *_ in CODECS:
        enc = av.CodecContext.create(encoder, "w")
        enc.sample_rate, enc.layout, enc.bit_rate = 48000, "stereo", 160000
        enc.format = enc.codec.audio_formats[0].name
        enc.open()
        assert enc.frame_size == FRAME[codec]
    x = np.zeros((RATE * 2, 2), np.float32)
    x[RATE // 2:RATE] = 0.3 * np.random.default_rng(0).standard_normal((RATE // 2, 2))
    for codec in ("mp3", "aac"):                       # both at the track's own rate
        decoded, rate = round_trip(x, RATE, codec)
        assert rate == RATE
        lags = np.correlate(decoded[:x.shape[0], 0], x[:, 0], "full")
        assert int(np.argmax(lags)) - (x.shape[0] - 1) == PRIMING.get(codec, 0)


@pytest.mark.parametrize("rate", [22050, 44100, 48000, 96000])
def test_every_span_starts_on_the_codec_frame_grid(rate):
    n = rate * 60
    native = {"mp3": (32000, 44100, 48000), "aac": (44100, 48000, 88200, 96000)}
    for codec, *_ in CODECS:
        out = rate if rate in native.get(codec, ()) else 48000
        step = grid_step(codec, rate)
        assert step > 1
        for (start, end), (lo, hi) in encode_spans([(rate * 7 + 13, rate * 7 + 4423)], codec,
                                                   rate, n):
            assert start * out % rate == 0 and (start * out // rate) % FRAME[codec] == 0
            assert start <= lo - MARGIN_S[codec] * rate and end >= hi + MARGIN_S[codec] * rate - 1


def test_a_stretch_reads_the_decoded_audio_around_it():
    """A window that begins on a loud sample: read as a slice, the step from
    silence into it overshoots; with the decoded audio around it as the
    interpolator's context it reads no more than the whole-track encode."""
    t = np.arange(RATE * 6) / RATE
    x = np.repeat((0.89 * np.sin(2 * np.pi * 100 * t))[:, None], 2, axis=1).astype(np.float32)
    level = 20 * math.log10(0.89)
    lo = int(3.0025 * RATE)                             # the sine at its crest
    window = (lo, lo + int(BLOCK_S * RATE))
    whole = codec_peaks(x, RATE, whole_track=True)
    for codec, peak_whole in zip([c[0] for c in CODECS], whole):
        (span, stretch), = encode_spans([window], codec, RATE, x.shape[0])
        assert span != (0, x.shape[0])
        peak = passage_peak_dbtp(x, RATE, codec, span, stretch)
        assert level - 1.0 < peak <= peak_whole.true_peak_dbtp + 0.1, (codec, peak, peak_whole)
    assert true_peak_dbtp(x[lo:window[1]]) > level + 0.5      # what a slice reads


def test_a_short_track_is_encoded_whole_and_a_long_one_in_passages():
    """A codec encodes the whole track when its passages' spans would cover
    WHOLE_SHARE of it (their encoders' start-ups would cost as much)."""
    for seconds, whole in ((16.0, True), (40.0, False)):
        x = club_loop(seconds)
        windows = passages(x, RATE)
        for codec, *_ in CODECS:
            spans = encode_spans(windows, codec, RATE, x.shape[0])
            encoded = sum(e - s for (s, e), _ in spans)
            assert (spans == [((0, x.shape[0]), (0, x.shape[0]))]) == whole, (seconds, codec)
            assert encoded == x.shape[0] if whole else encoded < WHOLE_SHARE * x.shape[0]


def test_every_codec_is_measured_on_the_passages_on_threads_started_at_once():
    """AAC too (its intensity stereo is off, see engine/codecs.py), and the
    encodes begin when the preview is made, beside the rest of the analysis."""
    x = limited_bright_master(30.0)
    spans = passages(x, RATE)
    assert len(spans) > 1
    with CodecPreview(x, RATE, workers=2) as preview:
        assert sorted(preview.tasks) == sorted(
            (c[0], *pair) for c in CODECS for pair in encode_spans(spans, c[0], RATE, x.shape[0]))
        deadline = time.monotonic() + 60
        while not any(f.running() or f.done() for f in preview._futures):
            assert time.monotonic() < deadline, "no encode started before result()"
            time.sleep(0.01)
        seen = []
        peaks = preview.result(lambda done, total: seen.append((done, total)))
    assert seen == [(i + 1, len(preview.tasks)) for i in range(len(preview.tasks))]
    assert [p.codec for p in peaks] == ["mp3", "aac", "opus"]


def test_the_codec_preview_reports_and_warns_when_a_codec_clips():
    x = gained(limited_bright_master(10.0), 1.6)          # a hot master: peaks near 0 dBTP
    a = analyze(wav_bytes(x), file_name="hot.wav", enhanced=False, codec_preview=True)
    codecs = a.delivery.codecs
    assert [(c.codec, c.bitrate_kbps) for c in codecs] == [("mp3", 320), ("aac", 256), ("opus", 160)]
    for c in codecs:
        assert c.clips == (c.true_peak_dbtp > 0.0)
        assert abs(c.true_peak_rise_db - (c.true_peak_dbtp - a.mix.peak_dbfs)) <= 0.11
    assert any(c.clips for c in codecs)
    warns = [f for f in a.feedback if f.type == "warn" and f.category == "mix"
             and "lossy encoding" in f.text]
    assert len(warns) == 1
    doc = a.to_dict()["delivery"]["codecs"]
    assert set(doc[0]) == {"codec", "bitrate_kbps", "true_peak_dbtp", "true_peak_rise_db", "clips"}


def test_without_the_flag_no_codec_runs():
    a = analyze(wav_bytes(club_loop(4.0)), file_name="x.wav", enhanced=False)
    assert a.delivery.codecs is None
    assert a.to_dict()["delivery"]["codecs"] is None


def test_the_codec_preview_never_writes_temporary_files(tmp_path, monkeypatch, empty_tmpdir):
    tmp = empty_tmpdir
    before = set(os.listdir(tmp_path))
    monkeypatch.chdir(tmp_path)
    x = club_loop(3.0)
    peaks = codec_peaks(x, RATE)
    assert len(peaks) == 3
    assert os.listdir(tmp) == []
    assert set(os.listdir(tmp_path)) == before
