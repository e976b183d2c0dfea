"""What every `trackgrade admin` command shares: the command groups, the
options, the store opened with its errors as one line and an exit code, and
the JSON and table output."""

from __future__ import annotations

import json
from contextlib import contextmanager
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Iterator, Optional

import typer

from trackgrade.cli.errors import EXIT_USAGE, exit_code_for, print_error
from trackgrade.errors import TrackgradeError

if TYPE_CHECKING:
    from trackgrade.server.store import Store


class _OnUse:
    """A module imported on first attribute access: the server's store and
    webhook machinery load when an admin command runs, not with every command."""

    def __init__(self, name: str) -> None:
        self._name = name

    def __getattr__(self, attr: str):
        import importlib
        return getattr(importlib.import_module(self._name), attr)


admin = _OnUse("trackgrade.server.admin")
endpoints = _OnUse("trackgrade.server.webhooks.endpoints")
_store = _OnUse("trackgrade.server.store")


app = typer.Typer(name="admin", no_args_is_help=True, add_completion=False,
                  help="Manage keys, credits, webhooks and switches in a data directory "
                       "(safe while a server runs on it).")
keys_app = typer.Typer(name="keys", no_args_is_help=True, help="Create, revoke and list API keys.")
webhooks_app = typer.Typer(name="webhooks", no_args_is_help=True,
                           help="Register, list, remove webhook endpoints and rotate their "
                                "secrets.")
events_app = typer.Typer(name="events", no_args_is_help=True,
                         help="Deliver a recent webhook event again.")
store_app = typer.Typer(name="store", no_args_is_help=True,
                        help="Check the data directory's store files for damage.")
app.add_typer(keys_app, name="keys")
app.add_typer(store_app, name="store")
app.add_typer(webhooks_app, name="webhooks")
app.add_typer(events_app, name="events")


class Mode(str, Enum):
    live = "live"
    test = "test"


class Plan(str, Enum):
    free = "free"
    pro = "pro"
    studio = "studio"
    partner = "partner"


class Billing(str, Enum):
    credits = "credits"
    comp = "comp"
    metered = "metered"


class Switch(str, Enum):
    on = "on"
    off = "off"


DataOption = Annotated[Optional[Path], typer.Option(
    "--data", help="Data directory (default: TRACKGRADE_DATA, else ./trackgrade-data).",
    show_default=False)]
DatabaseOption = Annotated[Optional[str], typer.Option(
    "--database", help="PostgreSQL URL (postgresql://…) of the servers' database instead of "
    "--data (default: TRACKGRADE_DATABASE_URL).", show_default=False)]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")]


@contextmanager
def _opened(data: Path | None, database: str | None = None, *,
            create: bool = False) -> Iterator[Store]:
    """The store of the data directory, or of the database (--database, or
    TRACKGRADE_DATABASE_URL unless --data is given); every library error
    becomes one line and an exit code here (the root boundary would do the
    same)."""
    url = admin.database_url(database, data)
    store = None
    StoreError = _store.StoreError
    try:
        if url:
            store = admin.open_database(url)
        else:
            root = admin.data_dir(data)
            if not create and not root.is_dir():
                raise StoreError(f"no data directory at {root} (create a key first, or pass "
                                 f"--data or --database)")
            store = admin.open_data(root)
        yield store
    except TrackgradeError as exc:
        print_error(exc.message)
        raise typer.Exit(exit_code_for(exc)) from None
    except StoreError as exc:
        print_error(str(exc))
        raise typer.Exit(EXIT_USAGE) from None
    finally:
        if store is not None:
            store.close()


def _emit(payload: object) -> None:
    typer.echo(json.dumps(payload, indent=2))


def _table(header: tuple, rows: list[tuple]) -> None:
    """Left-aligned columns, two spaces apart."""
    table = [header] + rows
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        typer.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
