"""`trackgrade serve`: the full v1 HTTP API on waitress."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer


def serve(
    host: Annotated[Optional[str], typer.Option(
        help="Interface to listen on (or TRACKGRADE_HOST).", show_default="127.0.0.1")] = None,
    port: Annotated[Optional[int], typer.Option(
        help="TCP port to listen on (or TRACKGRADE_PORT).", show_default="8080")] = None,
    data: Annotated[Optional[Path], typer.Option(
        help="State directory (default ./trackgrade-data, or TRACKGRADE_DATA).")] = None,
    database: Annotated[Optional[str], typer.Option(
        help="PostgreSQL URL (postgresql://user:pass@host/db): all state there instead of "
             "--data; several servers may share it (default TRACKGRADE_DATABASE_URL).",
        show_default=False)] = None,
    node_id: Annotated[Optional[str], typer.Option(
        help="This server's name among those sharing --database (default host:port).",
        show_default=False)] = None,
    workers: Annotated[Optional[int], typer.Option(
        min=1, help="Analysis worker processes (default 1, or TRACKGRADE_WORKERS).")] = None,
    maintenance: Annotated[bool, typer.Option(
        "--maintenance", help="Answer every API route with 503 service_unavailable.")] = False,
    console: Annotated[bool, typer.Option(
        "--console/--no-console", help="Serve the developer console at /console "
        "(or TRACKGRADE_CONSOLE).", show_default="on")] = True,
) -> None:
    """Serve the v1 API (analyses, uploads, genres, embed badges, OpenAPI) and the developer
    console (/console) on waitress."""
    from trackgrade.config import load_settings
    from trackgrade.cli.errors import EXIT_USAGE, print_error
    from trackgrade.server.serve import run
    from trackgrade.server.store import StoreError

    try:
        settings = load_settings(
            os.environ, host=host, port=port,
            data_dir=str(data) if data is not None else None,
            database_url=database, node_id=node_id, workers=workers,
            maintenance=True if maintenance else None,
            console=None if console else False)
    except ValueError as exc:       # a malformed TRACKGRADE_* value: one line
        print_error(str(exc))
        raise typer.Exit(EXIT_USAGE) from None
    try:
        run(settings)
    except StoreError as exc:       # a busy or unusable data directory or database: one line
        print_error(str(exc))
        raise typer.Exit(EXIT_USAGE) from None
