"""The console's routes (CONTRACT.md section 6), one blueprint at /console.

Pages (GET) need a session, else 303 to /console/signed-out. Actions (POST
forms) need a session and its `csrf` field, else 403 and nothing changes;
each answers 303 to its page with a one-line notice (a fixed message picked
by a code in the query, never text from the request), except those that show
a secret once, which answer 200 with it. Every answer carries the headers of
`SECURITY_HEADERS` and is never cached.
"""

from __future__ import annotations

import functools
from functools import lru_cache
from importlib import resources

from flask import Blueprint, Response, g, redirect, request

from trackgrade.errors import TrackgradeError
from trackgrade.server import admin, documents
from trackgrade.server.console import pages, signin
from trackgrade.server.routes.common import is_uuid
from trackgrade.server.store import StoreError
from trackgrade.server.webhooks import endpoints
from trackgrade.server.webhooks.addresses import redacted

COOKIE = "tg_console"
SIGNED_OUT = "/console/signed-out"
CONSOLE_CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
               "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
# the report keeps its inline styles; still no script of any kind
REPORT_CSP = ("default-src 'none'; script-src 'self'; style-src 'unsafe-inline'; img-src data:; "
              "form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
SECURITY_HEADERS = {"X-Frame-Options": "DENY", "Referrer-Policy": "no-referrer",
                    "X-Content-Type-Options": "nosniff", "Cache-Control": "no-store"}
NOTICES = {
    "key_revoked": "The key is revoked: the API refuses it from now on.",
    "endpoint_removed": "The endpoint is removed; its pending deliveries are cancelled.",
    "event_resent": "The event is queued for delivery again.",
    "embed_on": "The badge is on: paste the snippet below into any page.",
    "embed_off": "The badge is off: its URL answers 404 from now on.",
    "canceled": "The analysis is canceled; its credit, if any, is restored.",
    "not_cancelable": "Only an analysis still waiting for its audio can be canceled.",
}


@lru_cache(maxsize=1)
def environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined

    env = Environment(loader=PackageLoader("trackgrade.server.console", "templates"),
                      autoescape=True, undefined=StrictUndefined, trim_blocks=True,
                      lstrip_blocks=True)
    env.filters["when"] = pages.when
    return env


@lru_cache(maxsize=1)
def report_css() -> bytes:
    """The report's stylesheet, plus one `--tier` colour per score tier from the
    report's own table (the console colours scores as the report does)."""
    from trackgrade.report.context import TIER_COLOUR

    tiers = "".join(f".tier-{name}{{--tier:{colour}}}\n" for name, colour in TIER_COLOUR.items())
    css = resources.files("trackgrade.report").joinpath("templates", "report.css").read_bytes()
    return css + b"\n/* score tiers (trackgrade.report.context.TIER_COLOUR) */\n" + tiers.encode()


def blueprint(ctx) -> Blueprint:
    bp = Blueprint("console", __name__, static_folder="static", static_url_path="/static")
    store = ctx.store

    def secure_cookie() -> bool:
        return request.is_secure or ctx.settings.public_base_url.startswith("https://")

    def render(template: str, status: int = 200, **values) -> Response:
        session = g.get("console")
        values.setdefault("nav", "")
        html = environment().get_template(template).render(
            session=session, csrf=session.csrf if session else "",
            account_id=session.account_id if session else "",
            notice=NOTICES.get(request.args.get("notice", "")), **values)
        return Response(html, status, content_type="text/html; charset=utf-8")

    def see_other(path: str) -> Response:
        return redirect(path, 303)

    def page(view):
        """A GET page: the session, else 303 to the signed-out page."""
        @functools.wraps(view)
        def inner(*args, **kwargs):
            g.console = signin.session_of(store, request.cookies.get(COOKIE), clock=ctx.clock)
            if g.console is None:
                return see_other(SIGNED_OUT)
            return view(g.console.account_id, *args, **kwargs)
        return inner

    def action(view):
        """A POST form: the session and its CSRF value, else 403 (nothing changes)."""
        @functools.wraps(view)
        def inner(*args, **kwargs):
            session = signin.session_of(store, request.cookies.get(COOKIE), clock=ctx.clock)
            if not signin.csrf_ok(session, request.form.get("csrf")):
                g.console = None
                return render("refused.html.j2", 403, reason="csrf")
            g.console = session
            return view(session.account_id, *args, **kwargs)
        return inner

    @bp.after_request
    def _headers(response: Response) -> Response:
        response.headers.setdefault("Content-Security-Policy", CONSOLE_CSP)
        for name, value in SECURITY_HEADERS.items():
            response.headers[name] = value
        return response

    @bp.errorhandler(TrackgradeError)
    def _error(err: TrackgradeError):
        """The API's error as a page: its status and headers (a 503's Retry-After)."""
        response = render("error.html.j2", err.http_status, error=err)
        response.headers.update(err.headers)
        return response

    @bp.errorhandler(StoreError)
    def _store(exc: StoreError):
        return _error(TrackgradeError(
            "service_unavailable", "the service's storage is unavailable; reload in a moment",
            headers={"Retry-After": str(max(1, int(ctx.settings.retry_after)))}))

    # ------------------------------------------------------------ sign-in
    @bp.get("/login")
    def login():
        g.console = None
        if request.method == "HEAD":        # a link checker's look spends nothing
            return render("signed_out.html.j2")
        try:
            session = signin.sign_in(store, request.args.get("token"), clock=ctx.clock)
        except signin.SignInRefused:
            return render("refused.html.j2", 403, reason="link")
        response = see_other("/console")
        response.set_cookie(COOKIE, session.token, max_age=signin.SESSION_TTL_S, path="/console",
                            httponly=True, samesite="Strict", secure=secure_cookie())
        return response

    @bp.get("/signed-out")
    def signed_out():
        g.console = None
        return render("signed_out.html.j2")

    @bp.post("/logout")
    @action
    def logout(account_id: str):
        signin.sign_out(store, request.cookies.get(COOKIE))
        response = see_other(SIGNED_OUT)
        response.delete_cookie(COOKIE, path="/console", httponly=True, samesite="Strict",
                               secure=secure_cookie())
        return response

    @bp.get("/report.css")
    def the_report_css():
        return Response(report_css(), 200, content_type="text/css; charset=utf-8")

    # ------------------------------------------------------------ overview
    @bp.get("/")
    @page
    def overview(account_id: str):
        return render("overview.html.j2", nav="overview", **pages.overview(ctx, account_id))

    # ------------------------------------------------------------ keys
    @bp.get("/keys")
    @page
    def keys(account_id: str):
        return render("keys.html.j2", nav="keys", keys=pages.keys(store, account_id),
                      created=None)

    @bp.post("/keys")
    @action
    def create_key(account_id: str):
        made = admin.create_key(store, mode=request.form.get("mode", ""), account_id=account_id,
                                clock=ctx.clock)
        return render("keys.html.j2", nav="keys", keys=pages.keys(store, account_id),
                      created=made)

    @bp.post("/keys/<key_id>/revoke")
    @action
    def revoke_key(account_id: str, key_id: str):
        pages.owned_key(store, account_id, key_id)
        admin.revoke_key(store, key_id, clock=ctx.clock)
        return see_other("/console/keys?notice=key_revoked")

    # ------------------------------------------------------------ webhooks
    def webhooks_page(account_id: str, status: int = 200, **values) -> Response:
        values = {"created": None, "problem": None, "url": "", **values}
        return render("webhooks.html.j2", status, nav="webhooks",
                      endpoints=pages.webhooks(store, account_id), **values)

    @bp.get("/webhooks")
    @page
    def webhooks(account_id: str):
        return webhooks_page(account_id)

    @bp.post("/webhooks")
    @action
    def add_webhook(account_id: str):
        url = request.form.get("url", "").strip()
        try:
            made = admin.add_webhook(store, url, account_id, clock=ctx.clock)
        except TrackgradeError as err:
            if err.code != "parameter_invalid":
                raise
            return webhooks_page(account_id, 400, problem=err.message, url=redacted(url))
        return webhooks_page(account_id, created={"id": made["id"], "secret": made["secret"]})

    @bp.get("/webhooks/<endpoint_id>")
    @page
    def endpoint(account_id: str, endpoint_id: str):
        return render("endpoint.html.j2", nav="webhooks", rotated=None,
                      **pages.endpoint_log(store, account_id, endpoint_id))

    @bp.post("/webhooks/<endpoint_id>/rotate")
    @action
    def rotate(account_id: str, endpoint_id: str):
        pages.owned_endpoint(store, account_id, endpoint_id)
        rotated = endpoints.rotate_secret(store, endpoint_id, clock=ctx.clock)
        return render("endpoint.html.j2", nav="webhooks", rotated=rotated,
                      **pages.endpoint_log(store, account_id, endpoint_id))

    @bp.post("/webhooks/<endpoint_id>/remove")
    @action
    def remove(account_id: str, endpoint_id: str):
        pages.owned_endpoint(store, account_id, endpoint_id)
        endpoints.remove_endpoint(store, endpoint_id)
        return see_other("/console/webhooks?notice=endpoint_removed")

    @bp.post("/events/<event_id>/resend")
    @action
    def resend(account_id: str, event_id: str):
        pages.owned_event(store, account_id, event_id)
        endpoints.resend_event(store, event_id, clock=ctx.clock)
        back = request.form.get("endpoint", "")
        try:
            pages.owned_endpoint(store, account_id, back)
        except TrackgradeError:
            return see_other("/console/webhooks?notice=event_resent")
        return see_other(f"/console/webhooks/{back}?notice=event_resent")

    # ------------------------------------------------------------ analyses
    @bp.get("/analyses")
    @page
    def analyses(account_id: str):
        mode = request.args.get("mode", "live")
        mode = mode if mode in pages.MODES else "live"
        listing = pages.analyses(store, account_id, mode, after=request.args.get("after"),
                                 before=request.args.get("before"))
        return render("analyses.html.j2", nav="analyses", mode=mode, base=public_base(),
                      snippet=pages.embed_snippet, cursor=listing_cursor(), **listing)

    @bp.get("/analyses/<analysis_id>")
    @page
    def analysis(account_id: str, analysis_id: str):
        row = pages.owned_analysis(store, account_id, analysis_id)
        if row["status"] != "complete":
            return render("analysis.html.j2", nav="analyses", item=pages.analysis_item(row),
                          error=documents.document(row).get("error"))
        from trackgrade.model import analysis_from_dict
        from trackgrade.report import render_report

        html = render_report(analysis_from_dict(documents.document(row)))
        return Response(html, 200, content_type="text/html; charset=utf-8",
                        headers={"Content-Security-Policy": REPORT_CSP})

    def back_to_list(row: dict, notice: str) -> Response:
        """303 to the page of the list the form was on (its cursor, if any, is
        an analysis id: nothing else from the form reaches the URL)."""
        mode = "live" if row.get("livemode") else "test"
        cursor = ""
        for name in ("after", "before"):
            value = request.form.get(name, "")
            if is_uuid(value):
                cursor = f"&{name}={value}"
                break
        return see_other(f"/console/analyses?mode={mode}{cursor}&notice={notice}#a-{row['id']}")

    @bp.post("/analyses/<analysis_id>/embed")
    @action
    def embed(account_id: str, analysis_id: str):
        pages.owned_analysis(store, account_id, analysis_id)
        on = request.form.get("on") == "1"
        row = admin.set_embed(store, analysis_id, on)
        return back_to_list(row, "embed_on" if on else "embed_off")

    @bp.post("/analyses/<analysis_id>/cancel")
    @action
    def cancel(account_id: str, analysis_id: str):
        row = pages.owned_analysis(store, account_id, analysis_id)
        try:
            ctx.lifecycle.cancel(analysis_id)
        except TrackgradeError as err:
            if err.code != "analysis_not_cancelable":
                raise
            return back_to_list(row, "not_cancelable")
        return back_to_list(row, "canceled")

    def listing_cursor() -> dict:
        """The page's own cursor, carried by its forms so an action returns there."""
        for name in ("after", "before"):
            value = request.args.get(name, "")
            if is_uuid(value):
                return {"name": name, "value": value}
        return {}

    def public_base() -> str:
        """The service's address for the badge snippet: public_base_url, else
        this request's own scheme and host."""
        return ctx.settings.public_base_url.rstrip("/") or request.host_url.rstrip("/")

    return bp
