"""An Analysis rebuilt from its JSON document (the inverse of
`Analysis.to_dict()`), for a remote analysis shown like a local one."""

from __future__ import annotations

import types
import typing
from dataclasses import fields, is_dataclass

from trackgrade.model import Analysis


def analysis_from_dict(doc: dict) -> Analysis:
    """An `Analysis` rebuilt from its JSON document (`to_dict()`, or a
    complete server document: the server's own fields are ignored), so a
    remote analysis renders like a local one. Fields are read by the
    dataclasses' own type hints, so new fields need no change here."""
    return _build(Analysis, doc)


def _build(kind, value):
    if value is None:
        return None
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(kind) if a is not type(None)]
        return _build(options[0], value) if len(options) == 1 else value
    if origin is tuple:
        item = typing.get_args(kind)[0]
        return tuple(_build(item, v) for v in value)
    if isinstance(kind, type) and is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        return kind(**{f.name: _build(hints[f.name], value[f.name]) for f in fields(kind)
                       if f.init and f.name in value})
    if kind is float and isinstance(value, int):
        return float(value)
    return value
