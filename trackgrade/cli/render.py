"""Rich renderables for the command line: pure functions from the library's
documents to things a `rich.console.Console` prints.

Nothing here reads files or runs analyses; `analyze` and `remote get` call
these and print the result. The one-analysis screen is here; the delivery
block is in `render_delivery`, list views in `tables`, colours in `styles`.
"""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.padding import Padding
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from trackgrade.cli.render_delivery import delivery_block, delivery_lines
from trackgrade.cli.styles import (FEEDBACK_STYLE, SECTION_STYLE, bar,
                                   score_style)
from trackgrade.cli.terminal import plain_text
from trackgrade.display import clock, plural
from trackgrade.engine.features import BAND_EDGES_HZ, BAND_NAMES
from trackgrade.grading.figures import mix_rows
from trackgrade.grading.wording import BAND_FRAME_TEXT, band_db, target_name
from trackgrade.limits import (BAND_DB_CAP, BAND_TOLERANCE_DB, BAND_WORDS, SUGGEST_BEYOND,
                               TRUE_PEAK_MAX_DBTP)
from trackgrade.model import FEEDBACK_TYPES, Analysis
from trackgrade.pillars import PILLAR_TITLES
from trackgrade.status import READY
from trackgrade.testmode import CANNED_BANNER, is_canned


def key_text(analysis: Analysis) -> Text:
    key = analysis.key
    if key is None:
        return Text("no tonal centre", style="dim")
    from trackgrade.grading.wording import percent_sure, reading

    text = Text(reading(f"{key.key} {key.scale}", key.confidence), style="bold")
    text.append(f"  {key.camelot}", style="bold cyan")
    text.append(f" {percent_sure(key.confidence)}", style="dim")
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
    from trackgrade.grading.wording import genre_reading, percent_sure

    if chosen:
        text = Text.assemble(("Judged against ", "dim"), (chosen, "bold"), ("   sounds like ", "dim"),
                             genre_reading(analysis))
    else:
        text = Text.assemble((genre_reading(analysis), "bold"))
        label = subgenre_name(analysis)
        if label:
            text.append(f"  closest to {label}")
    text.append(f"  {percent_sure(g.confidence)}", style="dim")
    return text


def header_panel(analysis: Analysis) -> Panel:
    """Score and grade up front, with the file's identity."""
    from trackgrade.grading.wording import (judged_as_part, percent_sure, reading, score_caption,
                                            what_it_is)

    style = score_style(analysis.score)
    headline = Text()
    if judged_as_part(analysis):         # what it is, first
        headline.append(what_it_is(analysis), style="bold")
        headline.append("   ")
    headline.append(f" {analysis.score} ", style=f"{style} reverse")
    headline.append("  ")
    headline.append(analysis.grade.letter, style=style)
    headline.append(f"  {analysis.grade.label}", style="bold")
    headline.append(f"   {score_caption(judged_as_part(analysis))} /100", style="dim")
    facts = Table.grid(padding=(0, 2))
    facts.add_column(style="dim", no_wrap=True)
    facts.add_column()
    tempo = analysis.tempo
    facts.add_row("Tempo", Text.assemble((reading(f"{tempo.bpm:.1f} BPM", tempo.confidence), "bold"),
                                         (f"  {percent_sure(tempo.confidence)}", "dim"),
                                         (f"   regularity {tempo.regularity:.2f}", "dim")))
    facts.add_row("Key", key_text(analysis))
    facts.add_row("Genre", genre_text(analysis))
    subtitle = plain_text(f"{analysis.mastering_status} · {clock(analysis.duration_seconds)}")
    return Panel(Group(headline, Text(""), facts), title=plain_text(analysis.file_name, "bold"),
                 title_align="left", subtitle=subtitle, subtitle_align="right",
                 border_style=style.replace("bold ", ""), box=box.ROUNDED, padding=(1, 2))


def pillars_table(analysis: Analysis) -> Table:
    table = Table(box=None, show_header=False, padding=(0, 1), title="Pillars",
                  title_justify="left", title_style="bold")
    for field, title in PILLAR_TITLES.items():
        value = getattr(analysis.scores, field)
        table.add_row(title, bar(value, style=score_style(value).replace("bold ", "")),
                      Text(f"{value:>3}", style=score_style(value)))
    return table


def _db_bar(db: float, side: int = 9, style: str = "") -> Text:
    """A band's reading as a bar from the target's `┃` in the middle: right
    for over, left for under, `side` cells to limits.BAND_DB_CAP."""
    cells = min(side, int(round(abs(db) / BAND_DB_CAP * side)))
    left = "·" * side if db >= 0 else "·" * (side - cells) + "█" * cells
    right = "█" * cells + "·" * (side - cells) if db > 0 else "·" * side
    return Text.assemble((left, style if db < 0 else "grey30"), ("┃", "bold white"),
                         (right, style if db > 0 else "grey30"))


def bands_table(analysis: Analysis) -> Table:
    """The seven bands against the target (the genre ideal or the references)
    in the frequency pillar's frame (wording.BAND_FRAME_TEXT), the dB the
    diagnosis and the feedback speak of."""
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
    for name, (lo, hi) in zip(BAND_NAMES, BAND_EDGES_HZ):
        mine, target = getattr(bands, name), getattr(ideal, name)
        diff, tolerance = diff_db[name], BAND_TOLERANCE_DB[name]
        style = ("green" if abs(diff) <= tolerance else "" if abs(diff) < SUGGEST_BEYOND * tolerance
                 else "red" if diff > 0 else "yellow")
        table.add_row(BAND_WORDS[name].title, f"{lo}-{hi if hi < 20000 else '20k'}",
                      f"{mine:5.1f}%", f"{target:5.1f}%", _db_bar(diff, style=style),
                      Text(f"{diff:+5.1f}", style=style), f"±{tolerance:g}")
    table.caption = (f"%: share of the energy · bar and dB from the target's ┃: {BAND_FRAME_TEXT} · "
                     "normal: the spread of real records · "
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
    status = "" if diagnosis.status == READY else " (template; narrative pending)"
    return Panel(Group(*parts), title=Text.assemble(("Diagnosis", "bold"), status),
                 title_align="left",
                 box=box.ROUNDED, border_style="grey50", padding=(0, 1))


def sorted_feedback(analysis: Analysis) -> list:
    """Feedback by priority: warnings, then tips, then passes (stable within a type)."""
    return sorted(analysis.feedback, key=lambda item: FEEDBACK_TYPES.index(item.type))


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
