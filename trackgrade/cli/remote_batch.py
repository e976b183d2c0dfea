"""`trackgrade batch PATH… --remote`: grade through an instance instead of here.

Rows, the results file, the progress bar and the summary are batch's own
(`cli/batch.py`); this module only supplies the runner that turns each file
into (row, Analysis document), with the same signature as `run_in_pool`.

- Pacing: `GET /account` gives the key's limits; at most `in_flight`
  files are in flight at once (`--jobs` can lower it) and requests are
  spaced to stay within `rate_per_minute`. A 429 or 503 that outlasts the
  client's own retries backs the file off and tries again (up to
  `GIVE_UP_S`); `daily_quota_exceeded` and other errors become the file's row.
- No credit spent twice: each file's Idempotency-Key is derived from its
  bytes' SHA-256, the mastering status and the genre, so a re-run within the
  server's idempotency window (24 h) replays the first submission instead
  of paying again, and skips the upload when the bytes are already there.
  The same bytes under another name get keys salted with the name. A replay
  that must not be final -- a 402 from a run that ran out of credits (the
  account may have been topped up), or a submission whose upload never came
  -- moves on to the next of `MAX_ROUNDS` derived keys, so every re-run still
  lands on the same key sequence and pays at most once per file.
"""

from __future__ import annotations

import hashlib
import random
import threading
import time
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Callable, Optional

from trackgrade.client import APIError, Client, ConflictError, InsufficientCreditsError
from trackgrade.client.errors import APIConnectionError, RateLimitError, ServerError, header
from trackgrade.client.retry import NOT_RETRIED_429
from trackgrade.status import COMPLETE, FAILED

GIVE_UP_S = 900.0            # a file waiting for room longer than this becomes a failed row
WAIT_TIMEOUT_S = 1800.0      # a file whose analysis takes longer than this becomes a failed row
KEY_PREFIX = "tgbatch_"
MAX_ROUNDS = 5               # fresh keys after replayed 402s / never-uploaded submissions


def idempotency_key(data: bytes, mastering_status: str, genre: str | None,
                    file_name: str | None = None, round_: int = 0) -> str:
    """The submission's Idempotency-Key: a pure function of the file's content
    hash, the mastering status and the genre (salted with the name when the
    same bytes come under two names, and with the round when a replayed
    answer must not be the last word: see `submit`)."""
    content = hashlib.sha256(data).hexdigest()
    parts = [content, mastering_status, genre or ""] + ([file_name] if file_name else [])
    if round_:
        parts.append(f"round {round_}")
    return KEY_PREFIX + hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:48]


class Stopped(Exception):
    """The batch was interrupted: worker threads unwind at their next wait."""


class StopSwitch:
    """A sleep that ends early (raising `Stopped`) once the batch is stopped."""

    def __init__(self) -> None:
        self.event = threading.Event()

    def sleep(self, seconds: float) -> None:
        if self.event.wait(max(0.0, seconds)):
            raise Stopped()

    def stop(self) -> None:
        self.event.set()


def backs_off(error: APIError) -> bool:
    """Errors worth waiting out at the file level (after the client's own retries)."""
    if isinstance(error, RateLimitError):
        return error.code not in NOT_RETRIED_429
    return isinstance(error, (ServerError, APIConnectionError))


def waiting_line(name: str, seconds: float, error: APIError) -> str:
    """What a file waits for, in words: the key's limits (429) or the instance (503)."""
    why = ("the key's rate limit" if error.code == "rate_limited" else
           "a free in-flight slot of the key" if error.code == "too_many_in_flight" else
           "the instance to have room" if isinstance(error, ServerError) else
           "the instance to answer" if isinstance(error, APIConnectionError) else
           f"the instance ({error.code})")
    return f"{name}: waiting {seconds:.0f} s for {why} ({error.code or 'no answer'})"


_FILE = threading.local()      # the file this worker thread is grading, and its waits


def retry_listener(notify: Callable[[str], None] | None) -> Callable[[APIError, float], None]:
    """The client's `on_wait`: each wait of its own retries (429, 503, no answer)
    said for the file this thread grades, and counted as waiting, not grading."""
    def hear(error: APIError, seconds: float) -> None:
        name, waited = getattr(_FILE, "name", None), getattr(_FILE, "waited", None)
        if notify is not None and name:
            notify(waiting_line(name, seconds, error))
        if waited is not None:
            waited[0] += seconds
    return hear


def submit(client: Client, data: bytes, name: str, mastering_status: str, genre: str | None,
           sleep: Callable[[float], None], round_: int = 0,
           notify: Callable[[str], None] | None = None, waited: list | None = None):
    """Create (submit + upload) with the derived key, waiting out 429/503 (each
    wait said through `notify` and added to `waited[0]`).
    Returns (accepted analysis, round). A replayed 402 (the first run ran out
    of credits; the account may have been topped up since) moves on to the
    next round's key, deterministically, so a re-run of a re-run still
    replays instead of paying twice."""
    salted = False
    deadline = time.monotonic() + GIVE_UP_S
    backoff = 1.0
    while True:
        key = idempotency_key(data, mastering_status, genre, name if salted else None, round_)
        try:
            return client.analyses.create(data, file_name=name, mastering_status=mastering_status,
                                          genre=genre, idempotency_key=key), round_
        except ConflictError as exc:
            if exc.code != "idempotency_key_reused" or salted:
                raise
            salted = True    # the same bytes were submitted under another name: own keys
        except InsufficientCreditsError as exc:
            if not replayed(exc) or round_ >= MAX_ROUNDS:
                raise
            round_ += 1
        except APIError as exc:
            if not backs_off(exc) or time.monotonic() > deadline:
                raise
            wait_s = min(60.0, exc.retry_after if exc.retry_after is not None else backoff)
            wait_s *= 1 + 0.2 * random.random()
            if notify is not None:
                notify(waiting_line(name, wait_s, exc))
            began = time.monotonic()
            sleep(wait_s)
            if waited is not None:
                waited[0] += time.monotonic() - began
            backoff = min(30.0, backoff * 2)


class PollPace:
    """When to poll a file's status: the first poll shortly before the
    analysis is expected to be done (an average of the batch's own
    upload-to-complete times), then every 0.1-0.5 s. Each poll is a request
    against the key's per-minute budget, and each second a finished analysis
    goes unnoticed is a second its in-flight slot (and a server worker) idles."""

    def __init__(self, weight: float = 0.3) -> None:
        self.expected: float | None = None
        self.weight = weight
        self._lock = threading.Lock()

    def learn(self, seconds: float) -> None:
        with self._lock:
            self.expected = seconds if self.expected is None else \
                (1 - self.weight) * self.expected + self.weight * seconds

    def polling(self, replayed: bool) -> dict:
        """Keyword arguments for `analyses.wait`."""
        with self._lock:
            expected = self.expected
        if replayed or expected is None:
            return {"poll_interval": 0.2, "max_poll_interval": 1.0}
        return {"initial_delay": 0.8 * expected, "poll_interval": 0.1, "max_poll_interval": 0.5}


def replayed(error: APIError) -> bool:
    return (header(error.headers, "Idempotent-Replayed") or "").lower() == "true"


def grade_remote(client: Client, path: str, mastering_status: str, genre: str | None,
                 sleep: Callable[[float], None],
                 pace: "PollPace | None" = None,
                 notify: Callable[[str], None] | None = None) -> tuple[dict, Optional[dict]]:
    """One file through the instance: (row, Analysis document or None). Never
    raises for a bad file or a refused request: its error becomes the row. The
    row's `seconds` leave out the waits for the key's limits (said through
    `notify`), so the summary's slowest file is the slowest to grade."""
    from trackgrade.cli.rows import failed_row, row_for
    from trackgrade.model_read import analysis_from_dict

    pace = pace or PollPace()
    start = time.perf_counter()
    waited = [0.0]
    _FILE.name, _FILE.waited = Path(path).name, waited
    try:
        data = Path(path).read_bytes()
        round_ = 0
        while True:
            accepted, round_ = submit(client, data, Path(path).name, mastering_status, genre,
                                      sleep, round_, notify, waited)
            uploaded = time.perf_counter()
            doc = client.analyses.wait(accepted["id"], timeout=WAIT_TIMEOUT_S,
                                       **pace.polling(accepted.replayed))
            if doc["status"] == COMPLETE and not accepted.replayed:
                pace.learn(time.perf_counter() - uploaded)
            # a replay of a submission whose bytes never came (the first run died
            # before its upload and the token expired): submit afresh, next round
            if not (accepted.replayed and doc["status"] == FAILED and round_ < MAX_ROUNDS
                    and (doc.get("error") or {}).get("code") == "upload_incomplete"):
                break
            round_ += 1
    except OSError as exc:
        return failed_row(path, "parameter_invalid",
                          f"cannot read '{path}': {exc.strerror or exc}",
                          time.perf_counter() - start), None
    except APIError as exc:
        message = exc.message + (f" (request {exc.request_id})" if exc.request_id else "")
        return failed_row(path, exc.code or "api_error", message,
                          time.perf_counter() - start), None
    seconds = time.perf_counter() - start - waited[0]
    if doc["status"] == FAILED:
        error = doc.get("error") or {}
        return failed_row(path, error.get("code") or "engine_error",
                          f"{error.get('message', 'failed')} (analysis {doc['id']})",
                          seconds), None
    try:
        analysis = analysis_from_dict(doc)
    except (KeyError, TypeError, ValueError) as exc:
        return failed_row(path, "api_error", f"unreadable analysis {doc['id']}: {exc}",
                          seconds), None
    return row_for(path, analysis, seconds), analysis.to_dict()


def remote_runner(base_url: str | None, key: str | None, *,
                  jobs: int | None = None,
                  notify: Callable[[str], None] | None = None) -> Callable:
    """A runner for batch: `(files, mastering_status, workers, on_result, genre)`.
    Reads the key's limits first (a bad key or URL fails the batch at once,
    before any file). `notify` hears each wait for the key's limits."""
    from trackgrade.cli.remote import make_client

    switch = StopSwitch()
    probe = make_client(base_url, key)
    limits = probe.account()["limits"]
    probe.close()
    client = make_client(base_url, key, requests_per_minute=int(limits["rate_per_minute"]),
                         max_retries=5, sleep=switch.sleep, on_wait=retry_listener(notify))
    slots = max(1, min(int(limits["in_flight"]), jobs or int(limits["in_flight"])))

    def run(files: list[str], mastering_status: str, _workers: int,
            on_result: Callable[[dict, Optional[dict]], None], genre: str | None = None,
            _references: tuple = (), _codec_preview: bool = False) -> None:
        pool = ThreadPoolExecutor(max_workers=min(slots, len(files)),
                                  thread_name_prefix="trackgrade-remote")
        pace = PollPace()
        futures = {pool.submit(grade_remote, client, path, mastering_status, genre,
                               switch.sleep, pace, notify): path for path in files}
        try:
            waiting = set(futures)
            while waiting:
                done, waiting = wait(waiting, return_when=FIRST_COMPLETED)
                for future in done:
                    try:
                        row, document = future.result()
                    except Stopped:
                        continue
                    on_result(row, document)
        except BaseException:
            switch.stop()                       # sleeping workers unwind at once
            pool.shutdown(wait=False, cancel_futures=True)
            client.close()                      # and those inside a request lose its socket
            raise
        pool.shutdown(wait=True)
        client.close()

    run.slots = slots
    return run
