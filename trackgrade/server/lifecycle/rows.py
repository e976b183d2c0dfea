"""The typed analysis row and the small value types of the state machine.

`AnalysisRow` is what the "analyses" collection holds, as a dataclass: the
store keeps it as a plain JSON document (`to_doc`), the state machine reads
it back with `from_doc` (fields it does not know, e.g. written by a newer
version, ride along untouched in `extra`). `document` is the public Analysis
(spec 2.1) as JSON text, re-rendered at every transition by `render`.

Phases (the server's own progress, beside the public status):

    awaiting_upload  accepted, waiting for the bytes (the upload token opens it)
    uploaded         bytes accepted, the engine is working
    enhancing        scores stored, the narrative is being written
    done             finished (complete/ready or failed)
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any

from trackgrade.server import documents
from trackgrade.status import PENDING, PROCESSING

AWAITING_UPLOAD = "awaiting_upload"
UPLOADED = "uploaded"
ENHANCING = "enhancing"
DONE = "done"
LEGACY_FIELDS = ("upload_token_hash",)    # dropped on the next write: tokens are derived now


@dataclass(frozen=True)
class Caller:
    """Who is calling: the authenticated key and its account."""
    key_id: str
    account_id: str
    livemode: bool
    credit_billed: bool
    per_minute: int
    in_flight: int
    daily: int | None


@dataclass(frozen=True)
class Submission:
    file_name: str
    mastering_status: str
    external_id: str | None
    genre: str | None = None         # grade against this profile (a key of GET /genres)
    codec_preview: bool = False      # measure delivery.codecs too


@dataclass(frozen=True)
class Outcome:
    """A finished POST /analyses: what to answer (and, when stored, replay)."""
    status: int
    body: dict
    headers: dict


@dataclass
class AnalysisRow:
    """One analysis as the server stores it (collection "analyses")."""
    id: str
    account_id: str
    key_id: str
    livemode: bool
    created_at: str
    file_name: str
    mastering_status: str
    external_id: str | None = None
    genre: str | None = None
    codec_preview: bool = False
    status: str = PROCESSING                # processing | complete | failed
    diagnosis_status: str = PENDING         # pending | ready
    completed_at: str | None = None
    phase: str = AWAITING_UPLOAD
    upload_expires_at: float = 0.0
    credit_spent: bool = False
    credit_restored: bool = False
    embed: bool = False
    error: dict | None = None
    bytes_received: int | None = None
    document: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_doc(cls, doc: dict) -> "AnalysisRow":
        known = {f.name for f in fields(cls)} - {"extra"}
        values = {k: v for k, v in doc.items() if k in known}
        extra = {k: v for k, v in doc.items() if k not in known and k not in LEGACY_FIELDS}
        return cls(**values, extra=extra)

    def to_doc(self) -> dict:
        doc = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "extra"}
        doc.update(self.extra)
        return doc

    @property
    def awaiting_upload(self) -> bool:
        return self.status == PROCESSING and self.phase == AWAITING_UPLOAD

    def render(self, result: dict | None = None) -> dict:
        """Re-render the public document after a change; returns it."""
        doc = self.to_doc()
        public = documents.render(doc, result)
        self.document = doc["document"]
        return public

    def result(self) -> dict | None:
        """The library part of a complete row's document, or None."""
        return documents.result_of(self.to_doc())


def load_row(txn, analysis_id: str) -> AnalysisRow | None:
    doc = txn.get("analyses", analysis_id)
    return None if doc is None else AnalysisRow.from_doc(doc)


def save_row(txn, row: AnalysisRow) -> None:
    txn.put("analyses", row.to_doc())
