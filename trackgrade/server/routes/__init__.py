"""The v1 routes, one module per resource; `register(app, ctx)` mounts them all."""

from __future__ import annotations

PREFIX = "/v1"


def register(app, ctx) -> None:
    from trackgrade.server import reference
    from trackgrade.server.routes import account, analyses, embed, genres, openapi, uploads

    for module in (analyses, uploads, genres, embed, openapi, account, reference):
        app.register_blueprint(module.blueprint(ctx), url_prefix=PREFIX)
    from trackgrade.server import console     # not part of v1: its own prefix, /console

    console.register(app, ctx)
