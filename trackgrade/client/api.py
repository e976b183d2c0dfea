"""`Client`: the Python client for a trackgrade instance (CONTRACT.md section 4)."""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any, BinaryIO, Callable, Iterator, Literal, Mapping, Union
from urllib.parse import urlencode, urlsplit

from trackgrade.client.errors import (APIConnectionError, APIError, AuthenticationError,
                                      WaitTimeoutError, error_from_response)
from trackgrade.client.retry import Pacer, RetryPolicy, is_retryable
from trackgrade.client.transport import HTTPTransport, Request, Response, Transport

DEFAULT_BASE_URL = "http://127.0.0.1:8080"
API_PREFIX = "/v1"
ENV_KEY = "TRACKGRADE_API_KEY"
ENV_BASE_URL = "TRACKGRADE_BASE_URL"
TERMINAL = ("complete", "failed")
FileInput = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, BinaryIO]


class APIObject(dict):
    """A JSON object from the API: a dict that also reads as attributes
    (`analysis.status`, `analysis.upload.url`). `response` is the HTTP answer
    it came from (status, headers: `X-Request-Id`, `X-Credits-Remaining`...)."""

    response: Response | None = None

    def __getattr__(self, name: str) -> Any:
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def request_id(self) -> str | None:
        return self.response.header("X-Request-Id") if self.response is not None else None

    @property
    def replayed(self) -> bool:
        """True when the server replayed a stored answer (Idempotent-Replayed)."""
        return self.response is not None and \
            (self.response.header("Idempotent-Replayed") or "").lower() == "true"


def wrap(value: Any) -> Any:
    """JSON values with every object as an APIObject."""
    if isinstance(value, dict):
        return APIObject({k: wrap(v) for k, v in value.items()})
    if isinstance(value, list):
        return [wrap(v) for v in value]
    return value


def new_idempotency_key() -> str:
    return "tg_" + uuid.uuid4().hex


def api_root(base_url: str) -> str:
    """scheme://host[:port][/prefix] without a trailing slash or `/v1`."""
    root = base_url.strip().rstrip("/")
    if root.endswith(API_PREFIX):
        root = root[: -len(API_PREFIX)]
    parts = urlsplit(root)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"base_url must be an http(s) URL such as {DEFAULT_BASE_URL}, "
                         f"given {base_url!r}")
    return root


def multipart_body(field: str, file_name: str, data: bytes) -> tuple[bytes, str]:
    """One file part, in memory: (body, Content-Type)."""
    boundary = "tg" + uuid.uuid4().hex
    safe_name = file_name.replace('"', "%22").replace("\r", " ").replace("\n", " ")
    head = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"{field}\"; "
            f"filename=\"{safe_name}\"\r\nContent-Type: application/octet-stream\r\n\r\n")
    body = b"".join((head.encode("utf-8"), data, f"\r\n--{boundary}--\r\n".encode()))
    return body, f"multipart/form-data; boundary={boundary}"


def read_input(path_or_bytes: FileInput, file_name: str | None) -> tuple[bytes, str]:
    """(bytes, file name) of what `create` was given."""
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        if not file_name:
            raise ValueError("file_name is required when create() is given bytes")
        return bytes(path_or_bytes), file_name
    if hasattr(path_or_bytes, "read"):
        data = path_or_bytes.read()
        name = file_name or Path(str(getattr(path_or_bytes, "name", "") or "")).name
        if not name:
            raise ValueError("file_name is required when create() is given a stream "
                             "without a name")
        return bytes(data), name
    path = Path(os.fspath(path_or_bytes))
    return path.read_bytes(), file_name or path.name


class Client:
    """A trackgrade instance, from Python.

    >>> client = Client()                       # TRACKGRADE_API_KEY, TRACKGRADE_BASE_URL
    >>> accepted = client.analyses.create("mix.wav", mastering_status="master")
    >>> analysis = client.analyses.wait(accepted.id)
    >>> analysis.score, analysis.grade.letter

    `timeout` is per socket operation in seconds; `max_retries` how often a
    retryable failure is retried (see `trackgrade.client.retry`). Keyword
    extras: `transport` (the seam: `HTTPTransport()` by default,
    `WSGITransport(app)` in-process), `max_retry_after` (the cap on a
    server's Retry-After), `requests_per_minute` (pace authenticated requests
    client-side, e.g. from `account().limits.rate_per_minute`), `sleep` (for
    tests), `deadline` (a `time.monotonic()` instant no call, retry wait or
    `wait` goes past: socket timeouts shrink to the time left, and a retry
    that would start after it is not made: the last error is raised, saying
    so) and `on_wait(error, seconds)` (told before each retry wait, e.g. to
    say on stderr what the client waits for).
    """

    def __init__(self, api_key: str | None = None, base_url: str | None = None, *,
                 timeout: float = 30, max_retries: int = 3,
                 transport: Transport | None = None, max_retry_after: float = 60.0,
                 requests_per_minute: int | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 environ: Mapping[str, str] | None = None, deadline: float | None = None,
                 on_wait: Callable[[APIError, float], None] | None = None) -> None:
        env = os.environ if environ is None else environ
        self.api_key = api_key or env.get(ENV_KEY) or None
        self.base_url = api_root(base_url or env.get(ENV_BASE_URL) or DEFAULT_BASE_URL)
        self.timeout = float(timeout)
        self.retry = RetryPolicy(max_retries=max(0, int(max_retries)),
                                 max_retry_after=float(max_retry_after))
        self.transport: Transport = transport or HTTPTransport()
        self.sleep = sleep
        self.pacer = Pacer(requests_per_minute, sleep=sleep) if requests_per_minute else None
        self.deadline = deadline
        self.on_wait = on_wait
        self.analyses = Analyses(self)

    # --- plumbing ----------------------------------------------------------------------

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self.transport.close()

    def url(self, path: str, query: Mapping[str, Any] | None = None) -> str:
        url = self.base_url + API_PREFIX + path
        params = {k: v for k, v in (query or {}).items() if v is not None}
        return url + ("?" + urlencode(params) if params else "")

    def headers(self, bearer: str | None) -> dict[str, str]:
        from trackgrade.client import __version__

        out = {"Accept": "application/json", "User-Agent": f"trackgrade-python/{__version__}"}
        if bearer:
            out["Authorization"] = f"Bearer {bearer}"
        return out

    def time_left(self) -> float | None:
        """Seconds until `deadline` (None: no deadline)."""
        return None if self.deadline is None else self.deadline - time.monotonic()

    def send(self, method: str, url: str, *, headers: Mapping[str, str] | None = None,
             body: bytes | None = None, authenticated: bool = True,
             on_retry: Callable[[APIError], None] | None = None) -> Response:
        """One logical request with retries; returns a 2xx/3xx answer or raises
        the mapped `APIError`. The same headers (Idempotency-Key included) go
        with every attempt."""
        if authenticated and not self.api_key:
            raise AuthenticationError(f"no API key: pass api_key= or set {ENV_KEY}",
                                      code="invalid_api_key")
        retry = 0
        while True:
            if authenticated and self.pacer is not None:
                self.pacer.wait()
            left = self.time_left()
            timeout = self.timeout if left is None else max(0.05, min(self.timeout, left))
            request = Request(method, url, dict(headers or {}), body, timeout)
            try:
                response = self.transport.handle(request)
                if response.status < 400:
                    return response
                error = error_from_response(response.status, response.headers, response.body)
            except APIConnectionError as exc:
                error = exc
            if retry >= self.retry.max_retries or not is_retryable(error):
                raise error
            delay = self.retry.delay(retry, error.retry_after)
            left = self.time_left()
            if left is not None and delay >= left:
                error.message += (f" (not retried: the next try would start in {delay:.0f} s, "
                                  f"after the {max(0.0, left):.0f} s left of the timeout)")
                raise error
            if on_retry is not None:
                on_retry(error)
            if self.on_wait is not None:
                self.on_wait(error, delay)
            self.sleep(delay)
            retry += 1

    def call(self, method: str, path: str, *, query: Mapping[str, Any] | None = None,
             json_body: Any = None, idempotency_key: str | None = None) -> Any:
        """An authenticated JSON call: the decoded answer (objects as APIObject)."""
        headers = self.headers(self.api_key)
        body = None
        if json_body is not None:
            body = json.dumps(json_body).encode("utf-8")
            headers["Content-Type"] = "application/json"
        if idempotency_key is not None:
            headers["Idempotency-Key"] = idempotency_key
        response = self.send(method, self.url(path, query), headers=headers, body=body)
        return decode(response)

    # --- resources ---------------------------------------------------------------------

    def genres(self) -> list[APIObject]:
        """The genre profiles (GET /genres): 11 families, then labels with `family`."""
        return self.call("GET", "/genres")["data"]

    def account(self) -> APIObject:
        """The key's account, limits and usage (GET /account)."""
        return self.call("GET", "/account")


def decode(response: Response) -> Any:
    try:
        value = wrap(json.loads(response.body.decode("utf-8")))
    except (UnicodeDecodeError, ValueError):
        raise APIError(f"HTTP {response.status} with a body that is not JSON",
                       status=response.status, request_id=response.header("X-Request-Id"),
                       headers=response.headers) from None
    if isinstance(value, APIObject):
        value.response = response
    return value


class Analyses:
    """`client.analyses`: create, get, status, cancel, list, wait."""

    def __init__(self, client: Client) -> None:
        self._client = client

    def create(self, path_or_bytes: FileInput, file_name: str | None = None,
               mastering_status: str | None = None, external_id: str | None = None,
               genre: str | None = None, idempotency_key: str | None = None,
               codec_preview: bool = False) -> APIObject:
        """Submit and upload a track; returns the accepted analysis (`id`,
        `status` "processing", `credits_remaining` for credit-billed keys).

        Both steps retry on their own; the submission keeps one
        `Idempotency-Key` (generated unless given) across its retries, so a
        lost answer never spends a second credit. With a key that was already
        used for the same body within 24 h the server replays the first
        answer, and the upload is skipped when that analysis already has
        its bytes.

        When the bytes cannot be delivered (the upload step fails for good),
        the analysis is canceled (DELETE) so that it holds neither an
        in-flight slot nor a credit until its token expires; the raised error
        says so and carries its id as `canceled_analysis_id`."""
        client = self._client
        data, name = read_input(path_or_bytes, file_name)
        body: dict[str, Any] = {"file_name": name}
        for field, value in (("mastering_status", mastering_status),
                             ("external_id", external_id), ("genre", genre)):
            if value is not None:
                body[field] = value
        if codec_preview:
            body["codec_preview"] = True
        accepted = client.call("POST", "/analyses", json_body=body,
                               idempotency_key=idempotency_key or new_idempotency_key())
        replayed = accepted.replayed
        attempts: list[APIError] = []
        target = accepted["upload"]
        form, content_type = multipart_body(target.get("field", "file"), name, data)
        headers = client.headers(target["token"])
        headers["Content-Type"] = content_type
        try:
            client.send(target.get("method", "POST"), target["url"], headers=headers, body=form,
                        authenticated=False, on_retry=attempts.append)
        except AuthenticationError as exc:
            # A used token after a replay or a retried upload: the bytes went in before.
            if exc.code != "upload_token_invalid" or not (replayed or attempts):
                self._cancel_undelivered(accepted["id"], exc)
                raise
        except APIError as exc:
            self._cancel_undelivered(accepted["id"], exc)
            raise
        return accepted

    def _cancel_undelivered(self, analysis_id: str, error: APIError) -> None:
        """Cancel an analysis whose bytes could not be delivered and say so on
        `error`; one the server already failed or accepted is left as it is."""
        try:
            self.cancel(analysis_id)
        except APIError:
            return
        error.canceled_analysis_id = analysis_id
        error.message += (f"; analysis {analysis_id} was canceled, so it holds no in-flight slot "
                          f"and any credit it took is restored")

    def get(self, analysis_id: str) -> APIObject:
        """The Analysis document (score fields once complete)."""
        return self._client.call("GET", f"/analyses/{_id(analysis_id)}")

    def status(self, analysis_id: str) -> APIObject:
        """The lightweight state: `status`, `diagnosis_status`."""
        return self._client.call("GET", f"/analyses/{_id(analysis_id)}/status")

    def cancel(self, analysis_id: str) -> APIObject:
        """Cancel an analysis that still awaits its upload: the returned
        Analysis is `failed` with error code `analysis_canceled` and its credit
        is restored. Any other analysis raises the 409 `analysis_not_cancelable`."""
        return self._client.call("DELETE", f"/analyses/{_id(analysis_id)}")

    def list(self, *, page_size: int = 100, starting_after: str | None = None,
             limit: int | None = None) -> Iterator[APIObject]:
        """Every analysis of the key, newest first, fetched page by page
        (`page_size` per request, 1-100) as the iterator is consumed; `limit`
        stops after that many."""
        cursor = starting_after
        yielded = 0
        while True:
            page = self._client.call("GET", "/analyses", query={
                "limit": page_size, "starting_after": cursor})
            for item in page["data"]:
                if limit is not None and yielded >= limit:
                    return
                yield item
                yielded += 1
            cursor = page.get("next_cursor")
            if not page.get("has_more") or not cursor:
                return

    def wait(self, analysis_id: str, *, until: Literal["complete", "ready"] = "complete",
             timeout: float = 600.0, poll_interval: float = 0.5,
             max_poll_interval: float = 5.0, initial_delay: float = 0.0) -> APIObject:
        """Poll `/status` (backoff from `poll_interval` up to `max_poll_interval`;
        the first poll after `initial_delay` seconds, e.g. the expected analysis
        time) until the analysis is complete (`until="complete"`: scores ready)
        or its narrative diagnosis is ready too (`until="ready"`), or it failed;
        then return the full document (check `status`: "failed" carries `error`).

        Outages are ridden out: connection errors, 5xx and 429 keep the wait
        polling until `timeout` (seconds), then `WaitTimeoutError`."""
        if until not in ("complete", "ready"):
            raise ValueError(f"until must be 'complete' or 'ready', given {until!r}")
        client = self._client
        deadline = time.monotonic() + timeout
        if client.deadline is not None and client.deadline < deadline:
            deadline, timeout = client.deadline, max(0.0, client.deadline - time.monotonic())
        if initial_delay > 0:
            client.sleep(min(initial_delay, timeout))
        interval = poll_interval
        last: APIObject | None = None
        while True:
            try:
                last = self.status(analysis_id)
                if reached(last, until):
                    return self.get(analysis_id)
            except APIError as exc:
                if not is_retryable(exc):
                    raise
                failed = exc
            else:
                failed = None
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                state = f"still {last['status']}" if last else "unreachable"
                raise WaitTimeoutError(f"analysis {analysis_id} not {until} after {timeout:g} s "
                                       f"({state})", last=last)
            if failed is not None and client.on_wait is not None:
                client.on_wait(failed, min(interval, remaining))
            client.sleep(min(interval, remaining))
            interval = min(max_poll_interval, interval * 1.5)


def reached(status: Mapping[str, Any], until: str) -> bool:
    if status["status"] == "failed":
        return True
    if until == "complete":
        return status["status"] == "complete"
    return status["status"] == "complete" and status.get("diagnosis_status") == "ready"


def _id(analysis_id: str) -> str:
    text = str(analysis_id).strip()
    if not text or "/" in text or "?" in text or "#" in text:
        raise ValueError(f"not an analysis id: {analysis_id!r}")
    return text
