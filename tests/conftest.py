"""Fixtures shared by the whole suite.

How tests import (no `sys.path.insert` anywhere): `tests/` and each folder in
it are packages, and pytest puts the repository root on `sys.path` (the
`pythonpath` option in pyproject.toml), so a test imports the package and its
helpers by their full names:

    from trackgrade.engine.decode import decode
    from tests.truth import render_specs, need_real
    from tests.server.server_harness import start, wav_bytes
    from tests.webhooks.receiver import Receiver

Ground truth: tests/truth.py makes the EBU signals and the synthetic tracks
with the project's own generators (tests/truth_gen/, cached in
TRACKGRADE_CACHE); only the licensed real clips come from ../shared (or
TRACKGRADE_SHARED), and a test that needs them calls `need_real()` or takes
`real_params(...)`, so a clone without them skips exactly those tests, each
naming ../shared and TRACKGRADE_SHARED. Under CI (`CI=true`) a skip fails
the run (see `pytest_terminal_summary` below and .ci/run).
"""

import multiprocessing.util
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from tests import scheduling
from trackgrade.pool import THREAD_ENV_VARS

# One native (BLAS/OpenMP) thread per test process, set before numpy loads and
# inherited by the -n workers and every process a test starts: the suite's
# parallelism is its workers, as the product's is its worker processes
# (trackgrade.pool). Two OpenBLAS threads per worker oversubscribe the cores
# and spin while idle: the real-clip defects tests took 52.7 s of CPU for
# 37.1 s of wall with them, 32.2 s for 32.2 s without. A user's own setting wins.
for _name in THREAD_ENV_VARS:
    os.environ.setdefault(_name, "1")

# Bytecode caches on, for this run and every process it starts: a machine that
# sets PYTHONDONTWRITEBYTECODE (this one does) otherwise has each of the -n
# workers rewrite every test module's asserts again (7.5 s of CPU per worker)
# and each of the hundreds of `trackgrade` processes the tests start compile
# the package from source again. The caches stay in __pycache__ (git-ignored).
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False


def pytest_xdist_auto_num_workers(config):
    """`-n auto`: two workers per core. A good part of the suite's time is
    tests that wait (a webhook lease running out, head deadlines, servers
    starting and being killed); the other workers run tests meanwhile. On this
    2-core machine, quiet, with the one-thread cap below: 3 workers 5 min 7 s,
    4 workers 4 min 46 s, 6 workers 5 min 8 s (benchmarks/RESULTS.md)."""
    return 2 * len(os.sched_getaffinity(0))


def pytest_collection_modifyitems(config, items):
    """Under -n, the slow proofs are dealt over the workers' first shares,
    longest first, at the front of each (tests/scheduling.py)."""
    items[:] = scheduling.order(items, scheduling.worker_count())


@pytest.fixture(scope="session")
def _short_dirs():
    made: list[Path] = []
    yield made
    held = multiprocessing.process.current_process()._config.get("tempdir") or ""
    for path in made:
        if held.startswith(f"{path}/"):
            # this process's multiprocessing keeps its own temporary directory
            # (a fork server's socket) in `path` and removes it at exit (its
            # finalizer at priority -100), which must find it there: `path`
            # goes right after that
            multiprocessing.util.Finalize(None, shutil.rmtree, args=(path,),
                                          kwargs={"ignore_errors": True}, exitpriority=-101)
        else:
            shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def empty_tmpdir(monkeypatch, _short_dirs) -> Path:
    """An empty directory that TMPDIR and `tempfile.tempdir` point at, for a
    test that proves nothing is written there. Its path is short
    (/tmp/tg-XXXXXXXX): a fork server started under it puts its Unix socket
    there, and pytest's own `tmp_path` (pytest-of-root/pytest-NNN/popen-gwN/
    test_name0) can pass the socket path's 107 bytes. It stays until the
    session ends, because a fork server started in it keeps listening there."""
    path = Path(tempfile.mkdtemp(prefix="tg-", dir="/tmp"))
    _short_dirs.append(path)
    monkeypatch.setenv("TMPDIR", str(path))
    monkeypatch.setattr(tempfile, "tempdir", str(path))
    return path


@pytest.fixture(scope="session")
def postgres_server():
    """One real throwaway PostgreSQL for the session (tests/pgserver.py).
    Without the server binaries the tests that need it are skipped naming
    the package (tests/system.py; a skip fails the run under CI)."""
    from tests.pgserver import LocalPostgres
    from tests.system import need_tool

    need_tool("initdb")
    server = LocalPostgres().start()
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server):
    """A fresh, empty database on the session's PostgreSQL."""
    return postgres_server.create_database()


def _no_skips_allowed() -> bool:
    """CI (`CI=true`, or TRACKGRADE_NO_SKIPS=1 as .ci/run sets) has ../shared: a skip there
    means a proof did not run, so it fails the run."""
    flags = (os.environ.get("CI", ""), os.environ.get("TRACKGRADE_NO_SKIPS", ""))
    return any(flag.lower() in ("1", "true", "yes") for flag in flags)


def pytest_sessionfinish(session, exitstatus):
    if hasattr(session.config, "workerinput") or not _no_skips_allowed():
        return                            # an xdist worker: the controller counts
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = len(reporter.stats.get("skipped", [])) if reporter else 0
    if skipped and session.exitstatus == 0:
        session.exitstatus = 1
        session.config._no_skip_failure = skipped


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    skipped = getattr(config, "_no_skip_failure", 0)
    if skipped:
        terminalreporter.write_line(
            f"FAILED: {skipped} test(s) skipped under CI, where nothing may skip "
            "(../shared is beside the clone there; see the SKIPPED lines above)", red=True, bold=True)
