"""GET /embed/{id} (spec 4.6): the public, key-less score badge.

Only the overall score (/100), the grade with its label and the genre, as a
small self-contained HTML page (inline CSS, fixed size per `size`); every value
HTML-escaped. Both themes carry a border that keeps the badge's edge visible
on white and on dark pages. 404 `not_found` alike
for unknown, incomplete and not-enabled analyses.
"""

from __future__ import annotations

from html import escape

from flask import Blueprint, Response

from trackgrade.errors import TrackgradeError
from trackgrade.grading.wording import document_caption, document_part, score_caption
from trackgrade.server import documents
from trackgrade.server.routes.common import is_uuid, single_query
from trackgrade.status import COMPLETE

# theme -> (badge background, border, text, muted text). The border keeps the
# badge's edge visible on a page of its own colour (>= 3:1 against white for
# the light theme, against a near-black page for the dark one).
THEMES = {"dark": ("#15181e", "#6b7585", "#f4f5f7", "#aab2bf"),
          "light": ("#ffffff", "#8a93a3", "#14161a", "#555d6b")}
# size -> (width, height, score px, caption px, label px, genre px, gap px)
SIZES = {"sm": (220, 64, 22, 9.5, 11.5, 10.5, 5), "md": (320, 92, 38, 12, 14, 13, 10)}
# a test-mode badge: no grade letter or label, a striped neutral pill
TEST_LETTER = "TEST"
TEST_LABEL = "Canned test result"
TEST_PILL = "#4a525e"
# a genre name longer than this ("Not electronic (nearest: Drum & Bass)") gets up
# to three lines at this share of the genre size, so it fits the small badge
LONG_GENRE_CHARS = 24
LONG_GENRE_SCALE = 0.86
# grade letter -> pill colour; white text on each is >= 4.5:1
GRADE_COLOURS = {"A": "#17753f", "B": "#3b7418", "C": "#856000", "D": "#ad4116",
                 "F": "#b8242d"}


def badge_html(*, score: int, letter: str, label: str, genre: str, theme: str,
               size: str, test: bool = False, caption: str = "hit potential") -> str:
    """The badge page: score /100 and its caption on the left, the grade's
    label and the genre in the middle (each wraps to a second line when it is
    long; a long genre such as "Not electronic (nearest: Drum & Bass)" takes up
    to three smaller lines), the grade letter on the right, so the content spans
    the whole badge. A test-mode badge (`test`) carries no grade: a striped
    TEST pill and "canned test result", so it never passes for a real grade."""
    background, border, text, muted = THEMES[theme]
    width, height, score_px, caption_px, label_px, genre_px, pad = SIZES[size]
    pill = GRADE_COLOURS.get(letter[:1], "#5b6472")
    if test:
        letter, label, pill = TEST_LETTER, TEST_LABEL, TEST_PILL
    s, g, lb, n = escape(str(score)), escape(letter), escape(label), escape(genre)
    title = (f"{TEST_LETTER}: {lb}, not a real grade ({s}/100, {n})" if test
             else f"{escape(caption).capitalize()} {s}/100, grade {g} ({lb}), {n}")
    long_genre = len(genre) > LONG_GENRE_CHARS
    style = (
        "html,body{margin:0;background:transparent}"
        f".badge{{box-sizing:border-box;width:{width}px;height:{height}px;display:flex;"
        f"align-items:center;gap:{pad}px;padding:0 {pad}px;background:{background};"
        f"border:1px solid {border};border-radius:{round(height * 0.14)}px;color:{text};"
        "font-family:system-ui,-apple-system,'Segoe UI',Roboto,'Helvetica Neue',Arial,"
        "'Liberation Sans',sans-serif;overflow:hidden}"
        ".score{flex:none;display:flex;flex-direction:column;justify-content:center}"
        f".n{{font-size:{score_px}px;font-weight:800;line-height:1;letter-spacing:-.02em}}"
        f".of{{font-size:{round(score_px * 0.42)}px;font-weight:600;color:{muted};"
        "margin-left:2px}"
        f".cap{{font-size:{caption_px}px;color:{muted};margin-top:{round(height * 0.06)}px;"
        "white-space:nowrap}"
        f".rule{{flex:none;align-self:stretch;width:1px;margin:{pad}px 0;background:{border}}}"
        ".info{flex:1;min-width:0;display:flex;flex-direction:column;justify-content:center;"
        f"gap:{round(height * 0.06)}px}}"
        f".grade{{flex:none;background:{pill};color:#fff;font-weight:800;"
        f"font-size:{round(score_px * 0.72)}px;line-height:1;min-width:{round(height * 0.56)}px;"
        f"height:{round(height * 0.56)}px;padding:0 4px;box-sizing:border-box;"
        "display:flex;align-items:center;"
        f"justify-content:center;border-radius:{round(height * 0.12)}px;letter-spacing:-.02em}}"
        f".label{{font-size:{label_px}px;line-height:1.2;font-weight:650;overflow:hidden;"
        "display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:2}"
        f".genre{{font-size:{genre_px}px;line-height:1.2;color:{muted};overflow:hidden;"
        "display:-webkit-box;-webkit-box-orient:vertical;-webkit-line-clamp:2}"
        f".genre.long{{font-size:{genre_px * LONG_GENRE_SCALE:.1f}px;line-height:1.12;"
        "-webkit-line-clamp:3}"
        f".grade.test{{font-size:{round(score_px * 0.45)}px;letter-spacing:.04em;"
        "background-image:repeating-linear-gradient(135deg,rgba(255,255,255,.14) 0 4px,"
        "transparent 4px 8px)}")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{title}</title><meta name=\"viewport\" content=\"width=device-width\">"
        f"<style>{style}</style></head><body>"
        f"<div class=\"badge badge-{theme} badge-{size}\" role=\"img\" aria-label=\"{title}\">"
        f"<div class=\"score\"><div><span class=\"n\">{s}</span><span class=\"of\">/100</span>"
        f"</div><div class=\"cap\">{'test mode' if test else escape(caption)}</div></div>"
        "<div class=\"rule\"></div>"
        f"<div class=\"info\"><div class=\"label\">{lb}</div>"
        f"<div class=\"genre{' long' if long_genre else ''}\">{n}</div>"
        f"</div><div class=\"grade{' test' if test else ''}\">{g}</div></div></body></html>\n")


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
        if row is None or row["status"] != COMPLETE or not row.get("embed") or not result:
            raise TrackgradeError("not_found", "no embeddable analysis with this id", param="id")
        html = badge_html(score=int(result["score"]), letter=result["grade"]["letter"],
                          label=result["grade"].get("label") or "",
                          genre=document_caption(result), theme=theme, size=size,
                          test=not row["livemode"],
                          caption=score_caption(document_part(result)))
        return Response(html, 200, content_type="text/html; charset=utf-8", headers={
            "Cache-Control": "public, max-age=60",
            "X-Content-Type-Options": "nosniff",
            "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'",
        })

    return bp
