"""Chroma that hears the bass (issue 27): the long spectrum on a semitone grid
from B0, and the key read from it. Mechanics on generated tones (fast), and
accuracy guards on real clips and recorded-instrument renders whose floors
are the textbook method's scores on the same items (benchmarks/eval_key.py,
benchmarks/results/key.md)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
import soundfile as sf

from tests.truth import real_row, render_recorded
from trackgrade.engine.decode import decode
from trackgrade.engine.frames import long_spectrum
from trackgrade.engine.key_profiles import dominant_of
from trackgrade.engine.semitones import (MELODY_FROM_MIDI, MIDI_RANGE, bass_note, bass_share,
                                         fold_octaves, melody_frames, semitone_magnitude)
from trackgrade.engine.tonal import (BASS_LINE_SHARE, DOMINANT_BASS_SHARE, bass_line_key, key_chroma,
                                     key_correlations, loop_start_mode, mean_chroma, measure_tonality,
                                     relative_of, start_index, subdominant_of)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
import key_material  # noqa: E402
from eval_key import mirex_score, parse_truth  # noqa: E402

SR = 22050


def _line(midis, seconds_each=1.0, harmonics=1, sr=SR) -> np.ndarray:
    t = np.arange(int(sr * seconds_each)) / sr
    parts = []
    for m in midis:
        f = 440.0 * 2 ** ((m - 69) / 12)
        note = sum(np.sin(2 * np.pi * f * h * t) / h for h in range(1, harmonics + 1))
        parts.append(0.3 * note * np.hanning(t.size) ** 0.1)
    return np.concatenate(parts).astype(np.float32)[:, None]


def _held_render_key(name: str):
    """The held-out render `name` (key_material) and the key measure_tonality reads from it."""
    item = next(i for i in key_material.items("held") if i["spec"]["name"] == name)
    path, = render_recorded([item["spec"]])
    x, sr = sf.read(path, dtype="float32", always_2d=True)
    return item, measure_tonality(long_spectrum(x, sr), x).key


def test_the_lowest_semitones_are_told_apart():
    """B0 (30.9 Hz) and C1 (32.7 Hz), 1.8 Hz apart, land on their own semitones."""
    for midi in (23, 24, 25):
        spec = long_spectrum(_line([midi], seconds_each=6.0), SR)
        mags = semitone_magnitude(spec, 0.0)[:-1].mean(axis=0)
        assert int(np.argmax(mags)) == midi - MIDI_RANGE[0]
        below = mags[midi - MIDI_RANGE[0] - 1] if midi > MIDI_RANGE[0] else 0.0
        assert mags[midi - MIDI_RANGE[0]] > 2.5 * max(below, mags[midi - MIDI_RANGE[0] + 1])


def test_octaves_fold_onto_their_pitch_class():
    semis = np.zeros((1, MIDI_RANGE[1] - MIDI_RANGE[0]))
    semis[0, 24 - MIDI_RANGE[0]] = 1.0           # C1
    semis[0, 69 - MIDI_RANGE[0]] = 2.0           # A4
    semis[0, 107 - MIDI_RANGE[0]] = 0.5          # B7
    chroma = fold_octaves(semis)[0]
    assert chroma[0] == 1.0 and chroma[9] == 2.0 and chroma[11] == 0.5 and chroma.sum() == 3.5


def test_a_sub_bass_line_below_50_hz_is_heard():
    """A sine bass line of E minor's notes between 31 and 47 Hz: the key
    chroma's five strongest pitch classes are the five played; the peak
    chroma (from 50 Hz) hears nothing."""
    played = [28, 31, 23, 26, 30] * 2            # E1 G1 B0 D1 F#1
    spec = long_spectrum(_line(played, seconds_each=1.5), SR)
    chroma = key_chroma(spec).chroma
    assert set(np.argsort(chroma)[::-1][:5]) == {m % 12 for m in played}
    assert mean_chroma(spec)[0].sum() == 0


def test_a_bass_line_names_the_key_over_quiet_chords_of_its_relative():
    """A minor's bass (A1 C2 E2, loud, on the root half the time) under quiet
    C major chords: the bass's register counts, so A minor, not C major."""
    bass = _line([33, 33, 36, 40, 33, 33, 31, 28] * 2, seconds_each=0.75, harmonics=3)
    chords = sum(_line([m] * 16, seconds_each=0.75, harmonics=2) for m in (60, 64, 67)) * 0.25
    key = measure_tonality(long_spectrum(bass + chords, SR)).key
    assert (key.tonic, key.scale) == ("A", "minor")


@pytest.mark.parametrize("stem,floor", [
    # the textbook method's MIREX score on the clip, measured in benchmarks/eval_key.py
    ("mirdata__tonality_classicaldb_Gloria_in_D_Major.wav", 1.0),
    ("librosa__sorohanro_-_solo-trumpet-06.hq.ogg", 1.0),
    ("sonicpi__bass_trance_c.flac", 1.0),
    ("sonicpi__bass_dnb_f.flac", 1.0),
    ("mirdata__giantsteps_key_10089_Jason_Sparks_-_Close_My_Eyes__44k.wav", 0.5),
])
def test_real_clips_at_or_above_the_textbook_method(stem, floor):
    row = real_row(stem)
    x, sr = sf.read(row["path"], dtype="float32", always_2d=True)
    key = measure_tonality(long_spectrum(x, sr), x).key
    assert key is not None
    assert mirex_score(key.tonic, key.scale, *parse_truth(row["key_truth"])) >= floor, key


@pytest.mark.parametrize("item", key_material.subset(), ids=lambda i: i["spec"]["name"])
def test_recorded_renders_at_or_above_the_textbook_method(item):
    """Held-out instruments and progressions (key_material.SUBSET), rendered
    through FluidR3 GM and a Hydrogen kit: at or above the textbook method's
    score on the same item (five of the eight it gets wrong), and at least
    the relative key (0.3) where the textbook method fails: the decisive-
    profile rule reads the C# minor pad as its relative (Essentia and the
    textbook method: 0.0)."""
    path, = render_recorded([item["spec"]])
    x, sr = sf.read(path, dtype="float32", always_2d=True)
    key = measure_tonality(long_spectrum(x, sr), x).key
    assert key is not None
    assert mirex_score(key.tonic, key.scale, item["tonic"], item["scale"]) >= max(
        item["textbook_score"], 0.3), key


# --- the more decisive of two profiles (issue 27, benchmarks/results/key.md) ---

@pytest.mark.parametrize("name", ["wobble_G_major_87_d", "wobble_G_minor_87_d"])
def test_a_lone_wobble_note_keeps_its_root(name):
    """One G under a moving filter, with drums: its partials (G, D, B) fit
    C major best by Temperley's profile, whose tonic C is barely heard; the
    reading needs its tonic heard (MIN_TONIC_SHARE), so the root G stays."""
    assert _held_render_key(name)[1].tonic == "G"


def test_a_country_mix_in_a_major_reads_a_fifth_not_the_relative_minor():
    """The real GTZAN country excerpt (A major, drums): the blended profile reads
    F# minor (0.3), Temperley's, the more decisive here, D major (0.5)."""
    row = real_row("mirdata__gtzan_country.00000.wav")
    x, sr = sf.read(row["path"], dtype="float32", always_2d=True)
    key = measure_tonality(long_spectrum(x, sr), x).key
    assert mirex_score(key.tonic, key.scale, *parse_truth(row["key_truth"])) >= 0.5, key


@pytest.mark.parametrize("name", [
    # held-out renders the blended profile reads as the relative minor or iii
    "bass_walk_F#_major_I-vi-IV-V_35_d",
    "bass_walk_C_major_I-vi-IV-V_36_d_r2",
    "melody_C_major_I-vi-IV-V_80_d_r1",
    "guitar_E_major_I-IV-V-IV_29_r1",
    "mix_G_major_I-vi-IV-V_4_d_r1",
    # held-out dry mixes that start on vi (their relative minor's chords): the
    # start frame reads the relative minor (0.3); their melody keeps the major
    # key (round 5, `semitones.melody_frames`)
    "mix_C_major_vi-IV-I-V_5_r1",
    "mix_B_major_vi-IV-I-V_0_r2",
    "mix_F_major_vi-IV-I-V_5",
    # held-out minor loops on i-VII-VI-VII: read a fifth up (0.5) until the
    # loop's start turns a reading to its subdominant (round 5, `loop_start_mode`)
    "chords_D_minor_i-VII-VI-VII_5",
    "pad_E_minor_i-VII-VI-VII_89_d",
    "bass_walk_Bb_minor_i-VII-VI-VII_33_d_r2",
    "mix_D_minor_i-VII-VI-VII_5_d",
    # held-out wobbles over drums whose root line fits the key a fifth below
    # as well (E minor for B G E F#): read a fifth down (0.5) until a bass
    # line's start turns a reading to its dominant (round 6, `bass_line_key`)
    "wobble_moving_B_minor_i-VI-iv-v_87_d_r2",
    "wobble_moving_Eb_major_I-vi-IV-V_38_d",
    # held-out bass lines and a sub alone (the bass register holds most of the
    # magnitude): a fifth or a relative away until the bass's first note names
    # the tonic (round 6, `bass_line_key`)
    "bass_root_F_minor_i-VII-VI-VII_32_r2",
    "wobble_sub_C#_minor_i-VI-iv-v_39_r1",
])
def test_held_loops_a_rule_reads_exactly(name):
    item, key = _held_render_key(name)
    assert (key.tonic, key.scale) == (item["tonic"], item["scale"]), key


def test_the_key_material_keeps_fitting_and_scoring_apart_with_cells_of_twelve():
    """Every held-out kind x drum condition has at least 12 items; no fit item
    uses a held-out instrument or progression (the split leaves them out whole)."""
    from collections import Counter

    items = key_material.items()
    held = Counter((i["kind"], i["drums"]) for i in items if i["split"] == "held")
    assert len(held) == 14 and min(held.values()) >= 12, held
    for i in items:
        if i["split"] == "fit":
            programs = {t.get("program") for t in i["spec"]["tracks"]} - {None}
            assert not programs & set(key_material.HELD_PROGRAMS), i["spec"]["name"]
            assert not any(p in i["spec"]["name"] for p in key_material.HELD_PROGRESSIONS)
    assert len({i["spec"]["name"] for i in items}) == len(items)


def test_the_benchmark_reuses_a_peer_answer_only_for_the_same_audio(tmp_path):
    """eval_key.PeerAnswers: the same samples and rate reuse the stored answer;
    other samples, another rate, or no store (--fresh-peers) run the peer again."""
    from eval_key import PeerAnswers

    calls = []

    def peer(answer):
        return lambda: calls.append(answer) or (answer, "minor")

    x = np.zeros((100, 1), np.float32)
    store = PeerAnswers(tmp_path / "peers.json")
    assert store.get("textbook", x, 44100, peer("A")) == ("A", "minor")
    assert store.get("textbook", x, 44100, peer("B")) == ("A", "minor")
    assert store.get("textbook", x + 0.1, 44100, peer("C")) == ("C", "minor")
    assert store.get("textbook", x, 48000, peer("D")) == ("D", "minor")
    store.save()
    again = PeerAnswers(tmp_path / "peers.json")
    assert again.get("textbook", x, 44100, peer("E")) == ("A", "minor")
    assert PeerAnswers(None).get("textbook", x, 44100, peer("F")) == ("F", "minor")
    assert calls == ["A", "C", "D", "F"]


# --- the loop's start decides between a key and its relative (issue 27) ---

@pytest.mark.parametrize("name,truth", [
    ("chords_C#_minor_i-iv-v_18_r1", ("C#", "minor")),        # dry chords: E major without the rule
    ("mix_C_minor_i-VI-III-VII_16_d", ("C", "minor")),        # a mix with drums: Eb major without it
    ("pad_B_minor_i-iv-VII-III_50", ("B", "minor")),          # a dry pad: D major without it
])
def test_a_minor_loop_that_starts_on_its_tonic_chord_is_not_read_as_its_relative(name, truth):
    """Held-out minor loops whose averaged chroma fits the relative major
    best: the first frame (the loop's tonic chord, several pitch classes)
    fits the minor key better, so `loop_start_mode` reads it."""
    _, key = _held_render_key(name)
    assert (key.tonic, key.scale) == truth


def test_the_loop_start_decides_only_between_a_key_and_its_relative():
    """A first frame that fits the relative better turns the reading; one
    that fits a third key best still gives the key or its relative; a first
    frame of one or two pitch classes (a riff's first notes) decides nothing."""
    corr = key_correlations(np.array([1, 0, 0.5, 0, 0.8, 0.6, 0, 0.9, 0, 0.5, 0, 0.4]))
    best = int(np.argmax(corr))
    assert (best, relative_of(best)) == (0, 21)                 # C major, A minor
    a_minor = np.array([0.8, 0.2, 0.5, 0.2, 0.9, 0.5, 0.2, 0.5, 0.2, 1.0, 0.2, 0.5])   # A C E
    assert loop_start_mode(corr, a_minor / np.linalg.norm(a_minor)) == 21
    e_major = np.array([0.2, 0.5, 0.2, 0.5, 1.0, 0.2, 0.5, 0.2, 0.9, 0.5, 0.2, 0.9])  # E G# B
    assert int(np.argmax(key_correlations(e_major))) == 4       # fits E major best
    assert loop_start_mode(corr, e_major / np.linalg.norm(e_major)) in (0, 21)
    bare = np.zeros(12)
    bare[[9, 4]] = 1.0                                          # A and E alone
    assert loop_start_mode(corr, bare / np.linalg.norm(bare)) == 0


def test_the_loop_starts_where_the_harmony_enters_not_on_a_drum_intro():
    """Leading frames that fit no key (a drum intro's near-flat chroma) are
    not the loop's start when most frames fit one: the first that does is.
    When most frames fit none (a lone wobble over drums) the first frame
    stays the start."""
    flat = np.full(12, 1.0) + 0.05 * np.sin(np.arange(12))
    a_minor = np.array([0.8, 0.2, 0.5, 0.2, 0.9, 0.5, 0.2, 0.5, 0.2, 1.0, 0.2, 0.5])
    f_major = np.roll(np.array([1.0, 0.2, 0.5, 0.2, 0.9, 0.5, 0.2, 0.8, 0.2, 0.5, 0.2, 0.5]), 5)
    unit = [c / np.linalg.norm(c) for c in (flat, a_minor, f_major)]
    frames = np.array([unit[0]] * 3 + [unit[1], unit[2]] * 3)
    assert np.array_equal(frames[start_index(frames)], unit[1])
    opening = np.array([unit[0]] * 5 + [unit[1]] * 2)
    assert np.array_equal(opening[start_index(opening)], unit[0])


def test_the_readme_demo_reads_its_key_a_minor():
    """fixtures/demo.mp3 (fixtures/make_demo.py: Am-F-C-G, A minor) opens on
    four bars of kick and hats: its first frame is drums, so the loop's start
    is where the chords enter (on Am), and the reading is A minor, not its
    relative C major."""
    demo = Path(__file__).resolve().parents[2] / "fixtures" / "demo.mp3"
    audio = decode(demo.read_bytes(), file_name="demo.mp3")
    key = measure_tonality(long_spectrum(audio.samples, audio.sample_rate), audio.samples).key
    assert (key.tonic, key.scale) == ("A", "minor")


# --- a held low note counts at its own pitch (issue 27 round 5, benchmarks/results/key.md) ---

def test_a_sharp_held_sub_note_counts_on_its_own_semitone():
    """B1 played 45 cents sharp (63.4 Hz) and held: the grid alone shares it
    between B1 and C2 (55 / 45); as a held note it counts on B1, the
    semitone nearest its own frequency. The same note 45 cents flat counts
    on B1 too; a note an octave up (above HELD_BELOW_MIDI) keeps the grid's
    shares."""
    t = np.arange(SR * 8) / SR
    b1 = 440.0 * 2 ** ((35 - 69) / 12)
    for cents, midi, spill in ((45, 35, 36), (-45, 35, 34)):
        x = (0.3 * np.sin(2 * np.pi * b1 * 2 ** (cents / 1200) * t)).astype(np.float32)[:, None]
        mags = semitone_magnitude(long_spectrum(x, SR), 0.0)[:-1].mean(axis=0)
        assert mags[midi - MIDI_RANGE[0]] > 10 * mags[spill - MIDI_RANGE[0]]
    x = (0.3 * np.sin(2 * np.pi * 2 * b1 * 2 ** (45 / 1200) * t)).astype(np.float32)[:, None]
    mags = semitone_magnitude(long_spectrum(x, SR), 0.0)[:-1].mean(axis=0)
    assert mags[48 - MIDI_RANGE[0]] > 0.5 * mags[47 - MIDI_RANGE[0]]


def test_a_sub_bass_patch_playing_sharp_reads_its_key():
    """The held-out F# major sub (`wobble_sub_F#_major_I-IV-V-IV_87`: FluidR3's
    synth bass under a 60-180 Hz moving low-pass, 17-50 cents sharp): its IV
    (B1) split over B, C and Bb read B minor (0); as held notes, F# major."""
    key = _held_render_key("wobble_sub_F#_major_I-IV-V-IV_87")[1]
    assert (key.tonic, key.scale) == ("F#", "major"), key


# --- a melody over the chords keeps a major reading (issue 27 round 5, benchmarks/results/key.md) ---

AM_F_C_G = ((45, 57, 60, 64), (41, 57, 60, 65), (48, 55, 60, 64), (43, 55, 59, 62))  # bass + triad


def _loop_semitones(upper_notes) -> np.ndarray:
    """(8, semitones) Am F C G twice (a bass root and a triad below C5) and,
    per frame, the magnitudes `upper_notes(frame)` gives to MIDI notes from C5 up."""
    semis = np.zeros((8, MIDI_RANGE[1] - MIDI_RANGE[0]))
    for f in range(8):
        for m in AM_F_C_G[f % 4]:
            semis[f, m - MIDI_RANGE[0]] = 1.0
        for m, a in upper_notes(f).items():
            semis[f, m - MIDI_RANGE[0]] += a
    return semis


def test_a_riff_over_the_chords_is_a_melody_a_chords_top_voices_are_not():
    """A riff repeating over Am F C G (E5 D5 C5 G5 F5, its phase against the
    frames shifting) is a line of its own: `melody_frames` returns the
    register from C5 up. The same chords with their triads doubled two
    octaves up (they move with the chords), a bass whose overtones reach C5 faintly,
    or a lead alone (nothing below to tell it from): None."""
    riff = (76, 74, 72, 79, 77)
    melody = _loop_semitones(lambda f: {m: 0.9 + 0.3 * ((i + f) % 2) for i, m in enumerate(riff)})
    upper = melody_frames(melody)
    assert upper is not None and set(np.nonzero(upper.sum(axis=0))[0]) == {m % 12 for m in riff}
    doubled = _loop_semitones(lambda f: {m + 24: 1.0 for m in AM_F_C_G[f % 4][1:]})
    assert melody_frames(doubled) is None
    faint = _loop_semitones(lambda f: {m: 0.05 + 0.05 * ((i + f) % 2) for i, m in enumerate(riff)})
    assert melody_frames(faint) is None
    lead = melody.copy()
    lead[:, :MELODY_FROM_MIDI - MIDI_RANGE[0]] = 0.0
    assert melody_frames(lead) is None


def test_a_melody_on_the_major_keys_degrees_keeps_the_major_reading():
    """The whole clip reads C major, the first frame (Am) fits A minor: a
    melody that fits C major better than A minor by MELODY_MARGIN keeps
    C major; one that fits A minor, or no melody, leaves the start's A minor."""
    corr = key_correlations(np.array([1, 0, 0.5, 0, 0.8, 0.6, 0, 0.9, 0, 0.5, 0, 0.4]))
    a_minor = np.array([0.8, 0.2, 0.5, 0.2, 0.9, 0.5, 0.2, 0.5, 0.2, 1.0, 0.2, 0.5])
    first = a_minor / np.linalg.norm(a_minor)
    c_tune = np.array([1.0, 0, 0.6, 0, 1.0, 0.5, 0, 0.8, 0, 0.1, 0, 0.2])     # C E G, D F: C major
    a_tune = np.array([0.8, 0, 0.4, 0, 0.9, 0.1, 0, 0.2, 0, 1.0, 0, 0.5])     # A C E, B: A minor
    assert loop_start_mode(corr, first) == 21
    assert loop_start_mode(corr, first, c_tune) == 0
    assert loop_start_mode(corr, first, a_tune) == 21



# --- the loop's start turns a reading to its subdominant (issue 27 round 5, benchmarks/results/key.md) ---

def test_the_loop_start_turns_a_reading_to_its_subdominant_only_when_the_clip_nearly_fits_it():
    """The clip reads A minor, D minor close behind (0.05): a first frame on
    D minor's chord and scale turns it to D minor (A minor is its key a fifth
    up); with D minor 0.15 behind, or a first frame on A minor, A minor stays."""
    assert subdominant_of(21) == 14 and subdominant_of(7) == 0        # A minor -> D minor, G -> C
    d_minor = np.array([0.3, 0.1, 1.0, 0.1, 0.4, 0.8, 0.1, 0.4, 0.1, 0.9, 0.5, 0.1])
    a_minor = np.array([0.8, 0.2, 0.5, 0.2, 0.9, 0.5, 0.2, 0.5, 0.2, 1.0, 0.2, 0.5])
    corr = np.zeros(24)
    corr[[21, 14, 0]] = 0.8, 0.75, 0.6
    assert loop_start_mode(corr, d_minor / np.linalg.norm(d_minor)) == 14
    assert loop_start_mode(corr, a_minor / np.linalg.norm(a_minor)) == 21
    corr[14] = 0.65
    assert loop_start_mode(corr, d_minor / np.linalg.norm(d_minor)) == 21


# --- a bass line's start turns a reading to its dominant (issue 27 round 6, benchmarks/results/key.md) ---

def test_the_bass_register_share_tells_a_bass_line_from_chords():
    """`bass_share`: a line of notes below C3 holds nearly all the semitones'
    magnitude; a chord line from C4 up nearly none."""
    low = semitone_magnitude(long_spectrum(_line([40, 43, 36, 38], 2.0, harmonics=3), SR), 0.0)
    high = semitone_magnitude(long_spectrum(_line([60, 64, 67, 72], 2.0, harmonics=3), SR), 0.0)
    assert bass_share(low) > 0.5 > DOMINANT_BASS_SHARE > 0.01 > bass_share(high)
    assert bass_share(np.zeros((3, MIDI_RANGE[1] - MIDI_RANGE[0]))) == 0.0


def test_a_bass_lines_start_turns_a_reading_to_its_dominant_only_under_a_bass_line():
    """The clip reads E minor, B minor close behind (0.05): a first frame on B
    minor's chord and scale turns it to B minor (E minor's key a fifth up)
    where the bass register carries the clip; not with a small bass share
    (a chord or a guitar loop), B minor 0.15 behind, or an E minor first frame."""
    assert dominant_of(16) == 23 and dominant_of(0) == 7            # E minor -> B minor, C -> G
    b_minor = np.array([0.1, 0.5, 0.9, 0.1, 0.5, 0.1, 1.0, 0.5, 0.1, 0.5, 0.1, 1.0])
    e_minor = np.array([0.1, 0.1, 0.1, 0.1, 1.0, 0.1, 0.5, 0.9, 0.1, 0.5, 0.1, 0.9])
    b_first, e_first = (c / np.linalg.norm(c) for c in (b_minor, e_minor))
    corr = np.zeros(24)
    corr[[16, 23]] = 0.8, 0.75
    assert bass_line_key(corr, 16, b_first, 0.3) == 23
    assert bass_line_key(corr, 16, b_first, 0.1) == 16
    assert bass_line_key(corr, 16, e_first, 0.3) == 16
    corr[23] = 0.65
    assert bass_line_key(corr, 16, b_first, 0.3) == 16


def test_a_bass_line_alone_starts_on_its_tonic():
    """Where the bass register holds BASS_LINE_SHARE of the magnitude, the
    start frame's bass note (`bass_note`: its strongest semitone below C3,
    not a louder note above) is the tonic, in the mode the clip prefers."""
    frame = np.zeros(MIDI_RANGE[1] - MIDI_RANGE[0])
    frame[[35 - MIDI_RANGE[0], 40 - MIDI_RANGE[0], 60 - MIDI_RANGE[0]]] = 1.0, 0.5, 3.0   # B1, E2, C4
    assert bass_note(frame) == 11
    corr = np.zeros(24)
    corr[[16, 11, 23]] = 0.8, 0.5, 0.6                          # E minor read; B minor over B major
    assert bass_line_key(corr, 16, np.full(12, 12 ** -0.5), BASS_LINE_SHARE, 11) == 23
    corr[11] = 0.7
    assert bass_line_key(corr, 16, np.full(12, 12 ** -0.5), 0.7, 11) == 11
    assert bass_line_key(corr, 16, np.full(12, 12 ** -0.5), BASS_LINE_SHARE - 0.05, 11) == 16


# --- the low register read from spectral lines (issue 27 round 3, benchmarks/results/key.md) ---

def test_a_broad_low_hump_does_not_outweigh_a_bass_note():
    """A1 (55 Hz) held under a band of noise at 41-48 Hz (E1-F#1) with twice its
    power, as a moving filter or a kick leaves below a wobble: below C3 the map
    counts spectral lines and only BROADBAND_SHARE of the bins, so A is the key
    chroma's strongest pitch class (the plain bin map: F#)."""
    n = SR * 12
    note = 0.1 * np.sin(2 * np.pi * 55.0 * np.arange(n) / SR)
    band = np.fft.rfft(np.random.default_rng(0).standard_normal(n))
    freqs = np.fft.rfftfreq(n, 1 / SR)
    band[(freqs < 41) | (freqs > 48)] = 0
    hump = np.fft.irfft(band, n)
    hump *= 2.0 * np.sqrt(np.mean(note ** 2) / np.mean(hump ** 2))
    chroma = key_chroma(long_spectrum((note + hump).astype(np.float32)[:, None], SR)).chroma
    assert int(np.argmax(chroma)) == 9, np.round(chroma, 2)


@pytest.mark.parametrize("name,floor", [
    # held-out renders the plain bin map read wrong (its score in benchmarks/results/key.md)
    ("wobble_sub_F#_minor_i-VI-iv-v_87", 1.0),         # was B minor (0.5)
    ("wobble_moving_Eb_major_I-vi-IV-V_38_d", 0.5),    # was F minor (0.0)
    ("melody_A_major_I-vi-IV-V_73_d", 1.0),            # was C# minor (0.0)
    ("bass_root_D_major_vi-IV-I-V_35_r1", 1.0),        # was B minor (0.3)
    ("pad_Bb_minor_i-VI-iv-v_90_d_r2", 1.0),           # was F# major (0.0)
])
def test_loops_over_a_low_hump_read_their_key(name, floor):
    item, key = _held_render_key(name)
    assert mirex_score(key.tonic, key.scale, item["tonic"], item["scale"]) >= floor, key
