"""`trackgrade genres`: the genre profiles (11 families, then the label layer)."""

from __future__ import annotations

import json
import sys
from typing import Annotated

import typer


def genres(
    as_json: Annotated[bool, typer.Option(
        "--json", help="Print the profiles as JSON on stdout (the `data` of GET /genres).")] = False,
) -> None:
    """List the genre profiles: key, name, family, BPM range and ideal band balance."""
    from trackgrade.grading.genres import genre_list

    entries = genre_list()
    if as_json:
        sys.stdout.write(json.dumps(entries, indent=2, ensure_ascii=False) + "\n")
        return
    from trackgrade.cli.tables import genres_table
    from trackgrade.cli.terminal import PlainConsole

    console = PlainConsole()
    console.print(genres_table(entries, wide=console.width >= 120))
