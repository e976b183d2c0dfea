"""Sections and the energy curve on short synthetic renders with exact truth."""

from __future__ import annotations

import numpy as np
import pytest

from trackgrade.engine.features import SECTION_LABELS, Structure
from trackgrade.engine.frames import short_stft
from trackgrade.engine.rhythm import measure_rhythm
from trackgrade.engine.structure import measure_structure
from tests.truth import render_specs

from .rhythm_specs import SPECS, load, rendered


@pytest.fixture(scope="module")
def tracks():
    result = {}
    for t, mono, sr, dur in rendered():
        spec = short_stft(mono, sr)
        rh = measure_rhythm(spec, dur)
        st = measure_structure(spec, dur, beat_times=rh.beat_times, bpm=rh.bpm)
        result[t["name"]] = (t, spec, dur, rh, st)
    return result


def assert_valid(st: Structure, duration: float, max_sections: int = 12):
    assert isinstance(st, Structure)
    secs = st.sections
    assert 1 <= len(secs) <= max_sections
    assert secs[0].start == 0.0
    assert secs[-1].end == pytest.approx(duration, abs=1e-3)
    for a, b in zip(secs[:-1], secs[1:]):
        assert a.end == b.start
    for s in secs:
        assert s.end > s.start or duration == 0
        assert s.label in SECTION_LABELS
        assert isinstance(s.energy, int) and 0 <= s.energy <= 100
    assert np.all(np.isfinite(st.energy_curve))
    assert st.energy_curve.min() >= 0 and st.energy_curve.max() <= 1


def _label_at(st, t):
    return next(s.label for s in st.sections if s.start <= t < s.end)


@pytest.mark.parametrize("name", ["house_124", "techno_132p5", "trance_138"])
def test_sections_are_contiguous_and_cover_the_track(tracks, name):
    _, _, dur, _, st = tracks[name]
    assert_valid(st, dur)
    assert len(st.sections) >= (3 if dur >= 40 else 2)
    # the energy curve has one value per hop over the whole track
    assert len(st.energy_curve) == int(np.ceil(dur / st.curve_hop_s))


@pytest.mark.parametrize("name", ["house_124", "trance_138"])
def test_the_drops_are_found_where_the_truth_has_them(tracks, name):
    truth, _, _, _, st = tracks[name]
    drops = [s for s in truth["sections"] if s["label"] == "drop"]
    for d in drops:
        assert _label_at(st, (d["start"] + d["end"]) / 2) == "drop", (d, st.sections)
    # and the breakdowns are not drops
    for b in (s for s in truth["sections"] if s["label"] == "breakdown"):
        assert _label_at(st, (b["start"] + b["end"]) / 2) != "drop"


@pytest.mark.parametrize("name", ["house_124", "trance_138"])
def test_boundaries_land_on_truth_boundaries(tracks, name):
    truth, _, _, rh, st = tracks[name]
    bar = 240.0 / truth["bpm"]
    ref = [s["start"] for s in truth["sections"][1:]]
    est = [s.start for s in st.sections[1:]]
    hits = sum(any(abs(e - r) <= max(bar, 2.0) for r in ref) for e in est)
    assert hits / len(est) >= 0.7          # precision
    assert hits / len(ref) >= 0.5          # recall (2-bar buildups are below the minimum length)
    # boundaries sit on the bar grid: a multiple of 4 beats from a tracked beat
    beats = rh.beat_times
    for e in est:
        assert np.min(np.abs(beats - e)) < 0.03


@pytest.mark.parametrize("name", ["house_124", "trance_138"])
def test_intro_first_and_the_drop_is_the_most_energetic(tracks, name):
    _, _, _, _, st = tracks[name]
    assert st.sections[0].label == "intro"
    drop_e = max(s.energy for s in st.sections if s.label == "drop")
    others = [s.energy for s in st.sections if s.label in ("breakdown", "intro", "outro")]
    assert drop_e == 100 and all(e < drop_e for e in others)


def test_low_energy_end_is_the_outro(tracks):
    _, _, _, _, st = tracks["trance_138"]
    assert st.sections[-1].label == "outro"


def test_minimum_section_length(tracks):
    for truth, _, dur, rh, st in tracks.values():
        bar = 240.0 / rh.bpm
        inner = st.sections[1:-1]
        assert all(s.end - s.start >= min(4 * bar, 8.0) * 0.9 for s in inner)


def _spec(x, sr=44100):
    return short_stft(np.asarray(x, dtype=np.float32), sr)


def test_two_second_clip_gets_one_or_two_sections(tracks):
    truth, spec, dur, rh, _ = tracks["house_124"]
    short = spec.power[: int(2.0 / spec.hop_s)]
    from trackgrade.engine.frames import Spectrogram  # noqa: PLC0415
    clip = Spectrogram(short, spec.freqs, spec.hop_s, spec.n_fft, spec.sample_rate)
    st = measure_structure(clip, 2.0, beat_times=rh.beat_times[rh.beat_times < 2.0], bpm=rh.bpm)
    assert_valid(st, 2.0, max_sections=2)


@pytest.mark.parametrize("x, dur", [(np.zeros(44100 * 4), 4.0), (np.zeros(100), 100 / 44100),
                                    (np.random.default_rng(1).normal(0, 0.1, 44100 * 12), 12.0)])
def test_silence_noise_and_tiny_inputs_without_a_grid(x, dur):
    st = measure_structure(_spec(x), dur)
    assert_valid(st, dur)


def test_no_grid_still_segments_by_energy(tracks):
    truth, spec, dur, _, _ = tracks["trance_138"]
    st = measure_structure(spec, dur, curve_hop_s=0.5)
    assert_valid(st, dur)
    assert len(st.energy_curve) == int(np.ceil(dur / 0.5))
    assert any(s.label == "drop" for s in st.sections)


def test_energy_curve_from_the_short_term_loudness(tracks):
    from trackgrade.engine.loudness import measure_loudness  # noqa: PLC0415
    truth, spec, dur, rh, _ = tracks["house_124"]
    out, _ = render_specs(SPECS)
    x, sr = load(out / truth["file"])
    loud = measure_loudness(x, sr)
    st = measure_structure(spec, dur, beat_times=rh.beat_times, bpm=rh.bpm,
                           short_term_lufs=loud.short_term_lufs, curve_hop_s=loud.curve_hop_s)
    assert_valid(st, dur)
    curve = st.energy_curve
    assert len(curve) == int(np.ceil(dur / loud.curve_hop_s))

    def mean_over(label):
        secs = [s for s in truth["sections"] if s["label"] == label]
        idx = np.concatenate([np.arange(int((s["start"] + 3) / 0.1), int(s["end"] / 0.1)) for s in secs])
        return float(curve[idx].mean())
    assert mean_over("drop") > mean_over("breakdown")


def test_no_run_of_identical_labels(tracks):
    """Adjacent sections with one label are one section (CONTRACT.md section 5)."""
    for name, (_, _, dur, _, st) in tracks.items():
        labels = [s.label for s in st.sections]
        assert all(a != b for a, b in zip(labels, labels[1:])), (name, labels)


def test_an_outro_is_never_the_loudest_section(tracks):
    for name, (_, _, dur, _, st) in tracks.items():
        secs = st.sections
        if len(secs) > 1 and secs[-1].label == "outro":
            assert secs[-1].energy < max(s.energy for s in secs), (name, secs)


def test_a_short_last_section_at_the_top_level_is_a_drop_not_an_outro():
    """The loudest part of a track is never its outro, however short it is."""
    from trackgrade.engine.structure import _label

    level = np.array([0.3, 0.8, 0.2, 1.0])
    labels = _label(level, np.zeros(4), np.zeros(4), np.array([8, 16, 8, 4]))
    assert labels[-1] == "drop"
    # a short tail just under the top level is still the outro
    level = np.array([0.3, 1.0, 0.2, 0.95])
    assert _label(level, np.zeros(4), np.zeros(4), np.array([8, 16, 8, 4]))[-1] == "outro"
