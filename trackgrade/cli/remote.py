"""`trackgrade remote …`: drive a trackgrade instance through `trackgrade.client`.

`--base-url` / `--key` default to `TRACKGRADE_BASE_URL` / `TRACKGRADE_API_KEY`.
A complete analysis is drawn by the same renderer as `trackgrade analyze`
(`cli/render.py`), so a remote analysis looks exactly like a local one;
`--json` prints the server's document. An API error is one line on stderr
with the envelope's code and request id (the error boundary in
`cli/errors.py`); a failed analysis exits 1.
"""

from __future__ import annotations

import json
import sys
import time
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Any, Optional

import typer

from trackgrade.cli.analyze import (GenreOption, JsonOption, json_option, Mastering, MasteringOption,
                                    check_readable, stderr_console, stdout_console)
from trackgrade.cli.errors import EXIT_BAD, EXIT_OK, print_error, read_input_file
from trackgrade.errors import TrackgradeError

app = typer.Typer(name="remote", no_args_is_help=True, add_completion=False,
                  help="Analyze and read analyses on a trackgrade instance (its HTTP API).")

BaseUrlOption = Annotated[Optional[str], typer.Option(
    "--base-url", envvar="TRACKGRADE_BASE_URL", show_envvar=True,
    help="The instance, e.g. http://127.0.0.1:8080 (default: TRACKGRADE_BASE_URL, "
         "else http://127.0.0.1:8080).", show_default=False)]
KeyOption = Annotated[Optional[str], typer.Option(
    "--key", envvar="TRACKGRADE_API_KEY", show_envvar=True,
    help="API key svc_live_… or svc_test_… (default: TRACKGRADE_API_KEY).",
    show_default=False)]
TimeoutOption = Annotated[float, typer.Option(
    "--timeout", min=1, help="Give up after this many seconds in all: every request, retry "
    "wait and (with --wait) the polling included.")]
READ_TIMEOUT_S = 120.0
StatusJsonOption = json_option("the status JSON")
ListJsonOption = json_option("the analyses as a JSON array")
AccountJsonOption = json_option("the Account JSON")


def make_client(base_url: str | None, key: str | None, *, timeout: float | None = None,
                **options: Any):
    """A `Client` for the command line; a missing key is a usage error.
    `timeout` bounds the whole command (the client's deadline); every retry
    wait is announced on stderr, saying what the client waits for."""
    from trackgrade.client import Client

    if not key:
        raise TrackgradeError("parameter_missing", "no API key: pass --key or set "
                              "TRACKGRADE_API_KEY", param="key")
    if timeout is not None:
        options.update(deadline=time.monotonic() + timeout, timeout=min(30.0, timeout))
    try:
        options.setdefault("on_wait", announce_wait)
        return Client(key, base_url, **options)
    except ValueError as exc:
        raise TrackgradeError("parameter_invalid", str(exc), param="base_url") from None


def announce_wait(error, seconds: float) -> None:
    """One stderr line before a retry wait: what went wrong, how long, and why."""
    if error.status is None:
        what = f"no answer from the server ({error.message})"
    else:
        what = f"the server answered {error.status} {error.code or ''}".rstrip()
        what += f": {error.message}" if error.message else ""
    asked = " as its Retry-After asks" if error.retry_after is not None else ""
    wait = f"{seconds:.1f}" if seconds < 10 else f"{seconds:.0f}"
    print_error(f"{what}; retrying in {wait} s{asked} (Ctrl-C or --timeout to stop)")


def dump(document: Any) -> None:
    sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def failure_line(doc: dict) -> str:
    error = doc.get("error") or {}
    return (f"analysis {doc['id']} ({doc.get('file_name')}) failed: "
            f"{error.get('message', 'no reason given')} (code {error.get('code')})")


def show_analysis(doc: dict, as_json: bool) -> int:
    """Print one server document; the exit code (1 for a failed analysis)."""
    if as_json:
        dump(doc)
    if doc["status"] == "failed":
        print_error(failure_line(doc))
        return EXIT_BAD
    if as_json:
        return EXIT_OK
    if doc["status"] != "complete":
        stdout_console().print(status_line(doc))
        return EXIT_OK
    from trackgrade.cli.render import render_analysis
    from trackgrade.model import analysis_from_dict

    try:
        analysis = analysis_from_dict(doc)
    except (KeyError, TypeError, ValueError) as exc:   # a server newer or older than us
        print_error(f"cannot draw this analysis ({type(exc).__name__}: {exc}); printing its JSON")
        dump(doc)
        return EXIT_OK
    stdout_console().print(render_analysis(analysis))
    return EXIT_OK


def canned_note(accepted: dict) -> str:
    """Said first for a test key: its result will be canned, not measured."""
    return "; test key: its result will be a canned test result" \
        if accepted.get("livemode") is False else ""


def status_line(doc: dict) -> str:
    return (f"{doc['id']}  {doc['status']}  diagnosis {doc.get('diagnosis_status')}"
            + (f"  {doc['file_name']}" if doc.get("file_name") else ""))


@app.command("analyze")
def remote_analyze(
    file: Annotated[Path, typer.Argument(help="Audio file (WAV, AIFF, FLAC, MP3).",
                                         show_default=False)],
    base_url: BaseUrlOption = None,
    key: KeyOption = None,
    mastering: MasteringOption = Mastering.pre_master,
    genre: GenreOption = None,
    external_id: Annotated[Optional[str], typer.Option(
        "--external-id", help="Your own reference, echoed back on the analysis.",
        show_default=False)] = None,
    wait: Annotated[bool, typer.Option(
        "--wait", help="Poll until the analysis is complete and show it.")] = False,
    timeout: TimeoutOption = 600.0,
    as_json: JsonOption = False,
) -> None:
    """Submit and upload a file to an instance; with --wait, poll until it is complete and
    show it like `trackgrade analyze` does. Without --wait, print the accepted analysis."""
    check_readable([file])
    data = read_input_file(file)
    client = make_client(base_url, key, timeout=timeout)
    err = stderr_console()
    with err.status(f"Uploading {file.name}…", spinner="dots") if err.is_terminal \
            else nullcontext():
        accepted = client.analyses.create(data, file_name=file.name,
                                          mastering_status=mastering.value,
                                          external_id=external_id, genre=genre)
    if not wait:
        shown = {k: v for k, v in accepted.items() if k != "upload"}
        if as_json:
            dump(shown)
        else:
            credits = accepted.get("credits_remaining")
            stdout_console().print(
                f"submitted {file.name} as {accepted['id']} (processing{canned_note(accepted)})"
                + (f"; {credits} credits left" if credits is not None else "")
                + f"\nfollow it with: trackgrade remote status {accepted['id']}")
        return
    if not as_json:     # the id first: `remote get` / `remote cancel` need it, even after Ctrl-C
        stdout_console().print(f"submitted {file.name} as {accepted['id']}{canned_note(accepted)};"
                               f" waiting for it "
                               f"(later: trackgrade remote get {accepted['id']})", soft_wrap=True)
    with err.status(f"Analyzing {file.name}…", spinner="dots") if err.is_terminal \
            else nullcontext():
        doc = client.analyses.wait(accepted["id"], timeout=max(0.0, client.time_left()))
    raise typer.Exit(show_analysis(doc, as_json))


@app.command("get")
def remote_get(
    analysis_id: Annotated[str, typer.Argument(metavar="ID", help="The analysis id.")],
    base_url: BaseUrlOption = None,
    key: KeyOption = None,
    timeout: TimeoutOption = READ_TIMEOUT_S,
    as_json: JsonOption = False,
) -> None:
    """Show one analysis (drawn like `trackgrade analyze` once complete)."""
    doc = make_client(base_url, key, timeout=timeout).analyses.get(analysis_id)
    raise typer.Exit(show_analysis(doc, as_json))


@app.command("status")
def remote_status(
    analysis_id: Annotated[str, typer.Argument(metavar="ID", help="The analysis id.")],
    base_url: BaseUrlOption = None,
    key: KeyOption = None,
    timeout: TimeoutOption = READ_TIMEOUT_S,
    as_json: StatusJsonOption = False,
) -> None:
    """Show an analysis's state: processing, complete or failed, and its diagnosis status."""
    doc = make_client(base_url, key, timeout=timeout).analyses.status(analysis_id)
    if as_json:
        dump(doc)
    else:
        stdout_console().print(status_line(doc))


@app.command("cancel")
def remote_cancel(
    analysis_id: Annotated[str, typer.Argument(metavar="ID", help="The analysis id.")],
    base_url: BaseUrlOption = None,
    key: KeyOption = None,
    timeout: TimeoutOption = READ_TIMEOUT_S,
    as_json: JsonOption = False,
) -> None:
    """Cancel an analysis still waiting for its upload (its credit is restored)."""
    doc = make_client(base_url, key, timeout=timeout).analyses.cancel(analysis_id)
    if as_json:
        dump(doc)
    else:
        stdout_console().print(f"Canceled {status_line(doc)}", markup=False, highlight=False)


@app.command("list")
def remote_list(
    base_url: BaseUrlOption = None,
    key: KeyOption = None,
    limit: Annotated[int, typer.Option(
        "--limit", min=0, help="Show at most this many, newest first (0: all).")] = 20,
    timeout: TimeoutOption = READ_TIMEOUT_S,
    as_json: ListJsonOption = False,
) -> None:
    """List the key's analyses, newest first (pages through the API as needed)."""
    client = make_client(base_url, key, timeout=timeout)
    docs = list(client.analyses.list(limit=limit or None,
                                     page_size=min(100, limit) if limit else 100))
    if as_json:
        dump(docs)
        return
    from trackgrade.cli.render import remote_list_table

    stdout_console().print(remote_list_table(docs))


@app.command("account")
def remote_account(
    base_url: BaseUrlOption = None,
    key: KeyOption = None,
    timeout: TimeoutOption = READ_TIMEOUT_S,
    as_json: AccountJsonOption = False,
) -> None:
    """Show the key's account: plan, billing, credits, limits and today's usage."""
    doc = make_client(base_url, key, timeout=timeout).account()
    if as_json:
        dump(doc)
        return
    from trackgrade.cli.render import account_table

    stdout_console().print(account_table(doc))
