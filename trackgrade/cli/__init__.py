"""The `trackgrade` command line (Typer)."""


def main() -> None:  # replaced by the CLI module
    raise SystemExit("trackgrade CLI not built yet")
