"""The terminal screen at 80 columns keeps every column of the band table,
the "normal" spread included (it used to shrink to "norm" with no values)."""

from __future__ import annotations

import io

from rich.console import Console

from trackgrade.cli.render import render_analysis
from trackgrade.grading import build_analysis
from trackgrade.grading.limits import BAND_TOLERANCE_DB, BAND_WORDS

from tests.grading.factory import make_features


def screen(width: int) -> list[str]:
    analysis = build_analysis(make_features(), file_name="t.wav", mastering_status="master")
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
