"""`trackgrade batch PATH...`: grade many files in parallel.

Directories are searched recursively for audio files (see `AUDIO_EXTENSIONS`,
case-insensitive; hidden files skipped); files named explicitly are always
included. Each file is read into memory and graded by `pipeline.analyze` in a
worker process (`--jobs`; `trackgrade.pool`, the server's pool too: forkserver
with the engine preloaded, else spawn; BLAS/OpenMP threads capped at one per
worker; workers that die with this process). `--jobs 1` also uses one worker
process rather than this one: measured on the 2-vCPU box, a capped worker
grades as fast as the uncapped in-process loop while burning ~25 % less CPU
(OpenBLAS helper threads spin), and a crash in a decoder then costs one row,
not the batch.

A file that fails becomes a row with its error code and message, and the run
goes on. Rows (`trackgrade.cli.rows`) are written to `--out` (CSV or JSONL) as
they complete and put in `--sort` order at the end; a Rich progress bar runs
on stderr; the graded files ranked best first, the failures (file, folder,
code, message) and a summary (skipped files named) end the run. Exit code 0
when every file is graded, 1 when some failed, 2 when no files were found.

`--remote` swaps the worker pool for `cli/remote_batch.py`'s runner, which
grades each file through a trackgrade instance; rows, file, progress and
summary stay this module's.
"""

from __future__ import annotations

import json
import os
import sys
import time
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Annotated, Callable, Iterator, Optional

import typer

from trackgrade.cli.analyze import (CodecPreviewOption, GenreOption, json_option, Mastering,
                                    MasteringOption, ReferenceOption, checked_genre,
                                    load_references, stderr_console)
from trackgrade.cli.errors import EXIT_BAD, EXIT_OK
from trackgrade.cli.remote import BaseUrlOption, KeyOption
from trackgrade.cli.rows import (CSV_COLUMNS, RowWriter, failed_row,  # noqa: F401
                                 row_for, sorted_rows, summarize)
from trackgrade.errors import TrackgradeError

RANKED_ROWS = 40            # rows of the ranked table when stdout is not a terminal
AUDIO_EXTENSIONS = frozenset({".wav", ".wave", ".aif", ".aiff", ".aifc", ".flac", ".mp3"})

BatchJsonOption = json_option("the summary and every row as JSON")


# ---------------------------------------------------------------- finding files

def is_audio_name(path: Path) -> bool:
    return path.suffix.lower() in AUDIO_EXTENSIONS


@dataclass
class Discovery:
    """What `batch` found: the files to grade in order, each file's folder
    relative to the argument it came from, and the files it will not grade."""
    files: list[Path] = field(default_factory=list)
    folders: dict[str, str] = field(default_factory=dict)
    skipped: list[str] = field(default_factory=list)


def _walk(directory: Path, skipped: list[str]) -> Iterator[Path]:
    """Audio files under a directory, sorted, skipping hidden files and folders;
    other files are named in `skipped`."""
    for root, dirs, files in os.walk(directory):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            if name.startswith("."):
                continue
            if is_audio_name(Path(name)):
                yield Path(root) / name
            else:
                skipped.append(str(Path(root) / name))


def collect_files(paths: list[Path]) -> Discovery:
    """The files to grade, in order, without duplicates. A path that does not
    exist is a usage error; a file named explicitly is always tried."""
    found = Discovery()
    seen: set[Path] = set()
    for path in paths:
        if not path.exists():
            raise TrackgradeError("parameter_invalid",
                                  f"cannot read '{path}': No such file or directory",
                                  param="path")
        candidates = _walk(path, found.skipped) if path.is_dir() else [path]
        for candidate in candidates:
            identity = candidate.resolve()
            if identity not in seen:
                seen.add(identity)
                found.files.append(candidate)
                base = path if path.is_dir() else path.parent
                folder = candidate.parent.relative_to(base).as_posix() if path.is_dir() else ""
                found.folders[str(candidate)] = "" if folder == "." else folder
    return found


# ---------------------------------------------------------------- grading one file

def grade_file(path: str, mastering_status: str, genre: str | None = None,
               references: tuple = (), codec_preview: bool = False) -> tuple[dict, dict | None]:
    """Read and grade one file: (row, Analysis document or None), against the
    detected family, `genre` or `references` (with the codec preview when
    asked). Never raises for a bad file; its error becomes the row."""
    from trackgrade.pipeline import analyze

    start = time.perf_counter()
    try:
        data = Path(path).read_bytes()
        # each worker process is one core's worth of work: --jobs N uses N cores
        analysis = analyze(data, file_name=Path(path).name, mastering_status=mastering_status,
                           parallel=False, genre=genre, references=references,
                           codec_preview=codec_preview)
    except TrackgradeError as exc:
        return failed_row(path, exc.code, exc.message, time.perf_counter() - start), None
    except OSError as exc:
        return failed_row(path, "parameter_invalid",
                          f"cannot read '{path}': {exc.strerror or exc}",
                          time.perf_counter() - start), None
    except MemoryError:
        return failed_row(path, "engine_error", "out of memory while analyzing",
                          time.perf_counter() - start), None
    except Exception as exc:  # one bad file must not stop the batch
        return failed_row(path, "engine_error", f"{type(exc).__name__}: {exc}",
                          time.perf_counter() - start), None
    document = analysis.to_dict()
    return row_for(path, document, time.perf_counter() - start), document


# ---------------------------------------------------------------- running many

def run_in_process(files: list[str], mastering_status: str,
                   on_result: Callable[[dict, Optional[dict]], None], *target) -> None:
    """Grade in this process, one file after the other (no isolation, no
    thread caps; for library callers and experiments). `target`: genre, references."""
    for path in files:
        on_result(*grade_file(path, mastering_status, *target))


def run_in_pool(files: list[str], mastering_status: str, jobs: int,
                on_result: Callable[[dict, Optional[dict]], None], *target) -> None:
    """Grade in worker processes, reporting each file as it completes. A
    worker that dies takes its file with it (recorded as failed), and the
    pool is rebuilt for the files still waiting. `target`: genre, references."""
    from concurrent.futures import FIRST_COMPLETED, wait

    from trackgrade.pool import process_pool, terminate

    pending = list(files)
    fruitless = 0          # pools in a row that died before finishing any file
    while pending:
        if fruitless >= 2:
            for path in pending:
                on_result(failed_row(path, "engine_error",
                                     "worker processes keep dying; file not analyzed", 0.0), None)
            return
        executor = process_pool(min(jobs, len(pending)))
        futures = {executor.submit(grade_file, path, mastering_status, *target): path
                   for path in pending}
        pending = []
        broken = False
        finished = 0
        try:
            waiting = set(futures)
            while waiting:
                done, waiting = wait(waiting, return_when=FIRST_COMPLETED)
                for future in done:
                    path = futures[future]
                    try:
                        row, document = future.result()
                        finished += 1
                    except Exception as exc:  # BrokenProcessPool: the worker died
                        if broken:
                            pending.append(path)
                            continue
                        broken = True
                        row, document = failed_row(
                            path, "engine_error",
                            f"a worker process died, probably on this file ({type(exc).__name__})",
                            0.0), None
                    on_result(row, document)
        except BaseException:
            terminate(executor)
            raise
        executor.shutdown(wait=True)
        fruitless = fruitless + 1 if broken and not finished else 0


# ---------------------------------------------------------------- output

def grading_progress(console, total: int):
    """The progress bar of `batch` and `album` (drawn on a terminal only)."""
    from rich.progress import (BarColumn, MofNCompleteColumn, Progress, SpinnerColumn,
                               TextColumn, TimeElapsedColumn, TimeRemainingColumn)

    return Progress(SpinnerColumn(), TextColumn("[bold]Grading"), BarColumn(),
                    MofNCompleteColumn(), TextColumn("[red]{task.fields[failed]} failed"),
                    TimeElapsedColumn(), TextColumn("eta"), TimeRemainingColumn(),
                    console=console, disable=not console.is_terminal, transient=False)


class Sort(str, Enum):
    """`--sort`: the order of the ranked table, the --out rows and the --json results."""
    score = "score"
    name = "name"


def batch(
    paths: Annotated[list[Path], typer.Argument(
        metavar="PATH", help="Audio files and/or folders (searched recursively).",
        show_default=False)],
    jobs: Annotated[Optional[int], typer.Option(
        "--jobs", "-j", min=1, max=64,
        help="Worker processes (default: the number of CPUs).", show_default=False)] = None,
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", metavar="FILE",
        help="Also write one row per file to FILE.csv (the spreadsheet columns) or FILE.jsonl "
             "(each row with its whole Analysis document).", show_default=False)] = None,
    sort: Annotated[Sort, typer.Option(
        "--sort", case_sensitive=False,
        help="Order of the table and the rows: best score first, or by file name.")
    ] = Sort.score,
    mastering: MasteringOption = Mastering.pre_master,
    genre: GenreOption = None,
    reference: ReferenceOption = None,
    codec_preview: CodecPreviewOption = False,
    as_json: BatchJsonOption = False,
    remote: Annotated[bool, typer.Option(
        "--remote", help="Grade through a trackgrade instance (--base-url, --key) instead of "
                         "here; stays within the key's limits, and a re-run spends no credit "
                         "twice.")] = False,
    base_url: BaseUrlOption = None,
    key: KeyOption = None,
) -> None:
    """Grade a folder of tracks in parallel: a progress bar, then the graded files ranked best
    first, the failures and a summary.

    Folders are searched recursively; files it does not grade (other extensions) are counted
    and named in the summary. A file that fails is recorded with its error and the batch goes
    on. Exit code 0 when all files were graded, 1 when some failed, 2 when no files were found.
    --genre and --reference set the targets of every file.
    """
    genre = checked_genre(genre)
    references = load_references(reference)
    found = collect_files(paths)
    files = [str(p) for p in found.files]
    if not files:
        raise TrackgradeError("parameter_invalid",
                              "no audio files found (looked for "
                              + ", ".join(sorted(AUDIO_EXTENSIONS)) + ")", param="path")
    workers = min(jobs or os.cpu_count() or 1, len(files))
    runner = run_in_pool
    if remote:
        if references:
            raise TrackgradeError("parameter_invalid", "--reference works on local batches "
                                  "only; an instance grades against genre profiles",
                                  param="reference")
        if codec_preview:
            raise TrackgradeError("parameter_invalid", "--codec-preview works on local batches "
                                  "only (an instance takes codec_preview on POST /analyses)",
                                  param="codec_preview")
    err = stderr_console()
    if remote:
        from trackgrade.cli.remote_batch import remote_runner

        # remote files wait on the instance and the key's limits: say so, terminal or not
        runner = remote_runner(base_url, key, jobs=jobs, notify=lambda line: err.print(
            line, markup=False, highlight=False, soft_wrap=True))
    writer = RowWriter(out)
    rows: list[dict] = []
    start = time.perf_counter()
    try:
        with grading_progress(err, len(files)) as progress:
            task = progress.add_task("grade", total=len(files), failed=0)

            def on_result(row: dict, document: dict | None) -> None:
                rows.append(row)
                writer.write(row, document)
                failed = sum(1 for r in rows if r["status"] != "ok")
                if row["status"] != "ok" and err.is_terminal:
                    from rich.text import Text

                    from trackgrade.cli.terminal import plain_text
                    progress.console.print(Text.assemble(
                        ("✗ ", "bold red"), plain_text(row["file"], "bold"),
                        plain_text(f"  {row['error_code']}: {row['error_message']}")))
                progress.update(task, advance=1, failed=failed)
                if remote and not err.is_terminal:       # no progress bar: one line a file
                    done = (f"{row['score']} {row['grade']}" if row["status"] == "ok"
                            else f"failed: {row['error_code']}")
                    err.print(f"graded {len(rows)}/{len(files)}: {row['file']} ({done})",
                              markup=False, highlight=False, soft_wrap=True)

            runner(files, mastering.value, workers, on_result, genre, references, codec_preview)
        writer.finish(sort.value)
    finally:
        writer.close()
    wall = time.perf_counter() - start
    rows = sorted_rows(rows, sort.value)
    summary = summarize(rows, wall, found.skipped)
    if as_json:
        sys.stdout.write(json.dumps({"summary": summary, "results": rows}, ensure_ascii=False,
                                    indent=2) + "\n")
    else:
        print_batch(rows, summary, folders=found.folders, out=out)
    raise typer.Exit(EXIT_OK if summary["failed"] == 0 else EXIT_BAD)


def print_batch(rows: list[dict], summary: dict, *, folders: dict[str, str],
                out: Path | None) -> None:
    """The screen after the progress bar: ranked table, failures, summary."""
    from trackgrade.cli.render import batch_summary_table, failures_table, ranked_table
    from trackgrade.cli.terminal import PlainConsole

    console = PlainConsole()
    limit = max(10, console.height - 14) if console.is_terminal else RANKED_ROWS
    ranked = ranked_table(rows, limit=limit, width=console.width)
    if ranked is not None:
        console.print(ranked)
    failures = failures_table(rows, folders)
    if failures is not None:
        console.print(failures)
    console.print(batch_summary_table(summary))
    if out is not None:
        console.print(f"rows written to {out}", style="dim")
