"""`trackgrade admin keys create|revoke|list` and `admin credits`."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from trackgrade.cli.admin.common import (Billing, DatabaseOption, DataOption, JsonOption, Mode,
                                         Plan, _emit, _opened, _table, admin, app, keys_app)


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
    _table(("KEY ID", "MODE", "HINT", "ACCOUNT", "PLAN", "BILLING", "CREDITS", "STATUS"),
           [(r["key_id"], r["mode"] or "", r["hint"] or "", r["account"], r["plan"] or "?",
             r["billing"] or "?", str(r["credits"]), "revoked" if r["revoked_at"] else "active")
            for r in rows])


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

