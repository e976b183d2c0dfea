"""The status values of an analysis (CONTRACT.md, the analysis object): one
home for the server's rows and documents, the console, the remote CLI and the
client, so a new value or a renamed one is one edit.

    status             processing -> complete | failed
    diagnosis_status   pending -> ready (the narrative after the scores)
"""

from __future__ import annotations

PROCESSING = "processing"
COMPLETE = "complete"
FAILED = "failed"
STATUSES = (PROCESSING, COMPLETE, FAILED)

PENDING = "pending"
READY = "ready"
DIAGNOSIS_STATUSES = (PENDING, READY)
