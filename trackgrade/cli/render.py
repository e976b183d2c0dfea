"""Rich renderables for the command line: pure functions from the library's
documents to things a `rich.console.Console` prints.

Nothing here reads files or runs analyses; `analyze`, `batch` and `genres`
call these and print the result.
"""

from __future__ import annotations

from pathlib import Path

from rich import box
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from trackgrade.cli.terminal import plain_text
from trackgrade.display import clock, mix_rows, plural, score_tier
from trackgrade.engine.features import BAND_EDGES_HZ, BAND_NAMES
from trackgrade.grading.wording import band_db, target_name
from trackgrade.grading.limits import (BAND_TOLERANCE_DB, BAND_WORDS, SUGGEST_BEYOND,
                                       TRUE_PEAK_MAX_DBTP)
from trackgrade.model import Analysis
from trackgrade.testmode import CANNED_BANNER, is_canned

PILLARS = (("danceability", "Danceability"), ("mix_quality", "Mix quality"),
           ("frequency_balance", "Frequency balance"), ("energy", "Energy"),
           ("structure", "Structure"))
FEEDBACK_ORDER = {"warn": 0, "tip": 1, "pass": 2}
FEEDBACK_STYLE = {"warn": ("▲ warn", "bold red"), "tip": ("● tip ", "bold yellow"),
                  "pass": ("✓ pass", "bold green")}
SECTION_STYLE = {"intro": "cyan", "buildup": "yellow", "drop": "bold magenta",
                 "breakdown": "blue", "outro": "cyan"}
SKIPPED_NAMES = 6


TIER_STYLE = {"great": "bold green", "good": "bold chartreuse3", "fair": "bold yellow",
              "weak": "bold dark_orange", "poor": "bold red"}


def score_style(score: float) -> str:
    """Colour of a 0-100 score: green is good, red is bad."""
    return TIER_STYLE[score_tier(score)]


def bar(value: float, maximum: float = 100.0, width: int = 24, style: str = "") -> Text:
    """A horizontal bar of `width` cells, eighth-cell resolution."""
    fraction = 0.0 if maximum <= 0 else min(1.0, max(0.0, float(value) / maximum))
    eighths = int(round(fraction * width * 8))
    full, part = divmod(eighths, 8)
    glyphs = "█" * full + (" ▏▎▍▌▋▊▉"[part] if part else "")
    text = Text(glyphs, style=style)
    text.append("·" * (width - len(glyphs)), style="grey30")
    return text


def bar_with_marker(value: float, marker: float, maximum: float, width: int = 20,
                    style: str = "") -> Text:
    """A bar with a `┃` where `marker` (e.g. the genre ideal) falls."""
    text = bar(value, maximum, width, style)
    cell = min(width - 1, max(0, int(round(marker / maximum * width)) - 1)) if maximum > 0 else 0
    text = Text.assemble(text[:cell], ("┃", "bold white"), text[cell + 1:])
    return text


def key_text(analysis: Analysis) -> Text:
    key = analysis.key
    if key is None:
        return Text("no tonal centre", style="dim")
    text = Text(f"{key.key} {key.scale}", style="bold")
    text.append(f"  {key.camelot}", style="bold cyan")
    text.append(f"  ({key.confidence:.0%} sure)", style="dim")
    return text


def genre_display_name(key: str | None) -> str | None:
    """A profile's display name ("Drum & Bass") for its machine key; an unknown
    key as it is."""
    if not key:
        return None
    from trackgrade.grading.genres import GENRES

    profile = GENRES.get(key)
    return profile["name"] if profile else key


def subgenre_name(analysis: Analysis) -> str | None:
    """Display name of the closest label-layer profile, when the analysis names
    one that differs from the detected family."""
    key = analysis.extras.subgenre
    if not isinstance(key, str) or key == analysis.genre.detected:
        return None
    return genre_display_name(key)


def genre_text(analysis: Analysis) -> Text:
    """The header's genre: the profile the scores used first when the caller chose
    one (`--genre`) or gave references, then what the track sounds like."""
    g = analysis.genre
    chosen = None
    if g.target == "reference":
        chosen = "your references"
    elif g.target and g.target != g.detected:
        from trackgrade.grading.genres import GENRES

        chosen = GENRES[g.target]["name"] if g.target in GENRES else None
    if chosen:
        text = Text.assemble(("Judged against ", "dim"), (chosen, "bold"), ("   sounds like ", "dim"),
                             g.name)
    else:
        text = Text.assemble((g.name, "bold"))
        label = subgenre_name(analysis)
        if label:
            text.append(f"  closest to {label}")
    text.append(f"   {g.confidence:.0%} confidence", style="dim")
    return text


def header_panel(analysis: Analysis) -> Panel:
    """Score and grade up front, with the file's identity."""
    style = score_style(analysis.score)
    headline = Text()
    headline.append(f" {analysis.score} ", style=f"{style} reverse")
    headline.append("  ")
    headline.append(analysis.grade.letter, style=style)
    headline.append(f"  {analysis.grade.label}", style="bold")
    headline.append("   hit potential /100", style="dim")
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="dim", no_wrap=True)
    facts.add_column()
    facts.add_row("Tempo", Text.assemble((f"{analysis.tempo.bpm:.1f} BPM", "bold"),
                                         (f"   regularity {analysis.tempo.regularity:.2f}", "dim")))
    facts.add_row("Key", key_text(analysis))
    facts.add_row("Genre", genre_text(analysis))
    subtitle = plain_text(f"{analysis.mastering_status} · {clock(analysis.duration_seconds)}")
    return Panel(Group(headline, Text(""), facts), title=plain_text(analysis.file_name, "bold"),
                 title_align="left", subtitle=subtitle, subtitle_align="right",
                 border_style=style.replace("bold ", ""), box=box.ROUNDED, padding=(1, 2))


def pillars_table(analysis: Analysis) -> Table:
    table = Table(box=None, show_header=False, padding=(0, 1), title="Pillars",
                  title_justify="left", title_style="bold")
    for field, title in PILLARS:
        value = getattr(analysis.scores, field)
        table.add_row(title, bar(value, style=score_style(value).replace("bold ", "")),
                      Text(f"{value:>3}", style=score_style(value)))
    return table


def bands_table(analysis: Analysis) -> Table:
    """The seven bands against the target (the genre ideal or the references),
    the difference in dB as everywhere else (diagnosis, feedback)."""
    # 78 columns wide: the whole table, "normal" included, fits an 80-column terminal
    table = Table(box=box.SIMPLE_HEAD, title=f"Tonal balance vs {target_name(analysis)}",
                  title_justify="left", title_style="bold", padding=(0, 1), pad_edge=False,
                  show_edge=False)
    table.add_column("band", no_wrap=True)
    table.add_column("Hz", style="dim", justify="right", no_wrap=True)
    table.add_column("yours", justify="right", no_wrap=True)
    table.add_column("ideal", justify="right", style="dim", no_wrap=True)
    table.add_column("", min_width=20, no_wrap=True)
    table.add_column("dB", justify="right", no_wrap=True)
    table.add_column("normal", justify="right", style="dim", no_wrap=True)
    bands, ideal = analysis.frequency.bands, analysis.frequency.ideal
    diff_db = band_db(analysis)
    top = max([getattr(bands, b) for b in BAND_NAMES] + [getattr(ideal, b) for b in BAND_NAMES]
              + [1.0])
    for name, (lo, hi) in zip(BAND_NAMES, BAND_EDGES_HZ):
        mine, target = getattr(bands, name), getattr(ideal, name)
        diff, tolerance = diff_db[name], BAND_TOLERANCE_DB[name]
        style = ("green" if abs(diff) <= tolerance else "" if abs(diff) < SUGGEST_BEYOND * tolerance
                 else "red" if diff > 0 else "yellow")
        cells = bar_with_marker(mine, target, top, width=20, style=style)
        table.add_row(BAND_WORDS[name].title, f"{lo}-{hi if hi < 20000 else '20k'}",
                      f"{mine:5.1f}%", f"{target:5.1f}%", cells,
                      Text(f"{diff:+5.1f}", style=style), f"±{tolerance:g}")
    table.caption = ("┃ marks the target · dB: your band against the target's · normal: the spread "
                     "of real records · "
                     f"spectral centroid {analysis.frequency.centroid_hz:,.0f} Hz · "
                     f"frequency score {analysis.frequency.score}")
    table.caption_justify = "left"
    return table


def mix_table(analysis: Analysis) -> Table:
    mix = analysis.mix
    table = Table(box=box.SIMPLE_HEAD, title="Loudness & stereo", title_justify="left",
                  title_style="bold", show_header=False, padding=(0, 1))
    table.add_column("what")
    table.add_column("value", justify="right", style="bold")
    table.add_column("note", style="dim")
    peak_style = "red" if mix.peak_dbfs > TRUE_PEAK_MAX_DBTP[analysis.mastering_status] else ""
    for label, value, note in mix_rows(mix, analysis.mastering_status):
        style = peak_style if label == "True peak" else ""
        table.add_row(label, Text(value, style=style), note)
    table.caption = f"mix score {mix.score}"
    table.caption_justify = "left"
    return table


def sections_table(analysis: Analysis) -> Table:
    table = Table(box=box.SIMPLE_HEAD, title="Structure", title_justify="left",
                  title_style="bold", padding=(0, 1))
    table.add_column("section")
    table.add_column("from", justify="right")
    table.add_column("to", justify="right")
    table.add_column("energy", min_width=16)
    for section in analysis.structure.sections:
        style = SECTION_STYLE.get(section.label, "")
        table.add_row(Text(section.label, style=style), clock(section.start), clock(section.end),
                      Text.assemble(bar(section.energy, width=16, style=style.replace("bold ", "")),
                                    f" {section.energy:>3}"))
    table.caption = f"structure score {analysis.structure.score}"
    table.caption_justify = "left"
    return table


def diagnosis_block(analysis: Analysis) -> RenderableType:
    diagnosis = analysis.diagnosis
    parts: list[RenderableType] = [plain_text(diagnosis.summary)]
    for title, text in (("Frequency", diagnosis.frequency), ("Mix", diagnosis.mix),
                        ("Danceability", diagnosis.danceability)):
        if text:
            parts.append(Text.assemble((f"{title}: ", "bold"), plain_text(text)))
    status = "" if diagnosis.status == "ready" else " (template; narrative pending)"
    return Panel(Group(*parts), title=Text.assemble(("Diagnosis", "bold"), status),
                 title_align="left",
                 box=box.ROUNDED, border_style="grey50", padding=(0, 1))


def sorted_feedback(analysis: Analysis) -> list:
    """Feedback by priority: warnings, then tips, then passes (stable within a type)."""
    return sorted(analysis.feedback, key=lambda item: FEEDBACK_ORDER.get(item.type, 3))


def feedback_table(analysis: Analysis, *, passes_in_one_line: bool = False) -> Table:
    """Every item by priority; with `passes_in_one_line` (the short screen) the
    warnings and tips, then one line naming the checks that passed."""
    table = Table(box=None, show_header=False, title="Feedback", title_justify="left",
                  title_style="bold", padding=(0, 1))
    table.add_column("type", no_wrap=True)
    table.add_column("category", style="dim", no_wrap=True)
    table.add_column("text")
    items = sorted_feedback(analysis)
    for item in items:
        if passes_in_one_line and item.type == "pass":
            continue
        label, style = FEEDBACK_STYLE.get(item.type, (item.type, ""))
        table.add_row(Text(label, style=style), item.category, item.text)
    passed = sorted({i.category for i in items if i.type == "pass"})
    if passes_in_one_line and passed:
        table.add_row(Text(FEEDBACK_STYLE["pass"][0], style=FEEDBACK_STYLE["pass"][1]),
                      plural(len(passed), "check"), Text(", ".join(passed) + " (--verbose: the full "
                                                     "diagnosis and every check)", style="dim"))
    return table


def structure_line(analysis: Analysis) -> Text:
    sections = " · ".join(f"{s.label} {clock(s.start)}" for s in analysis.structure.sections)
    return Text.assemble(("Structure ", "bold"), sections,
                         (f"   structure score {analysis.structure.score}", "dim"))


def test_mode_lines(analysis: Analysis) -> list[Text]:
    """A canned test-mode result says so before anything else (empty otherwise)."""
    if not is_canned(analysis):
        return []
    return [Text(f"{CANNED_BANNER}: made up from the file name alone (a test-mode key); "
                 f"nothing in the file was measured. Use a live key for a real analysis.",
                 style="bold reverse")]


def render_analysis(analysis: Analysis, *, verbose: bool = False) -> Group:
    """The `trackgrade analyze` screen for one analysis: a screenful by default
    (no narrative, no passes); `verbose` adds the sections table, the whole
    diagnosis and every feedback item."""
    first = test_mode_lines(analysis)
    notes = []
    if analysis.extras.truncated:
        notes.append(Text("Note: the file ended before its header said it would; the "
                          "analysis covers the audio that is present.", style="yellow"))
    from trackgrade.cli.render_delivery import delivery_block, delivery_lines

    if not verbose:
        summary = delivery_lines(analysis.delivery)
        return Group(
            *first, header_panel(analysis), *notes,
            Padding(pillars_table(analysis), (1, 0, 0, 1)),
            Padding(bands_table(analysis), (1, 0, 0, 0)),
            Padding(mix_table(analysis), (1, 0, 0, 0)),
            Padding(structure_line(analysis), (0, 0, 0, 1)),
            *([Padding(summary, (1, 0, 0, 1))] if summary is not None else []),
            Padding(feedback_table(analysis, passes_in_one_line=True), (1, 0, 1, 1)),
        )
    delivery = delivery_block(analysis.delivery)
    return Group(
        *first,
        header_panel(analysis),
        *notes,
        Padding(pillars_table(analysis), (1, 0, 0, 1)),
        Padding(bands_table(analysis), (1, 0, 0, 0)),
        Padding(mix_table(analysis), (1, 0, 0, 0)),
        Padding(sections_table(analysis), (1, 0, 0, 0)),
        *([Padding(delivery, (1, 0, 0, 0))] if delivery is not None else []),
        diagnosis_block(analysis),
        Padding(feedback_table(analysis), (1, 0, 1, 1)),
    )


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
                      plain_text(doc["status"], "red" if doc["status"] == "failed" else ""),
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
