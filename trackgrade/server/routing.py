"""The rules that follow from a request's route alone, in one home: the app's
handlers (`app.py`, `envelope.py`) and the connection layer's admission
(`connections/admission.py`, which applies them from the request head on
waitress's event loop, before a body byte is read) both read them here.

- `match(url_map, method, path)`: the endpoint and its arguments, or the
  404 `route_not_found` / 405 `method_not_allowed` (with `Allow`) to answer;
- `EXEMPT_FROM_MAINTENANCE`: the endpoints served in maintenance too (a new
  route that must stay up during maintenance adds its endpoint here);
- `maintenance_error(retry_after)`: the 503 every other route answers then.
"""

from __future__ import annotations

from trackgrade.errors import TrackgradeError

# endpoints (blueprint.view) answered in maintenance too
EXEMPT_FROM_MAINTENANCE = frozenset({"openapi.document", "errors.index", "errors.entry"})
ROUTING_HOST = "trackgrade"     # url_map.bind's server name: routes are not host-bound


def route_not_found(path: str) -> TrackgradeError:
    return TrackgradeError("route_not_found", f"no route {path}; see /v1/openapi.json")


def method_not_allowed(method: str, allowed) -> TrackgradeError:
    names = ", ".join(sorted(allowed or ()))
    return TrackgradeError("method_not_allowed",
                           f"{method} is not allowed here; allowed: {names}",
                           headers={"Allow": names})


def maintenance_error(retry_after: int) -> TrackgradeError:
    return TrackgradeError("service_unavailable", "the service is down for maintenance; "
                           "retry later", headers={"Retry-After": str(retry_after)})


def in_maintenance_scope(endpoint: str | None) -> bool:
    """Whether maintenance closes this endpoint (None: no route, 404 stands)."""
    return endpoint is not None and endpoint not in EXEMPT_FROM_MAINTENANCE


def match(url_map, method: str, path: str) -> tuple[str | None, dict]:
    """(endpoint, arguments) of `method path`; raises the 404/405 the app
    answers. A redirect (e.g. a trailing slash) matches nothing yet: (None, {})."""
    from werkzeug.exceptions import MethodNotAllowed, NotFound
    from werkzeug.routing import RequestRedirect

    try:
        return url_map.bind(ROUTING_HOST).match(path, method=method)
    except NotFound:
        raise route_not_found(path) from None
    except MethodNotAllowed as exc:
        raise method_not_allowed(method, exc.valid_methods) from None
    except RequestRedirect:
        return None, {}
