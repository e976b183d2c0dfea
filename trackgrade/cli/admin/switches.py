"""`trackgrade admin embed|console-link|maintenance`: switches and links."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from trackgrade.cli.admin.common import (DatabaseOption, DataOption, JsonOption, Switch, _emit,
                                         _opened, admin, app)


@app.command("embed")
def embed(
    analysis_id: Annotated[str, typer.Argument(help="The analysis id.")],
    switch: Annotated[Switch, typer.Argument(help="on or off.")],
    data: DataOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Turn the public score badge of one analysis on or off."""
    with _opened(data, database) as store:
        row = admin.set_embed(store, analysis_id, switch is Switch.on)
    if as_json:
        _emit({"analysis_id": row["id"], "embed": row["embed"]})
        return
    typer.echo(f"Embedding {switch.value} for analysis {row['id']}.")


@app.command("console-link")
def console_link(
    account: Annotated[str, typer.Option(help="The account (acct_…) the link signs in to.")],
    base_url: Annotated[Optional[str], typer.Option(
        "--base-url", help="The server's address as the developer's browser reaches it "
        "(default: TRACKGRADE_PUBLIC_BASE_URL, else http://TRACKGRADE_HOST:TRACKGRADE_PORT).",
        show_default=False)] = None,
    data: DataOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Print a one-time sign-in URL for the developer console (valid 10 minutes, single
    use); hand it to the account's developer."""
    with _opened(data, database) as store:
        link = admin.console_link(store, account, admin.console_base_url(base_url))
    if as_json:
        _emit(link)
        return
    typer.echo(link["url"])
    typer.echo(f"Valid until {link['expires_at']}, for one sign-in to account {account}.")


@app.command("maintenance")
def maintenance(
    switch: Annotated[Switch, typer.Argument(help="on or off.")],
    data: DataOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Switch maintenance mode (503 on every API route) on a running server."""
    with _opened(data, database, create=True) as store:
        doc = admin.set_maintenance(store, switch is Switch.on)
    if as_json:
        _emit({"maintenance": doc["on"]})
        return
    typer.echo(f"Maintenance {switch.value}."
               + (" API routes answer 503 service_unavailable." if doc["on"] else ""))

