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

from trackgrade.client.api import APIObject, Analyses, Client
from trackgrade.client.errors import (STATUS_ERRORS, APIConnectionError, APIError,
                                      AuthenticationError, ConflictError,
                                      InsufficientCreditsError, InvalidRequestError,
                                      NotFoundError, PermissionDeniedError, RateLimitError,
                                      ServerError, ServiceUnavailableError, WaitTimeoutError,
                                      error_class)
from trackgrade.client.retry import Pacer, RetryPolicy, is_retryable
from trackgrade.client.transport import (HTTPTransport, Request, Response, Transport,
                                         WSGITransport)

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
