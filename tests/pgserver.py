"""A real, throwaway PostgreSQL server for tests and benchmarks.

    with LocalPostgres() as pg:          # initdb + pg_ctl start on a free loopback port
        url = pg.create_database()       # postgresql://postgres@127.0.0.1:PORT/tg_…
        pg.halt(); pg.resume()           # an outage: the server down, then back

It uses the installed server binaries (Debian's `postgresql` package:
/usr/lib/postgresql/<N>/bin; `.ci/run` installs it). `initdb` refuses to run
as root, so as root the cluster belongs to the `postgres` system user (the
package creates it) and its commands run through `runuser`. When no server
binaries exist (tests/system.py finds them), `PostgresMissing` says so: the
tests that need PostgreSQL are skipped naming the package (failed under CI).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from pathlib import Path

from tests.system import find_tool, missing_reason


class PostgresMissing(RuntimeError):
    pass


def bin_dir() -> Path:
    """The directory of initdb/pg_ctl (newest installed version)."""
    initdb = find_tool("initdb")
    if initdb is None:
        raise PostgresMissing(missing_reason("initdb"))
    return Path(initdb).parent


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class LocalPostgres:
    def __init__(self, *, fsync: bool = True) -> None:
        self.bin = bin_dir()
        self.root = Path(tempfile.mkdtemp(prefix="trackgrade-pg-"))
        self.data = self.root / "data"
        self.port = free_port()
        self.fsync = fsync
        self._as_root = os.geteuid() == 0

    def _run(self, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
        cmd = [str(self.bin / args[0]), *args[1:]]
        if self._as_root:
            cmd = ["runuser", "-u", "postgres", "--", *cmd]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        if done.returncode != 0:
            raise RuntimeError(f"{args[0]} failed ({done.returncode}): "
                               f"{done.stderr.strip() or done.stdout.strip()}")
        return done

    def start(self) -> "LocalPostgres":
        if self._as_root:
            shutil.chown(self.root, "postgres", "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust",
                  "-E", "UTF8", "--no-instructions", "--locale=C")
        return self.resume()

    def resume(self) -> "LocalPostgres":
        """Start the server on its data directory (again, after `halt`)."""
        options = (f"-c listen_addresses=127.0.0.1 -c port={self.port} "
                   f"-c unix_socket_directories={self.root} -c max_connections=200 "
                   f"-c shared_buffers=128MB -c fsync={'on' if self.fsync else 'off'}")
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.root / "server.log"),
                  "-o", options, "-w", "-t", "60", "start")
        return self

    def running(self) -> bool:
        try:
            self._run("pg_ctl", "-D", str(self.data), "status", timeout=30)
        except RuntimeError:
            return False
        return True

    def halt(self) -> None:
        """Stop the server at once (an outage), keeping its data for `resume`."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop", timeout=60)

    @property
    def url(self) -> str:
        return f"postgresql://postgres@127.0.0.1:{self.port}/postgres"

    def create_database(self, name: str | None = None) -> str:
        """A fresh empty database; returns its URL."""
        import psycopg

        name = name or f"tg_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return f"postgresql://postgres@127.0.0.1:{self.port}/{name}"

    def stop(self) -> None:
        try:
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop",
                      timeout=60)
        except (RuntimeError, subprocess.TimeoutExpired):
            pass
        time.sleep(0.1)
        shutil.rmtree(self.root, ignore_errors=True)

    def __enter__(self) -> "LocalPostgres":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
