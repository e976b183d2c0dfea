"""Fixtures shared by the server tests."""

from __future__ import annotations

import pytest

from tests.truth import render_specs

E2E_TRACK = {"name": "server_e2e_techno", "style": "techno", "bpm": 128, "seconds": 12, "seed": 3}


@pytest.fixture(scope="session")
def track() -> bytes:
    """A 12 s synthetic techno track (WAV bytes) that real servers analyse end to end."""
    folder, _ = render_specs([E2E_TRACK])
    return (folder / "server_e2e_techno.wav").read_bytes()
