"""Consoles that print text as text (CONTRACT section 5, "terminal text").

Names and ids come from files and from the API: `broken[/nope].wav` must not
crash Rich's markup parser, `[link=http://…]` must not become a link and an
escape sequence must not reach the terminal. `PlainConsole` turns markup,
emoji codes and highlighting off and escapes control characters in every
string it renders (table cells, captions, `print`); `plain_text` does the same
for a `Text` built from such a value. Our own styling uses `Text` styles,
never markup strings.
"""

from __future__ import annotations

from rich.console import Console
from rich.text import Text

from trackgrade.display import escape_controls


class PlainConsole(Console):
    def __init__(self, **options) -> None:
        for name in ("markup", "emoji", "highlight"):
            options.setdefault(name, False)
        super().__init__(**options)

    def render_str(self, text: str, **options) -> Text:
        return super().render_str(escape_controls(text, keep="\n\t"), **options)


def plain_text(value: object, style: str = "") -> Text:
    """A value from a file or the API as a Text: no markup, controls escaped."""
    return Text(escape_controls("" if value is None else value), style=style)
