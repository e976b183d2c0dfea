"""The terminal screen: at 80 columns every column of the band table stays,
the "normal" spread included (it used to shrink to "norm" with no values);
the header names the profile the caller chose (`--genre`), not only the
detected family."""

from __future__ import annotations

import io

from rich.console import Console

from trackgrade.cli.render import render_analysis
from trackgrade.grading import build_analysis
from trackgrade.limits import BAND_TOLERANCE_DB, BAND_WORDS

from tests.grading.factory import make_features


def screen(width: int, **options) -> list[str]:
    analysis = build_analysis(make_features(), file_name="t.wav", mastering_status="master",
                              **options)
    console = Console(width=width, record=True, color_system=None, file=io.StringIO())
    console.print(render_analysis(analysis))
    return console.export_text().splitlines()


def test_the_band_table_keeps_its_normal_column_at_80_columns():
    lines = screen(80)
    header = next(line for line in lines if line.lstrip().startswith("band "))
    assert header.rstrip().endswith("normal"), header
    for name, words in BAND_WORDS.items():
        row = next(line for line in lines if line.startswith(words.title + " "))
        assert row.rstrip().endswith(f"±{BAND_TOLERANCE_DB[name]:g}"), row
    assert max(len(line.rstrip()) for line in lines) <= 80


def test_the_header_names_the_chosen_genre():
    detected = next(line for line in screen(100) if "Genre" in line)
    assert "House" in detected and "Judged against" not in detected
    chosen = next(line for line in screen(100, genre="dubstep") if "Genre" in line)
    assert "Judged against Dubstep" in chosen and "sounds like House" in chosen


def test_remote_list_never_cuts_a_file_name():
    from trackgrade.cli.tables import remote_list_table

    name = "p5__Tunnel_Vision_(extended club mix)_v3_FINAL.wav"
    docs = [{"id": "7c1649ad-d8a3-4cf6-9b75-bdde1e388b17", "created_at": "2026-11-25T21:04:05Z",
             "file_name": name, "status": "complete", "score": 78, "grade": {"letter": "B"}}]
    console = Console(width=80, record=True, color_system=None, file=io.StringIO())
    console.print(remote_list_table(docs))
    text = console.export_text()
    assert "…" not in text
    assert "".join(name.split()) in "".join(text.split())
    assert max(len(line.rstrip()) for line in text.splitlines()) <= 80
