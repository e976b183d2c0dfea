"""Schemathesis against a real server on loopback, from the server's own
OpenAPI document: every check, the coverage, fuzzing and stateful phases
(the document's links take it from submit to upload to reads; fuzz_hooks.py
hands each upload the token its submission returned).

The server counts what it answered (its access log), so the figures do not
rest on the fuzzer's own report: requests served and how many were 5xx.
Used by tests/server/test_proof_fuzzing.py (bounded) and
benchmarks/bench_hardening.py (longer)."""

from __future__ import annotations

import collections
import json
import logging
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from tests.server.server_harness import start

HERE = Path(__file__).resolve().parent
# the upload step judges the bytes themselves, which no schema can describe: a
# schema-valid upload of bytes that are not audio is rightly 413 or 422 (live);
# and a multipart part is bytes, never a JSON number, so a `file` part whose text
# reads as one ("1.8e-280") is a valid upload (test mode never decodes it), not
# the "schema-violating request" the negative check takes it for
# DELETE /analyses/{id} cancels (CONTRACT section 5): the analysis stays, `failed`
# with analysis_canceled, so reading it afterwards is rightly 200, not the 404 the
# use-after-free check expects of a deleted resource (excluded on the command line)
CONFIG = """[auth.openapi.apiKey]
bearer = "${TRACKGRADE_FUZZ_KEY}"

[[operations]]
include-operation-id = "uploadAudio"
checks.positive_data_acceptance.expected-statuses = ["2xx", "401", "404", "409", "413",
                                                     "422", "429", "503"]
checks.negative_data_rejection.expected-statuses = ["2xx", "400", "401", "404", "405", "409",
                                                   "413", "415", "422", "429", "503"]
"""


class ErrorCounter(logging.Handler):
    """Counts ERROR records (waitress logs a request it failed to answer)."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.count = 0

    def emit(self, record: logging.LogRecord) -> None:
        self.count += 1


class StatusCounter(logging.Handler):
    """Counts the statuses in the server's access log lines."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.statuses: collections.Counter = collections.Counter()
        self.paths: collections.Counter = collections.Counter()

    def emit(self, record: logging.LogRecord) -> None:
        method, path, status = record.args[:3]
        self.statuses[int(status)] += 1
        if method == "POST" and path.startswith("/v1/uploads/"):
            self.paths[f"{method} /v1/uploads/* {status}"] += 1


@dataclass
class FuzzResult:
    mode: str
    generated: int
    failures: list
    errors: list
    exit_code: int
    served: int
    server_errors: int
    uploads_accepted: int
    server_exceptions: int = 0
    statuses: dict = field(default_factory=dict)
    output: str = ""


def run(mode: str = "test", *, max_examples: int = 25, max_time: int | None = None,
        seed: int | None = None, phases: str = "coverage,fuzzing,stateful",
        timeout: float = 600) -> FuzzResult:
    """Fuzz a fresh server with a `mode` ("test" or "live") key."""
    server = start(test_in_flight=10**6, test_rate_per_minute=10**7, in_flight=10**6,
                   rate_per_minute=10**7, daily_quota=10**7)
    counter = StatusCounter()
    access = logging.getLogger("trackgrade.access")
    level = access.level
    access.addHandler(counter)
    access.setLevel(logging.INFO)
    errors = ErrorCounter()
    for name in ("waitress", "trackgrade"):
        logging.getLogger(name).addHandler(errors)
    try:
        key, _ = server.key(mode, credits=10**6)
        with tempfile.TemporaryDirectory() as tmp:
            config = Path(tmp) / "schemathesis.toml"
            config.write_text(CONFIG)
            report = Path(tmp) / "report.json"
            command = [sys.executable, "-m", "schemathesis.cli", "--config-file", str(config),
                       "run", f"{server.url}/v1/openapi.json", "--checks", "all", "--exclude-checks", "use_after_free",
                       "--phases", phases, "--max-examples", str(max_examples), "--workers", "1",
                       "--no-color", "--generation-database", "none",
                       "--request-timeout", "30", "--report", "json",
                       "--report-json-path", str(report)]
            if max_time is not None:
                command += ["--max-time", str(max_time)]
            if seed is not None:
                command += ["--seed", str(seed)]
            env = {**os.environ, "TRACKGRADE_FUZZ_KEY": key, "SCHEMATHESIS_HOOKS": "fuzz_hooks",
                   "PYTHONPATH": os.pathsep.join(filter(None, [str(HERE),
                                                               os.environ.get("PYTHONPATH")]))}
            proc = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp,
                                  timeout=timeout)
            summary = json.loads(report.read_text()) if report.exists() else {}
    finally:
        access.removeHandler(counter)
        access.setLevel(level)
        for name in ("waitress", "trackgrade"):
            logging.getLogger(name).removeHandler(errors)
        server.stop()
    cases = summary.get("test_cases", {})
    return FuzzResult(
        mode=mode, generated=int(cases.get("generated", 0)),
        failures=summary.get("failures", ["no report"]), errors=summary.get("errors", []),
        exit_code=proc.returncode, served=sum(counter.statuses.values()),
        server_errors=sum(n for s, n in counter.statuses.items() if s >= 500),
        uploads_accepted=sum(n for k, n in counter.paths.items() if k.endswith(" 200")),
        server_exceptions=errors.count,
        statuses=dict(sorted(counter.statuses.items())), output=proc.stdout[-6000:])
