"""The embed badge (GET /v1/embed/{id}) from a real waitress server in a real
headless Chromium, both themes and both sizes, on a white and a dark page:
its size, the texts (score, /100, grade, label, genre) inside it without
overlapping or being cut, the whole width used, text contrast (WCAG 4.5:1)
and an edge that shows on either page (3:1). A composite screenshot of the
eight combinations is kept in tests/_artifacts/badges.png."""

from __future__ import annotations

from pathlib import Path

import pytest

from trackgrade.grading.wording import document_caption, document_part, score_caption

from trackgrade.server import admin
from trackgrade.server.routes.embed import SIZES

from tests.browser import TEXT_BOXES_JS, Browser
from tests.server.server_harness import start, wav_bytes

ARTIFACTS = Path(__file__).resolve().parents[1] / "_artifacts"
HOSTS = {"white": "#ffffff", "dark": "#0d1117"}

MEASURE_JS = r"""
(() => {
  const rgb = c => c.match(/[\d.]+/g).slice(0, 3).map(Number);
  const box = e => { const r = e.getBoundingClientRect();
                     return {left: r.left, right: r.right, top: r.top, bottom: r.bottom}; };
  const badge = document.querySelector('.badge');
  const style = getComputedStyle(badge);
  const part = sel => { const e = document.querySelector(sel);
    return {text: e.textContent, color: rgb(getComputedStyle(e).color), box: box(e),
            cut: e.scrollWidth > e.clientWidth + 0.5 || e.scrollHeight > e.clientHeight + 0.5}; };
  return {badge: box(badge), background: rgb(style.backgroundColor),
          border: rgb(style.borderTopColor), borderWidth: parseFloat(style.borderTopWidth),
          pill: rgb(getComputedStyle(document.querySelector('.grade')).backgroundColor),
          parts: Object.fromEntries(['.n', '.of', '.cap', '.label', '.genre', '.grade']
                                    .map(s => [s, part(s)]))};
})()
"""


def luminance(rgb) -> float:
    def channel(c: float) -> float:
        c /= 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
    r, g, b = (channel(c) for c in rgb)
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


def contrast(a, b) -> float:
    la, lb = sorted((luminance(a), luminance(b)), reverse=True)
    return (la + 0.05) / (lb + 0.05)


def hex_rgb(colour: str) -> list[int]:
    return [int(colour[i:i + 2], 16) for i in (1, 3, 5)]


def largest_gap(intervals, low: float, high: float) -> float:
    """The widest stretch of [low, high] no interval covers."""
    gap, edge = 0.0, low
    for a, b in sorted(intervals):
        gap = max(gap, a - edge)
        edge = max(edge, b)
    return max(gap, high - edge)


@pytest.fixture(scope="module", params=["live", "test"])
def badge_url(request):
    """A live analysis's badge, and a test key's (canned: marked TEST, no grade)."""
    server = start(test_in_flight=50)
    try:
        key, _ = server.key(request.param)
        accepted = server.submit(key, "club_banger.wav").json
        server.upload(accepted, wav_bytes(2))
        doc = server.wait(accepted["id"], key, until=lambda d: d["diagnosis_status"] == "ready")
        admin.set_embed(server.store, doc["id"], True)
        yield f"{server.url}/v1/embed/{doc['id']}", doc
    finally:
        server.stop()


@pytest.fixture(scope="module")
def browser():
    with Browser() as chromium:
        yield chromium


@pytest.mark.parametrize("theme", ["light", "dark"])
@pytest.mark.parametrize("size", ["sm", "md"])
def test_badge_in_chromium(browser, badge_url, theme, size):
    url, doc = badge_url
    width, height = SIZES[size][:2]
    page = browser.open(f"{url}?theme={theme}&size={size}", width=480, height=200)
    try:
        for host, colour in HOSTS.items():
            page.evaluate(f"document.body.style.background = '{colour}'")
            m = page.evaluate(MEASURE_JS)
            b = m["badge"]
            assert (round(b["right"] - b["left"]), round(b["bottom"] - b["top"])) == (width, height)
            parts = m["parts"]
            assert parts[".n"]["text"] == str(doc["score"]) and parts[".of"]["text"] == "/100"
            if doc["livemode"]:
                assert parts[".grade"]["text"] == doc["grade"]["letter"]
                assert parts[".label"]["text"] == doc["grade"]["label"]
                # a 2 s upload is a part: its score speaks of the sound (CONTRACT section 6)
                assert parts[".cap"]["text"] == score_caption(document_part(doc)) == "sound"
            else:       # a canned test result never passes for a real grade
                assert parts[".grade"]["text"] == "TEST"
                assert parts[".label"]["text"] == "Canned test result"
                assert parts[".cap"]["text"] == "test mode"
                assert page.evaluate("document.title").startswith("TEST: Canned test result")
            assert parts[".genre"]["text"] == document_caption(doc)     # what it is first, then the genre
            for name, part in parts.items():
                box = part["box"]
                assert box["left"] >= b["left"] and box["right"] <= b["right"], name
                assert box["top"] >= b["top"] and box["bottom"] <= b["bottom"], name
                assert not part["cut"], f"{name} is cut off"
                surface = m["pill"] if name == ".grade" else m["background"]
                assert contrast(part["color"], surface) >= 4.5, (name, part["color"], surface)
            # the edge holds on this page: the border or the badge itself stands out 3:1
            edge = max(contrast(m["border"], hex_rgb(colour)),
                       contrast(m["background"], hex_rgb(colour)))
            assert m["borderWidth"] >= 1 and edge >= 3.0, (host, m["border"])
            # no empty third: the texts span the badge, no stretch of a third is bare
            spans = [(p["box"]["left"], p["box"]["right"]) for p in parts.values()]
            assert largest_gap(spans, b["left"], b["right"]) < width / 4
            texts = page.evaluate(TEXT_BOXES_JS)
            assert texts["overlaps"] == [] and texts["count"] >= 6
        page.settle(0.2)
        assert page.problems == []
        assert [u for u in page.requests if not u.startswith(url)] == []
    finally:
        page.close()


def test_badges_on_white_and_dark_pages(browser, badge_url, tmp_path):
    """The picture a person checks: all eight combinations in iframes."""
    url, _ = badge_url
    cells = []
    for host, colour in HOSTS.items():
        frames = "".join(
            f'<iframe src="{url}?theme={t}&size={s}" width="{SIZES[s][0]}" '
            f'height="{SIZES[s][1]}" style="border:0;margin:12px" title="badge"></iframe>'
            for t in ("light", "dark") for s in ("sm", "md"))
        cells.append(f'<div style="background:{colour};padding:12px">{frames}</div>')
    host_page = tmp_path / "badges.html"
    host_page.write_text("<!DOCTYPE html><html><body style='margin:0'>" + "".join(cells)
                         + "</body></html>")
    page = browser.open(host_page.as_uri(), width=1180, height=560)
    try:
        for _ in range(40):                     # the eight badges load from the server
            page.settle(0.1)
            if sum(u.startswith(url) for u in page.requests) >= 8:
                break
        ARTIFACTS.mkdir(exist_ok=True)
        for _ in range(20):                     # a loaded machine paints the frames late
            page.settle(0.5)
            shot = page.screenshot(ARTIFACTS / "badges.png")
            if shot.stat().st_size > 10_000:
                break
        assert shot.stat().st_size > 10_000
        assert sum(u.startswith(url) for u in page.requests) == 8
        assert [status for u, status in page.responses if u.startswith(url)] == [200] * 8
    finally:
        page.close()


@pytest.mark.slow(seconds=13)
def test_every_grade_label_and_genre_name_fits(browser):
    """The longest words a badge can carry, in both sizes: nothing cut off."""
    import base64

    from trackgrade.grading.genres import GENRES
    from trackgrade.grading.grade import GRADE_TABLE
    from trackgrade.server.routes.embed import badge_html

    labels = [(letter, label) for _, letter, label in GRADE_TABLE]
    names = sorted({p["name"] for p in GENRES.values()}, key=len, reverse=True)
    cases = [(letter, label, names[i % len(names)]) for i, (letter, label) in enumerate(labels)]
    cases += [("A+", "Exceptional", name) for name in names[:4]]
    # music that is not electronic: genre.name as the contract words it, every family
    families = sorted({p["name"] for p in GENRES.values() if "family" not in p}, key=len,
                      reverse=True)
    cases += [(letter, label, f"Not electronic (nearest: {family})")
              for (letter, label), family in zip(sorted(labels, key=lambda x: -len(x[1])),
                                                 families * 2)]
    page = browser.open("about:blank", width=480, height=200)
    try:
        for size in SIZES:
            for letter, label, genre in cases:
                html = badge_html(score=100, letter=letter, label=label, genre=genre,
                                  theme="light", size=size)
                page.navigate("data:text/html;base64," + base64.b64encode(html.encode()).decode())
                measured = page.evaluate(MEASURE_JS)
                parts, b = measured["parts"], measured["badge"]
                cut = [name for name, part in parts.items() if part["cut"]]
                assert cut == [], (size, letter, label, genre, cut)
                outside = [name for name, part in parts.items()
                           if part["box"]["top"] < b["top"] or part["box"]["bottom"] > b["bottom"]
                           or part["box"]["left"] < b["left"] or part["box"]["right"] > b["right"]]
                assert outside == [], (size, letter, label, genre, outside)
    finally:
        page.close()
