"""Raw-socket clients for the HTTP proofs and their longer benchmark runs
(tests/server/test_proof_http_*.py, benchmarks/hardening_http.py): read one
answer off a socket, send a body as fast as the server takes it, read a
process's memory figures."""

from __future__ import annotations

import json
import socket
from pathlib import Path
from urllib.parse import urlsplit

MiB = 1024 * 1024


def read_message(sock: socket.socket) -> tuple[list[str], dict, bytes]:
    """(start line split on spaces, lower-cased headers, body by its
    Content-Length) of the next HTTP message on `sock`; OSError when it
    closes before a whole head."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise OSError(f"connection closed before a whole head: {data!r}")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {k.strip().lower(): v.strip() for k, _, v in
               (line.partition(":") for line in lines[1:])}
    while len(body) < int(headers.get("content-length", 0)):
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return lines[0].split(), headers, body


def read_answer(sock: socket.socket) -> tuple[int, dict, dict]:
    """(status, headers, envelope error) of the next answer on `sock`."""
    try:
        start, headers, body = read_message(sock)
    except OSError as exc:
        raise AssertionError(f"connection closed without an answer: {exc}") from None
    assert headers.get("x-request-id", "").startswith("req_")
    return int(start[1]), headers, json.loads(body)["error"]


def send_body(url: str, head: bytes, size: int, answers: list) -> None:
    """Send `head` and `size` body bytes as fast as the server takes them,
    then append the answer's status to `answers` (None: no answer, e.g. a
    reset before it)."""
    parts = urlsplit(url)
    chunk = b"\0" * MiB
    try:
        with socket.create_connection((parts.hostname, parts.port), timeout=60) as sock:
            sock.sendall(head)
            sent = 0
            try:
                while sent < size:
                    sent += sock.send(chunk[:min(len(chunk), size - sent)])
            except OSError:
                pass                       # the server stopped taking bytes: fine
            answers.append(read_answer(sock)[0])
    except (OSError, AssertionError):
        answers.append(None)


def vm_kb(pid: int, field: str) -> int:
    """A /proc/<pid>/status figure in kB (VmRSS, VmHWM)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise AssertionError(f"no {field} for process {pid}")
