import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def postgres_server():
    """One real throwaway PostgreSQL for the session (tests/pgserver.py).
    Missing server binaries fail the tests that need it, loudly."""
    from pgserver import LocalPostgres, PostgresMissing

    try:
        server = LocalPostgres().start()
    except PostgresMissing as exc:
        pytest.fail(str(exc), pytrace=False)
    yield server
    server.stop()


@pytest.fixture
def postgres_url(postgres_server):
    """A fresh, empty database on the session's PostgreSQL."""
    return postgres_server.create_database()
