"""A clone on a machine with only Python: the README's test command skips the
tests that need a system package, each naming it, instead of erroring; under
CI the same skips fail the run (tests/system.py, tests/conftest.py).

The README's pytest command runs in a child process whose PATH holds only the
virtual environment's Python and where TRACKGRADE_TEST_HIDE_TOOLS hides every
tool of tests/system.py (Chromium, PostgreSQL, nginx and openssl are installed
on this machine at absolute paths a PATH cannot hide)."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

from tests.system import HIDE_ENV, TOOLS

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")

# one test of each kind that needs a system package -> the package its skip must name
NEEDING = {
    "tests/server/test_reverse_proxy_nginx.py": "nginx",
    "tests/webhooks/test_sender_contract.py::test_https_is_verified": "openssl",
    "tests/cli/test_report_browser.py::test_report_prints": "chromium",
    "tests/server/test_embed_browser.py::test_every_grade_label_and_genre_name_fits": "chromium",
    "tests/server/test_store_postgres.py::test_a_database_from_a_newer_trackgrade_is_refused":
        "postgresql",
}


def readme_pytest_args() -> list[str]:
    """The arguments after `-m pytest` of the README's test command."""
    command = re.search(r"^python3 -m venv .*?-m pytest (.*)$", README, re.M).group(1)
    return shlex.split(command)


def bare_run(targets: list[str], junit: Path, **env: str) -> subprocess.CompletedProcess:
    clean = {k: v for k, v in os.environ.items()
             if not k.startswith(("PYTEST", "TRACKGRADE_", "CI")) and k != "PATH"}
    clean.update(PATH=str(Path(sys.executable).parent), HOME=os.environ.get("HOME", "/root"),
                 **{HIDE_ENV: ",".join(TOOLS)}, **env)
    cache = os.environ.get("TRACKGRADE_CACHE")
    if cache:
        clean["TRACKGRADE_CACHE"] = cache
    return subprocess.run([sys.executable, "-m", "pytest", *readme_pytest_args(), "-rs",
                           "-p", "no:cacheprovider", f"--junitxml={junit}", *targets],
                          cwd=ROOT, env=clean, capture_output=True, text=True, timeout=240)


def outcomes(junit: Path) -> dict[str, str]:
    """test file::name -> "skipped: <reason>", "failed", "error" or "passed"."""
    found = {}
    for case in ElementTree.parse(junit).iter("testcase"):
        path = case.get("classname", "").replace(".", "/") + ".py"
        name = f"{path}::{case.get('name')}"
        kinds = {child.tag: child for child in case}
        if "skipped" in kinds:
            found[name] = "skipped: " + (kinds["skipped"].get("message") or "")
        else:
            found[name] = next((k for k in ("failure", "error") if k in kinds), "passed")
    return found


@pytest.mark.slow(seconds=12)
def test_tests_needing_system_packages_skip_naming_them_on_a_bare_machine(tmp_path):
    run = bare_run(list(NEEDING), tmp_path / "junit.xml")
    out = run.stdout + run.stderr
    assert run.returncode == 0, out[-3000:]
    results = outcomes(tmp_path / "junit.xml")
    for target, package in NEEDING.items():
        mine = {k: v for k, v in results.items() if k.startswith(target)}
        assert mine, (target, results)
        for name, outcome in mine.items():                 # skipped, never errored
            assert outcome.startswith("skipped") and f"apt-get install {package}" in outcome, \
                (name, outcome)


def test_under_ci_the_same_skips_fail_the_run(tmp_path):
    run = bare_run(["tests/server/test_reverse_proxy_nginx.py"], tmp_path / "junit.xml",
                   TRACKGRADE_NO_SKIPS="1")
    out = run.stdout + run.stderr
    assert run.returncode == 1, out[-3000:]
    assert "apt-get install nginx" in out and "skipped under CI" in out, out[-3000:]


def test_every_tool_names_its_package_and_hiding_hides_it(monkeypatch):
    from tests.system import find_tool, missing_reason

    for name, (package, _places) in TOOLS.items():
        assert f"apt-get install {package}" in missing_reason(name)
        assert package in README, package                    # the README lists it
    monkeypatch.setenv(HIDE_ENV, "nginx,initdb")
    assert find_tool("nginx") is None and find_tool("initdb") is None
