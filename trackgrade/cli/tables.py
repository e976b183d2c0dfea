"""Rich tables for the commands that list things: files side by side
(`analyze` with several files), `genres`, the `batch` summary, ranking and
failures, and the remote `list` and `account` views. Pure functions from
documents to renderables, like `render` (the one-analysis screen)."""

from __future__ import annotations

from pathlib import Path

from rich import box
from rich.table import Table
from rich.text import Text

from trackgrade.cli.render import genre_display_name
from trackgrade.cli.styles import score_style
from trackgrade.cli.terminal import plain_text
from trackgrade.engine.features import BAND_NAMES
from trackgrade.limits import BAND_WORDS
from trackgrade.model import Analysis
from trackgrade.status import FAILED

SKIPPED_NAMES = 6


def comparison_table(analyses: list[Analysis]) -> Table:
    """One line per analysed file, for `analyze` with several files."""
    table = Table(box=box.SIMPLE_HEAD, title="Side by side", title_justify="left",
                  title_style="bold", padding=(0, 1))
    for name, justify in (("file", "left"), ("score", "right"), ("grade", "left"),
                          ("BPM", "right"), ("key", "left"), ("genre", "left"),
                          ("LUFS", "right"), ("dBTP", "right")):
        table.add_column(name, justify=justify, no_wrap=name != "file")
    for a in analyses:
        key = f"{a.key.key} {a.key.scale} {a.key.camelot}" if a.key else "-"
        table.add_row(a.file_name, Text(str(a.score), style=score_style(a.score)),
                      a.grade.letter, f"{a.tempo.bpm:.1f}", key, a.genre.name,
                      f"{a.mix.loudness_lufs:.1f}", f"{a.mix.peak_dbfs:+.1f}")
    return table


def genres_table(genres: list[dict], *, wide: bool = True) -> Table:
    """`trackgrade genres`: families first, then label-layer entries (the
    display name is left out on narrow terminals)."""
    table = Table(box=box.SIMPLE_HEAD, title="Genre profiles", title_justify="left",
                  title_style="bold", padding=(0, 1) if wide else (0, 0),
                  pad_edge=False, show_edge=False)
    table.add_column("key", style="bold", no_wrap=True,
                     width=max(len(g["key"]) for g in genres))
    if wide:
        table.add_column("name")
    table.add_column("family", style="dim", no_wrap=True,
                     width=max([6] + [len(g.get("family") or "") for g in genres]))
    table.add_column("BPM", justify="right", no_wrap=True)
    for name in BAND_NAMES:
        table.add_column(BAND_WORDS[name].short, justify="right", no_wrap=True)
    families_done = False
    for entry in genres:
        if entry.get("family") and not families_done:
            table.add_section()
            families_done = True
        low, high = entry["bpm_range"]
        cells = [entry["key"]] + ([entry["name"]] if wide else [])
        cells += [entry.get("family") or "", f"{low:g}-{high:g}"]
        cells += [f"{float(entry['ideal_bands'][b]):.1f}" for b in BAND_NAMES]
        table.add_row(*cells)
    table.caption = ("ideal share of spectral energy per band, %: sub 20-60 Hz, bass 60-250, "
                     "lo-m 250-500, mid 500-2k, hi-m 2-4k, high 4-8k, air 8-20k. "
                     "Labels are scored against their family.")
    table.caption_justify = "left"
    return table


def batch_summary_table(summary: dict) -> Table:
    """The table that ends `trackgrade batch` (from `rows.summarize`)."""
    table = Table(box=box.ROUNDED, show_header=False, title="Batch summary",
                  title_justify="left", title_style="bold", padding=(0, 1))
    table.add_column("what", style="dim", no_wrap=True)
    table.add_column("value")
    table.add_row("graded", Text(f"{summary['ok']} of {summary['files']}", style="green"))
    table.add_row("failed", Text(str(summary["failed"]),
                                 style="red" if summary["failed"] else "green"))
    skipped = summary["skipped"]
    if skipped["count"]:
        names = [Path(p).name for p in skipped["files"]]
        shown = ", ".join(names[:SKIPPED_NAMES])
        more = f" and {len(names) - SKIPPED_NAMES} more" if len(names) > SKIPPED_NAMES else ""
        table.add_row("skipped", Text.assemble((f"{skipped['count']} not audio", "yellow"),
                                               plain_text(f": {shown}{more}")))
    if summary["mean_score"] is not None:
        mean = summary["mean_score"]
        table.add_row("mean score", Text(f"{mean:.1f}", style=score_style(mean)))
        table.add_row("grades", "  ".join(f"{g}×{n}" for g, n in summary["grades"].items()))
    slowest = summary["slowest"]
    if slowest:
        table.add_row("slowest", f"{Path(slowest['path']).name} ({slowest['seconds']:.1f} s)")
    wall = summary["wall_seconds"]
    rate = summary["files"] / wall if wall > 0 else 0.0
    table.add_row("wall time", f"{wall:.1f} s ({rate:.2f} files/s)")
    return table


RANKED_COLUMNS = (("#", "right"), ("file", "left"), ("score", "right"), ("grade", "left"),
                  ("genre", "left"), ("BPM", "right"), ("key", "left"), ("LUFS", "right"),
                  ("top warning", "left"))
RANKED_OPTIONAL = ("top warning", "LUFS", "key", "genre")   # the order they give way in
MIN_WARNING, MIN_FILE, MAX_FILE = 24, 12, 40


def ranked_cells(rank: int, row: dict) -> dict[str, str]:
    camelot = f" {row['camelot']}" if row["camelot"] else ""
    return {"#": str(rank), "file": row["file"], "score": str(row["score"]),
            "grade": row["grade"], "genre": genre_display_name(row["genre"]) or "-",
            "BPM": f"{row['bpm']:.1f}" if row["bpm"] is not None else "-",
            "key": (row["key"] or "-") + camelot,
            "LUFS": f"{row['loudness_lufs']:.1f}" if row["loudness_lufs"] is not None else "-",
            "top warning": row["top_warning"] or "–"}


def _cut(text: str, room: int) -> str:
    return text if len(text) <= room else text[:max(room - 1, 1)].rstrip() + "…"


def ranked_table(rows: list[dict], *, limit: int, width: int) -> Table | None:
    """The graded files, best first, trimmed to the terminal: at most `limit`
    rows; the top warning is cut to fit, and when even that is not enough the
    columns give way (warning, loudness, key, genre), then the file name is cut."""
    from rich.console import Console

    ok = sorted((r for r in rows if r["status"] == "ok"), key=lambda r: -(r["score"] or 0))
    if not ok:
        return None
    shown = ok[:limit]
    cells = [ranked_cells(rank, row) for rank, row in enumerate(shown, start=1)]

    def build(names: list[str], warning_room: int, file_room: int) -> Table:
        table = Table(box=box.SIMPLE_HEAD, title="Ranked", title_justify="left",
                      title_style="bold", padding=(0, 1), pad_edge=False)
        for name, justify in RANKED_COLUMNS:
            if name in names:
                table.add_column(name, justify=justify, no_wrap=True)
        for text, row in zip(cells, shown):
            styled: dict = dict(text)
            styled["file"] = _cut(text["file"], file_room)
            styled["score"] = Text(text["score"], style=score_style(row["score"]))
            styled["top warning"] = plain_text(_cut(text["top warning"], warning_room),
                                               "" if row["top_warning"] else "dim")
            table.add_row(*(styled[name] for name in names))
        return table

    measure = Console(width=10_000)

    def excess(table: Table) -> int:
        return measure.measure(table).maximum - width

    names = [name for name, _ in RANKED_COLUMNS]
    optional = list(RANKED_OPTIONAL)
    warning_room = max(len(c["top warning"]) for c in cells)
    file_room = MAX_FILE
    table = build(names, warning_room, file_room)
    while excess(table) > 0:
        if "top warning" in names and warning_room > MIN_WARNING:
            warning_room = max(MIN_WARNING, warning_room - excess(table))
        elif optional:
            names.remove(optional.pop(0))
        elif file_room > MIN_FILE:
            file_room = max(MIN_FILE, file_room - excess(table))
        else:
            break
        table = build(names, warning_room, file_room)
    if len(ok) > limit:
        table.caption = f"… {len(ok) - limit} more graded files (all of them in --out / --json)"
        table.caption_justify = "left"
    return table


def failures_table(rows: list[dict], folders: dict[str, str] | None = None) -> Table | None:
    """The files that failed: name, folder (relative to the argument it was
    found under), error code and message."""
    failed = [r for r in rows if r["status"] != "ok"]
    if not failed:
        return None
    folders = folders or {}
    table = Table(box=box.SIMPLE_HEAD, title="Failures", title_justify="left",
                  title_style="bold red", padding=(0, 1), pad_edge=False)
    table.add_column("file", style="bold", overflow="fold")
    table.add_column("folder", style="dim", overflow="fold")
    table.add_column("code", style="red", no_wrap=True)
    table.add_column("message", ratio=1)
    for row in failed:
        folder = folders.get(row["path"], str(Path(row["path"]).parent))
        table.add_row(row["file"], folder or ".", row["error_code"] or "",
                      row["error_message"] or "")
    return table


def remote_list_table(docs: list[dict]) -> Table:
    """`trackgrade remote list`: one line per analysis, newest first. The file name
    comes last and wraps on a narrow terminal: never cut (it is how you find yours)."""
    table = Table(box=box.SIMPLE_HEAD, title=f"Analyses ({len(docs)}, newest first; UTC)",
                  title_justify="left", title_style="bold", padding=(0, 1), pad_edge=False,
                  show_edge=False)
    table.add_column("id", no_wrap=True, min_width=36)
    table.add_column("created", no_wrap=True, min_width=11)
    table.add_column("status", no_wrap=True, min_width=8)
    table.add_column("score", no_wrap=True, min_width=5)
    table.add_column("file", overflow="fold")
    for doc in docs:
        score = doc.get("score")
        if score is not None:
            score_cell = plain_text(f"{score} {(doc.get('grade') or {}).get('letter', '')}",
                               score_style(score))
        else:
            score_cell = Text("")
        table.add_row(doc["id"], (doc.get("created_at") or "")[5:16].replace("T", " "),
                      plain_text(doc["status"], "red" if doc["status"] == FAILED else ""),
                      score_cell, plain_text(doc.get("file_name") or ""))
    return table


def account_table(doc: dict) -> Table:
    """`trackgrade remote account`: plan, credits, limits and usage."""
    limits, usage = doc["limits"], doc["usage"]
    table = Table(box=box.ROUNDED, show_header=False, title="Account", title_justify="left",
                  title_style="bold", padding=(0, 1))
    table.add_column("what", style="dim")
    table.add_column("value")
    credits = doc.get("credits_remaining")
    daily = limits.get("daily_quota")
    for what, value in (
            ("account", doc["id"]), ("mode", "live" if doc["livemode"] else "test"),
            ("plan", doc["plan"]), ("billing", doc["billing"]),
            ("credits", "not credit-billed" if credits is None else str(credits)),
            ("requests", f"{limits['rate_per_minute']} per minute"),
            ("in flight", f"{usage['in_flight']} of {limits['in_flight']}"),
            ("today", f"{usage['today']} of {daily}" if daily is not None
             else f"{usage['today']} (no daily quota)")):
        table.add_row(what, value)
    return table
