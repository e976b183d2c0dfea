"""The help screens of every `trackgrade` command, in one style.

Typer's own help prints Python types as placeholders (`<bool>`,
`<list[Path]>`, `{files}...`) and reads `<stem>` in a help text as markup.
`install(group)` gives every command of the tree (the root group calls it on
each run) this renderer instead, which prints:

    Usage, the description, Arguments, Options (a metavar a person reads:
    FILE..., N, pre-master|master; nothing for a flag), Commands for a group,
    and Examples from `EXAMPLES` (or the command's `epilog`).

Help text is printed as written (no markup), so nothing in it is lost.
"""

from __future__ import annotations

import io
import os
import shutil
import sys
from functools import partial
from typing import TYPE_CHECKING

if TYPE_CHECKING:                     # rich loads when a help screen is drawn, not on every run
    from rich.table import Table

# Command path (without "trackgrade") -> (what it shows, the command line).
EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "": (("Grade one track", "trackgrade analyze mix.wav"),
         ("Grade a folder of demos into a spreadsheet", "trackgrade batch demos/ --out grades.csv"),
         ("Open a report in the browser", "trackgrade report mix.wav --out mix.html")),
    "analyze": (("Grade one track", "trackgrade analyze mix.wav"),
                ("Judge a finished master", "trackgrade analyze master.flac --mastering master"),
                ("Several files as one JSON array", "trackgrade analyze a.wav b.mp3 --json")),
    "batch": (("Grade a folder with two workers, best first",
               "trackgrade batch demos/ --jobs 2"),
              ("A CSV to sort in a spreadsheet", "trackgrade batch demos/ --out grades.csv"),
              ("Every document, one JSON line per file",
               "trackgrade batch demos/ --out grades.jsonl")),
    "report": (("Write mix.report.html here", "trackgrade report mix.wav"),
               ("Choose where it goes", "trackgrade report mix.wav --out ~/reports/mix.html"),
               ("The Analysis JSON too", "trackgrade report mix.wav --json > mix.json")),
    "compare": (("Did the new bounce get better or just louder?",
                 "trackgrade compare mix_v1.wav mix_v2.wav"),
                ("Against a saved analysis, as JSON",
                 "trackgrade compare v1.json mix_v2.wav --json")),
    "album": (("The EP as one release", "trackgrade album ep/ --jobs 2"),
              ("As JSON", "trackgrade album 01.wav 02.wav 03.wav --json")),
    "genres": (("The table", "trackgrade genres"),
               ("The JSON of GET /genres", "trackgrade genres --json")),
    "serve": (("The API on port 8080", "trackgrade serve --data ./trackgrade-data"),
              ("Two analysis workers on all interfaces",
               "trackgrade serve --host 0.0.0.0 --workers 2"),
              ("One of several nodes sharing PostgreSQL",
               "trackgrade serve --database postgresql://tg@db/tg --node-id api-1")),
    "admin": (("Create a live key", "trackgrade admin keys create --data ./trackgrade-data"),
              ("Top up credits", "trackgrade admin credits acct_123 --add 50")),
    "admin keys": (("Create a test key", "trackgrade admin keys create --mode test"),
                   ("List keys", "trackgrade admin keys list")),
    "admin keys create": (("A live key on a new account", "trackgrade admin keys create"),
                          ("A test key, as JSON", "trackgrade admin keys create --mode test --json")),
    "admin keys revoke": (("Revoke a key", "trackgrade admin keys revoke key_123"),),
    "admin keys list": (("Every key and its account", "trackgrade admin keys list"),),
    "admin credits": (("Add 50 credits", "trackgrade admin credits acct_123 --add 50"),),
    "admin embed": (("Allow the public badge of an analysis",
                     "trackgrade admin embed 6f1c2d3e-0000-4000-8000-000000000000 on"),),
    "admin console-link": (("A sign-in link for an account's developer",
                            "trackgrade admin console-link --account acct_1a2b3c"),
                           ("Behind a proxy: the public address",
                            "trackgrade admin console-link --account acct_1a2b3c "
                            "--base-url https://tracks.example.org")),
    "admin maintenance": (("Answer 503 while you migrate", "trackgrade admin maintenance on"),
                          ("Back to normal", "trackgrade admin maintenance off")),
    "admin store": (("Look for damage in the store's files",
                     "trackgrade admin store check --data ./trackgrade-data"),),
    "admin store check": (("Look for damage (changes nothing)",
                           "trackgrade admin store check --data ./trackgrade-data"),
                          ("The report as JSON", "trackgrade admin store check --json")),
    "admin migrate": (("Move a data directory into PostgreSQL",
                       "trackgrade admin migrate --data ./trackgrade-data "
                       "--database postgresql://tg@db/tg"),),
    "admin webhooks": (("Register an endpoint",
                        "trackgrade admin webhooks add https://example.com/hooks "
                        "--account acct_123"),),
    "admin webhooks add": (("Register an endpoint",
                            "trackgrade admin webhooks add https://example.com/hooks "
                            "--account acct_123"),),
    "admin webhooks list": (("An account's endpoints and their last delivery",
                             "trackgrade admin webhooks list --account acct_123"),),
    "admin webhooks remove": (("Remove an endpoint", "trackgrade admin webhooks remove wh_123"),),
    "admin webhooks rotate": (("A new secret, the old one valid for an hour more",
                               "trackgrade admin webhooks rotate wh_123 --overlap 3600"),),
    "admin events": (("Deliver an event again", "trackgrade admin events resend 3f0c9a4e-5b1d-4c2a-9e7f-2d8b6a1c4e90"),),
    "admin events resend": (("Deliver an event again", "trackgrade admin events resend 3f0c9a4e-5b1d-4c2a-9e7f-2d8b6a1c4e90"),),
    "verify-webhook": (("Check a saved delivery",
                        "trackgrade verify-webhook --secret whsec_... --header "
                        "'Service-Signature: t=1700000000,v1=...' --body-file body.json"),
                       ("From a pipe", "cat body.json | trackgrade verify-webhook --secret "
                                       "whsec_... --header 'Service-Signature: ...'")),
    "remote": (("Grade a file on an instance and wait for it",
                "trackgrade remote analyze mix.wav --wait"),
               ("Your latest analyses", "trackgrade remote list")),
    "remote analyze": (("Submit, upload and wait", "trackgrade remote analyze mix.wav --wait"),
                       ("Against a chosen profile, as JSON",
                        "trackgrade remote analyze mix.wav --genre deep_house --wait --json")),
    "remote get": (("One analysis", "trackgrade remote get 6f1c2d3e-0000-4000-8000-000000000000"),),
    "remote status": (("Is it done yet?",
                       "trackgrade remote status 6f1c2d3e-0000-4000-8000-000000000000"),),
    "remote cancel": (("Give up an analysis whose upload never came (credit restored)",
                       "trackgrade remote cancel 6f1c2d3e-0000-4000-8000-000000000000"),),
    "remote list": (("The 20 newest", "trackgrade remote list"),
                    ("Everything, as JSON", "trackgrade remote list --limit 0 --json")),
    "remote account": (("Plan, limits and today's usage", "trackgrade remote account"),),
    "listen": (("Receive and print deliveries on port 8787",
                "trackgrade listen --secret whsec_..."),
               ("Forward verified ones to your app",
                "trackgrade listen --secret whsec_... --forward http://127.0.0.1:3000/hooks")),
}

MAX_WIDTH = 100
# Placeholders for options that do not set their own metavar.
VALUE_NAMES = {"--data": "DIR", "--out": "FILE", "--base-url": "URL", "--forward": "URL",
               "--body-file": "FILE", "--database": "URL", "--reference": "FILE",
               "--genre": "KEY", "--account": "ACCOUNT", "--secret": "SECRET",
               "--external-id": "ID"}


def command_key(ctx) -> str:
    """The command path without the program name: "" for the root, "admin keys"..."""
    names = []
    while ctx is not None and ctx.parent is not None:
        names.append(ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(reversed(names))


def examples_for(command, key: str) -> tuple[tuple[str, str], ...]:
    if key in EXAMPLES:
        return EXAMPLES[key]
    epilog = (command.epilog or "").strip()
    return tuple(("", line.strip().removeprefix("$ ")) for line in epilog.splitlines()
                 if line.strip())


# ---------------------------------------------------------------- names people read
# Duck-typed: Typer >= 0.20 builds its commands on a vendored copy of click
# whose classes are not click's.

def is_argument(param) -> bool:
    return getattr(param, "param_type_name", "") == "argument"


def is_option(param) -> bool:
    return getattr(param, "param_type_name", "") == "option"


def is_group(command) -> bool:
    return hasattr(command, "list_commands")


def _is_flag(param) -> bool:
    return bool(getattr(param, "is_flag", False)) or bool(getattr(param, "count", False))


def choice_names(param) -> list[str] | None:
    descriptor = getattr(param, "type_descriptor", None)       # Typer >= 0.20
    choices = (getattr(descriptor, "choices", None) if descriptor is not None
               else getattr(getattr(param, "type", None), "choices", None))
    if not choices:
        return None
    return [str(getattr(c, "value", c)) for c in choices]


def is_number(param) -> bool:
    descriptor = getattr(param, "type_descriptor", None)
    if descriptor is not None:
        annotation = descriptor.annotation
        return annotation in (int, float)
    return getattr(getattr(param, "type", None), "name", "") in (
        "integer", "integer range", "int", "int range", "float", "float range")


def value_name(param) -> str:
    """The placeholder of an option's value: its metavar, its choices, N for
    a number, else the option's own name in capitals (FILE, DIR, HOST)."""
    if param.metavar:
        return param.metavar
    for option in param.opts:
        if option in VALUE_NAMES:
            return VALUE_NAMES[option]
    choices = choice_names(param)
    if choices:
        return "|".join(choices)
    if is_number(param):
        return "N"
    longest = max(param.opts, key=len).lstrip("-")
    return longest.upper().replace("-", "_")


def argument_name(param) -> str:
    name = param.metavar or param.name.upper()
    choices = choice_names(param)
    if choices and not param.metavar:
        name = "|".join(choices)
    if param.nargs != 1:
        name += "..."
    return name if param.required else f"[{name}]"


def option_label(param) -> str:
    shorts = [o for o in param.opts if not o.startswith("--")]
    longs = [o for o in param.opts if o.startswith("--")]
    label = ", ".join(shorts + longs) if shorts else "    " + ", ".join(longs)
    if param.secondary_opts:
        label += " / " + ", ".join(param.secondary_opts)
    if not _is_flag(param):
        label += " " + value_name(param)
    return label


def default_note(param) -> str:
    if _is_flag(param) or not param.show_default or param.required:
        return ""
    if isinstance(param.show_default, str):
        return f" (default: {param.show_default})"
    default = param.default
    if default is None or default == () or default == []:
        return ""
    default = getattr(default, "value", default)
    return f" (default: {default})"


def paragraphs(text: str | None) -> list[str]:
    """The help text as reflowed paragraphs (blank lines separate them)."""
    import inspect

    text = inspect.cleandoc(text or "").replace("\b\n", "")
    return [" ".join(p.split()) for p in text.split("\n\n") if p.strip()]


def short_help(command) -> str:
    """The first sentence of a command's help, for the Commands list."""
    if command.short_help:
        return " ".join(command.short_help.split())
    first = (paragraphs(command.help) or [""])[0]
    end = first.find(". ")
    return first[:end + 1] if end > 0 else first


def usage_line(command, ctx) -> str:
    parts = [ctx.command_path]
    if is_group(command):
        parts.append("COMMAND")
    for param in command.get_params(ctx):
        if is_argument(param):
            parts.append(argument_name(param))
    if any(is_option(p) for p in command.get_params(ctx)):
        parts.append("[options]")
    return " ".join(parts)


# ---------------------------------------------------------------- the screen

def _table() -> Table:
    from rich.table import Table
    table = Table.grid(padding=(0, 3))
    table.add_column(no_wrap=True, style="bold")
    table.add_column()
    return table


def help_text(command, ctx, *, width: int, colour: bool) -> str:
    """The whole help screen as text (ANSI styles only when `colour`)."""
    from rich.console import Console
    from rich.text import Text

    buffer = io.StringIO()
    console = Console(file=buffer, width=width, force_terminal=colour,
                      color_system="standard" if colour else None, highlight=False,
                      markup=False, emoji=False)
    heading = "bold"
    console.print(Text("Usage: ", style=heading) + Text(usage_line(command, ctx)))
    for paragraph in paragraphs(command.help):
        console.print()
        console.print(Text(paragraph))
    params = command.get_params(ctx)
    arguments = [p for p in params if is_argument(p)]
    options = [p for p in params if is_option(p) and not getattr(p, "hidden", False)]
    if arguments:
        table = _table()
        for param in arguments:
            table.add_row("  " + argument_name(param).strip("[]"),
                          Text((getattr(param, "help", None) or "") + default_note(param)))
        console.print()
        console.print(Text("Arguments", style=heading))
        console.print(table)
    if options:
        table = _table()
        for param in options:
            text = " ".join((param.help or "").split())
            if param.name == "help":
                text = "Show this help and exit."
            table.add_row("  " + option_label(param), Text(text + default_note(param)))
        console.print()
        console.print(Text("Options", style=heading))
        console.print(table)
    if is_group(command):
        table = _table()
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is None or sub.hidden:
                continue
            table.add_row("  " + name, Text(short_help(sub)))
        console.print()
        console.print(Text("Commands", style=heading))
        console.print(table)
        console.print()
        console.print(Text(f"Run '{ctx.command_path} COMMAND --help' for a command's options.",
                           style="dim"))
    examples = examples_for(command, command_key(ctx))
    if examples:
        console.print()
        console.print(Text("Examples", style=heading))
        for what, line in examples:
            if what:
                console.print(Text(f"  {what}:", style="dim"))
            console.print(Text(f"    $ {line}" if what else f"  $ {line}"))
    return "\n".join(line.rstrip() for line in buffer.getvalue().rstrip("\n").splitlines())


def terminal_width() -> int:
    columns = os.environ.get("COLUMNS", "")
    width = int(columns) if columns.isdigit() else shutil.get_terminal_size((80, 24)).columns
    return max(40, min(width, MAX_WIDTH))


def _format_help(command, ctx, formatter) -> None:
    colour = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
    formatter.write(help_text(command, ctx, width=terminal_width(), colour=colour) + "\n")


def _format_usage(command, ctx, formatter) -> None:
    formatter.write(f"Usage: {usage_line(command, ctx)}\n")


def install(command) -> None:
    """Give `command` and every command below it this help screen."""
    command.format_help = partial(_format_help, command)
    command.format_usage = partial(_format_usage, command)
    for sub in getattr(command, "commands", {}).values():
        install(sub)
