"""GET /genres (spec 4.5)."""

from __future__ import annotations

from flask import Blueprint

from trackgrade.server.envelope import json_response
from trackgrade.server.routes.common import authenticated, reject_unknown_query


def blueprint(ctx) -> Blueprint:
    bp = Blueprint("genres", __name__)
    from trackgrade.grading.genres import genre_list

    cached = {"object": "list", "data": genre_list()}

    @bp.get("/genres")
    @authenticated(ctx)
    def list_genres(caller):
        reject_unknown_query(())
        return json_response(cached, 200)

    return bp
