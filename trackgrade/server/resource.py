"""The Analysis resource the server answers (spec 2.1): its own fields
around the library's document (`Analysis.to_dict()`) and the schema of the
whole, which the OpenAPI document serves. The library's part is derived from
model.py by trackgrade/document.py."""

from __future__ import annotations

from trackgrade.document import json_schema
from trackgrade.model import Analysis
from trackgrade.status import STATUSES

_UUID = {"type": "string", "format": "uuid"}
_DATE_TIME = {"type": "string", "format": "date-time"}

# the server's own fields around `Analysis.to_dict()` (spec 2.1), with their schemas
ENVELOPE = {
    "object": {"const": "analysis"},
    "id": _UUID,
    "status": {"enum": list(STATUSES)},
    "livemode": {"type": "boolean"},
    "external_id": {"type": ["string", "null"], "maxLength": 255},
    "created_at": _DATE_TIME,
    "completed_at": {**_DATE_TIME, "type": ["string", "null"]},
    "error": {"$ref": "#/components/schemas/ErrorObject"},
}
ENVELOPE_REQUIRED = ("object", "id", "status", "diagnosis_status", "livemode", "external_id",
                     "file_name", "mastering_status", "created_at", "completed_at")


def served_analysis_schema() -> dict:
    """The schema of the Analysis resource the server answers: the envelope and
    the library's document, whose result fields exist only when complete."""
    library = json_schema(Analysis)
    return {"type": "object", "properties": {**ENVELOPE, **library["properties"]},
            "required": list(ENVELOPE_REQUIRED), "additionalProperties": False,
            "description": "Score fields are present only when status is complete; error "
                           "only when status is failed."}
