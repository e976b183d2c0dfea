"""Chart geometry for the HTML report: numbers in, coordinates out.

Each function returns a plain dict the templates draw (`templates/charts.html.j2`);
nothing here writes markup. Layout rules that keep text off the data: labels
live in margins or in their own lane (the section band, the axis rows), never
on a plot area, and a label that does not fit its box is left to the tooltip.
"""

from __future__ import annotations

import math

from trackgrade.display import clock
from trackgrade.engine.features import BAND_EDGES_HZ, BAND_NAMES
from trackgrade.limits import BAND_WORDS

SECTION_COLOURS = {"intro": "#9cc3e6", "buildup": "#f6c47b", "drop": "#ef8a6f",
                   "breakdown": "#b7a8dd", "outro": "#9cc3e6"}
TRACK_COLOUR = "#2f6db5"
REFERENCE_COLOUR = "#d9822b"
CHAR_W = 0.58            # average glyph width / font size (sans-serif), to fit labels
MAX_CURVE_POINTS = 900


def _f(value: float) -> str:
    return f"{value:.1f}"


def text_width(text: str, size: float) -> float:
    return len(text) * size * CHAR_W


def hz_label(hz: int) -> str:
    return f"{hz // 1000}k" if hz >= 1000 else str(hz)


def nice_step(span: float, count: int) -> float:
    raw = max(span, 1e-9) / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    return next(m * magnitude for m in (1, 2, 2.5, 5, 10) if m * magnitude >= raw)


def ticks(low: float, high: float, count: int = 5) -> list[float]:
    step = nice_step(high - low, count)
    first = math.ceil(low / step - 1e-9) * step
    out, value = [], first
    while value <= high + 1e-9:
        out.append(round(value, 6))
        value += step
    return out


def time_ticks(duration: float, width_px: float) -> list[float]:
    """Round times, at most one per 70 px."""
    most = max(2, int(width_px // 70))
    for step in (5, 10, 15, 30, 60, 120, 300, 600, 1200):
        if duration / step <= most:
            return [i * step for i in range(int(duration // step) + 1)]
    return [0.0]


def thin(values: list, limit: int = MAX_CURVE_POINTS) -> tuple[float, list]:
    """(factor, values) with at most `limit` points: bucket means (None kept
    where a whole bucket is None)."""
    if len(values) <= limit:
        return 1.0, list(values)
    step = len(values) / limit
    out = []
    for i in range(limit):
        chunk = [v for v in values[int(i * step):max(int((i + 1) * step), int(i * step) + 1)]
                 if v is not None]
        out.append(sum(chunk) / len(chunk) if chunk else None)
    return step, out


def polyline(points: list[tuple[float, float | None]]) -> list[str]:
    """SVG path data, broken where a value is missing."""
    paths, current = [], []
    for x, y in points:
        if y is None:
            if current:
                paths.append(current)
            current = []
        else:
            current.append(f"{_f(x)},{_f(y)}")
    if current:
        paths.append(current)
    return ["M" + " L".join(p) for p in paths if len(p) > 1]


# ---------------------------------------------------------------- tonal balance

def tonal_balance(rows: list[dict], *, target_name: str, reference_name: str | None) -> dict:
    """dB against the target per band, with each band's tolerance shaded.
    `rows`: [{band, delta_db, tolerance_db, share_pct, target_pct, ref_delta_db?}]."""
    width, height, left, right, top, bottom = 960, 320, 64, 20, 18, 78
    plot_w, plot_h = width - left - right, height - top - bottom
    extent = max([abs(r["delta_db"]) for r in rows] + [abs(r.get("ref_delta_db") or 0) for r in rows]
                 + [r["tolerance_db"] for r in rows] + [4.5])
    step = 3.0 if extent + 1.0 <= 12.0 else 5.0
    limit = min(15.0, math.ceil((extent + 1.0) / step) * step)
    column = plot_w / len(rows)

    def y_of(db: float) -> float:
        return top + plot_h * (1 - (max(-limit, min(limit, db)) + limit) / (2 * limit))

    bands = []
    for i, row in enumerate(rows):
        cx = left + column * (i + 0.5)
        delta, tol = row["delta_db"], row["tolerance_db"]
        status = "ok" if abs(delta) <= tol else ("high" if delta > 0 else "low")
        lo, hi = BAND_EDGES_HZ[BAND_NAMES.index(row["band"])]
        bands.append({
            "name": row["band"], "title": BAND_WORDS[row["band"]].chart, "cx": _f(cx),
            "x": _f(cx - column * 0.36), "w": _f(column * 0.72),
            "tol_y": _f(y_of(tol)), "tol_h": _f(y_of(-tol) - y_of(tol)),
            "y": _f(y_of(delta)), "delta": delta, "status": status,
            "clipped": abs(delta) > limit, "tolerance": tol,
            "share": row["share_pct"], "target": row["target_pct"],
            "hz": f"{hz_label(lo)}–{hz_label(hi)} Hz",
            "ref_y": None if row.get("ref_delta_db") is None else _f(y_of(row["ref_delta_db"])),
            "ref_delta": row.get("ref_delta_db"),
        })
    return {
        "width": width, "height": height, "left": left, "right": width - right, "top": top,
        "bottom": top + plot_h, "zero_y": _f(y_of(0.0)), "limit": limit,
        "ticks": [{"y": _f(y_of(k * step)), "label": f"{k * step:+g}" if k else "0"}
                  for k in range(-int(limit // step), int(limit // step) + 1)],
        "bands": bands, "line": polyline([(float(b["cx"]), float(b["y"])) for b in bands])[0],
        "ref_line": (polyline([(float(b["cx"]), float(b["ref_y"])) for b in bands])[0]
                     if bands and all(b["ref_y"] is not None for b in bands) else None),
        "label_y1": top + plot_h + 22, "label_y2": top + plot_h + 40,
        "label_y3": top + plot_h + 60, "target_name": target_name,
        "reference_name": reference_name,
    }


# ---------------------------------------------------------------- the timeline

LANES = {"sections": (0, 30), "marks": (36, 14), "wave": (54, 96), "loudness": (166, 150),
         "correlation": (336, 74)}
TIMELINE_W, TIMELINE_LEFT, TIMELINE_RIGHT = 960, 70, 16
TIMELINE_H = 440


def timeline(track: dict, *, loudness_range: tuple[float, float]) -> dict:
    """One timeline: section band (labelled, with each section's loudness),
    marks (true-peak overs, clipped regions), waveform envelope, short-term
    loudness with the target range, stereo correlation; shared time axis.

    `track`: {duration, sections: [{start, end, label, energy, lufs}], envelope:
    {hop, peak, rms} | None, loudness: {hop, values}, integrated, target:
    (lo, hi) | None, correlation: {hop, values} | None, overs, clipped}.
    A reference gets its own timeline on the same loudness scale."""
    plot_w = TIMELINE_W - TIMELINE_LEFT - TIMELINE_RIGHT
    duration = max(float(track["duration"]), 1e-6)

    def x_of(t: float) -> float:
        return TIMELINE_LEFT + plot_w * min(max(t, 0.0), duration) / duration

    chart: dict = {"width": TIMELINE_W, "height": TIMELINE_H, "left": TIMELINE_LEFT,
                   "right": TIMELINE_W - TIMELINE_RIGHT, "plot_w": plot_w}
    chart["lanes"] = {name: {"y": y, "h": h, "mid": _f(y + h / 2), "bottom": y + h}
                      for name, (y, h) in LANES.items()}
    chart["sections"] = _sections(track["sections"], x_of)
    chart["wave"] = _waveform(track.get("envelope"), x_of, LANES["wave"])
    mark_y, mark_h = LANES["marks"]
    chart["overs"] = [{"x": _f(x_of(a)), "w": _f(max(x_of(b) - x_of(a), 2.0)),
                       "title": f"true peak {db:+.1f} dBTP at {clock(a)}"}
                      for a, b, db in track.get("overs") or []]
    chart["clipped"] = [{"x": _f(x_of(a)), "w": _f(max(x_of(b) - x_of(a), 2.0)),
                         "title": f"clipped {clock(a)}–{clock(b)}"}
                        for a, b in track.get("clipped") or []]
    chart["loudness"] = _loudness(track, x_of, loudness_range)
    chart["correlation"] = _correlation(track.get("correlation"), x_of)
    chart["time_ticks"] = [{"x": _f(x_of(t)), "label": clock(t)}
                           for t in time_ticks(duration, plot_w)]
    chart["axis_y"] = TIMELINE_H - 12
    return chart


def _sections(sections: list[dict], x_of) -> list[dict]:
    out = []
    for s in sections:
        x1, x2 = x_of(float(s["start"])), x_of(float(s["end"]))
        lufs = s.get("lufs")
        long_label = s["label"] + (f" · {lufs:.1f} LUFS" if lufs is not None else "")
        room = x2 - x1 - 10
        label = (long_label if text_width(long_label, 12) <= room else
                 s["label"] if text_width(s["label"], 12) <= room else "")
        out.append({"x": _f(x1), "w": _f(max(x2 - x1 - 1.5, 0.5)), "label": label,
                    "kind": s["label"], "colour": SECTION_COLOURS.get(s["label"], "#cfd4de"),
                    "title": f"{s['label']} {clock(s['start'])}–{clock(s['end'])}, "
                             f"energy {s['energy']}"
                             + (f", {lufs:.1f} LUFS" if lufs is not None else ""),
                    "edge": _f(x1)})
    return out


def _waveform(envelope: dict | None, x_of, lane: tuple[int, int]) -> dict | None:
    if not envelope or not envelope.get("peak"):
        return None
    y0, h = lane
    mid = y0 + h / 2
    hop = float(envelope["hop"])

    def band(values: list[float]) -> str:
        top = [(x_of((i + 0.5) * hop), mid - min(v, 1.0) * h / 2) for i, v in enumerate(values)]
        bottom = [(x, 2 * mid - y) for x, y in reversed(top)]
        return "M" + " L".join(f"{_f(x)},{_f(y)}" for x, y in top + bottom) + " Z"

    return {"peak": band(envelope["peak"]), "rms": band(envelope["rms"]), "mid": _f(mid)}


def _loudness(track: dict, x_of, value_range: tuple[float, float]) -> dict:
    y0, h = LANES["loudness"]
    low, high = value_range

    def y_of(v: float) -> float:
        return y0 + h * (1 - (min(max(v, low), high) - low) / (high - low))

    def curve(series: dict | None) -> list[str]:
        if not series or not series.get("values"):
            return []
        factor, values = thin(series["values"])
        hop = float(series["hop"]) * factor
        return polyline([(x_of(i * hop), None if v is None or v < low - 1 else y_of(v))
                         for i, v in enumerate(values)])

    target = track.get("target")
    out = {"paths": curve(track.get("loudness")),
           "ticks": [{"y": _f(y_of(t)), "label": f"{t:g}"} for t in ticks(low, high, 4)],
           "integrated_y": _f(y_of(track["integrated"])),
           "integrated": track["integrated"], "target": None}
    if target is not None:
        out["target"] = {"y": _f(y_of(target[1])), "h": _f(y_of(target[0]) - y_of(target[1])),
                         "low": target[0], "high": target[1]}
    return out


def _correlation(series: dict | None, x_of) -> dict | None:
    y0, h = LANES["correlation"]

    def y_of(v: float) -> float:
        return y0 + h * (1 - (max(-1.0, min(1.0, v)) + 1) / 2)

    if not series or not series.get("values"):
        return None
    factor, values = thin(series["values"])
    hop = float(series["hop"]) * factor
    points = [(x_of((i + 0.5) * hop), None if v is None else y_of(v)) for i, v in enumerate(values)]
    zero = y_of(0.0)
    negative = [(x, None if y is None else max(y, zero)) for x, y in points]
    areas = []
    for path in polyline(negative):
        first, last = path[1:].split(" L")[0].split(",")[0], path.rsplit(" L", 1)[-1].split(",")[0]
        areas.append(f"{path} L{last},{_f(zero)} L{first},{_f(zero)} Z")
    below = [v for v in values if v is not None and v < 0]
    return {"paths": polyline(points), "negative": areas if below else [], "zero_y": _f(zero),
            "ticks": [{"y": _f(y_of(v)), "label": f"{v:+g}" if v else "0"} for v in (1, 0, -1)]}


# ---------------------------------------------------------------- Camelot wheel

def camelot_wheel(keys: list[dict], track_code: str | None, reference_codes: list[str],
                  compatible: list[str]) -> dict:
    """24 segments: majors (B) outside, minors (A) inside, 12 at the top.
    `keys`: [{code, name}] for all 24."""
    size, cx, cy = 320, 160, 160
    rings = {"B": (150, 106), "A": (104, 62)}
    names = {k["code"]: k["name"] for k in keys}
    segments = []
    for letter, (outer, inner) in rings.items():
        for number in range(1, 13):
            code = f"{number}{letter}"
            centre = math.radians(number * 30 - 90)
            a0, a1 = centre - math.radians(15), centre + math.radians(15)
            path = (f"M{_f(cx + outer * math.cos(a0))},{_f(cy + outer * math.sin(a0))} "
                    f"A{outer},{outer} 0 0 1 {_f(cx + outer * math.cos(a1))},"
                    f"{_f(cy + outer * math.sin(a1))} "
                    f"L{_f(cx + inner * math.cos(a1))},{_f(cy + inner * math.sin(a1))} "
                    f"A{inner},{inner} 0 0 0 {_f(cx + inner * math.cos(a0))},"
                    f"{_f(cy + inner * math.sin(a0))} Z")
            r = (outer + inner) / 2
            state = ("track" if code == track_code else
                     "compatible" if code in compatible else "other")
            segments.append({"code": code, "name": names.get(code, ""), "path": path,
                             "state": state, "reference": code in reference_codes,
                             "tx": _f(cx + r * math.cos(centre)),
                             "ty": _f(cy + r * math.sin(centre))})
    return {"size": size, "cx": cx, "cy": cy, "segments": segments, "track": track_code}
