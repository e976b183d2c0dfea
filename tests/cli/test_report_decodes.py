"""`trackgrade report` decodes each file once, through the pipeline's
bounded-memory decoder: a 96 kHz track and a 96 kHz reference are never
decoded whole (engine.high_rate streams them), and a 44.1 kHz one is decoded
once, not once for the analysis and again for the waveform."""

from __future__ import annotations

from trackgrade.cli.report import build_report
from trackgrade.engine import decode as decode_module
from trackgrade.engine import high_rate

from tests.server.server_harness import wav_bytes


def count_whole_decodes(monkeypatch) -> list[str]:
    """The real whole-file decoder, counted wherever it is looked up."""
    calls, real = [], decode_module.decode

    def counted(data, *args, **kwargs):
        calls.append(kwargs.get("file_name", ""))
        return real(data, *args, **kwargs)

    monkeypatch.setattr(decode_module, "decode", counted)
    monkeypatch.setattr(high_rate, "decode", counted)
    return calls


def test_high_rate_track_and_reference_are_never_decoded_whole(tmp_path, monkeypatch):
    track, ref = tmp_path / "track.wav", tmp_path / "ref.wav"
    track.write_bytes(wav_bytes(6, rate=96000, channels=2))
    ref.write_bytes(wav_bytes(7, rate=96000, channels=2))
    calls = count_whole_decodes(monkeypatch)
    analysis, html = build_report(track, "master", reference_paths=[ref])
    assert calls == [] and analysis.file_name == "track.wav" and "<html" in html.lower()


def test_a_track_is_decoded_once(tmp_path, monkeypatch):
    track = tmp_path / "track.wav"
    track.write_bytes(wav_bytes(6, rate=44100, channels=2))
    calls = count_whole_decodes(monkeypatch)
    build_report(track, "master")
    assert calls == ["track.wav"]
