"""Rich renderables for the delivery checks, `compare` and `album`: pure
functions from documents to things a console prints (names from files are
printed as text, never as markup)."""

from __future__ import annotations

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text

from trackgrade.cli.render import PILLARS, score_style
from trackgrade.cli.terminal import plain_text
from trackgrade.grading.limits import BAND_WORDS
from trackgrade.delivery.platforms import CODEC_NAMES, PLATFORM_NAMES
from trackgrade.engine.features import BAND_NAMES
from trackgrade.grading.limits import MONO_LOSS_WARN_DB
from trackgrade.model import Delivery

OUTCOME_TEXT = {"turned_down": "turned down", "unchanged": "unchanged", "turned_up": "turned up",
                "turned_up_limited": "turned up (peak-limited)"}


def _signed(value: float, unit: str = "dB", digits: int = 1) -> str:
    return f"{value:+.{digits}f} {unit}".rstrip()


def platforms_table(delivery: Delivery) -> Table:
    """What each platform's loudness normalisation does to the track."""
    table = Table(box=box.SIMPLE_HEAD, title="Streaming platforms", title_justify="left",
                  title_style="bold", padding=(0, 1))
    for name, justify in (("platform", "left"), ("reference", "right"), ("gain", "right"),
                          ("peak after", "right"), ("outcome", "left")):
        table.add_column(name, justify=justify, no_wrap=True)
    for p in delivery.platforms:
        ref = "none" if p.reference_lufs is None else f"{p.reference_lufs:g} LUFS"
        style = "yellow" if p.outcome == "turned_up_limited" else ""
        table.add_row(PLATFORM_NAMES.get(p.platform, p.platform), ref, _signed(p.gain_db),
                      f"{p.peak_after_gain_dbtp:+.1f} dBTP", Text(OUTCOME_TEXT[p.outcome], style=style))
    return table


def mono_table(delivery: Delivery) -> Table:
    """Per band: the L/R correlation and what summing to mono costs."""
    mono = delivery.mono
    title = f"Mono (low end {'mono' if mono.low_end_mono else 'NOT mono'})"
    table = Table(box=box.SIMPLE_HEAD, title=title, title_justify="left", title_style="bold",
                  padding=(0, 1))
    for name, justify in (("band", "left"), ("correlation", "right"), ("mono loss", "right")):
        table.add_column(name, justify=justify, no_wrap=True)
    for band in BAND_NAMES:
        b = getattr(mono.bands, band)
        style = "bold red" if b.mono_loss_db >= MONO_LOSS_WARN_DB else ""
        table.add_row(BAND_WORDS[band].title, f"{b.correlation:+.2f}",
                      Text(f"{-b.mono_loss_db:+.1f} dB" if b.mono_loss_db else "0.0 dB", style=style))
    return table


def codecs_table(delivery: Delivery) -> Table | None:
    """The true peak after each codec (None when no preview was measured)."""
    if delivery.codecs is None:
        return None
    table = Table(box=box.SIMPLE_HEAD, title="Codec preview", title_justify="left",
                  title_style="bold", padding=(0, 1))
    for name, justify in (("codec", "left"), ("true peak", "right"), ("rise", "right"),
                          ("clips", "left")):
        table.add_column(name, justify=justify, no_wrap=True)
    for c in delivery.codecs:
        table.add_row(f"{CODEC_NAMES.get(c.codec, c.codec)} {c.bitrate_kbps} kbps",
                      f"{c.true_peak_dbtp:+.1f} dBTP",
                      _signed(c.true_peak_rise_db),
                      Text("yes", style="bold red") if c.clips else Text("no", style="green"))
    return table


def delivery_lines(delivery: Delivery | None) -> Text | None:
    """The default screen's delivery summary: what the platforms do, the mono
    fold-down and (when measured) the codecs, in three lines at most."""
    if delivery is None:
        return None
    line = Text.assemble(("Streaming ", "bold"))
    parts = []
    for p in delivery.platforms:
        if p.reference_lufs is None:
            continue
        mark = "*" if p.outcome == "turned_up_limited" else ""
        parts.append(f"{PLATFORM_NAMES.get(p.platform, p.platform)} {p.gain_db:+.1f}{mark}")
    line.append(" · ".join(parts) + " dB")
    if any(p.outcome == "turned_up_limited" for p in delivery.platforms):
        line.append("  (* raised only as far as its peak ceiling allows)", style="dim")
    mono = delivery.mono
    lost = [(b, getattr(mono.bands, b).mono_loss_db) for b in BAND_NAMES
            if getattr(mono.bands, b).mono_loss_db >= MONO_LOSS_WARN_DB]
    line.append("\n")
    line.append("Mono ", style="bold")
    line.append("low end mono" if mono.low_end_mono else "low end NOT mono",
                style="green" if mono.low_end_mono else "bold red")
    if lost:
        line.append(" · loses " + ", ".join(f"{BAND_WORDS[b].sentence} {v:.1f} dB" for b, v in lost),
                    style="red")
    else:
        worst = max(BAND_NAMES, key=lambda b: getattr(mono.bands, b).mono_loss_db)
        line.append(f" · at most {getattr(mono.bands, worst).mono_loss_db:.1f} dB lost "
                    f"({BAND_WORDS[worst].sentence})")
    if delivery.codecs is not None:
        line.append("\n")
        line.append("Codecs ", style="bold")
        for i, c in enumerate(delivery.codecs):
            line.append(" · " if i else "")
            line.append(f"{CODEC_NAMES.get(c.codec, c.codec)} {c.true_peak_dbtp:+.1f} dBTP",
                        style="bold red" if c.clips else "")
    return line


def delivery_block(delivery: Delivery | None) -> Group | None:
    """Platforms, mono and (when measured) codecs, for the analysis screen."""
    if delivery is None:
        return None
    parts = [platforms_table(delivery), mono_table(delivery)]
    codecs = codecs_table(delivery)
    if codecs is not None:
        parts.append(codecs)
    return Group(*parts)


def comparison_view(result: dict) -> Group:
    """`trackgrade compare`: B against A."""
    a, b = result["a"], result["b"]
    level = result.get("level_only", False)
    head = Table(box=box.SIMPLE_HEAD, title="B against A" + (": a level change only" if level
                                                              else ""),
                 title_justify="left", title_style="bold", padding=(0, 1))
    for name, justify in (("", "left"), ("A", "left"), ("B", "left"), ("B - A", "right")):
        head.add_column(name, justify=justify)
    head.add_row("file", Text(str(a["file"])), Text(str(b["file"])), "")
    head.add_row("score", Text(f"{a['score']} {a['grade']}", style=score_style(a["score"])),
                 Text(f"{b['score']} {b['grade']}", style=score_style(b["score"])),
                 f"{result['score']:+d}" + (" (level)" if level else ""))
    for key, label, unit, digits, diff in (
            ("loudness_lufs", "loudness", "LUFS", 1, "loudness_lufs_db"),
            ("true_peak_dbtp", "true peak", "dBTP", 1, "true_peak_db"),
            ("lra_lu", "loudness range", "LU", 1, "lra_db"),
            ("width", "stereo width", "", 3, "width"),
            ("correlation", "correlation", "", 3, "correlation")):
        head.add_row(label, f"{a[key]:.{digits}f} {unit}".rstrip(), f"{b[key]:.{digits}f} {unit}".rstrip(),
                     f"{result[diff]:+.{digits}f}")
    for key, title in PILLARS:
        head.add_row(title, str(a["pillars"][key]), str(b["pillars"][key]),
                     f"{result['pillars'][key]:+d}")
    head.add_row("tempo", f"{a['tempo_bpm']:.1f} BPM", f"{b['tempo_bpm']:.1f} BPM", "")
    head.add_row("key", a["key"] or "-", b["key"] or "-", "")
    bands = Table(box=box.SIMPLE_HEAD, title="Bands (B - A), loudness-matched first",
                  title_justify="left", title_style="bold", padding=(0, 1))
    for name, justify in (("band", "left"), ("loudness-matched", "right"), ("level", "right")):
        bands.add_column(name, justify=justify, no_wrap=True)
    for band in BAND_NAMES:
        matched = result["matched_bands_db"][band]
        style = "bold" if abs(matched) >= 1.0 else ""
        bands.add_row(BAND_WORDS[band].title, Text(f"{matched:+.1f} dB", style=style),
                      f"{result['bands_db'][band]:+.1f} dB")
    first = [plain_text(result["verdict"], "bold")] if result.get("verdict") else []
    return Group(*first, bands, head)


def album_view(result: dict) -> Group:
    """`trackgrade album`: the set as one release."""
    table = Table(box=box.SIMPLE_HEAD, padding=(0, 1),
                  title=f"Album: median loudness {result['median_lufs']:.1f} LUFS",
                  title_justify="left", title_style="bold")
    table.add_column("file", justify="left", min_width=12, ratio=1)
    table.add_column("LUFS", justify="right", no_wrap=True)
    table.add_column("gain", justify="right", no_wrap=True)
    for band in BAND_NAMES:
        table.add_column(BAND_WORDS[band].short, justify="right", no_wrap=True)
    for t in result["tracks"]:
        name = Text(str(t["file"]), style="bold red" if t["outlier"] else "")
        table.add_row(name, f"{t['lufs']:.1f}", f"{t['gain_to_match_db']:+.1f}",
                      *(f"{t['band_offsets_db'][b]:+.1f}" for b in BAND_NAMES))
    outliers = [t for t in result["tracks"] if t["outlier"]]
    lines = Text("gain: dB to the album's median loudness; bands: dB against the album once "
                 "loudness is matched\n", style="dim")
    if outliers:
        lines.append("Outliers\n", style="bold")
        for t in outliers:
            lines.append(f"  {t['file']}: ", style="bold")
            lines.append("; ".join(t["reasons"]) + "\n")
    else:
        lines.append("No outliers: every track is within 1 LU of the median loudness and 2 dB "
                     "of the album in every band.\n")
    return Group(table, lines)
