"""`trackgrade report FILE`: analyze a file and write a self-contained HTML report.

Each file is read once into memory; the Analysis comes from the pipeline and
the report's time series (waveform envelope, stereo correlation, true-peak
overs, clipped regions) from the decoded samples (`trackgrade.report.timeline`).
A `--reference` track is measured once: its targets grade the track, and its
own analysis and timeline are drawn beside the track on every chart.
`--compare EARLIER` adds the comparison view (`trackgrade compare EARLIER FILE`:
this file against an earlier bounce, audio or Analysis JSON); `--codec-preview`
the codec rows of the delivery section.
`--json` prints the Analysis document on stdout, exactly as `analyze --json`.
"""

from __future__ import annotations

import sys
from contextlib import nullcontext
from pathlib import Path
from typing import Annotated, Optional

import typer

from trackgrade.cli.analyze import (CodecPreviewOption, GenreOption, JsonOption, Mastering,
                                    MasteringOption, ReferenceOption, check_readable,
                                    checked_genre, codec_status, dump_json, stderr_console)
from trackgrade.cli.errors import read_input_file
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


def measured_reference(path: Path, mastering_status: str, genre: str | None):
    """(targets, ReportTrack) of one reference file: measured once, graded on its
    own (against the same genre choice) for the charts."""
    from trackgrade.engine.decode import decode
    from trackgrade.engine.extract import extract
    from trackgrade.grading.targets import Reference
    from trackgrade.pipeline import grade
    from trackgrade.report import ReportTrack, timeline_of

    check_readable(path)
    data = read_input_file(path)
    try:
        audio = decode(data, file_name=path.name)
        features = extract(audio)
        analysis = grade(features, file_name=path.name, mastering_status=mastering_status,
                         genre=genre)
    except TrackgradeError as exc:
        raise TrackgradeError(exc.code, f"cannot use reference '{path}': {exc.message}",
                              param="reference") from None
    return (Reference.from_features(path.name, features),
            ReportTrack(analysis, timeline_of(audio, analysis)))


def build_report(path: Path, mastering_status: str, *, genre: str | None = None,
                 reference_paths: list[Path] | None = None, codec_preview: bool = False,
                 compare_path: Path | None = None, status=None):
    """(Analysis, HTML) for one file (and its references, and the earlier
    version it is compared with), each read into memory once; a terminal's
    `status` follows the codec preview."""
    from trackgrade.cli.compare import read_document
    from trackgrade.delivery.compare import compare
    from trackgrade.engine.decode import decode
    from trackgrade.pipeline import analyze as run_pipeline
    from trackgrade.report import render_report, timeline_of

    check_readable(path)
    measured = [measured_reference(p, mastering_status, genre) for p in reference_paths or ()]
    earlier = (read_document(compare_path, mastering_status, genre)
               if compare_path is not None else None)
    data = read_input_file(path)
    try:
        analysis = run_pipeline(data, file_name=path.name, mastering_status=mastering_status,
                                genre=genre, references=tuple(m[0] for m in measured),
                                codec_preview=codec_preview,
                                codec_progress=codec_status(status, path.name))
        timeline = timeline_of(decode(data, file_name=path.name), analysis)
    except TrackgradeError as exc:
        raise TrackgradeError(exc.code, f"cannot analyze '{path}': {exc.message}",
                              param=exc.param) from None
    comparison = (None if earlier is None else
                  compare(earlier, analysis.to_dict(), a_file=str(compare_path), b_file=str(path)))
    return analysis, render_report(analysis, timeline=timeline,
                                   references=[m[1] for m in measured], comparison=comparison)


def report(
    file: Annotated[Path, typer.Argument(metavar="FILE", help="An audio file (WAV, AIFF, "
                                         "FLAC, MP3).", show_default=False)],
    out: Annotated[Optional[Path], typer.Option(
        "--out", "-o", metavar="FILE",
        help="Where to write the HTML ('-' for stdout). Default: <stem>.report.html in the "
             "current directory.", show_default=False)] = None,
    mastering: MasteringOption = Mastering.pre_master,
    genre: GenreOption = None,
    reference: ReferenceOption = None,
    compare_with: Annotated[Optional[Path], typer.Option(
        "--compare", "-c", metavar="EARLIER",
        help="Add the comparison view: this file against an earlier bounce (an audio file or "
             "an Analysis JSON file), as 'trackgrade compare EARLIER FILE'.",
        show_default=False)] = None,
    codec_preview: CodecPreviewOption = False,
    as_json: JsonOption = False,
) -> None:
    """Write a self-contained HTML report of one track: one file, no network, prints well.

    It shows the score and grade, the pillars, the tonal balance in dB against the target with
    its tolerance band, one timeline (waveform, short-term loudness against the target range,
    true-peak overs, clipped regions, the sections and their loudness) with the stereo
    correlation beneath it, the key on a Camelot wheel, the delivery checks (streaming
    platforms, mono per band, codecs with --codec-preview), the diagnosis and the feedback. With
    --reference, each reference track is drawn beside yours on every chart; with --compare, the
    report opens with this file against an earlier version.
    """
    if as_json and out is not None and str(out) == "-":
        raise TrackgradeError("parameter_invalid",
                              "--json and --out - both write to stdout; choose one", param="out")
    genre = checked_genre(genre)
    err = stderr_console()
    status = err.status(f"Analyzing {file.name}…", spinner="dots") if err.is_terminal else None
    with status or nullcontext():
        analysis, html = build_report(file, mastering.value, genre=genre,
                                      reference_paths=reference, codec_preview=codec_preview,
                                      compare_path=compare_with, status=status)
    if out is not None and str(out) == "-":
        sys.stdout.write(html)
        return
    target = out if out is not None else default_report_path(file)
    write_text(target, html)
    note = (f"{target}  ({analysis.grade.letter}, {analysis.score}/100, "
            f"{len(html.encode('utf-8')) / 1024:.0f} KiB)")
    if as_json:
        sys.stdout.write(dump_json(analysis.to_dict()) + "\n")
        typer.echo(note, err=True)
    else:
        typer.echo(note)
