"""One hit or one note reads `one_shot`; a loop of the same hits reads
`drums` (CONTRACT.md section 6, `content.kind`).

Through the real engine, on recorded-instrument renders (Hydrogen kits and
FluidR3 GM through fluidsynth) of sources no content model is fitted or
calibrated on (benchmarks/content/specs.py `fresh_specs`: kits and GM
programs the corpus never uses): one hit of a kick, snare, ride, clap,
cowbell..., one note of a piano, celesta, harp, timpani, agogo, taiko...
from 1.5 s to 8 s, some in a room; and loops of those kits, sparse ones (a
kick per beat, a clap per bar) among them. Before the one-event cues
(`rebound_db`, `ring_share`) and the GM 121 truth fix, 19 of the 30 one-shots
read `one_shot` (benchmarks/results/content.md)."""

from __future__ import annotations

import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest

from trackgrade.grading.content import KINDS, MIX_MARGIN, decide, detect_content
from trackgrade.limits import PART_MAX_S
from trackgrade.pipeline import measure

from tests.truth import render_recorded

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks" / "content"))
from specs import content_specs, fresh_specs  # noqa: E402


@lru_cache(maxsize=1)
def readings() -> list[tuple[str, str, str]]:
    """(render name, truth, read kind) of every fresh render."""
    items = fresh_specs()
    paths = render_recorded([spec for spec, _, _ in items])
    out = []
    for (spec, kind, _), path in zip(items, paths):
        f = measure(Path(path).read_bytes(), file_name=Path(path).name)
        out.append((spec["name"], kind, detect_content(f).kind))
    return out


def test_the_fresh_sources_are_never_fitted():
    fitted = {source for _, _, source in content_specs()}
    assert {source for _, _, source in fresh_specs()} & fitted == set()


@pytest.mark.parametrize("kind", ["one_shot", "drums"])
def test_every_fresh_render_reads_its_kind(kind):
    got = [(name, read) for name, truth, read in readings() if truth == kind]
    assert len(got) >= 20
    assert [(name, read) for name, read in got if read != kind] == []


def test_one_event_is_a_one_shot_whatever_the_model_prefers():
    """The decision table: a level curve that never climbs back and dies early
    is one hit, even when the probabilities lean to drums; a curve that hits
    again is left to them."""
    p = np.full(len(KINDS), 0.1)
    p[KINDS.index("drums")] = 0.4
    one = {"rebound_db": 0.5, "ring_share": 0.2}
    again = {"rebound_db": 25.0, "ring_share": 0.2}
    assert KINDS[decide(p, 3.0, one)] == "one_shot"
    assert KINDS[decide(p, 3.0, again)] == "drums"
    assert KINDS[decide(p, 3.0, None, MIX_MARGIN)] == "drums"


def test_a_long_recording_is_never_forced_to_one_hit():
    """A recording of PART_MAX_S or more is usually a track: the one-event
    rule does not apply (a long fade is not a one-shot)."""
    p = np.full(len(KINDS), 0.05)
    p[KINDS.index("mix")] = 0.7
    assert KINDS[decide(p, PART_MAX_S, {"rebound_db": 0.5, "ring_share": 0.2})] == "mix"
