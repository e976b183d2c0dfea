"""The shortcuts the generators in tests/truth_gen/ take to render fast give
the same samples as the plain way: the EBU signals' 24-bit files are quantized
in gen_ebu itself (what libsndfile stores), their sines come from one shared
carrier, and identical channels are measured once."""

from __future__ import annotations

import numpy as np
import pytest
import soundfile as sf

from tests.truth import ebu_cases, ebu_signals, generator_module


@pytest.fixture(scope="module")
def ebu():
    return generator_module("gen_ebu")


def test_pcm24_quantization_is_what_libsndfile_stores(ebu, tmp_path):
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-1, 1, (50000, 2)),
                        [[1.0, -1.0], [1.3, -1.3], [0.5, -0.5], [2.5 / 2 ** 31, -2.5 / 2 ** 31],
                         [0.5 / 2 ** 23, -0.5 / 2 ** 23], [1.5 / 2 ** 23, -1.5 / 2 ** 23]]])
    sf.write(tmp_path / "float.wav", x, 48000, subtype="PCM_24")
    stored, _ = sf.read(tmp_path / "float.wav", dtype="int32", always_2d=True)
    np.testing.assert_array_equal(ebu.quantize_pcm24(x), stored >> 8)


@pytest.mark.parametrize("subtype", ["PCM_24", "PCM_16"])
def test_write_wav_returns_the_samples_the_file_holds(ebu, tmp_path, subtype):
    rng = np.random.default_rng(6)
    x = 0.9 * rng.uniform(-1, 1, (20000, 2))
    path = tmp_path / "x.wav"
    back = ebu.write_wav(str(path), x, 44100, subtype)
    read, rate = sf.read(path, always_2d=True)
    assert rate == 44100 and sf.info(str(path)).subtype == subtype
    np.testing.assert_array_equal(back, read)


def test_carrier_is_a_fresh_sine_at_every_length(ebu):
    fs = 8000
    ebu.carrier(5 * fs, fs, 1000.0)                      # a longer one made first
    for n in (1, 777, 3 * fs + 5):
        np.testing.assert_array_equal(ebu.carrier(n, fs, 1000.0),
                                      np.sin(2.0 * np.pi * 1000.0 * (np.arange(n) / fs)))
    longer = ebu.carrier(200 * fs, fs, 1000.0)           # past the first one: grows
    np.testing.assert_array_equal(longer[-fs:], np.sin(2.0 * np.pi * 1000.0 * (np.arange(199 * fs, 200 * fs) / fs)))


def test_distinct_columns_drops_repeated_channels_only(ebu):
    a, b = np.arange(6.0), -np.arange(6.0)
    assert len(ebu.distinct_columns(np.stack([a, a], axis=1))) == 1
    assert len(ebu.distinct_columns(np.stack([a, b, a], axis=1))) == 2


@pytest.mark.parametrize("rate", [48000, 44100])
def test_ebu_cases_are_the_files_and_expectations_of_expected_json(rate):
    """What the loudness tests are collected from (without making the signals)
    is what the generator writes."""
    _, expected = ebu_signals(rate)
    assert ebu_cases(rate) == [{"file": e["file"], "expect": e["expect"]} for e in expected["files"]]


SHORT = {"style": "techno", "bpm": 128, "key": "D", "seconds": 3, "seed": 5, "sample_rate": 22050}


def test_tracks_sharing_a_master_sound_as_when_rendered_alone(tmp_path):
    """synth_edm renders the post-mastering variants of a track from one
    master: each file is the one its spec makes on its own."""
    synth = generator_module("synth_edm")
    specs = [dict(SHORT, name="plain"),
             dict(SHORT, name="quiet_noisy", defects=[{"type": "quiet_db", "value": 6},
                                                      {"type": "noise_db", "value": -40}]),
             dict(SHORT, name="inverted", defects=["phase_invert_right"], format="FLAC")]
    assert len(synth.master_groups(specs)) == 1
    synth.run_specs(specs, str(tmp_path / "together"), jobs=1, quiet=True)
    for spec in specs:
        synth.forget_master()
        synth.run_specs([spec], str(tmp_path / spec["name"]), jobs=1, quiet=True)
        file = spec["name"] + (".flac" if spec.get("format") else ".wav")
        assert (tmp_path / "together" / file).read_bytes() == (tmp_path / spec["name"] / file).read_bytes()
    synth.forget_master()


def test_render_specs_in_this_process_equals_the_generator_process(tmp_path, monkeypatch):
    from tests import truth

    specs = [dict(SHORT, name="a"), dict(SHORT, name="b", seed=6, channels=1)]
    monkeypatch.setattr(truth, "CACHE", tmp_path / "here")
    here, here_truth = truth.render_specs(specs)
    monkeypatch.setattr(truth, "CACHE", tmp_path / "process")
    there, there_truth = truth.render_specs(specs, jobs=2)
    assert [t["name"] for t in here_truth] == ["a", "b"]
    for a, b in zip(here_truth, there_truth):
        assert (here / a["file"]).read_bytes() == (there / b["file"]).read_bytes()
        assert a["lufs_integrated"] == b["lufs_integrated"] and a["beat_times"] == b["beat_times"]


def test_master_chain_clips_a_column_ordered_mix_as_a_row_ordered_one():
    """The soft clipper writes through a flat view of the signal: a mix in
    either memory order (scipy's filters along axis 0 return column-ordered
    arrays) is clipped the same."""
    synth = generator_module("synth_edm")
    rng = np.random.default_rng(8)
    mix = (0.5 * rng.standard_normal((22050, 2))).astype(np.float32)
    rows = synth.master_chain(np.ascontiguousarray(mix), 22050, 6.0, -1.0, {}, tp=False)
    columns = synth.master_chain(np.asfortranarray(mix), 22050, 6.0, -1.0, {}, tp=False)
    np.testing.assert_array_equal(rows, columns)
    ceiling = 10 ** (-1 / 20)
    driven = mix * np.float32(10 ** (6 / 20))
    assert np.abs(driven).max() > 1.25 * ceiling and np.abs(rows).max() <= ceiling
