"""The HTML report in a real headless Chromium (tests/browser.py), at a desktop
and a phone width: nothing fetched, no console problem, no text drawn over
other text, no page wider than the screen, and it prints; the delivery section and the comparison view likewise. Screenshots are kept
in tests/_artifacts/; TRACKGRADE_UPDATE_SCREENSHOTS=1 also refreshes the
README's docs/report.png."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest
import soundfile as sf

from tests.browser import TEXT_BOXES_JS, Browser
from tests.delivery.signals import RATE, club_loop, high_passed
from trackgrade.cli import app

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "tests" / "_artifacts"
DOCS_SHOT = ROOT / "docs" / "report.png"
VIEWPORTS = {"desktop": (1200, False), "phone": (390, True)}

SECTION_LABELS_INSIDE_JS = r"""
(() => Array.from(document.querySelectorAll('svg .sections')).flatMap(g => {
  const rects = Array.from(g.querySelectorAll('rect.section')).map(r => r.getBoundingClientRect());
  return Array.from(g.querySelectorAll('text.section-label')).map(t => {
    const b = t.getBoundingClientRect();
    return rects.some(r => b.left >= r.left - 0.5 && b.right <= r.right + 0.5 &&
                           b.top >= r.top - 0.5 && b.bottom <= r.bottom + 0.5);
  });
}))()
"""


@pytest.fixture(scope="module")
def browser():
    with Browser() as chromium:
        yield chromium


@pytest.fixture(scope="module")
def demo_report(tmp_path_factory) -> Path:
    from typer.testing import CliRunner

    page = tmp_path_factory.mktemp("report") / "demo.report.html"
    result = CliRunner().invoke(app, ["report", str(ROOT / "fixtures" / "demo.mp3"),
                                      "--out", str(page)])
    assert result.exit_code == 0, result.output
    return page


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    return struct.unpack(">II", data[16:24])


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_report_in_chromium(browser, demo_report, viewport):
    width, mobile = VIEWPORTS[viewport]
    page = browser.open(demo_report.as_uri(), width=width, height=900, mobile=mobile)
    try:
        texts = page.evaluate(TEXT_BOXES_JS)
        assert texts["count"] > 150
        assert texts["overlaps"] == [], texts["overlaps"][:3]
        assert all(page.evaluate(SECTION_LABELS_INSIDE_JS))
        # the page never scrolls sideways (wide charts scroll inside their card)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        charts = page.evaluate("Array.from(document.querySelectorAll('svg[id]')).map(s => "
                               "[s.id, s.getBoundingClientRect().width])")
        assert {name for name, _ in charts} >= {"score-gauge", "band-chart", "loudness-chart",
                                                "camelot-wheel"}
        assert all(w > 100 for _, w in charts)
        # a chart wider than the screen says it scrolls; one that fits says nothing
        hints = page.evaluate(
            "Array.from(document.querySelectorAll('.chart')).map(c => {"
            " const h = c.nextElementSibling;"
            " return [c.scrollWidth > c.clientWidth + 1, !!h && h.classList.contains('scroll-hint')"
            " && getComputedStyle(h).display !== 'none' && h.getBoundingClientRect().right <= "
            + str(width) + "]; })")
        assert hints and all(scrolls == hinted for scrolls, hinted in hints), hints
        assert any(scrolls for scrolls, _ in hints) == mobile
        page.settle(0.3)
        assert [u for u in page.requests if u != demo_report.as_uri()] == []
        assert page.problems == []
        ARTIFACTS.mkdir(exist_ok=True)
        shot = page.screenshot(ARTIFACTS / f"report-{viewport}.png")
        shot_w, shot_h = png_size(shot)
        assert shot_w == width and shot_h > 2000
        assert shot.stat().st_size > 60_000          # a drawn page, not a blank one
    finally:
        page.close()


def test_report_prints(browser, demo_report):
    import base64

    page = browser.open(demo_report.as_uri(), width=1000)
    try:
        page.call("Emulation.setEmulatedMedia", {"media": "print"})
        assert page.evaluate(TEXT_BOXES_JS)["overlaps"] == []
        pdf = base64.b64decode(page.call("Page.printToPDF", {"printBackground": True})["data"])
        assert pdf[:5] == b"%PDF-" and 2 <= pdf.count(b"/Type /Page\n") + pdf.count(
            b"/Type /Page\r") + pdf.count(b"/Type /Page ") + pdf.count(b"/Type/Page") <= 12
    finally:
        page.close()


def test_readme_screenshot(browser, demo_report):
    """docs/report.png is this test's picture of the demo's report (top part)."""
    import base64

    page = browser.open(demo_report.as_uri(), width=1100, height=900)
    try:
        bottom = page.evaluate("document.querySelector('#key').getBoundingClientRect().top "
                               "+ scrollY")
        data = base64.b64decode(page.call("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": 1100, "height": bottom, "scale": 0.75}})["data"])
    finally:
        page.close()
    ARTIFACTS.mkdir(exist_ok=True)
    (ARTIFACTS / "readme-report.png").write_bytes(data)
    if os.environ.get("TRACKGRADE_UPDATE_SCREENSHOTS"):
        DOCS_SHOT.write_bytes(data)
    width, height = png_size(DOCS_SHOT)
    assert width == 825 and 900 < height < 2000
    assert DOCS_SHOT.stat().st_size < 400_000


def test_the_checks_catch_a_broken_page(browser, tmp_path):
    """Controls: overlapping text, a fetched resource and a script error are all seen."""
    page_file = tmp_path / "broken.html"
    page_file.write_text(
        "<!DOCTYPE html><html><body>"
        "<p style='position:absolute;top:10px;left:10px'>first label</p>"
        "<p style='position:absolute;top:14px;left:30px'>second label</p>"
        "<img src='http://127.0.0.1:9/pixel.png'>"
        "<script>throw new Error('boom')</script></body></html>")
    page = browser.open(page_file.as_uri(), width=800)
    try:
        page.settle(0.5)
        assert len(page.evaluate(TEXT_BOXES_JS)["overlaps"]) == 1
        assert "http://127.0.0.1:9/pixel.png" in page.requests
        assert any("boom" in p for p in page.problems)
    finally:
        page.close()


# --- the delivery section and the comparison view (report FILE --compare EARLIER) ---

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
