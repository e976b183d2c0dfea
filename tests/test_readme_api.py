"""The README's "Running the API" section, run as written: its shell lines
(the admin commands, `trackgrade serve`, every curl call) in bash, against
the real server they start, and each `# ->` answer it shows checked against
the real one (status and every field it names; `…` and `<id>` stand for
values that differ per run). Only the port is changed (a free one), and curl
is asked to print the status code after the body."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.server.serve_process import free_port

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
SECTION = README[README.index("## Running the API"):README.index("### Strictness")]
BLOCKS = re.findall(r"```bash\n(.*?)```", SECTION, flags=re.S)


def commands(block: str) -> list[tuple[str, str]]:
    """(command, the `# ->` answer shown after it) for each command of a block."""
    out: list[list[str]] = []
    pending = ""
    for line in block.splitlines():
        if line.startswith("#"):
            if out and (line.startswith("# ->") or out[-1][1]):
                out[-1][1] += " " + line.lstrip("#").strip().removeprefix("->").strip()
            continue
        pending += line.rstrip("\\").rstrip() + " " if line.endswith("\\") else line
        if not line.endswith("\\"):
            out.append([pending.strip(), ""])
            pending = ""
    return [(c, a.strip()) for c, a in out if c]


def bash(command: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=120)


def matches(expected, actual, url: str) -> bool:
    """`expected` (from the README) agrees with `actual`: `…`/`<…>` are wildcards."""
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            k in actual and matches(v, actual[k], url) for k, v in expected.items())
    if isinstance(expected, str):
        expected = expected.replace("http://127.0.0.1:8080", url)
        fixed = re.split(r"…|<[a-z.]+>", expected)[0]
        return isinstance(actual, str) and actual.startswith(fixed) and (
            fixed != expected or actual == expected)
    return expected == actual


@pytest.fixture(scope="module")
def instance(tmp_path_factory):
    """The setup block run as written: two keys, then `trackgrade serve` on a free port."""
    setup = commands(BLOCKS[0])
    work = tmp_path_factory.mktemp("readme-api")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    env.pop("TRACKGRADE_DATA", None)
    port = free_port()
    script = "\n".join(c for c, _ in setup if not c.startswith("trackgrade serve"))
    created = bash(script, work, env)
    assert created.returncode == 0, created.stderr
    decoder, text, docs = json.JSONDecoder(), created.stdout.strip(), []
    while text:
        doc, end = decoder.raw_decode(text)
        docs.append(doc)
        text = text[end:].strip()
    live, test = docs
    assert live["key"].startswith("svc_live_") and test["key"].startswith("svc_test_")
    serve = next(c for c, _ in setup if c.startswith("trackgrade serve"))
    assert "--port 8080" in serve
    export = next(c for c, _ in setup if c.startswith("export "))
    proc = subprocess.Popen(["bash", "-c", f"{export}\nexec {serve.replace('8080', str(port))}"],
                            cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None, proc.stdout.read().decode()
            time.sleep(0.2)
    yield {"url": f"http://127.0.0.1:{port}", "key": live["key"], "cwd": work, "env": env}
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(30)


def test_the_curl_session_of_the_readme(instance):
    url, env = instance["url"], dict(instance["env"])
    os.symlink(ROOT / "fixtures", instance["cwd"] / "fixtures")
    values: dict[str, str] = {}
    answered = []
    for command, answer in commands(BLOCKS[1]):
        if command.startswith("KEY="):
            env["KEY"] = instance["key"]
            continue
        command = command.replace("http://127.0.0.1:8080", url).split("  #")[0]
        for name, value in values.items():
            command = command.replace(name, value)
        assert "<" not in command, command
        done = bash(command + " -w '\\n%{http_code}'", instance["cwd"], env)
        assert done.returncode == 0, (command, done.stderr)
        body, status = done.stdout.rsplit("\n", 1)
        doc = json.loads(body)
        if answer:
            want_status, want = answer.split(" ", 1)
            assert int(status) == int(want_status), (command, status, body)
            assert matches(json.loads(want), doc, url), (command, want, doc)
            answered.append(command)
        else:
            assert int(status) == 200, (command, status, body)
        if "upload" in doc:
            values.update({'"<upload.url>"': doc["upload"]["url"],
                           "<upload.token>": doc["upload"]["token"], "<id>": doc["id"]})
    assert len(answered) == 2
    assert doc["status"] in ("processing", "complete") and doc["file_name"] == "demo.mp3"
