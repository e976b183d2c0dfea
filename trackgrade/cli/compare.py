"""`trackgrade compare A B` and `trackgrade album PATH...` (CONTRACT.md section 5).

Both read audio files (analysed here, in memory) or saved Analysis JSON
(`analyze --json`, `remote get --json`) and print what the pure functions of
`trackgrade.delivery` make of the documents.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Annotated, Optional

import typer

from trackgrade.cli.analyze import (GenreOption, JsonOption, Mastering, MasteringOption,
                                    analyze_path, check_readable, checked_genre, dump_json,
                                    stderr_console, stdout_console)
from trackgrade.cli.errors import EXIT_BAD, EXIT_OK, EXIT_USAGE, read_input_file
from trackgrade.errors import TrackgradeError

DOCUMENT_FIELDS = ("score", "scores", "frequency", "mix", "tempo")


def read_document(path: Path, mastering_status: str, genre: str | None = None) -> dict:
    """The Analysis document of `path`: a saved Analysis JSON file as it is,
    an audio file analysed; anything else is a usage error naming the file."""
    check_readable(path)
    data = read_input_file(path)
    if data.lstrip()[:1] in (b"{", b"["):
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise TrackgradeError("parameter_invalid", f"cannot read '{path}': not valid JSON "
                                  f"({exc})", param="file") from None
        if isinstance(doc, list) and len(doc) == 1:
            doc = doc[0]
        if not isinstance(doc, dict) or any(f not in doc for f in DOCUMENT_FIELDS):
            raise TrackgradeError("parameter_invalid", f"cannot read '{path}': not a complete "
                                  f"Analysis document (the output of 'analyze --json' or "
                                  f"'remote get --json')", param="file")
        return doc
    return analyze_path(path, mastering_status, genre=genre).to_dict()


def compare(
    a: Annotated[Path, typer.Argument(metavar="A", help="The first version: an audio file or "
                                      "an Analysis JSON file.", show_default=False)],
    b: Annotated[Path, typer.Argument(metavar="B", help="The second version, compared against A.",
                                      show_default=False)],
    mastering: MasteringOption = Mastering.pre_master,
    genre: GenreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Compare two bounces: B against A. Each band's level difference (absolute, so a gain
    change shows in every band) and the same after matching loudness, loudness, true peak,
    loudness range, width, correlation, every pillar and the score, and each one's tempo and key.

    A and B are audio files or saved Analysis JSON ('analyze --json', 'remote get --json').
    Exit code 0; 2 when an input cannot be read.
    """
    from trackgrade.delivery.compare import compare as compare_documents

    genre = checked_genre(genre)
    docs = [read_document(path, mastering.value, genre) for path in (a, b)]
    result = compare_documents(docs[0], docs[1], a_file=str(a), b_file=str(b))
    if as_json:
        sys.stdout.write(dump_json(result) + "\n")
        return
    from trackgrade.cli.render_delivery import comparison_view
    stdout_console().print(comparison_view(result))


def album(
    paths: Annotated[list[Path], typer.Argument(
        metavar="PATH", help="Audio files and/or folders (searched recursively), or Analysis "
                             "JSON files.", show_default=False)],
    jobs: Annotated[Optional[int], typer.Option(
        "--jobs", "-j", min=1, max=64,
        help="Worker processes (default: the number of CPUs).", show_default=False)] = None,
    mastering: MasteringOption = Mastering.master,
    genre: GenreOption = None,
    as_json: JsonOption = False,
) -> None:
    """Check a set of tracks as one release: the median loudness, each track's loudness and
    band offsets from the album, the gain that brings each to the album's loudness, and the
    outliers (1 LU or more from the median, or 2 dB or more in any band once loudness is
    matched) with their reasons.

    Files are graded as 'batch' grades them (in parallel). Exit code 0 when every file was
    graded, 1 when some failed (each named on stderr), 2 when none were found or none could
    be graded.
    """
    from trackgrade.cli.batch import collect_files, grading_progress, run_in_pool
    from trackgrade.cli.errors import print_error
    from trackgrade.delivery.album import album as album_of

    genre = checked_genre(genre)
    saved = [p for p in paths if p.suffix.lower() == ".json"]
    found = collect_files([p for p in paths if p not in saved]) if len(saved) < len(paths) else None
    files = [str(p) for p in found.files] if found else []
    if not files and not saved:
        raise TrackgradeError("parameter_invalid", "no audio files found", param="path")
    documents: dict[str, dict] = {str(p): read_document(p, mastering.value, genre) for p in saved}
    failed = []

    def on_result(row: dict, document: dict | None) -> None:
        if document is None:
            failed.append(row)
            print_error(_per_file_error(row["file"], row["error_message"]))
        else:
            documents[row["file"]] = document

    if files:
        runner_files = sorted(files)
        with grading_progress(stderr_console(), len(files)) as progress:   # a terminal's only
            task = progress.add_task("grade", total=len(files), failed=0)

            def advance(row: dict, document: dict | None) -> None:
                on_result(row, document)
                progress.update(task, advance=1, failed=len(failed))

            run_in_pool(runner_files, mastering.value,
                        min(jobs or os.cpu_count() or 1, len(files)), advance, genre)
    if not documents:
        print_error(f"no file could be graded ({len(failed)} failed); nothing to compare")
        raise typer.Exit(EXIT_USAGE)
    order = sorted(documents)
    result = album_of([documents[f] for f in order], files=[_short(f, paths) for f in order])
    if as_json:
        sys.stdout.write(dump_json(result) + "\n")
    else:
        from trackgrade.cli.render_delivery import album_view
        stdout_console().print(album_view(result))
    raise typer.Exit(EXIT_BAD if failed else EXIT_OK)


def _per_file_error(file: str, message: str) -> str:
    """One line naming the file once: the message as it is when it already names it."""
    return message if f"'{Path(file).name}'" in message else f"{file}: {message}"


def _short(file: str, roots: list[Path]) -> str:
    """A file's name as the user gave it (relative to a folder they named)."""
    path = Path(file)
    for root in roots:
        if root.is_dir():
            try:
                return str(path.relative_to(root))
            except ValueError:
                continue
    return str(path) if any(str(r) == file for r in roots) else path.name
