"""The system packages some tests need, found in ONE place.

    from tests.system import need_tool
    nginx = need_tool("nginx")          # its path, or the test is skipped

A test that runs a real Chromium, PostgreSQL, nginx or openssl (or renders
recorded instruments with FluidSynth, its General MIDI soundfont and
Hydrogen's drum kits) asks for it here. On a machine without it the test is
skipped with a reason that names the Debian package (`apt-get install
nginx`), as the real-clip tests name ../shared; under CI (`CI=true` or
TRACKGRADE_NO_SKIPS=1, where .ci/run installs them all) any skip fails the
run (tests/conftest.py).

TRACKGRADE_TEST_HIDE_TOOLS (comma-separated names of TOOLS) makes those
tools count as absent whatever is installed: the bare-machine test
(tests/test_bare_machine.py) runs tests that way.
"""

from __future__ import annotations

import glob
import os
import shutil
from pathlib import Path

HIDE_ENV = "TRACKGRADE_TEST_HIDE_TOOLS"

# name -> (Debian package, where it is found besides PATH: absolute paths or globs)
TOOLS: dict[str, tuple[str, tuple[str, ...]]] = {
    "chromium": ("chromium", ("/usr/bin/chromium", "chromium-browser", "google-chrome")),
    "initdb": ("postgresql", ("/usr/lib/postgresql/*/bin/initdb",)),
    "nginx": ("nginx", ("/usr/sbin/nginx",)),
    "openssl": ("openssl", ()),
    "fluidsynth": ("fluidsynth", ()),
    "soundfont": ("fluid-soundfont-gm", ("/usr/share/sounds/sf2/FluidR3_GM.sf2",)),
    "drumkits": ("hydrogen-drumkits", ("/usr/share/hydrogen/data/drumkits",)),
}


def hidden() -> set[str]:
    return {n.strip() for n in os.environ.get(HIDE_ENV, "").split(",") if n.strip()}


def _version(path: str) -> tuple[int, ...]:
    """/usr/lib/postgresql/16/bin/initdb -> (16,): the newest install wins."""
    return tuple(int(p) for p in Path(path).parts if p.isdigit())


def find_tool(name: str) -> str | None:
    """The path of `name` (a key of TOOLS), or None when it is not installed
    (or hidden by TRACKGRADE_TEST_HIDE_TOOLS)."""
    if name in hidden():
        return None
    _package, places = TOOLS[name]
    found = shutil.which(name)
    if found:
        return found
    for place in places:
        if "*" in place:
            matches = sorted(glob.glob(place), key=_version)
            if matches:
                return matches[-1]
        elif place.startswith("/"):
            if os.path.exists(place):
                return place
        elif shutil.which(place):
            return shutil.which(place)
    return None


def missing_reason(name: str) -> str:
    package = TOOLS[name][0]
    return (f"{name} is not installed: apt-get install {package} "
            f"(a full local run needs it; .ci/run installs it)")


def need_tool(name: str) -> str:
    """The path of `name`, or the calling test is skipped naming its package."""
    import pytest

    found = find_tool(name)
    if found is None:
        pytest.skip(missing_reason(name))
    return found
