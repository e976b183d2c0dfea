"""The real store backends the both-stores suites run on: a factory per
backend, (pytest request, tmp_path) -> a function that opens a store."""

from __future__ import annotations

from trackgrade.server.store import open_store


def _tinydb(request, tmp_path):
    return lambda: open_store(tmp_path / "data")


def _postgres(request, tmp_path):
    url = request.getfixturevalue("postgres_url")
    return lambda: open_store(database=url, pool_size=4)


BACKENDS = {"tinydb": _tinydb, "postgres": _postgres}
