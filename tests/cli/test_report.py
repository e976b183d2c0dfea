"""The HTML report: library (`trackgrade.report.render_report`) and `trackgrade report`."""

from __future__ import annotations

import dataclasses
import json
import math
import re
from html.parser import HTMLParser

from trackgrade.cli import app
from trackgrade.model import Extras
from trackgrade.report import render_report
from trackgrade.testmode import canned_analysis

CHART_IDS = ("score-gauge", "band-chart", "loudness-chart", "camelot-wheel")


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


def classes_of(doc: Collector) -> list[str]:
    return [attrs.get("class", "") for _, attrs in doc.tags]


def test_report_has_every_chart_and_fact():
    analysis = canned_analysis("sunrise_edit.wav", "master")
    html = render_report(analysis)
    assert html.startswith("<!DOCTYPE html>")
    assert_self_contained(html)
    assert "@media print" in html
    doc = parse(html)
    svg_ids = {attrs.get("id") for tag, attrs in doc.tags if tag == "svg"}
    assert set(CHART_IDS) <= svg_ids
    text = " ".join(" ".join(doc.text).split())
    assert "sunrise_edit.wav" in text
    assert f"{analysis.grade.letter} {analysis.grade.label}" in text
    assert f"{analysis.tempo.bpm:.1f}" in text
    assert analysis.key.camelot in text and analysis.genre.name in text
    assert analysis.diagnosis.summary in text
    for item in analysis.feedback:
        assert item.text in text
    classes = classes_of(doc)
    # one point and one tolerance box per band; one labelled band per section
    assert sum(c.startswith("band-measured") for c in classes) == 7
    assert classes.count("tolerance") == 7
    assert len([c for c in classes if c.startswith("section ")]) == \
        len(analysis.structure.sections)
    assert len(doc.tags) and "pillar-bar" in classes
    curves = [a for _, a in doc.tags if "loudness-curve" in a.get("class", "")]
    assert curves and all(len(a["d"]) > 200 for a in curves)
    assert 'class="target-band"' in html          # the genre's loudness range


def test_tonal_balance_is_db_against_the_target():
    """The chart's numbers are the grading's, in the frequency pillar's frame:
    10 log10(share / target share), each share taken of the bands from 250 Hz
    up (sub and bass over them, the upper five among themselves)."""
    from trackgrade.engine.features import BAND_NAMES
    from trackgrade.limits import BAND_SHARE_FLOOR_PCT as FLOOR

    analysis = canned_analysis("balance.wav", "pre-master")
    html = render_report(analysis)
    shown = re.findall(r'class="band-delta delta-(ok|high|low)"[^>]*>([+-][\d.]+) dB<', html)
    assert len(shown) == 7
    mine = {b: max(getattr(analysis.frequency.bands, b), FLOOR) for b in BAND_NAMES}
    target = {b: max(getattr(analysis.frequency.ideal, b), FLOOR) for b in BAND_NAMES}
    above = BAND_NAMES[2:]                      # 250 Hz up
    for (status, value), band in zip(shown, BAND_NAMES):
        expected = 10 * math.log10((mine[band] / sum(mine[b] for b in above))
                                   / (target[band] / sum(target[b] for b in above)))
        assert abs(float(value) - max(-15, min(15, expected))) <= 0.051, band
    assert {s for s, _ in shown} <= {"ok", "high", "low"}
    # the upper bands are as visible as the bass: every point sits inside the plot
    ys = [float(y) for y in re.findall(r'class="band-measured[^"]*" cx="[\d.]+" cy="([\d.]+)"',
                                       html)]
    assert len(ys) == 7 and all(18 <= y <= 242 for y in ys)


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
    assert "&lt;script&gt;alert(&#34;x&#34;)&lt;/script&gt; &amp; &lt;img src=x&gt;.wav" in html
    assert "&lt;b&gt;bold&lt;/b&gt; &amp; &lt;/main&gt;" in html
    assert html.count("</main>") == 1


def test_the_page_comes_from_autoescaping_templates():
    from trackgrade.report import environment

    env = environment()
    assert env.autoescape is True
    assert set(env.list_templates()) >= {"report.html.j2", "charts.html.j2", "report.css"}


def test_missing_or_broken_curves_still_render():
    analysis = canned_analysis("bare.wav", "pre-master")
    html = render_report(dataclasses.replace(analysis, extras=Extras()))
    svg_ids = {attrs.get("id") for tag, attrs in parse(html).tags if tag == "svg"}
    assert set(CHART_IDS) <= svg_ids
    assert "no loudness curve in this analysis" in html
    assert "waveform needs the audio" in html
    broken = dataclasses.replace(analysis, extras=Extras(
        loudness_curve={"hop_s": 0.5, "short_term_lufs": [None, "x", float("-inf"), -12.0]},
        targets={"loudness_lufs": "?"}, section_loudness_lufs=("?",)))
    html = render_report(broken)
    assert "nan" not in html.lower().replace("nano", "")
    assert 'id="loudness-chart"' in html


def test_long_curves_are_thinned():
    analysis = canned_analysis("long.wav", "pre-master")
    n = 20 * 60 * 10   # 20 minutes at 0.1 s
    long = dataclasses.replace(analysis, duration_seconds=1200.0, extras=Extras(
        loudness_curve={"hop_s": 0.1, "short_term_lufs": [-10.0 - (i % 50) / 10
                                                          for i in range(n)]}))
    html = render_report(long)
    assert len(html) < 250_000
    curve = re.search(r'class="curve loudness-curve" d="([^"]+)"', html).group(1)
    assert 100 < curve.count(" L") + 1 <= 900


def test_a_reference_is_drawn_beside_the_track_on_every_chart():
    from trackgrade.report import ReportTrack

    track = canned_analysis("mine.wav", "master")
    reference = canned_analysis("their_hit.wav", "master")
    html = render_report(track, references=[ReportTrack(reference)])
    doc = parse(html)
    classes = classes_of(doc)
    text = " ".join(" ".join(doc.text).split())
    assert "Compared with their_hit.wav" in text
    assert classes.count("band-ref") == 7 and "ref-line" in classes          # tonal balance
    assert 'id="reference-timeline-1"' in html                              # timeline
    assert any("refmark" in c for c in classes)                             # pillars
    if reference.key is not None:                                           # Camelot wheel
        assert sum("seg-ref" in c for c in classes) == 1
    assert html.count('<td class="r">') == 8                                # mix table
    assert render_report(track).count("band-ref") == 0


def test_camelot_neighbours():
    from trackgrade.report.context import camelot_keys, compatible_codes

    assert compatible_codes("8A") == ["7A", "9A", "8B"]
    assert compatible_codes("12B") == ["11B", "1B", "12A"]
    assert compatible_codes("1A") == ["12A", "2A", "1B"]
    names = {k["code"]: k["name"] for k in camelot_keys()}
    assert len(names) == 24 and names["8A"] == "Am" and names["8B"] == "C"


def test_cli_report_json_is_the_analysis(runner, tracks, tmp_path, monkeypatch):
    work = tmp_path / "out"
    work.mkdir()
    monkeypatch.chdir(work)
    result = runner.invoke(app, ["report", str(tracks[0]), "--mastering", "master", "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)                    # nothing else on stdout
    analysis = json.loads(runner.invoke(app, ["analyze", str(tracks[0]), "--mastering", "master",
                                              "--json"]).stdout)
    assert document == analysis
    target = work / f"{tracks[0].stem}.report.html"
    assert target.is_file() and str(target) in result.stderr
    html = target.read_text(encoding="utf-8")
    assert_self_contained(html)
    for chart in CHART_IDS:
        assert f'id="{chart}"' in html
    assert f">{analysis['score']}</text>" in html and tracks[0].name in html
    # the timeline drew the audio: waveform and correlation
    assert 'class="wave-peak"' in html and "correlation-curve" in html


def test_cli_report_json_and_stdout_html_conflict(runner, tracks):
    result = runner.invoke(app, ["report", str(tracks[0]), "--json", "--out", "-"])
    assert result.exit_code == 2 and result.stdout == ""
    assert "choose one" in result.stderr


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
    assert "No tonal centre" in html and "No feedback items." in html
    doc = parse(html)
    assert not [c for c in classes_of(doc) if c.startswith("section ")]
    assert {a.get("id") for t, a in doc.tags if t == "svg"} >= set(CHART_IDS)


def test_cli_report_with_a_reference_track(runner, tracks, tmp_path):
    """--reference grades against the reference and draws it beside the track."""
    page = tmp_path / "vs.html"
    result = runner.invoke(app, ["report", str(tracks[0]), "--reference", str(tracks[1]),
                                 "--out", str(page), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert document["genre"]["target"] == "reference"
    html = page.read_text(encoding="utf-8")
    assert_self_contained(html)
    assert f"Compared with {tracks[1].name}" in " ".join(" ".join(parse(html).text).split())
    assert html.count('class="band-ref"') == 7
    assert 'id="reference-timeline-1"' in html and html.count('class="wave-peak"') == 2
    assert f"against your reference ({tracks[1].name})" in html    # as the terminal says it
    missing = runner.invoke(app, ["report", str(tracks[0]), "--reference",
                                  str(tmp_path / "nope.wav")])
    assert missing.exit_code == 2 and "nope.wav" in missing.stderr
