"""The command line's one error boundary and its exit codes.

Every `trackgrade` command runs inside `run_guarded`: a `TrackgradeError`
becomes one line on stderr (``trackgrade: <message>``) and an exit code, a
usage error one line and exit 2, Ctrl-C one line and exit 130, anything
unexpected one line and exit 1. No traceback reaches the user
(``TRACKGRADE_DEBUG=1`` re-raises unexpected exceptions for developers).

Exit codes (CONTRACT.md section 2), in this one place:

    0  success
    1  the thing checked is bad (a failed analysis in a batch, an invalid
       signature, an engine failure)
    2  usage error or unreadable input (missing or undecodable file, bad
       option value, no files found)
  130  interrupted (Ctrl-C)

`trackgrade remote …` maps API errors the same way (`exit_code_for_api`):
2 for a refused request, a bad key or an unknown id, 1 for everything else
(a failed analysis or audio the server could not use, limits, credits, an
unreachable or failing server).
"""

from __future__ import annotations

import errno
import os
import sys
from pathlib import Path
from typing import Callable

import typer

from trackgrade.client.errors import APIError
from trackgrade.errors import TrackgradeError

# Typer >= 0.20 vendors its own copy of click (typer._click); older releases use
# click itself. The boundary recognises both: the real click's exceptions too
# when click is loaded (importing it only for that would slow every command).
try:
    from typer._click import exceptions as _vendored
    _FAMILIES = (_vendored,) + ((sys.modules["click"].exceptions,) if "click" in sys.modules else ())
except ImportError:  # pragma: no cover - older Typer
    import click
    _FAMILIES = (click.exceptions,)

NO_ARGS_ERRORS = tuple({f.NoArgsIsHelpError for f in _FAMILIES})
USAGE_ERRORS = tuple({f.UsageError for f in _FAMILIES})
CLICK_ERRORS = tuple({f.ClickException for f in _FAMILIES})
EXIT_SIGNALS = tuple({typer.Exit, *(f.Exit for f in _FAMILIES if hasattr(f, "Exit"))})
ABORT_SIGNALS = tuple({typer.Abort, KeyboardInterrupt, *(f.Abort for f in _FAMILIES if hasattr(f, "Abort"))})

EXIT_OK = 0
EXIT_BAD = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130

PROG = "trackgrade"

# Codes that mean "the input or the invocation is wrong" (exit 2); every
# other TrackgradeError means "the thing checked is bad" (exit 1).
USAGE_CODES = frozenset({
    "parameter_invalid", "parameter_missing", "parameter_unknown", "invalid_json",
    "upload_incomplete", "unprocessable_audio", "file_rejected", "file_too_large",
    "request_too_large",
})


# API answers that mean "the invocation is wrong" for `trackgrade remote …`:
# the USAGE_CODES plus a bad key or an unknown analysis id. Audio the server
# judged bad (unprocessable_audio) is a failed analysis there, exit 1, whether
# the upload step refused it (ADPCM) or the worker did (digital silence).
REMOTE_USAGE_CODES = (USAGE_CODES - {"unprocessable_audio"}) | {
    "invalid_api_key", "not_found", "route_not_found"}


def exit_code_for(error: TrackgradeError) -> int:
    """The exit code of a library error."""
    return EXIT_USAGE if error.code in USAGE_CODES else EXIT_BAD


def exit_code_for_api(error) -> int:
    """The exit code of a `trackgrade.client.APIError` (a remote call that failed)."""
    return EXIT_USAGE if error.code in REMOTE_USAGE_CODES else EXIT_BAD


def error_line(message: str) -> str:
    """The one line printed on stderr for a failure."""
    from trackgrade.display import escape_controls

    text = escape_controls(" ".join(str(message).split())) or "unknown error"
    return f"{PROG}: {text}"


def print_error(message: str) -> None:
    try:
        typer.echo(error_line(message), err=True)
    except OSError:
        pass


def read_input_file(path: str | Path) -> bytes:
    """Read a whole file into memory; an unreadable path is a usage error
    (``cannot read 'x.wav': No such file or directory``)."""
    try:
        return Path(path).read_bytes()
    except IsADirectoryError:
        raise TrackgradeError("parameter_invalid", f"cannot read '{path}': Is a directory",
                              param="file") from None
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise TrackgradeError("parameter_invalid", f"cannot read '{path}': {reason}",
                              param="file") from None


def _usage_line(exc) -> str:
    message = exc.format_message()
    ctx = exc.ctx
    if ctx is not None:
        message += f" (see '{ctx.command_path} --help')"
    return message


def run_guarded(call: Callable[[], object]) -> int:
    """Run a non-standalone click main and turn every outcome into an exit
    code, printing at most one line on stderr."""
    try:
        result = call()
        if result == EXIT_INTERRUPTED:   # Typer turns Ctrl-C into a silent Exit(130)
            print_error("interrupted")
        return result if isinstance(result, int) else EXIT_OK
    except TrackgradeError as exc:
        print_error(exc.message)
        return exit_code_for(exc)
    except APIError as exc:             # a remote call: message, code and request id
        print_error(str(exc))
        return exit_code_for_api(exc)
    except NO_ARGS_ERRORS as exc:
        exc.show()
        return EXIT_USAGE
    except USAGE_ERRORS as exc:
        print_error(_usage_line(exc))
        return EXIT_USAGE
    except CLICK_ERRORS as exc:
        print_error(exc.format_message())
        return exc.exit_code if exc.exit_code else EXIT_BAD
    except EXIT_SIGNALS as exc:
        return exc.exit_code
    except ABORT_SIGNALS:
        print_error("interrupted")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        _silence_stdout()
        return EXIT_BAD
    except OSError as exc:
        if exc.errno == errno.EPIPE:
            _silence_stdout()
            return EXIT_BAD
        print_error(f"{exc.strerror or exc}")
        return EXIT_BAD
    except Exception as exc:  # the last line of defence: never a traceback
        if os.environ.get("TRACKGRADE_DEBUG"):
            raise
        detail = str(exc) or type(exc).__name__
        print_error(f"internal error ({type(exc).__name__}): {detail}")
        return EXIT_BAD


def _silence_stdout() -> None:
    """After a closed pipe (``trackgrade ... | head``), stop Python from
    complaining again when it flushes stdout at exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass
