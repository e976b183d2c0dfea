"""GET /embed/{id} (spec 4.6): the public, key-less score badge.

Only the overall score, the grade and the genre, as a small self-contained
HTML page with an inline SVG; every value HTML-escaped. 404 `not_found` alike
for unknown, incomplete and not-enabled analyses.
"""

from __future__ import annotations

from html import escape

from flask import Blueprint, Response

from trackgrade.errors import TrackgradeError
from trackgrade.server import documents
from trackgrade.server.routes.common import is_uuid, single_query

THEMES = {"dark": ("#14161a", "#f4f5f7", "#9aa3ad"), "light": ("#ffffff", "#14161a", "#5b6570")}
SIZES = {"sm": (220, 64, 22), "md": (320, 92, 32)}   # width, height, score font px
GRADE_COLOURS = {"A": "#2fbf71", "B": "#7cc242", "C": "#f2b134", "D": "#f08a24", "F": "#e5484d"}


def badge_html(*, score: int, letter: str, genre: str, theme: str, size: str) -> str:
    background, text, muted = THEMES[theme]
    width, height, font = SIZES[size]
    accent = GRADE_COLOURS.get(letter[:1], "#9aa3ad")
    s, g, n = escape(str(score)), escape(letter), escape(genre)
    title = f"Track score {s}/100, grade {g}, {n}"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{title}</title><meta name=\"viewport\" content=\"width=device-width\">"
        "<style>html,body{margin:0;background:transparent}</style></head><body>"
        f"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" "
        f"viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"{title}\">"
        f"<title>{title}</title>"
        f"<rect width=\"{width}\" height=\"{height}\" rx=\"10\" fill=\"{background}\"/>"
        f"<rect x=\"0\" y=\"0\" width=\"6\" height=\"{height}\" rx=\"3\" fill=\"{accent}\"/>"
        f"<text x=\"18\" y=\"{int(height * 0.62)}\" font-family=\"system-ui,sans-serif\" "
        f"font-size=\"{font}\" font-weight=\"700\" fill=\"{text}\">{s}</text>"
        f"<text x=\"{18 + int(font * 1.9)}\" y=\"{int(height * 0.62)}\" "
        f"font-family=\"system-ui,sans-serif\" font-size=\"{int(font * 0.8)}\" "
        f"font-weight=\"700\" fill=\"{accent}\">{g}</text>"
        f"<text x=\"{18 + int(font * 3.6)}\" y=\"{int(height * 0.45)}\" "
        f"font-family=\"system-ui,sans-serif\" font-size=\"{max(11, font // 2.6):.0f}\" "
        f"fill=\"{muted}\">hit potential</text>"
        f"<text x=\"{18 + int(font * 3.6)}\" y=\"{int(height * 0.72)}\" "
        f"font-family=\"system-ui,sans-serif\" font-size=\"{max(12, font // 2.2):.0f}\" "
        f"fill=\"{text}\">{n}</text>"
        "</svg></body></html>\n")


def blueprint(ctx) -> Blueprint:
    bp = Blueprint("embed", __name__)

    @bp.get("/embed/<analysis_id>")
    def badge(analysis_id: str):
        theme = single_query("theme") or "dark"
        size = single_query("size") or "md"
        if theme not in THEMES:
            raise TrackgradeError("parameter_invalid", "theme must be dark or light",
                                  param="theme")
        if size not in SIZES:
            raise TrackgradeError("parameter_invalid", "size must be sm or md", param="size")
        row = ctx.store.get("analyses", analysis_id) if is_uuid(analysis_id) else None
        result = documents.result_of(row) if row is not None and row.get("embed") else None
        if row is None or row["status"] != "complete" or not row.get("embed") or not result:
            raise TrackgradeError("not_found", "no embeddable analysis with this id", param="id")
        html = badge_html(score=int(result["score"]), letter=result["grade"]["letter"],
                          genre=result["genre"]["name"], theme=theme, size=size)
        return Response(html, 200, content_type="text/html; charset=utf-8", headers={
            "Cache-Control": "public, max-age=60",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
        })

    return bp
