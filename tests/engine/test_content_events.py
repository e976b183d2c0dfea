"""One event or many (engine/content.py `event_cues`): after its attack a
one-shot only decays and dies away; a loop hits again; a held sound is heard
to the end. The mechanics on level curves, then through the whole engine on
generated hits."""

from __future__ import annotations

import numpy as np

from trackgrade.engine.content import REBOUND_FLOOR_DB, event_cues
from trackgrade.engine.extract import extract
from trackgrade.engine.features import DecodedAudio
from trackgrade.grading.content import ONE_EVENT_DB, ONE_EVENT_RING

SR = 44100


def _decay(frames: int, db_per_frame: float) -> np.ndarray:
    return np.maximum(-db_per_frame * np.arange(frames), -60.0)


def test_a_decay_never_climbs_back_and_dies_early():
    c = event_cues(_decay(200, 1.5))               # 30 dB down after 20 of 200 frames
    assert c["rebound_db"] == 0.0
    assert abs(c["ring_share"] - 20 / 200) < 0.01


def test_a_hit_repeated_climbs_back_by_the_whole_fall():
    c = event_cues(np.tile(_decay(50, 1.5), 4))
    assert c["rebound_db"] == REBOUND_FLOOR_DB       # floored: the tail under -40 dB is not read
    assert abs(c["ring_share"] - 0.4) < 0.01           # each hit rings 20 of its 50 frames


def test_a_held_sound_rings_to_the_end_and_its_ripple_is_no_new_event():
    ripple = -3.0 + 2.0 * np.sin(np.arange(300) / 5.0)
    c = event_cues(ripple)
    assert c["rebound_db"] <= 4.0 + 1e-9 and c["ring_share"] == 1.0


def test_the_first_attack_is_where_the_sound_first_gets_loud():
    """Silence or a quiet lead-in before the hit is not read: it is no rebound."""
    level = np.concatenate([np.full(40, -60.0), np.linspace(-50, -20, 10), _decay(150, 1.0)])
    assert event_cues(level)["rebound_db"] == 0.0


def test_a_riser_climbs_after_its_first_loud_frame():
    """A swell (a reverse cymbal, a riser) still climbs the last 6 dB to its
    peak after its first frame that near the peak: not one decaying event."""
    level = np.concatenate([np.linspace(-40, 0, 100), np.full(5, -60.0)])
    assert event_cues(level)["rebound_db"] >= ONE_EVENT_DB


def _analysed(x: np.ndarray):
    return extract(DecodedAudio(samples=x.astype(np.float32)[:, None], sample_rate=SR,
                                container="wav", subtype="PCM_16"), parallel=False).content


def _hit(seconds: float, at: list[float]) -> np.ndarray:
    rng = np.random.default_rng(1)
    x = np.zeros(int(SR * seconds))
    t = np.arange(int(0.4 * SR)) / SR
    burst = rng.standard_normal(t.size) * np.exp(-t / 0.04) * 0.5
    for s in at:
        i = int(s * SR)
        x[i:i + burst.size] += burst[:x.size - i]
    return x


def test_one_hit_through_the_engine_is_one_event():
    c = _analysed(_hit(2.0, [0.05]))
    assert c.rebound_db < ONE_EVENT_DB and c.ring_share < ONE_EVENT_RING


def test_the_same_hit_four_times_is_not():
    c = _analysed(_hit(2.0, [0.05, 0.55, 1.05, 1.55]))
    assert c.rebound_db > 3 * ONE_EVENT_DB
