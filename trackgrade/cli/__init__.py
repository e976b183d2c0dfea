"""The `trackgrade` command line: one Typer app.

Each command lives in its own module (analyze, batch, genres, report; admin
and serve are written alongside) and is mounted here. Every command runs
inside the one error boundary of `trackgrade.cli.errors`, so a failure is
one line on stderr and an exit code, never a traceback.
"""

from __future__ import annotations

import gc

# the imports below make ~50 000 tracked objects and no garbage worth finding:
# the collector stays off while they load and the objects are then frozen
# (moved out of its generations), so neither these imports nor a command's
# later collections walk them (~0.02-0.03 s of a 5-minute track's analysis)
_GC_WAS_ENABLED = gc.isenabled()
gc.disable()

import sys  # noqa: E402
from typing import Annotated  # noqa: E402

from trackgrade.native_threads import cap_native_threads  # noqa: E402

cap_native_threads()      # before anything loads numpy: the engine's own threads are the parallelism

import typer  # noqa: E402
from typer.core import TyperGroup  # noqa: E402

from trackgrade.cli.errors import PROG, run_guarded  # noqa: E402


class TrackgradeGroup(TyperGroup):
    """The root group: wraps every invocation (the console script, `python
    -m trackgrade` and Typer's CliRunner alike) in the error boundary."""

    def main(self, args=None, prog_name=None, complete_var=None, standalone_mode=True,
             **extra):
        from trackgrade.cli.help import install

        install(self)   # every command's --help in one readable style (cli/help.py)
        parent = super(TrackgradeGroup, self)
        code = run_guarded(lambda: parent.main(args=args, prog_name=prog_name or PROG,
                                               complete_var=complete_var,
                                               standalone_mode=False, **extra))
        if standalone_mode:
            sys.exit(code)
        return code


app = typer.Typer(
    cls=TrackgradeGroup,
    name=PROG,
    help="Grade electronic-music tracks: score and grade, tempo, key, genre fit, tonal balance, "
         "loudness, stereo, structure and feedback.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",   # docstrings reflow instead of keeping their line breaks
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version
        try:
            typer.echo(f"{PROG} {version('trackgrade')}")
        except PackageNotFoundError:
            typer.echo(f"{PROG} (development)")
        raise typer.Exit(0)


@app.callback()
def _root(
    show_version: Annotated[bool, typer.Option(
        "--version", help="Print the version and exit.", callback=_version,
        is_eager=True)] = False,
) -> None:
    """Grade electronic-music tracks: score and grade, tempo, key, genre fit, tonal balance,
    loudness, stereo, structure and feedback."""


from trackgrade.cli.analyze import analyze as _analyze_command  # noqa: E402
from trackgrade.cli.batch import batch as _batch_command  # noqa: E402
from trackgrade.cli.compare import album as _album_command  # noqa: E402
from trackgrade.cli.compare import compare as _compare_command  # noqa: E402
from trackgrade.cli.genres import genres as _genres_command  # noqa: E402
from trackgrade.cli.report import report as _report_command  # noqa: E402

app.command("analyze")(_analyze_command)
app.command("batch")(_batch_command)
app.command("report")(_report_command)
app.command("genres")(_genres_command)
app.command("compare")(_compare_command)
app.command("album")(_album_command)

from trackgrade.cli.admin import app as admin_app  # noqa: E402
from trackgrade.cli.remote import app as remote_app  # noqa: E402
from trackgrade.cli.serve import serve  # noqa: E402

app.add_typer(admin_app, name="admin")
app.add_typer(remote_app, name="remote")
app.command("serve")(serve)

from trackgrade.cli.webhooks import listen as _listen_command  # noqa: E402
from trackgrade.cli.webhooks import verify_webhook as _verify_webhook_command  # noqa: E402

app.command("verify-webhook")(_verify_webhook_command)
app.command("listen")(_listen_command)


def main() -> None:
    """The console script `trackgrade` and `python -m trackgrade`."""
    try:
        app(prog_name=PROG)
    finally:
        # the process ends here: keep the interpreter's shutdown from walking
        # every object the imports made looking for cycles (~0.05 s of a
        # 5-minute track's ~1.6 s analysis); their memory goes with the process
        gc.freeze()


gc.freeze()               # every command's modules are loaded: see the top of this file
if _GC_WAS_ENABLED:
    gc.enable()
