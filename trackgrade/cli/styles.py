"""The terminal's colours and bars, shared by every renderer (`render`,
`render_delivery`, `tables`): a leaf, so the renderers import it and not
each other."""

from __future__ import annotations

from rich.text import Text

from trackgrade.display import score_tier

FEEDBACK_STYLE = {"warn": ("▲ warn", "bold red"), "tip": ("● tip ", "bold yellow"),
                  "pass": ("✓ pass", "bold green")}
SECTION_STYLE = {"intro": "cyan", "buildup": "yellow", "drop": "bold magenta",
                 "breakdown": "blue", "outro": "cyan"}


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
