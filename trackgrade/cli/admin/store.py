"""`trackgrade admin migrate` and `admin store check`: the store itself."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from trackgrade.cli.admin.common import (DataOption, JsonOption, _emit, _opened, _store, admin,
                                         app, store_app)
from trackgrade.cli.errors import EXIT_USAGE, print_error


@app.command("migrate")
def migrate(
    data: Annotated[Path, typer.Option("--data", help="The embedded store's data directory.")],
    database: Annotated[str, typer.Option(
        "--database", help="PostgreSQL URL to copy it into (schema created if needed).")],
    as_json: JsonOption = False,
) -> None:
    """Copy a data directory's store into PostgreSQL and verify the counts."""
    with _opened(data) as source, _opened(None, database) as target:
        counts = admin.migrate(source, target)
    if as_json:
        _emit(counts)
        return
    for collection, n in counts.items():
        typer.echo(f"{collection:12} {n['source']:>9} copied, {n['target']:>9} in the database")
    typer.echo("Migrated: every count matches. Start the servers with --database.")


@store_app.command("check")
def store_check(data: DataOption = None, as_json: JsonOption = False) -> None:
    """Report damage in every snapshot and journal of a data directory, changing
    nothing (safe while a server runs). Exit 0 intact, 1 damaged, 2 unreadable."""
    from trackgrade.cli.errors import EXIT_BAD
    from trackgrade.server.store.check import check_data_dir

    root = admin.data_dir(data)
    if not root.is_dir():
        print_error(f"no data directory at {root}")
        raise typer.Exit(EXIT_USAGE)
    try:
        reports = check_data_dir(root)
    except _store.StoreError as exc:
        print_error(str(exc))
        raise typer.Exit(EXIT_USAGE) from None
    damaged = [r for r in reports if not r.ok]
    if as_json:
        _emit({"data_dir": str(root), "ok": not damaged, "files": [r.as_dict() for r in reports]})
    else:
        for report in reports:
            typer.echo(report.line())
        typer.echo(f"{len(damaged)} of {len(reports)} files damaged in {root}" if damaged
                   else f"Intact: {len(reports)} files in {root}.")
    if damaged:
        raise typer.Exit(EXIT_BAD)
