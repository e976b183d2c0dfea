"""The Python client for a trackgrade instance (CONTRACT.md section 4).

    from trackgrade.client import Client

    client = Client()        # api_key / base_url default to TRACKGRADE_API_KEY / TRACKGRADE_BASE_URL
    accepted = client.analyses.create("mix.wav", mastering_status="master")
    analysis = client.analyses.wait(accepted.id)          # polls /status with backoff
    print(analysis.score, analysis.grade.letter)
    for doc in client.analyses.list():                    # pages through everything
        ...
    client.account().limits.in_flight

Errors raise `APIError` subclasses (the tree is in `trackgrade.client.errors`);
retries (connection errors, 409 in progress, 429, 5xx, honouring Retry-After)
are in `trackgrade.client.retry`; the transport seam in
`trackgrade.client.transport`. Stdlib only.
"""

from __future__ import annotations

import importlib

# Names resolve on first use (PEP 562), so `trackgrade.client.errors` alone,
# which the command line's error boundary needs, loads without the HTTP
# machinery (http.client, ssl) that only remote commands use.
_HOMES = {
    "api": ("APIObject", "Analyses", "Client"),
    "errors": ("STATUS_ERRORS", "APIConnectionError", "APIError", "AuthenticationError",
               "ConflictError", "InsufficientCreditsError", "InvalidRequestError",
               "NotFoundError", "PermissionDeniedError", "RateLimitError", "ServerError",
               "ServiceUnavailableError", "WaitTimeoutError", "error_class"),
    "retry": ("Pacer", "RetryPolicy", "is_retryable"),
    "transport": ("HTTPTransport", "Request", "Response", "Transport", "WSGITransport"),
}
_MODULE_OF = {name: module for module, names in _HOMES.items() for name in names}


def __getattr__(name: str):
    module = _MODULE_OF.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(list(globals()) + list(_MODULE_OF))


__version__ = "0.1.0"

__all__ = [
    "Client", "Analyses", "APIObject",
    "APIError", "APIConnectionError", "WaitTimeoutError", "InvalidRequestError",
    "NotFoundError", "ConflictError", "AuthenticationError", "InsufficientCreditsError",
    "PermissionDeniedError", "RateLimitError", "ServerError", "ServiceUnavailableError",
    "STATUS_ERRORS", "error_class",
    "RetryPolicy", "Pacer", "is_retryable",
    "Transport", "HTTPTransport", "WSGITransport", "Request", "Response",
]
