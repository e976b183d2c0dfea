"""The server's log lines: one record, one line, whatever a request carried.

A request's path, headers and names reach log records as arguments
(`log.info("%s %s", method, path)`); a path with `%0a` or an escape sequence
in it would otherwise write a line of the sender's choosing. `LineFormatter`
writes every argument with its control characters escaped (C0 with the
newline, DEL, C1, bidi and zero-width format characters: `display.escape_controls`),
and the rest of the line (the message, a traceback) likewise but for its own
newlines. `configure()` is what `trackgrade serve` logs with.
"""

from __future__ import annotations

import logging

from trackgrade.display import escape_controls

FORMAT = "%(asctime)s %(levelname)s %(name)s %(message)s"


def _escaped(value: object) -> object:
    if isinstance(value, str):
        return escape_controls(value)
    if isinstance(value, (bytes, bytearray)):
        return escape_controls(bytes(value).decode("latin-1"))
    return value


class LineFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        record = logging.makeLogRecord(record.__dict__)
        if isinstance(record.args, dict):
            record.args = {k: _escaped(v) for k, v in record.args.items()}
        elif record.args:
            record.args = tuple(_escaped(v) for v in record.args)
        if not isinstance(record.msg, str):
            record.msg = escape_controls(record.msg)
        return escape_controls(super().format(record), keep="\n")


def configure(level: int = logging.INFO) -> None:
    """Log to stderr through `LineFormatter` (the root logger's handlers)."""
    logging.basicConfig(level=level, format=FORMAT)
    for handler in logging.getLogger().handlers:
        handler.setFormatter(LineFormatter(FORMAT))
