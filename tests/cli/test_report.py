"""The HTML report: library (`trackgrade.report.render_report`) and `trackgrade report`."""

from __future__ import annotations

import dataclasses
import json
import re
from html.parser import HTMLParser

from trackgrade.cli import app
from trackgrade.report import render_report
from trackgrade.testmode import canned_analysis

CHART_IDS = ("score-gauge", "pillars-chart", "band-chart", "loudness-chart", "energy-chart")


class Collector(HTMLParser):
    """Tags with their attributes, and the visible text."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> Collector:
    collector = Collector()
    collector.feed(html)
    return collector


def assert_self_contained(html: str) -> None:
    """No script, no external resource of any kind."""
    assert "<script" not in html.lower()
    doc = parse(html)
    assert {tag for tag, _ in doc.tags} & {"script", "img", "link", "iframe", "object"} == set()
    assert not [a for _, attrs in doc.tags for a in attrs if a in ("src", "href", "xlink:href")]
    assert "url(" not in html and "@import" not in html
    assert "http://" not in html and "https://" not in html


def test_report_has_every_chart_and_fact():
    analysis = canned_analysis("sunrise_edit.wav", "master")
    html = render_report(analysis)
    assert html.startswith("<!DOCTYPE html>")
    assert_self_contained(html)
    doc = parse(html)
    svg_ids = {attrs.get("id") for tag, attrs in doc.tags if tag == "svg"}
    assert set(CHART_IDS) <= svg_ids
    text = " ".join(" ".join(doc.text).split())
    assert "sunrise_edit.wav" in text
    assert f"{analysis.grade.letter} · {analysis.grade.label}" in text
    assert f"{analysis.tempo.bpm:.1f}" in text
    if analysis.key is not None:
        assert analysis.key.camelot in text
    assert analysis.genre.name in text
    assert analysis.diagnosis.summary in text
    for item in analysis.feedback:
        assert item.text in text
    # one measured and one ideal bar per band, one shaded rectangle per section per timeline
    classes = [attrs.get("class", "") for _, attrs in doc.tags]
    assert classes.count("band-measured") == 7 and classes.count("band-ideal") == 7
    sections = [c for c in classes if c.startswith("section ")]
    assert len(sections) == 2 * len(analysis.structure.sections)
    curves = [attrs for tag, attrs in doc.tags if attrs.get("class") == "curve"]
    assert len(curves) >= 2 and all(len(a["d"]) > 200 for a in curves)


def test_feedback_is_ordered_by_priority():
    analysis = canned_analysis("order_check.wav", "pre-master")
    html = render_report(analysis)
    types = re.findall(r'<li class="fb fb-(\w+)"', html)
    assert len(types) == len(analysis.feedback)
    rank = {"warn": 0, "tip": 1, "pass": 2}
    assert [rank[t] for t in types] == sorted(rank[t] for t in types)


def test_document_text_is_escaped():
    analysis = canned_analysis("ok.wav", "pre-master")
    hostile = dataclasses.replace(
        analysis, file_name='<script>alert("x")</script> & <img src=x>.wav',
        diagnosis=dataclasses.replace(analysis.diagnosis, summary="<b>bold</b> & </main>"))
    html = render_report(hostile)
    assert_self_contained(html)
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x&gt;.wav" in html
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &lt;/main&gt;" in html
    assert html.count("</main>") == 1


def test_missing_or_broken_curves_still_render():
    analysis = canned_analysis("bare.wav", "pre-master")
    bare = dataclasses.replace(analysis, extras={})
    html = render_report(bare)
    doc = parse(html)
    svg_ids = {attrs.get("id") for tag, attrs in doc.tags if tag == "svg"}
    assert set(CHART_IDS) <= svg_ids
    assert "no short-term loudness data" in html
    # the energy chart falls back to the section energies
    energy_svg = html[html.index('id="energy-chart"'):]
    energy_svg = energy_svg[:energy_svg.index("</svg>")]
    assert 'class="curve"' in energy_svg

    broken = dataclasses.replace(analysis, extras={
        "loudness_curve": {"hop_s": 0.5, "short_term_lufs": [None, "x", float("-inf"), -12.0]},
        "energy_curve": {"hop_s": "bad", "values": [1, 2]}, "targets": {"loudness_lufs": "?"}})
    html = render_report(broken)
    assert "nan" not in html.lower().replace("nano", "")
    assert 'id="loudness-chart"' in html and 'id="energy-chart"' in html


def test_long_curves_are_thinned():
    analysis = canned_analysis("long.wav", "pre-master")
    n = 20 * 60 * 10   # 20 minutes at 0.1 s
    long = dataclasses.replace(analysis, duration_seconds=1200.0, extras={
        "loudness_curve": {"hop_s": 0.1, "short_term_lufs": [-10.0 - (i % 50) / 10 for i in range(n)]},
        "energy_curve": {"hop_s": 0.1, "values": [(i % 100) / 100 for i in range(n)]}})
    html = render_report(long)
    assert len(html) < 250_000
    curve = re.search(r'id="loudness-chart".*?class="curve" d="([^"]+)"', html, re.S).group(1)
    assert 100 < curve.count(" L") + 1 <= 900


def test_cli_report_writes_next_to_cwd(runner, tracks, tmp_path, monkeypatch):
    work = tmp_path / "out"
    work.mkdir()
    monkeypatch.chdir(work)
    result = runner.invoke(app, ["report", str(tracks[0]), "--mastering", "master", "--json"])
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)
    target = work / f"{tracks[0].stem}.report.html"
    assert info["out"] == str(target) and target.is_file()
    html = target.read_text(encoding="utf-8")
    assert_self_contained(html)
    for chart in CHART_IDS:
        assert f'id="{chart}"' in html
    analysis = json.loads(runner.invoke(app, ["analyze", str(tracks[0]), "--mastering", "master",
                                              "--json"]).stdout)
    assert info["score"] == analysis["score"] and info["grade"] == analysis["grade"]["letter"]
    assert f"{analysis['score']}</text>" in html
    assert tracks[0].name in html


def test_cli_report_to_explicit_path_and_stdout(runner, tracks, tmp_path):
    out = tmp_path / "nested.html"
    result = runner.invoke(app, ["report", str(tracks[1]), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith(str(out))
    assert out.read_text(encoding="utf-8").rstrip().endswith("</html>")
    result = runner.invoke(app, ["report", str(tracks[1]), "--out", "-"])
    assert result.exit_code == 0
    assert result.stdout.startswith("<!DOCTYPE html>") and result.stdout.rstrip().endswith("</html>")


def test_cli_report_unwritable_target(runner, tracks, tmp_path):
    out = tmp_path / "no" / "such" / "dir" / "r.html"
    result = runner.invoke(app, ["report", str(tracks[0]), "--out", str(out)])
    assert result.exit_code == 2
    assert result.stderr.strip() == f"trackgrade: cannot write '{out}': No such file or directory"


def test_no_key_no_sections_no_feedback():
    analysis = canned_analysis("drums_only.wav", "pre-master")
    sparse = dataclasses.replace(analysis, key=None, feedback=(),
                                 structure=dataclasses.replace(analysis.structure, sections=()))
    html = render_report(sparse)
    assert_self_contained(html)
    assert "no tonal centre" in html and "No feedback items." in html
    doc = parse(html)
    assert not [a for _, a in doc.tags if a.get("class", "").startswith("section ")]
    assert {a.get("id") for t, a in doc.tags if t == "svg"} >= set(CHART_IDS)
