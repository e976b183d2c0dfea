"""The HTML report in a real headless Chromium: it renders (screenshot kept in
tests/_artifacts/), the charts are in the DOM, and the page logs no console
error. Needs the `chromium` package (Debian: apt-get install -y chromium)."""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
import zlib
from pathlib import Path

import pytest

from trackgrade.cli import app

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts"
BROWSER = next((shutil.which(name) for name in ("chromium", "chromium-browser", "google-chrome")
                if shutil.which(name)), None)
CHART_IDS = ("score-gauge", "pillars-chart", "band-chart", "loudness-chart", "energy-chart")
CONSOLE_PROBLEMS = re.compile(r"Uncaught|ERROR:CONSOLE|CONSOLE\(\d+\)|Refused to|"
                              r"Failed to load resource|net::ERR_", re.I)

pytestmark = pytest.mark.skipif(BROWSER is None, reason="chromium is not installed "
                                "(apt-get install -y chromium)")


def chromium(page: Path, profile: Path, *extra: str) -> subprocess.CompletedProcess:
    command = [BROWSER, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
               "--no-first-run", "--disable-background-networking",
               "--disable-component-update", "--disable-sync", "--hide-scrollbars",
               f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
               *extra, page.as_uri()]
    return subprocess.run(command, capture_output=True, text=True, timeout=90)


def console_problems(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if CONSOLE_PROBLEMS.search(line)]


def png_facts(path: Path) -> tuple[int, int, int]:
    """(width, height, distinct byte values in the decompressed image data)."""
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    idat, pos = b"", 8
    while pos < len(data):
        length, kind = struct.unpack(">I4s", data[pos:pos + 8])
        if kind == b"IDAT":
            idat += data[pos + 8:pos + 8 + length]
        pos += 12 + length
    return width, height, len(set(zlib.decompress(idat)))


@pytest.fixture()
def report_page(runner, tracks, tmp_path) -> Path:
    page = tmp_path / "report.html"
    result = runner.invoke(app, ["report", str(tracks[0]), "--out", str(page)])
    assert result.exit_code == 0, result.output
    return page


def test_report_renders_in_chromium(report_page, tmp_path):
    ARTIFACTS.mkdir(exist_ok=True)
    shot = ARTIFACTS / "report.png"
    shot.unlink(missing_ok=True)
    done = chromium(report_page, tmp_path / "profile-shot", "--window-size=1100,2400",
                    f"--screenshot={shot}")
    assert shot.is_file(), done.stderr[-2000:]
    width, height, distinct = png_facts(shot)
    assert (width, height) == (1100, 2400)
    assert shot.stat().st_size > 40_000
    assert distinct > 100, "the screenshot looks blank"
    assert console_problems(done.stderr) == []


def test_report_dom_has_the_charts_and_no_console_errors(report_page, tmp_path):
    done = chromium(report_page, tmp_path / "profile-dom", "--dump-dom")
    assert done.returncode == 0, done.stderr[-2000:]
    dom = done.stdout
    for chart in CHART_IDS:
        assert re.search(rf'<svg[^>]*\bid="{chart}"', dom), chart
    assert len(re.findall(r'class="band-measured"', dom)) == 7
    assert re.search(r'<path class="curve" d="M[\d.]+,[\d.]+ L', dom)
    assert console_problems(done.stderr) == []


def test_the_console_check_catches_a_broken_page(tmp_path):
    """Control: the same detector flags a page whose script throws."""
    page = tmp_path / "broken.html"
    page.write_text("<!DOCTYPE html><html><body><p>x</p>"
                    "<script>throw new Error('boom')</script></body></html>")
    done = chromium(page, tmp_path / "profile-broken", "--dump-dom")
    assert any("boom" in line for line in console_problems(done.stderr)), done.stderr[-2000:]
