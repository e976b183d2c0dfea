"""The report's delivery section (platforms, mono per band, codec rows) and its
comparison view (`report FILE --compare EARLIER`) in real headless Chromium at
1200 and 390 px: drawn, no overlapping text, never wider than the screen,
nothing fetched."""

from __future__ import annotations

from pathlib import Path

import pytest
import soundfile as sf

from browser import TEXT_BOXES_JS, Browser
from tests.delivery.signals import RATE, club_loop, high_passed
from trackgrade.cli import app

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "_artifacts"
VIEWPORTS = {"desktop": (1200, False), "phone": (390, True)}


@pytest.fixture(scope="module")
def browser():
    with Browser() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def compared_report(tmp_path_factory) -> Path:
    from typer.testing import CliRunner

    folder = tmp_path_factory.mktemp("compared")
    earlier, later = folder / "v1.wav", folder / "v2 high-passed.wav"
    sf.write(earlier, club_loop(8.0), RATE, subtype="FLOAT")
    sf.write(later, high_passed(club_loop(8.0)), RATE, subtype="FLOAT")
    page = folder / "v2.report.html"
    result = CliRunner().invoke(app, ["report", str(later), "--compare", str(earlier),
                                      "--codec-preview", "--out", str(page)])
    assert result.exit_code == 0, result.output
    return page


def test_the_html_carries_every_row(compared_report):
    html = compared_report.read_text(encoding="utf-8")
    for name in ("Spotify", "Apple Music", "YouTube", "Tidal", "Amazon Music", "Deezer",
                 "SoundCloud", "MP3 320 kbps", "AAC 256 kbps", "Opus 160 kbps", "v1.wav"):
        assert name in html, name


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_delivery_and_comparison_in_chromium(browser, compared_report, viewport):
    width, mobile = VIEWPORTS[viewport]
    page = browser.open(compared_report.as_uri(), width=width, height=900, mobile=mobile)
    try:
        rows = page.evaluate("Object.fromEntries(['platform-table', 'mono-table', 'codec-table', "
                             "'comparison-table', 'comparison-bands'].map(id => [id, "
                             "document.querySelectorAll('#' + id + ' tbody tr').length]))")
        assert rows == {"platform-table": 7, "mono-table": 7, "codec-table": 3,
                        "comparison-table": 13, "comparison-bands": 7}
        for section in ("delivery", "comparison"):
            box = page.evaluate(f"(() => {{ const r = document.getElementById('{section}')"
                                f".getBoundingClientRect(); return [r.left, r.right, r.height]; }})()")
            assert box[0] >= 0 and box[1] <= width and box[2] > 150, (section, box)
        bars = page.evaluate("Array.from(document.querySelectorAll('#comparison-bands .diffbar i'))"
                             ".map(i => i.getBoundingClientRect().width)")
        assert len(bars) == 7 and max(bars) > 5            # the sub-bass bar is drawn
        texts = page.evaluate(TEXT_BOXES_JS)
        assert texts["overlaps"] == [], texts["overlaps"][:3]
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        page.settle(0.3)
        assert [u for u in page.requests if u != compared_report.as_uri()] == []
        assert page.problems == []
        ARTIFACTS.mkdir(exist_ok=True)
        page.screenshot(ARTIFACTS / f"report-delivery-{viewport}.png")
    finally:
        page.close()
