"""One function words the target (grading.wording.target_name), from
`genre.target`: the terminal, the report, `remote` (a server document, no
extras) and the diagnosis all name the profile the scores used, never
`genre.name` when the scores used another one."""

from __future__ import annotations

import io

import numpy as np

from rich.console import Console

from tests.delivery.signals import club_loop, wav_bytes
from trackgrade.cli.render import render_analysis
from trackgrade.grading.genres import GENRES
from trackgrade.grading.wording import target_name
from trackgrade.model_read import analysis_from_dict
from trackgrade.pipeline import analyze
from trackgrade.report import render_report


def screen(analysis) -> str:
    out = io.StringIO()
    Console(file=out, width=200, color_system=None).print(render_analysis(analysis))
    return " ".join(out.getvalue().split())


def check_everywhere(local, expected: str) -> None:
    served = analysis_from_dict(local.to_dict())          # what `remote analyze` draws
    assert target_name(local) == target_name(served) == expected
    for a in (local, served):
        assert f"Tonal balance vs {expected}" in screen(a)
        html = " ".join(render_report(a).split())
        assert f"against {expected}" in html, expected
        assert f"the {a.genre.name} target" not in html
    for sentence in (local.diagnosis.frequency or "").split(". "):
        if sentence.startswith("Against "):
            assert sentence.startswith(f"Against {expected}"), sentence


def unclear_loop():
    """The club loop played at a third of its speed (a 40 BPM pulse, every pitch
    a twelfth down): no family plays there, so no family is sure."""
    return np.repeat(club_loop(8.0), 3, axis=0)


def test_an_unclear_family_is_judged_against_the_broad_ideal_everywhere():
    loop = analyze(wav_bytes(unclear_loop()), file_name="loop.wav")
    assert loop.genre.target == "electronic" and loop.genre.name != "Broad electronic"
    check_everywhere(loop, "the broad electronic ideal")
    served = screen(analysis_from_dict(loop.to_dict()))
    assert f"the {loop.genre.name.lower()} ideal" not in served


def test_a_chosen_profile_is_named_as_chosen():
    loop = analyze(wav_bytes(club_loop(12.0)), file_name="loop.wav", genre="deep_house")
    assert loop.genre.target == "deep_house"
    check_everywhere(loop, f"the {GENRES['deep_house']['name'].lower()} ideal")
