"""`trackgrade admin`: the developer console on a data directory.

Mounted by trackgrade/cli/__init__.py as `trackgrade admin`. Every command
works while `trackgrade serve` runs on the same directory (the store
serialises the two processes; the server sees the change on its next
request). Secrets (API keys, webhook signing secrets) are printed once, at
creation; only a key's hash is stored.

Exit codes: 0 done; 1 the thing named is bad (unknown key, account or
analysis); 2 usage error or unusable data directory. One line on stderr,
never a traceback.
"""

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
DEFAULT_OVERLAP_S = 86400      # endpoints.DEFAULT_OVERLAP (a test keeps the two equal)

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


@keys_app.command("create")
def keys_create(
    data: DataOption = None,
    database: DatabaseOption = None,
    mode: Annotated[Mode, typer.Option(help="live keys analyse for real; test keys get the "
                                            "canned analysis.")] = Mode.live,
    plan: Annotated[Optional[Plan], typer.Option(
        help="Account plan (new account: default pro; free has no API access).",
        show_default=False)] = None,
    billing: Annotated[Optional[Billing], typer.Option(
        help="Account billing (new account: default credits).", show_default=False)] = None,
    credits: Annotated[Optional[int], typer.Option(
        min=0, help="Starting credits (added when --account is given).",
        show_default=False)] = None,
    account: Annotated[Optional[str], typer.Option(
        help="Add the key to this existing account instead of creating one.",
        show_default=False)] = None,
    as_json: JsonOption = False,
) -> None:
    """Create an API key (and its account); the key is printed once."""
    with _opened(data, database, create=True) as store:
        made = admin.create_key(store, mode=mode.value, plan=plan.value if plan else None,
                                billing=billing.value if billing else None, credits=credits,
                                account_id=account)
        summary = next(row for row in admin.list_keys(store) if row["key_id"] == made["key_id"])
    if as_json:
        _emit({"key": made["key"], "key_id": made["key_id"], "account": made["account"]})
        return
    typer.echo(f"Created {made['mode']} key {made['key_id']} for account {made['account']} "
               f"({summary['plan']}, {summary['billing']}, {summary['credits']} credits).")
    typer.echo(made["key"])
    typer.echo("Store it now: the key is shown only this once.")
    if summary["plan"] == "free":
        typer.echo("Note: the free plan has no API access (requests answer 403 not_eligible).")


@keys_app.command("revoke")
def keys_revoke(
    key_id: Annotated[str, typer.Argument(help="The key's id (key_…), from `admin keys list`.")],
    data: DataOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Revoke a key; a running server refuses it from its next request."""
    with _opened(data, database) as store:
        key = admin.revoke_key(store, key_id)
    if as_json:
        _emit({"key_id": key["id"], "account": key["account_id"], "revoked_at": key["revoked_at"]})
        return
    typer.echo(f"Revoked {key['id']} ({key.get('hint')}) at {key['revoked_at']}.")


@keys_app.command("list")
def keys_list(data: DataOption = None, database: DatabaseOption = None,
              as_json: JsonOption = False) -> None:
    """List keys with their accounts (never the secrets)."""
    with _opened(data, database) as store:
        rows = admin.list_keys(store)
    if as_json:
        _emit(rows)
        return
    if not rows:
        typer.echo("No keys yet: `trackgrade admin keys create`.")
        return
    header = ("KEY ID", "MODE", "HINT", "ACCOUNT", "PLAN", "BILLING", "CREDITS", "STATUS")
    table = [header] + [
        (r["key_id"], r["mode"] or "", r["hint"] or "", r["account"], r["plan"] or "?",
         r["billing"] or "?", str(r["credits"]), "revoked" if r["revoked_at"] else "active")
        for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        typer.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


@app.command("credits")
def credits_add(
    account: Annotated[str, typer.Argument(help="The account id (acct_…).")],
    add: Annotated[int, typer.Option("--add", min=1, help="Credits to add.")],
    data: DataOption = None,
    database: DatabaseOption = None,
    as_json: JsonOption = False,
) -> None:
    """Top up an account's credits."""
    with _opened(data, database) as store:
        updated = admin.add_credits(store, account, add)
    if as_json:
        _emit({"account": updated["id"], "credits": updated["credits"]})
        return
    typer.echo(f"Account {updated['id']} now has {updated['credits']} credits.")


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
    header = ("ID", "URL", "ENABLED", "CREATED", "LAST ATTEMPT", "RESULT")
    from trackgrade.display import escape_controls

    table = [header] + [(r["id"], escape_controls(r["url"]), "yes" if r["enabled"] else "no",
                         r["created"] or "", _when(r["last_attempt_at"]),
                         escape_controls(_result(r))) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        typer.echo("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


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
