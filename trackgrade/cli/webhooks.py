"""`trackgrade verify-webhook` and `trackgrade listen`: the signature tools
over `trackgrade.signing` and `trackgrade.listener`.

    verify-webhook   exit 0 and the event type on stdout when the signature
                     is valid; exit 1 and the reason on stderr when not;
                     exit 2 for an unreadable body file
    listen           a local receiver: verifies, prints, forwards (Ctrl-C ends it)
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from trackgrade import signing
from trackgrade.cli.errors import EXIT_BAD, EXIT_OK, print_error, read_input_file


def _whsec(value: str) -> str:
    """Every endpoint secret starts with `whsec_` (the prefix is part of the HMAC
    key): anything else can never verify a delivery, so it is a usage error."""
    if value is not None and not value.startswith(signing.SECRET_PREFIX):
        raise typer.BadParameter(f"must be the endpoint's {signing.SECRET_PREFIX}… secret, as "
                                 "`trackgrade admin webhooks add` printed it")
    return value


SecretOption = Annotated[str, typer.Option(
    "--secret", envvar="TRACKGRADE_WEBHOOK_SECRET", show_default=False, callback=_whsec,
    help="The endpoint's signing secret (whsec_…; or TRACKGRADE_WEBHOOK_SECRET).")]
def _tolerance(value: float) -> float:
    """A finite number of seconds, 0 or more (`nan` or `inf` would accept a
    signature of any age): anything else is a usage error."""
    try:
        return signing.check_tolerance(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


ToleranceOption = Annotated[float, typer.Option(
    "--tolerance", min=0, callback=_tolerance,
    help="Seconds the signature timestamp may be off, either way.")]


def _headers_of(values: list[str]) -> dict[str, str]:
    """`--header` values as a dict: "Name: value" lines, or a bare
    Service-Signature value ("t=…,v1=…")."""
    headers: dict[str, str] = {}
    for value in values:
        name, sep, rest = value.partition(":")
        if sep and "=" not in name:
            headers[name.strip().lower()] = rest.strip()
        else:
            headers[signing.SIGNATURE_HEADER.lower()] = value.strip()
    return headers


def verify_webhook(
    secret: SecretOption,
    header: Annotated[list[str], typer.Option(
        "--header", show_default=False,
        help="'Service-Signature: t=…,v1=…' (or just its value); repeat it for the "
             "Standard Webhooks trio 'webhook-id: …', 'webhook-timestamp: …', "
             "'webhook-signature: …'.")],
    body_file: Annotated[Optional[Path], typer.Option(
        "--body-file", show_default=False,
        help="The raw body as received (default: read stdin).")] = None,
    tolerance: ToleranceOption = signing.DEFAULT_TOLERANCE,
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdict as JSON.")] = False,
) -> None:
    """Check a webhook delivery's signature over its raw body: exit 0 and print the event
    type when valid, exit 1 with the reason when not."""
    from trackgrade.listener import verify_delivery

    body = read_input_file(body_file) if body_file is not None else sys.stdin.buffer.read()
    try:
        event = verify_delivery(secret, _headers_of(header), body, tolerance=tolerance)
    except signing.SignatureError as err:
        if as_json:
            typer.echo(json.dumps({"valid": False, "reason": err.reason,
                                   "message": err.message}))
        print_error(f"invalid signature ({err.reason}): {err.message}")
        raise typer.Exit(EXIT_BAD) from None
    kind = event.get("type") if isinstance(event, dict) else None
    if as_json:
        typer.echo(json.dumps({"valid": True, "type": kind,
                               "id": event.get("id") if isinstance(event, dict) else None}))
    else:
        typer.echo(kind if kind is not None else "valid (the body has no event type)")
    raise typer.Exit(EXIT_OK)


def listen(
    secret: SecretOption,
    port: Annotated[int, typer.Option(
        min=0, max=65535, help="Port to listen on (0: any free port).")] = 8787,
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    forward: Annotated[Optional[str], typer.Option(
        "--forward", show_default=False,
        help="Forward verified deliveries (raw body, all headers) to this URL and answer the "
             "sender with its response.")] = None,
    tolerance: ToleranceOption = signing.DEFAULT_TOLERANCE,
    as_json: Annotated[bool, typer.Option(
        "--json", help="One raw JSON line per delivery on stdout.")] = False,
) -> None:
    """Receive webhooks locally: verify each delivery, print it, and forward the verified
    ones to your own handler. Register the printed URL with `admin webhooks add`."""
    from trackgrade.listener import ListenServer, json_line, summary

    if forward is not None and not forward.startswith(("http://", "https://")):
        raise typer.BadParameter("must be an http:// or https:// URL", param_hint="--forward")

    def show(received) -> None:
        typer.echo(json_line(received) if as_json else summary(received))
        sys.stdout.flush()

    try:
        server = ListenServer(secret, host=host, port=port, forward_url=forward,
                              tolerance=tolerance, on_delivery=show)
    except OSError as exc:
        print_error(f"cannot listen on {host}:{port}: {exc.strerror or exc}")
        raise typer.Exit(2) from None
    where = f" and forwarding to {forward}" if forward else ""
    typer.echo(f"Listening on {server.url}{where}; Ctrl-C to stop.", err=True)
    try:
        server.serve_forever(poll_interval=0.2)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
