"""`trackgrade analyze FILE...`: analyze local files with the engine.

Each file is read into memory and handed to `trackgrade.pipeline.analyze` as
bytes (never through a temporary file). The screen is rendered by
`trackgrade.cli.render`; `--json` prints `Analysis.to_dict()` instead (one
object for one file, an array for several) and nothing else on stdout. Every
file is tried; a failed one is an error line on stderr, an entry
``{"file", "error"}`` in the array, and exit code 2.
"""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from trackgrade.cli.errors import EXIT_OK, EXIT_USAGE, print_error, read_input_file
from trackgrade.errors import TrackgradeError
from trackgrade.limits import MASTERING_STATUSES
from trackgrade.grading.targets import Reference, check_genre
from trackgrade.model import Analysis

if TYPE_CHECKING:                      # rich loads only to draw
    from rich.console import Console


Mastering = Enum("Mastering", {name.replace("-", "_"): name for name in MASTERING_STATUSES},
                 type=str)
Mastering.__doc__ = "`--mastering`: the loudness targets a track is judged against."


MasteringOption = Annotated[Mastering, typer.Option(
    "--mastering", "-m", case_sensitive=False,
    help="Judge loudness as a pre-master (headroom expected) or a finished master.")]
def json_option(what: str):
    """The `--json` flag of a command that prints `what` (its help says which object)."""
    return Annotated[bool, typer.Option("--json", help=f"Print {what} on stdout (nothing else).")]


JsonOption = json_option("the Analysis JSON")
GenreOption = Annotated[Optional[str], typer.Option(
    "--genre", "-g", help="Grade against this profile (a key of 'trackgrade genres', family or "
                          "label) instead of the detected family.", show_default=False)]
CodecPreviewOption = Annotated[bool, typer.Option(
    "--codec-preview", help="Also encode the passages where a codec peaks (or the whole of a short track) to MP3 "
                            "320, AAC 256 and Opus 160 in memory and report the true peak after each (delivery.codecs).")]
ReferenceOption = Annotated[Optional[list[Path]], typer.Option(
    "--reference", "-r", help="A reference track (repeatable): its bands, loudness, loudness range "
                              "and stereo width become the targets.", show_default=False)]


def load_references(paths: list[Path] | None) -> tuple[Reference, ...]:
    """Measure each reference file (in memory); errors name the file."""
    from trackgrade.pipeline import reference  # the engine loads on use

    if not paths:
        return ()
    check_readable(paths)
    refs = []
    for path in paths:
        try:
            refs.append(reference(read_input_file(path), file_name=path.name))
        except TrackgradeError as exc:
            raise TrackgradeError(exc.code, f"cannot use reference '{path}': {exc.message}",
                                  param="reference") from None
    return tuple(refs)


def checked_genre(genre: str | None) -> str | None:
    return None if genre is None else check_genre(genre, listed_by="one that 'trackgrade genres' "
                                                                   "lists")


def stdout_console() -> Console:
    """Where results are drawn: text stays text (cli/terminal.py)."""
    from trackgrade.cli.terminal import PlainConsole
    return PlainConsole()


def stderr_console() -> Console:
    from trackgrade.cli.terminal import PlainConsole
    return PlainConsole(stderr=True)


def check_readable(paths: Path | list[Path]) -> None:
    """A path (or each of a list) that is missing or a folder is a usage error naming it."""
    for path in [paths] if isinstance(paths, Path) else paths:
        if not path.exists():
            raise TrackgradeError("parameter_invalid",
                                  f"cannot read '{path}': No such file or directory",
                                  param="file")
        if path.is_dir():
            raise TrackgradeError("parameter_invalid",
                                  f"cannot read '{path}': Is a directory "
                                  f"(use 'trackgrade batch' for folders)", param="file")


def analyze_path(path: Path, mastering_status: str, *, genre: str | None = None,
                 references: tuple[Reference, ...] = (), codec_preview: bool = False,
                 status=None) -> Analysis:
    """Read one file into memory and analyze it; errors name the file. A Rich
    `status` (a terminal's spinner) follows the codec preview's passages."""
    from trackgrade.cli.malloc_tuning import reuse_freed_memory
    from trackgrade.pipeline import analyze as run_pipeline  # the engine loads on use

    reuse_freed_memory()                 # a CLI process: keep freed arrays for reuse

    check_readable(path)
    data = read_input_file(path)
    try:
        return run_pipeline(data, file_name=path.name, mastering_status=mastering_status,
                            genre=genre, references=references, codec_preview=codec_preview,
                            codec_progress=codec_status(status, path.name))
    except TrackgradeError as exc:
        raise TrackgradeError(exc.code, f"cannot analyze '{path}': {exc.message}",
                              param=exc.param) from None


def codec_status(status, name: str):
    """A codec_progress callback that says how far the codec preview is on a
    terminal's status line (None without one: nothing to draw)."""
    if status is None:
        return None

    def show(done: int, total: int) -> None:
        status.update(f"Analyzing {name}… codec preview (MP3, AAC, Opus): "
                      f"{done}/{total} passages")
    return show


def failed_entry(path: Path, error: TrackgradeError) -> dict:
    """The entry of a file that failed, in the `--json` array of several files
    (CONTRACT.md section 4)."""
    return {"file": str(path), "error": {"code": error.code, "message": error.message}}


def dump_json(document) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False)


def analyze(
    files: Annotated[list[Path], typer.Argument(
        metavar="FILE", help="Audio files (WAV, AIFF, FLAC, MP3).", show_default=False)],
    mastering: MasteringOption = Mastering.pre_master,
    genre: GenreOption = None,
    reference: ReferenceOption = None,
    codec_preview: CodecPreviewOption = False,
    verbose: Annotated[bool, typer.Option(
        "--verbose", "-v", help="Also print the full diagnosis, the sections and every check "
                                "that passed.")] = False,
    as_json: JsonOption = False,
) -> None:
    """Grade audio files on this machine. Each gets its score and grade, pillars, tempo, key,
    genre, tonal balance, loudness, stereo, structure, diagnosis and feedback.

    Every file is tried: one that cannot be read or decoded gets a one-line error on stderr
    (and, with --json, an entry {"file", "error": {"code", "message"}} in the array) while the
    others still run; the exit code is then 2. --genre grades against a profile you choose;
    --reference (repeatable) against your own reference tracks.
    """
    genre = checked_genre(genre)
    references = load_references(reference)
    out = None if as_json else stdout_console()       # rich loads only to draw
    err = stderr_console() if sys.stderr.isatty() else None
    entries: list[dict] = []
    done: list[Analysis] = []
    exit_code = EXIT_OK
    for path in files:
        status = (err.status(f"Analyzing {path.name}…", spinner="dots")
                  if err is not None and err.is_terminal else None)
        try:
            with status or nullcontext():
                analysis = analyze_path(path, mastering.value, genre=genre, references=references,
                                        codec_preview=codec_preview, status=status)
        except TrackgradeError as exc:
            if len(files) == 1:
                raise
            print_error(exc.message)
            exit_code = EXIT_USAGE
            entries.append(failed_entry(path, exc))
            continue
        done.append(analysis)
        if as_json:
            entries.append(analysis.to_dict())
        else:
            from trackgrade.cli.render import render_analysis
            out.print(render_analysis(analysis, verbose=verbose))
    if not as_json and len(done) > 1:
        from trackgrade.cli.tables import comparison_table
        out.print(comparison_table(done))
    if as_json:
        sys.stdout.write(dump_json(entries[0] if len(files) == 1 else entries) + "\n")
        sys.stdout.flush()
    raise typer.Exit(exit_code)
