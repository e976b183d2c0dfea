"""The Analysis document's shape, derived from model.py (its one home).

A field's JSON type comes from its annotation (`int`, `float`, `str`, `bool`,
`X | None`, `tuple[X, ...]`, a dataclass); its range, rounding, vocabulary and
array sizes from the `spec(...)` metadata model.py puts on it. From that:

- `json_schema(kind)`: the JSON Schema (OpenAPI 3.1) of a dataclass, which
  server/openapi.py serves (and tests validate documents against);
- `members(kind)`: the fields and their rules, which the tests' checker
  (tests/document_check.py) walks to say where a value departs from them.

Vocabularies named by a string in `choices` are looked up here, at call time,
in the tables that own them (so model.py imports nothing from grading).
"""

from __future__ import annotations

import types
import typing
from dataclasses import is_dataclass
from functools import lru_cache

from trackgrade.model import RESULT_FROM, Analysis
from trackgrade.model_fields import document_fields
from trackgrade.status import DIAGNOSIS_STATUSES

NUMBER_TYPES = (int, float)


def _genre_keys() -> tuple[str, ...]:
    from trackgrade.grading.genres import GENRES

    return tuple(GENRES)


def _genre_targets() -> tuple[str, ...]:
    from trackgrade.grading.genres import ELECTRONIC
    from trackgrade.grading.targets import REFERENCE

    return (*_genre_keys(), REFERENCE, ELECTRONIC)


def _grade_letters() -> tuple[str, ...]:
    from trackgrade.grading.grade import GRADE_TABLE

    return tuple(letter for _, letter, _ in GRADE_TABLE)


def _mastering_statuses() -> tuple[str, ...]:
    from trackgrade.limits import MASTERING_STATUSES

    return tuple(MASTERING_STATUSES)


def _section_labels() -> tuple[str, ...]:
    from trackgrade.engine.features import DOCUMENT_SECTION_LABELS

    return tuple(DOCUMENT_SECTION_LABELS)


def _content_kinds() -> tuple[str, ...]:
    from trackgrade.grading.content import KINDS

    return tuple(KINDS)


def _tempo_relations() -> tuple[str, ...]:
    from trackgrade.engine.features import TEMPO_RELATIONS

    return tuple(TEMPO_RELATIONS)


def _platforms() -> tuple[str, ...]:
    from trackgrade.delivery.platforms import PLATFORMS

    return tuple(p.key for p in PLATFORMS)


def _platform_outcomes() -> tuple[str, ...]:
    from trackgrade.delivery.platforms import OUTCOMES

    return tuple(OUTCOMES)


def _codecs() -> tuple[str, ...]:
    from trackgrade.delivery.platforms import CODEC_NAMES

    return tuple(CODEC_NAMES)


def _tonics() -> tuple[str, ...]:
    from trackgrade.musical_keys import TONICS

    return tuple(TONICS)


VOCABULARIES = {
    "genre_keys": _genre_keys,
    "genre_targets": _genre_targets,
    "grade_letters": _grade_letters,
    "mastering_statuses": _mastering_statuses,
    "section_labels": _section_labels,
    "content_kinds": _content_kinds,
    "tempo_relations": _tempo_relations,
    "tonics": _tonics,
    "platforms": _platforms,
    "platform_outcomes": _platform_outcomes,
    "codecs": _codecs,
}

# dataclasses served as named components (referenced, not inlined)
COMPONENTS = ("FrequencyBands",)


def choices(rules: dict) -> tuple | None:
    """The allowed values a field's rules name, or None."""
    named = rules.get("choices")
    if named is None:
        return None
    return VOCABULARIES[named]() if isinstance(named, str) else tuple(named)


def _unwrap(kind):
    """(kind without None, nullable)."""
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(kind) if a is not type(None)]
        return options[0], len(options) < len(typing.get_args(kind))
    return kind, False


def _hints(kind) -> dict:
    return typing.get_type_hints(kind)


def members(kind) -> list[tuple[str, object, dict]]:
    """(name, annotation, rules) of each document field of a dataclass, in order;
    an Analysis gets its `diagnosis_status` after `mastering_status`."""
    hints = _hints(kind)
    out = []
    for f in document_fields(kind):
        out.append((f.name, hints[f.name], dict(f.metadata)))
        if kind is Analysis and f.name == "mastering_status":
            out.append(("diagnosis_status", str, {"choices": DIAGNOSIS_STATUSES}))
    return out


# ------------------------------------------------------------------ JSON Schema

def _with_null(schema: dict) -> dict:
    if "type" in schema and not isinstance(schema["type"], list) and "$ref" not in schema \
            and schema["type"] not in ("object", "array"):
        out = {**schema, "type": [schema["type"], "null"]}
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        return out
    return {"oneOf": [schema, {"type": "null"}]}


def schema_of(kind, rules: dict | None = None) -> dict:
    """The JSON Schema of one annotation with its rules."""
    rules = rules or {}
    kind, nullable = _unwrap(kind)
    if typing.get_origin(kind) is tuple:
        schema: dict = {"type": "array", "items": schema_of(typing.get_args(kind)[0])}
        if "min_items" in rules:
            schema["minItems"] = rules["min_items"]
        if "max_items" in rules:
            schema["maxItems"] = rules["max_items"]
    elif is_dataclass(kind):
        schema = ({"$ref": f"#/components/schemas/{kind.__name__}"}
                  if kind.__name__ in COMPONENTS else json_schema(kind))
    elif kind is bool:
        schema = {"type": "boolean"}
    elif kind in NUMBER_TYPES:
        schema = {"type": "integer" if kind is int else "number"}
        if "lo" in rules:
            schema["minimum"] = rules["lo"]
        if "hi" in rules:
            schema["maximum"] = rules["hi"]
        if "decimals" in rules:
            schema["x-decimals"] = rules["decimals"]
    elif kind is str:
        allowed = choices(rules)
        schema = ({"type": "string", "enum": list(allowed)} if allowed is not None
                  else {"type": "string", "minLength": 1})
    elif kind is dict:
        schema = {"type": "object"}
    else:
        raise TypeError(f"no JSON type for annotation {kind!r}")
    if "description" in rules:
        schema["description"] = rules["description"]
    if "weight" in rules:
        share = f"its weight in the pillar: {rules['weight']:g}"
        schema["description"] = "; ".join(filter(None, (schema.get("description"), share)))
    return _with_null(schema) if nullable else schema


def json_schema(kind, *, required: tuple[str, ...] | None = None) -> dict:
    """The object schema of a dataclass: every document field, all required
    unless `required` names fewer, nothing else allowed."""
    props = {name: schema_of(hint, rules) for name, hint, rules in members(kind)}
    return {"type": "object", "properties": props,
            "required": list(props if required is None else required),
            "additionalProperties": False}


def component_schemas() -> dict:
    """The named components the schemas above refer to."""
    from trackgrade import model

    return {name: json_schema(getattr(model, name)) for name in COMPONENTS}


@lru_cache(maxsize=1)
def result_fields() -> tuple[str, ...]:
    """The Analysis fields present only on a complete analysis."""
    names = [name for name, _, _ in members(Analysis)]
    return tuple(names[names.index(RESULT_FROM):])


@lru_cache(maxsize=1)
def library_fields() -> tuple[str, ...]:
    """Every field of the library's document (`Analysis.to_dict()`)."""
    return tuple(name for name, _, _ in members(Analysis))
