"""`trackgrade analyze FILE...`: analyze local files with the engine.

Each file is read into memory and handed to `trackgrade.pipeline.analyze` as
bytes (never through a temporary file). The screen is rendered by
`trackgrade.cli.render`; `--json` prints `Analysis.to_dict()` instead (one
object for one file, an array for several) and nothing else on stdout.
"""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Optional

import typer

from trackgrade.cli.errors import (EXIT_OK, exit_code_for, print_error, read_input_file)
from trackgrade.errors import TrackgradeError
from trackgrade.grading.limits import MASTERING_STATUSES
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
JsonOption = Annotated[bool, typer.Option(
    "--json", help="Print the Analysis JSON on stdout (nothing else).")]
GenreOption = Annotated[Optional[str], typer.Option(
    "--genre", "-g", help="Grade against this profile (a key of 'trackgrade genres', family or "
                          "label) instead of the detected family.", show_default=False)]
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
    return None if genre is None else check_genre(genre)


def stdout_console() -> Console:
    from rich.console import Console
    return Console(highlight=False)


def stderr_console() -> Console:
    from rich.console import Console
    return Console(stderr=True, highlight=False)


def check_readable(paths: list[Path]) -> None:
    """Fail fast, before any analysis, on a path that is missing or not a file."""
    for path in paths:
        if not path.exists():
            raise TrackgradeError("parameter_invalid",
                                  f"cannot read '{path}': No such file or directory",
                                  param="file")
        if path.is_dir():
            raise TrackgradeError("parameter_invalid",
                                  f"cannot read '{path}': Is a directory "
                                  f"(use 'trackgrade batch' for folders)", param="file")


def analyze_path(path: Path, mastering_status: str, *, genre: str | None = None,
                 references: tuple[Reference, ...] = ()) -> Analysis:
    """Read one file into memory and analyze it; errors name the file."""
    from trackgrade.pipeline import analyze as run_pipeline  # the engine loads on use

    data = read_input_file(path)
    try:
        return run_pipeline(data, file_name=path.name, mastering_status=mastering_status,
                            genre=genre, references=references)
    except TrackgradeError as exc:
        raise TrackgradeError(exc.code, f"cannot analyze '{path}': {exc.message}",
                              param=exc.param) from None


def failed_document(path: Path, mastering_status: str, error: TrackgradeError) -> dict:
    """The JSON entry for a file that failed inside a multi-file `--json` array."""
    return {"file_name": path.name, "mastering_status": mastering_status,
            "error": {"code": error.code, "message": error.message}}


def dump_json(document) -> str:
    return json.dumps(document, indent=2, ensure_ascii=False)


def analyze(
    files: Annotated[list[Path], typer.Argument(
        help="Audio files (WAV, AIFF, FLAC, MP3).", show_default=False)],
    mastering: MasteringOption = Mastering.pre_master,
    genre: GenreOption = None,
    reference: ReferenceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Analyze local audio files: score and grade, pillars, tempo, key, genre, tonal balance,
    loudness, stereo, structure, diagnosis and feedback.

    With several files, a file that cannot be analyzed is reported on stderr and the others
    still run; the exit code is then 2. `--genre` grades against a profile you choose;
    `--reference` (repeatable) against your own reference tracks.
    """
    check_readable(files)
    genre = checked_genre(genre)
    references = load_references(reference)
    out = None if as_json else stdout_console()       # rich loads only to draw
    err = stderr_console() if sys.stderr.isatty() else None
    documents: list[dict] = []
    done: list[Analysis] = []
    exit_code = EXIT_OK
    for path in files:
        status = (err.status(f"Analyzing {path.name}…", spinner="dots")
                  if err is not None and err.is_terminal else nullcontext())
        try:
            with status:
                analysis = analyze_path(path, mastering.value, genre=genre, references=references)
        except TrackgradeError as exc:
            if len(files) == 1:
                raise
            print_error(exc.message)
            exit_code = max(exit_code, exit_code_for(exc))
            documents.append(failed_document(path, mastering.value, exc))
            continue
        done.append(analysis)
        if as_json:
            documents.append(analysis.to_dict())
        else:
            from trackgrade.cli.render import render_analysis
            out.print(render_analysis(analysis))
    if not as_json and len(done) > 1:
        from trackgrade.cli.render import comparison_table
        out.print(comparison_table(done))
    if as_json:
        sys.stdout.write(dump_json(documents[0] if len(files) == 1 else documents) + "\n")
        sys.stdout.flush()
    raise typer.Exit(exit_code)
