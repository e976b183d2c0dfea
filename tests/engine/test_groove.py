"""The rhythm pattern (engine/groove.py) on drum patterns built sample by
sample: the kick, snare and hat bands land where they were put."""

import numpy as np
import pytest

from trackgrade.engine.extract import extract
from trackgrade.engine.features import DecodedAudio
from trackgrade.engine.groove import STEPS, bar_matrix, downbeat_shift, sixteenth_frames

RATE = 44100


def _hit(kind: str, rng) -> np.ndarray:
    n = int(0.12 * RATE)
    t = np.arange(n) / RATE
    if kind == "kick":        # a pitched-down sine thump
        return np.sin(2 * np.pi * (50 + 80 * np.exp(-t * 40)) * t) * np.exp(-t * 25)
    noise = rng.standard_normal(n)
    if kind == "snare":       # a 330 Hz body and a 1-4 kHz rattle, little under 180 Hz
        rattle = np.convolve(np.diff(noise, prepend=0.0), np.ones(6) / 6, "same")
        return 0.8 * (np.sin(2 * np.pi * 330 * t) + 0.5 * rattle) * np.exp(-t * 30)
    return 0.25 * np.diff(noise, prepend=0.0) * np.exp(-t * 80)     # a hat: bright noise


def drums(pattern: dict, bpm: float = 128.0, bars: int = 6, seed: int = 1) -> DecodedAudio:
    """A drum loop: `pattern` maps kick/snare/hat to the sixteenths (0-15) they hit."""
    rng = np.random.default_rng(seed)
    step = 60.0 / bpm / 4
    x = np.zeros(int((bars * STEPS * step + 0.5) * RATE))
    for kind, steps in pattern.items():
        hit = _hit(kind, rng)
        for bar in range(bars):
            for s in steps:
                i = int(round((bar * STEPS + s) * step * RATE))
                x[i:i + len(hit)] += hit[:len(x) - i]
    x = 0.5 * x / np.abs(x).max()
    return DecodedAudio(samples=x.astype(np.float32)[:, None], sample_rate=RATE, container="wav",
                        subtype="PCM_16")


HATS = [2, 6, 10, 14]
FOUR_ON_THE_FLOOR = {"kick": [0, 4, 8, 12], "snare": [4, 12], "hat": HATS}
HALF_TIME = {"kick": [0], "snare": [8], "hat": [0, 2, 4, 6, 8, 10, 12, 14]}
BREAK = {"kick": [0, 7, 10], "snare": [4, 12], "hat": [0, 2, 4, 6, 8, 10, 12, 14]}
# reggaeton's dembow: the kick on every beat, the snare on the 'a' of 1 and the 'and' of 2
DEMBOW = {"kick": [0, 4, 8, 12], "snare": [3, 6, 11, 14], "hat": [0, 2, 4, 6, 8, 10, 12, 14]}


@pytest.fixture(scope="module")
def cues():
    return {name: extract(drums(p)).groove.cues
            for name, p in (("four", FOUR_ON_THE_FLOOR), ("half", HALF_TIME), ("break", BREAK),
                            ("dembow", DEMBOW))}


def test_four_on_the_floor_puts_the_kick_on_every_beat(cues):
    assert cues["four"]["kick_on_beats"] > 0.6
    assert cues["four"]["kick_on_beats"] > 3 * cues["break"]["kick_on_beats"]
    assert cues["four"]["kick_on_beats"] > 3 * cues["half"]["kick_on_beats"]


def test_a_half_time_backbeat_is_recognised(cues):
    # snare on beat 3 only: one snare per bar; a backbeat alternates from beat to beat
    assert cues["half"]["snare_one_per_bar"] > 0.7
    assert abs(cues["four"]["snare_one_per_bar"]) < 0.5 and abs(cues["break"]["snare_one_per_bar"]) < 0.5
    assert cues["four"]["snare_backbeat"] > 0.7 and cues["break"]["snare_backbeat"] > 0.7
    assert cues["half"]["snare_backbeat"] < 0.3


def test_the_dembow_puts_the_snare_between_the_beats(cues):
    """Four on the floor both: the clap on the beats (house) against the snare
    between them (reggaeton's dembow)."""
    assert cues["dembow"]["snare_off_beats"] > 0.8
    assert cues["four"]["snare_off_beats"] < 0.4
    assert cues["dembow"]["snare_off_beats"] > 3 * cues["four"]["snare_off_beats"]


def test_a_break_puts_kicks_between_the_beats(cues):
    assert cues["break"]["kick_off_beats"] > 0.5 > cues["four"]["kick_off_beats"]


def test_off_beat_hats_and_repeating_bars(cues):
    assert cues["four"]["hat_off_beat"] > 1.0 > abs(cues["break"]["hat_off_beat"])
    assert all(c["bar_repeat"] > 0.8 for c in cues.values())


def test_the_bar_starts_on_the_kick_not_the_snare():
    kick = np.zeros(STEPS)
    snare = np.zeros(STEPS)
    kick[[8]], snare[[0]] = 1.0, 1.0          # half time seen from beat 3
    assert downbeat_shift(kick, snare) == 8


def test_sixteenths_interpolate_the_beats_and_fold_into_bars():
    frames = sixteenth_frames(np.array([0.0, 0.5, 1.0]), t0=0.0, hop_s=0.125)
    assert np.allclose(frames[:5], [0, 1, 2, 3, 4]) and len(frames) == 12
    assert bar_matrix(np.arange(40.0)).shape == (2, STEPS)


def test_no_pulse_no_pattern():
    rng = np.random.default_rng(0)
    hum = 0.1 * np.sin(2 * np.pi * 110 * np.arange(8 * RATE) / RATE) + 0.001 * rng.standard_normal(8 * RATE)
    audio = DecodedAudio(samples=hum.astype(np.float32)[:, None], sample_rate=RATE, container="wav",
                         subtype="PCM_16")
    assert extract(audio).groove is None


def test_swung_hats_read_late_on_the_odd_sixteenths():
    """House's shuffle: the hats on the odd sixteenths a quarter of a sixteenth
    late (29 ms at 128 BPM) read as swing; the same hats on a straight grid do not."""
    sixteenths = list(range(STEPS))
    swung = [s + 0.25 * (s % 2) for s in sixteenths]
    straight = extract(drums({"kick": [0, 4, 8, 12], "hat": sixteenths})).groove.cues
    late = extract(drums({"kick": [0, 4, 8, 12], "hat": swung})).groove.cues
    assert abs(straight["hat_swing"]) < 0.05, straight
    assert late["hat_swing"] > 0.12, late
