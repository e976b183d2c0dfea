"""`trackgrade serve`: the full v1 HTTP API on waitress."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import click
import typer


def serve(
    host: Annotated[Optional[str], typer.Option(
        help="Interface to listen on (default 127.0.0.1, or TRACKGRADE_HOST).")] = None,
    port: Annotated[Optional[int], typer.Option(
        help="TCP port to listen on (default 8080, or TRACKGRADE_PORT).")] = None,
    data: Annotated[Optional[Path], typer.Option(
        help="State directory (default ./trackgrade-data, or TRACKGRADE_DATA).")] = None,
    workers: Annotated[Optional[int], typer.Option(
        min=1, help="Analysis worker processes (default 1, or TRACKGRADE_WORKERS).")] = None,
    maintenance: Annotated[bool, typer.Option(
        "--maintenance", help="Answer every API route with 503 service_unavailable.")] = False,
) -> None:
    """Serve the v1 API (analyses, uploads, genres, embed badges, OpenAPI) on waitress."""
    from trackgrade.config import load_settings
    from trackgrade.server.serve import run
    from trackgrade.server.store import StoreError

    try:
        settings = load_settings(
            os.environ, host=host, port=port,
            data_dir=str(data) if data is not None else None,
            workers=workers, maintenance=True if maintenance else None)
        run(settings)
    except (StoreError, ValueError) as exc:     # a busy or unusable data directory, a bad env
        raise click.ClickException(str(exc)) from None
