"""GET /openapi.json: the OpenAPI 3.1 document of this server (no key)."""

from __future__ import annotations

from flask import Blueprint

from trackgrade.server import openapi
from trackgrade.server.envelope import json_response


def blueprint(ctx) -> Blueprint:
    bp = Blueprint("openapi", __name__)
    cached = openapi.document()

    @bp.get("/openapi.json")
    def document():
        return json_response(cached, 200, {"Cache-Control": "public, max-age=300"})

    return bp
