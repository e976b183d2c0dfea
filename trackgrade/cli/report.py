"""`trackgrade report FILE`: analyze a file and write a self-contained HTML report."""

from __future__ import annotations

import json
import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Optional

import typer

from trackgrade.cli.analyze import (GenreOption, JsonOption, Mastering, MasteringOption,
                                    ReferenceOption, analyze_path, check_readable, checked_genre,
                                    load_references, stderr_console)
from trackgrade.errors import TrackgradeError


def default_report_path(audio: Path) -> Path:
    """`<stem>.report.html` in the current directory."""
    return Path.cwd() / f"{audio.stem}.report.html"


def write_text(path: Path, text: str) -> None:
    try:
        path.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise TrackgradeError("parameter_invalid",
                              f"cannot write '{path}': {exc.strerror or exc}", param="out") from None


def report(
    file: Annotated[Path, typer.Argument(help="An audio file (WAV, AIFF, FLAC, MP3).",
                                         show_default=False)],
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", help="Where to write the HTML ('-' for stdout). "
                            "Default: <stem>.report.html in the current directory.",
        show_default=False)] = None,
    mastering: MasteringOption = Mastering.pre_master,
    genre: GenreOption = None,
    reference: ReferenceOption = None,
    as_json: JsonOption = False,
) -> None:
    """Analyze a file and write a self-contained HTML report (inline SVG charts, no network):
    score and grade, pillars, band balance against the genre ideal, loudness and energy over
    time with the sections, tempo/key/genre, the diagnosis and the feedback."""
    from trackgrade.report import render_report

    check_readable([file])
    genre = checked_genre(genre)
    references = load_references(reference)
    err = stderr_console()
    status = (err.status(f"Analyzing {file.name}…", spinner="dots")
              if err.is_terminal else nullcontext())
    with status:
        analysis = analyze_path(file, mastering.value, genre=genre, references=references)
    html = render_report(analysis)
    if out is not None and str(out) == "-":
        sys.stdout.write(html)
        return
    target = out if out is not None else default_report_path(file)
    write_text(target, html)
    if as_json:
        sys.stdout.write(json.dumps({"out": str(target), "file_name": analysis.file_name,
                                     "score": analysis.score,
                                     "grade": analysis.grade.letter}) + "\n")
    else:
        typer.echo(f"{target}  ({analysis.grade.letter}, {analysis.score}/100, "
                   f"{len(html) / 1024:.0f} KiB)")
