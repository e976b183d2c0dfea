"""A self-contained HTML report for one Analysis.

`render_report(analysis)` returns one HTML document: inline CSS and inline SVG
charts, no script, no fonts, images or styles fetched from anywhere (a
Content-Security-Policy forbids it). Charts (each an `<svg>` with a stable id):

    score-gauge      the overall score as a ring, coloured by grade
    pillars-chart    the five pillar scores as bars
    band-chart       the seven frequency bands against the genre ideal
    loudness-chart   short-term loudness (LUFS) over time, sections shaded
    energy-chart     energy over time, sections shaded

Curves come from `Analysis.extras` (``loudness_curve``: {hop_s,
short_term_lufs}; ``energy_curve``: {hop_s, values}); a missing curve is
drawn from what the document has (the section energies) or left as a
labelled empty chart, never an error. Every string from the document is
HTML-escaped.
"""

from __future__ import annotations

import math
from html import escape

from trackgrade.display import clock, mix_rows, score_tier
from trackgrade.engine.features import BAND_EDGES_HZ, BAND_NAMES
from trackgrade.grading.diagnosis import band_db
from trackgrade.grading.limits import BAND_TOLERANCE_DB
from trackgrade.model import Analysis

BAND_TITLES = {"sub_bass": "Sub", "bass": "Bass", "low_mid": "Low mid", "mid": "Mid",
               "upper_mid": "Upper mid", "high": "High", "air": "Air"}
PILLARS = (("danceability", "Danceability"), ("mix_quality", "Mix quality"),
           ("frequency_balance", "Frequency balance"), ("energy", "Energy"),
           ("structure", "Structure"))
SECTION_COLOURS = {"intro": "#5fa8d3", "buildup": "#f4a259", "drop": "#e4572e",
                   "breakdown": "#8e7dbe", "outro": "#5fa8d3"}
FEEDBACK_ORDER = {"warn": 0, "tip": 1, "pass": 2}
FEEDBACK_ICON = {"warn": "▲", "tip": "●", "pass": "✓"}
MAX_CURVE_POINTS = 900
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


# ---------------------------------------------------------------- small helpers

TIER_COLOUR = {"great": "#2a9d55", "good": "#7cb342", "fair": "#e9b32a", "weak": "#ef7d2d",
               "poor": "#d64545"}


def score_colour(score: float) -> str:
    return TIER_COLOUR[score_tier(score)]


def _f(value: float) -> str:
    """A coordinate with one decimal."""
    return f"{value:.1f}"


def finite_values(values) -> list[float | None]:
    """Floats, with anything non-finite or non-numeric as None."""
    out: list[float | None] = []
    for value in values or ():
        try:
            number = float(value)
        except (TypeError, ValueError):
            out.append(None)
            continue
        out.append(number if math.isfinite(number) else None)
    return out


def downsample(times: list[float], values: list[float | None],
               limit: int = MAX_CURVE_POINTS) -> tuple[list[float], list[float | None]]:
    """At most `limit` points: the mean of each bucket (None where a bucket has
    no finite value)."""
    if len(values) <= limit:
        return times, values
    step = len(values) / limit
    out_t, out_v = [], []
    for i in range(limit):
        lo, hi = int(i * step), max(int((i + 1) * step), int(i * step) + 1)
        chunk = [v for v in values[lo:hi] if v is not None]
        out_t.append(times[(lo + hi - 1) // 2])
        out_v.append(sum(chunk) / len(chunk) if chunk else None)
    return out_t, out_v


def curve_from_extras(analysis: Analysis, name: str, field: str
                      ) -> tuple[list[float], list[float | None]] | None:
    """(times, values) of a curve in `extras`, or None when it is absent or malformed."""
    curve = analysis.extras.get(name) if isinstance(analysis.extras, dict) else None
    if not isinstance(curve, dict):
        return None
    values = finite_values(curve.get(field))
    try:
        hop = float(curve.get("hop_s") or 0.0)
    except (TypeError, ValueError):
        return None
    if not values or hop <= 0 or all(v is None for v in values):
        return None
    times = [i * hop for i in range(len(values))]
    return downsample(times, values)


def section_energy_curve(analysis: Analysis) -> tuple[list[float], list[float | None]] | None:
    """A step curve of the section energies (0-1), for when no energy curve is present."""
    times: list[float] = []
    values: list[float | None] = []
    for section in analysis.structure.sections:
        times += [float(section.start), float(section.end)]
        values += [section.energy / 100.0] * 2
    return (times, values) if times else None


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high]."""
    span = max(high - low, 1e-9)
    raw = span / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step) * step
    ticks = []
    value = first
    while value <= high + 1e-9:
        ticks.append(round(value, 6))
        value += step
    return ticks


def time_ticks(duration: float) -> list[float]:
    for step in (5, 10, 15, 30, 60, 120, 300, 600):
        if duration / step <= 10:
            return [i * step for i in range(int(duration // step) + 1)]
    return [0.0, duration]


# ---------------------------------------------------------------- charts (SVG strings)

def svg_score_gauge(analysis: Analysis) -> str:
    radius, width = 52, 12
    circumference = 2 * math.pi * radius
    filled = circumference * max(0, min(100, analysis.score)) / 100
    colour = score_colour(analysis.score)
    return (
        f'<svg id="score-gauge" class="gauge" viewBox="0 0 140 140" width="140" height="140" '
        f'role="img" aria-label="score {analysis.score} of 100, grade {escape(analysis.grade.letter)}">'
        f'<circle cx="70" cy="70" r="{radius}" fill="none" stroke="#e6e8ef" stroke-width="{width}"/>'
        f'<circle cx="70" cy="70" r="{radius}" fill="none" stroke="{colour}" stroke-width="{width}" '
        f'stroke-linecap="round" stroke-dasharray="{_f(filled)} {_f(circumference)}" '
        f'transform="rotate(-90 70 70)"/>'
        f'<text x="70" y="72" text-anchor="middle" class="gauge-score">{analysis.score}</text>'
        f'<text x="70" y="96" text-anchor="middle" class="gauge-grade" fill="{colour}">'
        f'{escape(analysis.grade.letter)}</text></svg>')


def svg_pillars(analysis: Analysis) -> str:
    row, label_w, bar_w = 30, 150, 560
    height = row * len(PILLARS) + 10
    parts = [f'<svg id="pillars-chart" viewBox="0 0 {label_w + bar_w + 50} {height}" '
             f'width="100%" role="img" aria-label="pillar scores">']
    for i, (field, title) in enumerate(PILLARS):
        value = int(getattr(analysis.scores, field))
        y = 8 + i * row
        parts.append(
            f'<text x="0" y="{y + 15}" class="label">{escape(title)}</text>'
            f'<rect x="{label_w}" y="{y + 3}" width="{bar_w}" height="16" rx="4" fill="#eceef4"/>'
            f'<rect class="pillar-bar" x="{label_w}" y="{y + 3}" width="{_f(bar_w * value / 100)}" '
            f'height="16" rx="4" fill="{score_colour(value)}"><title>{escape(title)}: {value}/100'
            f'</title></rect>'
            f'<text x="{label_w + bar_w + 10}" y="{y + 16}" class="value">{value}</text>')
    parts.append("</svg>")
    return "".join(parts)


def svg_band_chart(analysis: Analysis) -> str:
    """Grouped bars: the measured share of each band beside the genre ideal."""
    bands, ideal = analysis.frequency.bands, analysis.frequency.ideal
    mine = [float(getattr(bands, b)) for b in BAND_NAMES]
    target = [float(getattr(ideal, b)) for b in BAND_NAMES]
    peak = max(mine + target + [10.0])
    step = 10.0 if peak > 25 else 5.0
    top = math.ceil(peak * 1.08 / step) * step     # room above the tallest bar and its label
    width, height, left, bottom, top_pad = 700, 290, 44, 52, 16
    plot_h = height - bottom - top_pad
    group_w = (width - left - 10) / len(BAND_NAMES)
    bar_w = group_w * 0.32

    def y_of(value: float) -> float:
        return top_pad + plot_h * (1 - min(value, top) / top)

    parts = [f'<svg id="band-chart" viewBox="0 0 {width} {height}" width="100%" role="img" '
             f'aria-label="band balance against the {escape(analysis.genre.name)} ideal">']
    for tick in nice_ticks(0, top):
        y = y_of(tick)
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{_f(y)}" y2="{_f(y)}" class="grid"/>'
                     f'<text x="{left - 6}" y="{_f(y + 4)}" text-anchor="end" class="tick">'
                     f'{tick:g}%</text>')
    diff_db = band_db(analysis)
    for i, (name, (lo, hi)) in enumerate(zip(BAND_NAMES, BAND_EDGES_HZ)):
        x0 = left + i * group_w + group_w * 0.16
        diff, tolerance = diff_db[name], BAND_TOLERANCE_DB[name]
        colour = "#2a9d55" if abs(diff) <= tolerance else ("#d64545" if diff > 0 else "#e9b32a")
        hi_label = f"{hi // 1000}k" if hi >= 1000 else str(hi)
        lo_label = f"{lo // 1000}k" if lo >= 1000 else str(lo)
        parts.append(
            f'<rect class="band-measured" x="{_f(x0)}" y="{_f(y_of(mine[i]))}" width="{_f(bar_w)}" '
            f'height="{_f(y_of(0) - y_of(mine[i]))}" rx="2" fill="{colour}">'
            f'<title>{BAND_TITLES[name]}: {mine[i]:.1f}% (ideal {target[i]:.1f}%, '
            f'{diff:+.1f} dB)</title></rect>'
            f'<rect class="band-ideal" x="{_f(x0 + bar_w + 2)}" y="{_f(y_of(target[i]))}" '
            f'width="{_f(bar_w)}" height="{_f(y_of(0) - y_of(target[i]))}" rx="2" fill="#b9c0d4">'
            f'<title>{escape(analysis.genre.name)} ideal: {target[i]:.1f}%</title></rect>'
            f'<text x="{_f(x0 + bar_w / 2)}" y="{_f(y_of(mine[i]) - 4)}" text-anchor="middle" '
            f'class="value-small">{mine[i]:.1f}</text>'
            f'<text x="{_f(x0 + bar_w + 1)}" y="{height - bottom + 18}" text-anchor="middle" '
            f'class="label">{BAND_TITLES[name]}</text>'
            f'<text x="{_f(x0 + bar_w + 1)}" y="{height - bottom + 33}" text-anchor="middle" '
            f'class="tick">{lo_label}-{hi_label} Hz</text>')
    parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{_f(y_of(0))}" y2="{_f(y_of(0))}" '
                 f'class="axis"/></svg>')
    return "".join(parts)


def _section_shading(analysis: Analysis, x_of, top: float, bottom: float) -> list[str]:
    parts = []
    for section in analysis.structure.sections:
        x1, x2 = x_of(float(section.start)), x_of(float(section.end))
        colour = SECTION_COLOURS.get(section.label, "#999999")
        label = escape(section.label)
        parts.append(
            f'<rect class="section section-{label}" x="{_f(x1)}" y="{_f(top)}" '
            f'width="{_f(max(x2 - x1, 0.5))}" height="{_f(bottom - top)}" fill="{colour}" '
            f'fill-opacity="0.13"><title>{label} {clock(section.start)}-{clock(section.end)}, '
            f'energy {section.energy}</title></rect>'
            f'<line x1="{_f(x1)}" x2="{_f(x1)}" y1="{_f(top)}" y2="{_f(bottom)}" '
            f'stroke="{colour}" stroke-opacity="0.5"/>')
        if x2 - x1 >= 34:
            parts.append(f'<text x="{_f(x1 + 4)}" y="{_f(top + 12)}" class="section-label" '
                         f'fill="{colour}">{label}</text>')
    return parts


def _polyline_paths(times, values, x_of, y_of) -> list[str]:
    """Path data for the curve, broken where values are missing."""
    paths, current = [], []
    for t, v in zip(times, values):
        if v is None:
            if current:
                paths.append(current)
            current = []
            continue
        current.append(f"{_f(x_of(t))},{_f(y_of(v))}")
    if current:
        paths.append(current)
    return ["M" + " L".join(points) for points in paths if points]


def svg_timeline(analysis: Analysis, *, chart_id: str, label: str,
                 curve: tuple[list[float], list[float | None]] | None,
                 y_range: tuple[float, float], unit: str, colour: str, fill: bool,
                 reference: tuple[float, str] | None = None,
                 target_band: tuple[float, float, str] | None = None) -> str:
    """A curve over time with the structure sections shaded behind it."""
    width, height, left, right, top, bottom = 760, 230, 50, 12, 22, 28
    duration = max(float(analysis.duration_seconds), 1e-6)
    low, high = y_range

    def x_of(t: float) -> float:
        return left + (width - left - right) * min(max(t, 0.0), duration) / duration

    def y_of(v: float) -> float:
        v = min(max(v, low), high)
        return top + (height - top - bottom) * (1 - (v - low) / (high - low))

    parts = [f'<svg id="{chart_id}" viewBox="0 0 {width} {height}" width="100%" role="img" '
             f'aria-label="{escape(label)}">']
    parts += _section_shading(analysis, x_of, top, height - bottom)
    if target_band is not None:
        band_lo, band_hi, band_label = target_band
        y1, y2 = y_of(band_hi), y_of(band_lo)
        parts.append(f'<rect class="target-band" x="{left}" y="{_f(y1)}" '
                     f'width="{width - left - right}" height="{_f(max(y2 - y1, 1.0))}" '
                     f'fill="#2a9d55" fill-opacity="0.10" stroke="#2a9d55" stroke-opacity="0.35" '
                     f'stroke-dasharray="2 3"><title>{escape(band_label)}</title></rect>'
                     f'<rect x="{(width + left) / 2 - 150}" y="{top - 17}" width="10" height="8" '
                     f'fill="#2a9d55" fill-opacity="0.25"/><text x="{(width + left) / 2 - 136}" '
                     f'y="{top - 8}" class="tick">{escape(band_label)}</text>')
    for tick in nice_ticks(low, high, 4):
        y = y_of(tick)
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{_f(y)}" y2="{_f(y)}" '
                     f'class="grid"/><text x="{left - 6}" y="{_f(y + 4)}" text-anchor="end" '
                     f'class="tick">{tick:g}</text>')
    for tick in time_ticks(duration):
        x = x_of(tick)
        parts.append(f'<text x="{_f(x)}" y="{height - 8}" text-anchor="middle" class="tick">'
                     f'{clock(tick)}</text>')
    if reference is not None:
        ref_value, ref_label = reference
        y = y_of(ref_value)
        parts.append(f'<line x1="{left}" x2="{width - right}" y1="{_f(y)}" y2="{_f(y)}" '
                     f'class="reference"><title>{escape(ref_label)}</title></line>'
                     f'<text x="{width - right}" y="{top - 8}" text-anchor="end" class="tick">'
                     f'- - - {escape(ref_label)}</text>')
    if curve is None:
        parts.append(f'<text x="{(width + left) / 2}" y="{height / 2}" text-anchor="middle" '
                     f'class="empty">no {escape(label)} data in this analysis</text>')
    else:
        times, values = curve
        for path in _polyline_paths(times, values, x_of, y_of):
            if fill:
                start_x = path[1:].split(",", 1)[0]
                end_x = path.rsplit(" L", 1)[-1].split(",", 1)[0] if " L" in path else start_x
                base = _f(y_of(low))
                parts.append(f'<path class="curve-fill" d="{path} L{end_x},{base} L{start_x},{base} Z" '
                             f'fill="{colour}" fill-opacity="0.22" stroke="none"/>')
            parts.append(f'<path class="curve" d="{path}" fill="none" stroke="{colour}" '
                         f'stroke-width="1.6" stroke-linejoin="round"/>')
    parts.append(f'<text x="{left}" y="{top - 8}" class="tick">{escape(unit)}</text>')
    parts.append(f'<line x1="{left}" x2="{width - right}" y1="{_f(height - bottom)}" '
                 f'y2="{_f(height - bottom)}" class="axis"/></svg>')
    return "".join(parts)


def loudness_target(analysis: Analysis) -> tuple[float, float] | None:
    """The genre's integrated-loudness target range for this mastering status, if known."""
    targets = analysis.extras.get("targets") if isinstance(analysis.extras, dict) else None
    band = targets.get("loudness_lufs") if isinstance(targets, dict) else None
    try:
        low, high = (float(v) for v in band)
    except (TypeError, ValueError):
        return None
    return (low, high) if math.isfinite(low) and math.isfinite(high) and low < high else None


def loudness_chart(analysis: Analysis) -> str:
    curve = curve_from_extras(analysis, "loudness_curve", "short_term_lufs")
    integrated = float(analysis.mix.loudness_lufs)
    target = loudness_target(analysis)
    present = [v for v in (curve[1] if curve else []) if v is not None]
    high = math.ceil((max(present + [integrated] + ([target[1]] if target else [])) + 2) / 3) * 3
    low = high - 30
    if curve is not None:
        curve = (curve[0], [None if v is None or v < low - 20 else v for v in curve[1]])
    band = None
    if target is not None:
        band = (max(target[0], low), target[1],
                f"{analysis.genre.name} {analysis.mastering_status} target "
                f"{target[0]:g} to {target[1]:g} LUFS")
    return svg_timeline(analysis, chart_id="loudness-chart", label="short-term loudness",
                        curve=curve, y_range=(low, high), unit="LUFS", colour="#3a6ea5",
                        fill=False, reference=(integrated, f"integrated {integrated:.1f} LUFS"),
                        target_band=band)


def energy_scale(values: list[float | None]) -> float:
    """The factor that puts an energy curve on 0-100: 0-1 curves times 100,
    0-100 curves as they are, anything larger normalised to its peak."""
    peak = max((v for v in values if v is not None), default=0.0)
    if peak <= 1.0 + 1e-9:
        return 100.0
    return 1.0 if peak <= 100.0 else 100.0 / peak


def energy_chart(analysis: Analysis) -> str:
    curve = (curve_from_extras(analysis, "energy_curve", "values")
             or section_energy_curve(analysis))
    if curve is not None:
        factor = energy_scale(curve[1])
        curve = (curve[0], [None if v is None else v * factor for v in curve[1]])
    return svg_timeline(analysis, chart_id="energy-chart", label="energy", curve=curve,
                        y_range=(0.0, 100.0), unit="energy", colour="#e4572e", fill=True)


# ---------------------------------------------------------------- HTML blocks

def _facts(analysis: Analysis) -> str:
    key = analysis.key
    key_html = (f'{escape(key.key)} {escape(key.scale)} <span class="camelot">'
                f'{escape(key.camelot)}</span></p><small>{key.confidence:.0%} confidence</small>'
                if key is not None else '<span class="muted">no tonal centre</span></p>')
    return (
        '<div class="facts">'
        f'<div class="fact"><h3>Tempo</h3><p>{analysis.tempo.bpm:.1f} <small>BPM</small></p>'
        f'<small>regularity {analysis.tempo.regularity:.2f}</small></div>'
        f'<div class="fact"><h3>Key</h3><p>{key_html}</div>'
        f'<div class="fact"><h3>Genre</h3><p>{escape(analysis.genre.name)}</p>'
        f'<small>{closest_label(analysis)}{analysis.genre.confidence:.0%} '
        f'confidence</small></div>'
        f'<div class="fact"><h3>Length</h3><p>{clock(analysis.duration_seconds)}</p>'
        f'<small>{escape(analysis.mastering_status)}</small></div>'
        '</div>')


def closest_label(analysis: Analysis) -> str:
    """'closest to <label> · ' when the analysis names a subgenre label other
    than the detected family, else ''."""
    key = analysis.extras.get("subgenre") if isinstance(analysis.extras, dict) else None
    if not isinstance(key, str) or key == analysis.genre.detected:
        return ""
    from trackgrade.grading.genres import GENRES

    profile = GENRES.get(key)
    return f"closest to {escape(profile['name'])} · " if profile else ""


def _mix_table(analysis: Analysis) -> str:
    mix = analysis.mix
    rows = mix_rows(mix, analysis.mastering_status) + [("Mix score", f"{mix.score}", "")]
    body = "".join(f"<tr><th>{escape(a)}</th><td>{escape(b)}</td><td class='muted'>{escape(c)}"
                   f"</td></tr>" for a, b, c in rows)
    return f'<table class="metrics" id="mix-table">{body}</table>'


def _sections_table(analysis: Analysis) -> str:
    rows = "".join(
        f'<tr><td><span class="swatch" style="background:'
        f'{SECTION_COLOURS.get(s.label, "#999")}"></span>{escape(s.label)}</td>'
        f'<td>{clock(s.start)}</td><td>{clock(s.end)}</td><td>{s.energy}</td></tr>'
        for s in analysis.structure.sections)
    return ('<table class="metrics" id="sections-table"><thead><tr><th>section</th><th>from</th>'
            f'<th>to</th><th>energy</th></tr></thead><tbody>{rows}</tbody></table>')


def _diagnosis(analysis: Analysis) -> str:
    diagnosis = analysis.diagnosis
    parts = [f'<p class="summary">{escape(diagnosis.summary)}</p>']
    for title, text in (("Frequency", diagnosis.frequency), ("Mix", diagnosis.mix),
                        ("Danceability", diagnosis.danceability)):
        if text:
            parts.append(f"<p><strong>{title}.</strong> {escape(text)}</p>")
    if diagnosis.status != "ready":
        parts.append('<p class="muted">Template diagnosis; the enhanced narrative was not '
                     'generated.</p>')
    return "".join(parts)


def _feedback(analysis: Analysis) -> str:
    items = sorted(analysis.feedback, key=lambda item: FEEDBACK_ORDER.get(item.type, 3))
    if not items:
        return '<p class="muted">No feedback items.</p>'
    lis = "".join(
        f'<li class="fb fb-{escape(item.type)}"><span class="fb-type">'
        f'{FEEDBACK_ICON.get(item.type, "•")} {escape(item.type)}</span>'
        f'<span class="fb-cat">{escape(item.category)}</span>'
        f'<span class="fb-text">{escape(item.text)}</span></li>' for item in items)
    return f'<ul class="feedback" id="feedback">{lis}</ul>'


STYLE = """
:root{--ink:#1d2433;--muted:#6b7387;--card:#fff;--bg:#f3f4f8;--line:#e1e4ec}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);
 font:15px/1.5 -apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif}
main{max-width:980px;margin:0 auto;padding:24px 20px 40px}
header.top{display:flex;gap:24px;align-items:center;background:#1d2433;color:#fff;
 border-radius:14px;padding:18px 24px;margin-bottom:18px}
header.top h1{margin:0;font-size:22px;word-break:break-all}
header.top .grade{font-size:18px;margin-top:4px}
header.top .muted{color:#aab1c4}
.gauge{flex:none;background:#fff;border-radius:50%}
.gauge-score{font-size:38px;font-weight:700;fill:#1d2433}
.gauge-grade{font-size:18px;font-weight:700}
section.card{background:var(--card);border-radius:12px;padding:16px 20px;margin:14px 0;
 box-shadow:0 1px 2px rgba(0,0,0,.06)}
section.card h2{margin:0 0 10px;font-size:16px;text-transform:uppercase;letter-spacing:.06em;
 color:var(--muted)}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:14px}
@media (max-width:760px){.grid2{grid-template-columns:1fr}header.top{flex-direction:column}}
.facts{display:grid;grid-template-columns:repeat(4,1fr);gap:10px}
.fact{background:var(--bg);border-radius:10px;padding:10px 12px}
.fact h3{margin:0;font-size:12px;color:var(--muted);text-transform:uppercase}
.fact p{margin:2px 0;font-size:20px;font-weight:600}
.fact small{color:var(--muted)}
.camelot{background:#1d2433;color:#fff;border-radius:6px;padding:0 6px;font-size:15px}
svg text{font-family:inherit}
svg .label{font-size:13px;fill:var(--ink)}
svg .value{font-size:13px;font-weight:700;fill:var(--ink)}
svg .value-small{font-size:11px;fill:var(--ink)}
svg .tick{font-size:11px;fill:var(--muted)}
svg .grid{stroke:var(--line);stroke-width:1}
svg .axis{stroke:#9aa2b5;stroke-width:1}
svg .reference{stroke:#1d2433;stroke-width:1;stroke-dasharray:4 3}
svg .section-label{font-size:11px;font-weight:700}
svg .empty{font-size:13px;fill:var(--muted)}
.legend{font-size:13px;color:var(--muted);margin:4px 0 0}
.legend i{display:inline-block;width:12px;height:12px;border-radius:2px;margin:0 4px -1px 10px}
table.metrics{border-collapse:collapse;width:100%;font-size:14px}
table.metrics th,table.metrics td{text-align:left;padding:4px 8px;border-bottom:1px solid var(--line)}
table.metrics td:nth-child(2){font-weight:600;white-space:nowrap}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-right:6px}
.muted{color:var(--muted)}
.summary{font-size:16px}
ul.feedback{list-style:none;margin:0;padding:0}
li.fb{display:grid;grid-template-columns:80px 110px 1fr;gap:8px;padding:6px 0;
 border-bottom:1px solid var(--line)}
.fb-type{font-weight:700;text-transform:uppercase;font-size:12px;padding-top:2px}
.fb-warn .fb-type{color:#d64545}.fb-tip .fb-type{color:#c98a00}.fb-pass .fb-type{color:#2a9d55}
.fb-cat{color:var(--muted);font-size:13px;padding-top:1px}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:20px}
@media print{body{background:#fff}section.card{box-shadow:none;border:1px solid var(--line)}}
"""


def render_report(analysis: Analysis) -> str:
    """One self-contained HTML document (inline CSS and SVG, no script, no
    network) for an Analysis."""
    name = escape(analysis.file_name)
    colour = score_colour(analysis.score)
    truncated = ('<p class="warning">The file ended before its header said it would; this report '
                 'covers the audio that is present.</p>' if analysis.extras.get("truncated") else "")
    return f"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="{CSP}">
<meta name="generator" content="trackgrade">
<title>{name}: {analysis.score} ({escape(analysis.grade.letter)}) · trackgrade report</title>
<style>{STYLE}</style>
</head>
<body>
<main>
<header class="top">
{svg_score_gauge(analysis)}
<div>
<div class="muted">trackgrade report</div>
<h1 id="file-name">{name}</h1>
<div class="grade"><strong style="color:{colour}">{escape(analysis.grade.letter)}</strong>
 · {escape(analysis.grade.label)} · hit potential {analysis.score}/100</div>
<div class="muted">{escape(analysis.mastering_status)} · {clock(analysis.duration_seconds)}
 · {escape(analysis.genre.name)}</div>
</div>
</header>
{truncated}
<section class="card"><h2>At a glance</h2>{_facts(analysis)}</section>
<section class="card"><h2>Pillars</h2>{svg_pillars(analysis)}</section>
<section class="card"><h2>Tonal balance vs the {escape(analysis.genre.name)} ideal</h2>
{svg_band_chart(analysis)}
<p class="legend"><i style="background:#2a9d55"></i>yours, close to ideal
<i style="background:#e9b32a"></i>yours, below <i style="background:#d64545"></i>yours, above
<i style="background:#b9c0d4"></i>genre ideal · spectral centroid
{analysis.frequency.centroid_hz:,.0f} Hz · frequency score {analysis.frequency.score}</p>
</section>
<section class="card"><h2>Loudness over time</h2>{loudness_chart(analysis)}</section>
<section class="card"><h2>Energy over time</h2>{energy_chart(analysis)}</section>
<div class="grid2">
<section class="card"><h2>Loudness &amp; stereo</h2>{_mix_table(analysis)}</section>
<section class="card"><h2>Structure · score {analysis.structure.score}</h2>
{_sections_table(analysis)}</section>
</div>
<section class="card"><h2>Diagnosis</h2>{_diagnosis(analysis)}</section>
<section class="card"><h2>Feedback</h2>{_feedback(analysis)}</section>
<footer>Generated by trackgrade · audio analysed in memory; this file contains no audio.</footer>
</main>
</body>
</html>
"""
