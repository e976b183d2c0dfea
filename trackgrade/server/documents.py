"""The JSON documents the API returns, built from stored analysis rows.

An analysis row (collection "analyses") carries the server's fields (status,
owner, upload state... the store indexes some of them) and, under
"document", the public Analysis document (spec 2.1) as JSON *text*, rendered
by `render` at every transition. Reads serve that text as it is: no
re-encoding per request, and decoding a row costs one string instead of the
whole nested result. `render` applies the rules of spec 2.1: no score fields
while processing; `error` only when failed.
"""

from __future__ import annotations

import json

from trackgrade.errors import ERROR_CODES
from trackgrade.server import reference

SERVER_FIELDS = ("object", "id", "status", "diagnosis_status", "livemode", "external_id",
                 "file_name", "mastering_status", "created_at", "completed_at")


def analysis_document(row: dict, result: dict | None = None) -> dict:
    """The Analysis resource (spec 2.1) of a row and, when complete, the
    library's `Analysis.to_dict()`."""
    doc = {"object": "analysis", "id": row["id"], "status": row["status"],
           "diagnosis_status": row["diagnosis_status"], "livemode": row["livemode"],
           "external_id": row.get("external_id"), "file_name": row["file_name"],
           "mastering_status": row["mastering_status"], "created_at": row["created_at"],
           "completed_at": row.get("completed_at")}
    if row["status"] == "complete" and result:
        for name, value in result.items():
            if name not in doc:
                doc[name] = value
    if row["status"] == "failed":
        doc["error"] = row.get("error")
    return doc


def render(row: dict, result: dict | None = None) -> dict:
    """Store the rendered document on the row (call after every change of
    the row's public fields); returns the document."""
    doc = analysis_document(row, result)
    row["document"] = json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
    return doc


def document_text(row: dict) -> str:
    """The public document of a row as JSON text."""
    text = row.get("document")
    if text is None:
        text = json.dumps(analysis_document(row), separators=(",", ":"), ensure_ascii=False)
    return text


def document(row: dict) -> dict:
    return json.loads(document_text(row))


def result_of(row: dict) -> dict | None:
    """The library part of a complete row's document, or None."""
    if row["status"] != "complete":
        return None
    doc = document(row)
    return {k: v for k, v in doc.items() if k not in SERVER_FIELDS and k != "error"} or None


def status_document(row: dict) -> dict:
    """AnalysisStatus (spec 2.15)."""
    return {"object": "analysis.status", "id": row["id"], "status": row["status"],
            "diagnosis_status": row["diagnosis_status"], "livemode": row["livemode"]}


def embedded_error(code: str, message: str, docs_url: str | None) -> dict:
    """The Error object stored on a failed analysis (no request id: it is not a response)."""
    return {"type": ERROR_CODES[code][1], "code": code, "message": message, "param": None,
            "doc_url": reference.doc_url(code, docs_url)}


def failed_event_data(row: dict) -> dict:
    """`data` of analysis.failed (spec 6.4)."""
    return {"id": row["id"], "status": "failed", "external_id": row.get("external_id"),
            "error": row.get("error")}
