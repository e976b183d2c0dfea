"""`trackgrade admin webhooks add|list|remove|rotate` and `admin events resend`."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from trackgrade.cli.admin.common import (DatabaseOption, DataOption, JsonOption, _emit, _opened,
                                         _table, admin, endpoints, events_app,
                                         webhooks_app)

DEFAULT_OVERLAP_S = 86400      # endpoints.DEFAULT_OVERLAP (a test keeps the two equal)


@webhooks_app.command("add")
def webhooks_add(
    url: Annotated[str, typer.Argument(
        help="Endpoint URL: https://, or http:// to loopback; no user:password in it.")],
    account: Annotated[str, typer.Option(help="The account whose events it receives.")],
    allow_private: Annotated[bool, typer.Option(
        "--allow-private", help="Let an https:// URL reach a private, loopback, link-local or "
        "cloud-metadata address (checked again at every delivery).")] = False,
    data: DataOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Register a webhook endpoint; its whsec_ signing secret is printed once."""
    with _opened(data, database) as store:
        made = admin.add_webhook(store, url, account, allow_private=allow_private)
    if as_json:
        _emit(made)
        return
    typer.echo(f"Registered {made['id']} -> {made['url']} for account {made['account']}.")
    typer.echo(made["secret"])
    typer.echo("Signing secret shown only this once: verify deliveries with it.")


@webhooks_app.command("list")
def webhooks_list(
    account: Annotated[Optional[str], typer.Option(
        help="Only this account's endpoints (default: all).", show_default=False)] = None,
    data: DataOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """List endpoints: id, url, enabled, created, last attempt and its result (never secrets)."""
    with _opened(data, database) as store:
        rows = endpoints.list_endpoints(store, account)
    if as_json:
        _emit(rows)
        return
    if not rows:
        typer.echo("No webhook endpoints yet: `trackgrade admin webhooks add URL --account ...`.")
        return
    from trackgrade.display import escape_controls

    _table(("ID", "URL", "ENABLED", "CREATED", "LAST ATTEMPT", "RESULT"),
           [(r["id"], escape_controls(r["url"]), "yes" if r["enabled"] else "no",
             r["created"] or "", _when(r["last_attempt_at"]), escape_controls(_result(r)))
            for r in rows])


def _when(unix: float | None) -> str:
    if unix is None:
        return "never"
    from datetime import datetime, timezone
    return datetime.fromtimestamp(unix, timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def _result(row: dict) -> str:
    if not row["enabled"] and row.get("disabled_reason"):
        return f"disabled: {row['disabled_reason']}"
    if row["last_status"] is not None:
        return str(row["last_status"])
    return row["last_error"] or ""


@webhooks_app.command("remove")
def webhooks_remove(
    webhook_id: Annotated[str, typer.Argument(help="The endpoint's id (we_…).")],
    data: DataOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Remove an endpoint; deliveries still pending to it are cancelled."""
    with _opened(data, database) as store:
        removed = endpoints.remove_endpoint(store, webhook_id)
    if as_json:
        _emit({"id": removed["id"], "url": removed["url"], "removed": True,
               "cancelled_deliveries": removed["cancelled_deliveries"]})
        return
    typer.echo(f"Removed {removed['id']} ({removed['url']}); "
               f"{removed['cancelled_deliveries']} pending deliveries cancelled.")


@webhooks_app.command("rotate")
def webhooks_rotate(
    webhook_id: Annotated[str, typer.Argument(help="The endpoint's id (we_…).")],
    overlap: Annotated[int, typer.Option(
        min=0, help="Seconds the old secret keeps signing beside the new one.")] =
        DEFAULT_OVERLAP_S,
    data: DataOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Give an endpoint a new signing secret (printed once); during the overlap every
    delivery carries a v1= signature per secret."""
    with _opened(data, database) as store:
        rotated = endpoints.rotate_secret(store, webhook_id, overlap=overlap)
    if as_json:
        _emit(rotated)
        return
    typer.echo(f"New signing secret for {rotated['id']} ({rotated['url']}):")
    typer.echo(rotated["secret"])
    typer.echo("Shown only this once. "
               + (f"The old secret keeps signing for {overlap} s." if overlap
                  else "The old secret no longer signs."))


@events_app.command("resend")
def events_resend(
    event_id: Annotated[str, typer.Argument(help="The event id (its `id`, also webhook-id).")],
    data: DataOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Deliver a recent event again to every enabled endpoint of its account."""
    with _opened(data, database) as store:
        sent = endpoints.resend_event(store, event_id)
    if as_json:
        _emit(sent)
        return
    count = len(sent["endpoints"])
    typer.echo(f"Event {event_id} queued again for {count} endpoint{'' if count == 1 else 's'}.")

