"""The linter over the whole tree, with the rules pyproject.toml's [tool.ruff] chooses
(unused and undefined names, syntax errors, mutable or computed defaults, blind
pytest.raises, exceptions re-raised without their cause)."""

from __future__ import annotations

import subprocess
import sys

from tests.truth import ROOT


def test_ruff_finds_nothing():
    result = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "."],
                            cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
