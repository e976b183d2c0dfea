"""The CLI's glibc heap tuning (cli/malloc_tuning.py)."""

import sys

from trackgrade.cli.malloc_tuning import reuse_freed_memory


def test_reuse_freed_memory_applies_on_linux_glibc():
    assert reuse_freed_memory() is sys.platform.startswith("linux")
