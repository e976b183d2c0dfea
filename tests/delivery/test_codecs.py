"""delivery.codecs: MP3/AAC/Opus round trips in memory, on the loudest passages."""

import os
import time

import numpy as np
import pytest
from scipy.signal import butter, sosfilt

from tests.delivery.signals import RATE, club_loop, gained, wav_bytes
from trackgrade.engine.codecs import CODECS, CodecPreview, codec_peaks, passages
from trackgrade.engine.loudness import measure_loudness
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
    quick = codec_peaks(x, RATE, loudness)
    whole = codec_peaks(x, RATE, loudness, whole_track=True)
    assert [c.codec for c in quick] == [c[0] for c in CODECS] == ["mp3", "aac", "opus"]
    assert max(w.true_peak_dbtp for w in whole) > loudness.true_peak_dbtp   # the codecs overshoot
    for q, w in zip(quick, whole):
        assert abs(q.true_peak_dbtp - w.true_peak_dbtp) <= 0.5, (q, w)
    assert sum(e - s for s, e in passages(x, RATE, loudness)) < 0.75 * x.shape[0]


def test_every_codec_is_measured_on_the_passages_on_threads_started_at_once():
    """AAC too (its intensity stereo is off, see engine/codecs.py), and the
    encodes begin when the preview is made, beside the rest of the analysis."""
    x = limited_bright_master(30.0)
    loudness = measure_loudness(x, RATE)
    spans = passages(x, RATE, loudness)
    assert len(spans) > 1
    with CodecPreview(x, RATE, loudness, workers=2) as preview:
        assert sorted(preview.tasks) == sorted((c[0], span) for c in CODECS for span in spans)
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
    peaks = codec_peaks(x, RATE, measure_loudness(x, RATE))
    assert len(peaks) == 3
    assert os.listdir(tmp) == []
    assert set(os.listdir(tmp_path)) == before
