"""The instance's own error reference, and the `doc_url` of every error.

Every instance serves its reference (no key): `GET /v1/errors`, one HTML page
with every code of `trackgrade.errors.ERROR_CODES` (its status, type, what it
means and what to do, from `ERROR_HELP`), and `GET /v1/errors/{code}`, the
page of one code. A `doc_url` is `<reference>/<code>`, where the reference is
the `docs_url` setting when set (an operator's own copy), else this
instance's `/v1/errors`: absolute, from `public_base_url` when set, else from
the request's Host when it is one the server answers to (`hosts`), else the
first of the allowed hosts (errors outside a request: a failed analysis, a
refused connection).
"""

from __future__ import annotations

from html import escape

from trackgrade.errors import ERROR_CODES, ERROR_HELP

PATH = "/v1/errors"


def doc_url(code: str, reference: str | None) -> str | None:
    return f"{reference}/{code}" if reference else None


def root(settings, bound: tuple[str, int] | None, host: str | None = None,
         scheme: str = "http") -> str | None:
    """The absolute URL of the reference (see the module docstring); `host`
    is the request's Host header, when there is a request."""
    from trackgrade.server.hosts import allowed_hosts, host_allowed

    if settings.docs_url:
        return settings.docs_url.rstrip("/")
    base = settings.public_base_url.rstrip("/")
    if not base:
        allowed = allowed_hosts(settings, bound)
        if host and host_allowed(host, allowed):
            base = f"{scheme}://{host}"
        else:
            fixed = [h for h in allowed if h != "*"]
            base = f"http://{fixed[0]}" if fixed else f"http://{settings.host}:{settings.port}"
    return base + PATH


def request_root(settings, bound) -> str | None:
    """`root` for the current Flask request (outside one: without a Host)."""
    from flask import has_request_context, request

    if has_request_context():
        return root(settings, bound, request.host, request.scheme)
    return root(settings, bound)


STYLE = ("body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:2rem auto;padding:0 1rem;"
         "color:#1a1a1a}code{background:#f2f2f2;padding:0 .25em}section{border-top:1px solid #ddd;"
         "padding:.5rem 0}h2{font-size:1.1rem;margin:.5rem 0}dt{font-weight:600}dd{margin:0 0 .5rem}")


def _code_text(text: str) -> str:
    """Escaped text with `backticks` as <code>."""
    parts = escape(text).split("`")
    return "".join(f"<code>{p}</code>" if i % 2 else p for i, p in enumerate(parts))


def _entry(code: str) -> str:
    status, kind = ERROR_CODES[code]
    means, todo = ERROR_HELP[code]
    return (f'<section id="{code}"><h2><a href="{PATH}/{code}"><code>{code}</code></a></h2>'
            f"<p>HTTP {status} · <code>{kind}</code></p><dl>"
            f"<dt>What it means</dt><dd>{_code_text(means)}</dd>"
            f"<dt>What to do</dt><dd>{_code_text(todo)}</dd></dl></section>")


def page(code: str | None = None) -> str:
    """The whole reference (code None) or the page of one code."""
    title = f"{code}: trackgrade error" if code else "trackgrade error reference"
    intro = (f'<p><a href="{PATH}">All error codes</a></p>' if code else
             "<p>Every error of this API is a JSON envelope <code>{\"error\": {\"type\", \"code\", "
             "\"message\", \"param\", \"doc_url\", \"request_id\"}}</code>; its "
             "<code>doc_url</code> opens the entry of its code here.</p>")
    body = _entry(code) if code else "".join(_entry(c) for c in ERROR_CODES)
    return (f'<!doctype html><html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width,initial-scale=1">'
            f"<title>{escape(title)}</title><style>{STYLE}</style></head>"
            f"<body><h1>{escape(title)}</h1>{intro}{body}</body></html>")


def blueprint(ctx):
    from flask import Blueprint, Response

    from trackgrade.errors import TrackgradeError

    bp = Blueprint("errors", __name__)
    headers = {"Cache-Control": "public, max-age=300",
               "Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'"}

    @bp.get("/errors")
    def index():
        return Response(page(), 200, headers, content_type="text/html; charset=utf-8")

    @bp.get("/errors/<code>")
    def entry(code: str):
        if code not in ERROR_CODES:
            raise TrackgradeError("not_found", "no error code "
                                  f"{code.encode('unicode_escape').decode('ascii')[:60]!r}; "
                                  f"see {PATH}", param="code")
        return Response(page(code), 200, headers, content_type="text/html; charset=utf-8")

    return bp
