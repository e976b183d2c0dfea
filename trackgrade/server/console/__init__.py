"""The developer console (CONTRACT.md section 6): server-rendered pages at
`/console` where an account's developers manage their API keys and webhook
endpoints and look at their analyses, signed in by a one-time link from
`trackgrade admin console-link`.

    signin.py     one-time links, sessions and their CSRF values (store rows)
    views.py      the blueprint: pages (GET) and actions (POST forms)
    pages.py      what each page shows, from the store (no Flask)
    templates/    Jinja2 pages (autoescaped), static/ the CSS and the one
                  script (copy buttons); the report's stylesheet is served
                  beside them, so the console looks like the report

The work is done by the same library functions as `trackgrade admin` and the
v1 routes (trackgrade.server.admin, accounts, webhooks.endpoints, the
lifecycle's cancel), so every rule holds in one place. `trackgrade serve
--no-console` (setting `console`) leaves the blueprint out.
"""

from __future__ import annotations

PREFIX = "/console"


def register(app, ctx) -> None:
    """Mount the console on `app` unless the settings turn it off."""
    if not ctx.settings.console:
        return
    from trackgrade.server.console.views import blueprint

    app.register_blueprint(blueprint(ctx), url_prefix=PREFIX)
