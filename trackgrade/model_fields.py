"""How a field of the Analysis dataclasses (model.py) carries the rules its
type cannot (range, rounding, vocabulary, array sizes, description, whether it
is in the document), and how a dataclass becomes its JSON document. model.py
declares the fields; document.py derives the schema from these rules."""

from __future__ import annotations

from dataclasses import MISSING, field, fields, is_dataclass


def spec(*, lo: float | None = None, hi: float | None = None, decimals: int | None = None,
         choices: str | tuple | None = None, min_items: int | None = None,
         max_items: int | None = None, description: str | None = None,
         document: bool = True, default=MISSING, default_factory=MISSING, **extra):
    """A field with the rules its type cannot carry (read by trackgrade/document.py):
    `lo`/`hi` an inclusive range, `decimals` the rounding, `choices` the allowed
    values (a tuple, or the name of a vocabulary document.py looks up), array
    sizes, a description for the OpenAPI document; `document=False` keeps a
    field out of the document. `extra` is kept for the code that owns it."""
    rules = {"lo": lo, "hi": hi, "decimals": decimals, "choices": choices,
             "min_items": min_items, "max_items": max_items, "description": description,
             **extra}
    metadata = {k: v for k, v in rules.items() if v is not None}
    if not document:
        metadata["document"] = False
    return field(default=default, default_factory=default_factory, metadata=metadata)


def pct(**rules):
    """An integer score 0-100."""
    return spec(lo=0, hi=100, **rules)


def unit(**rules):
    """A number 0-1 (confidences, regularity, width)."""
    return spec(lo=0, hi=1, **rules)


def document_fields(kind) -> list:
    """The dataclass fields of `kind` that belong to the document, in order."""
    return [f for f in fields(kind) if f.metadata.get("document", True)]


def json_ready(value):
    """A document value as JSON-ready Python: dataclasses as dicts of their
    document fields, tuples as lists."""
    if is_dataclass(value) and not isinstance(value, type):
        return {f.name: json_ready(getattr(value, f.name)) for f in document_fields(type(value))}
    if isinstance(value, (tuple, list)):
        return [json_ready(v) for v in value]
    if isinstance(value, dict):
        return {k: json_ready(v) for k, v in value.items()}
    return value
