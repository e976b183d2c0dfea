"""The self-contained HTML report of one Analysis.

`render_report(analysis, timeline=None, references=())` returns one HTML
document built from the Jinja2 templates in `templates/` (autoescaped: every
string from a document is escaped). Inline CSS and inline SVG only: no
script, no font, image or style is fetched (a Content-Security-Policy of
`default-src 'none'` says so to the browser), and it prints on paper.

    context.py    Analysis (+ timeline, + references) -> what the page shows
    delivery.py   the delivery section (platforms, mono, codecs) and the
                  comparison view (`trackgrade.compare`)
    charts.py     chart geometry: tonal balance in dB against the target with
                  the tolerance band, the timeline, the Camelot wheel
    timeline.py   the series only the report draws, from decoded samples
                  (waveform envelope, stereo correlation, true-peak overs,
                  clipped regions)
    templates/    report.html.j2 (the page), charts.html.j2 (SVG macros),
                  report.css
"""

from __future__ import annotations

from functools import lru_cache

from trackgrade.model import Analysis
from trackgrade.report.context import Page, ReportTrack
from trackgrade.report.timeline import Timeline, timeline_of

__all__ = ["render_report", "timeline_of", "ReportTrack", "Timeline"]

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


@lru_cache(maxsize=1)
def environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("trackgrade.report", "templates"),
                      autoescape=True, undefined=StrictUndefined, trim_blocks=True,
                      lstrip_blocks=True)
    env.filters["signed"] = lambda value, digits=1: f"{value:+.{digits}f}"
    return env


def render_report(analysis: Analysis, *, timeline: Timeline | None = None,
                  references: list[ReportTrack] | tuple = (), comparison: dict | None = None) -> str:
    """One self-contained HTML document for an Analysis. `timeline` (from
    `timeline_of`) adds the waveform, correlation, overs and clipped regions;
    each reference is drawn beside the track on every chart; `comparison`
    (`trackgrade.compare(earlier, this)`) adds the comparison view."""
    from trackgrade.report.context import build
    from trackgrade.report.delivery import comparison_block, delivery_block

    page = Page(track=ReportTrack(analysis, timeline), references=list(references))
    return environment().get_template("report.html.j2").render(
        **build(page), delivery=delivery_block(analysis), comparison=comparison_block(comparison),
        csp=CSP)
