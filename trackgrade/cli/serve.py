"""`trackgrade serve`: the full v1 HTTP API on waitress."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Optional

import typer


def serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="TCP port to listen on.")] = 8080,
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

    settings = load_settings(
        os.environ, host=host, port=port,
        data_dir=str(data) if data is not None else None,
        workers=workers, maintenance=True if maintenance else None)
    run(settings)
