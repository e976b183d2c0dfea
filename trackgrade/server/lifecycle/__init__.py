"""The analysis state machine over the store (spec section 3), by concern:

    rows.py         the typed analysis row (`AnalysisRow`), Caller, Submission, Outcome
    tokens.py       upload tokens derived from the analysis id (never stored)
    markers.py      the "uploads" and "jobs" bookkeeping collections
    core.py         what the parts share; the failure transition
    create.py       POST /analyses in one transaction; limits; replays
    transitions.py  upload accepted/rejected, scores, completion, failure, cancel
    upkeep.py       recovery at start; the sweeper (expired uploads, idempotency
                    records, test-data retention)

Each transition is ONE store transaction that changes the analysis row, the
account's credits, the markers and the outbox events it causes, so a crash
can never separate them.
"""

from trackgrade.server.lifecycle.core import UPLOAD_FIELD
from trackgrade.server.lifecycle.rows import AnalysisRow, Caller, Outcome, Submission
from trackgrade.server.lifecycle.transitions import EMBEDDED_CODES
from trackgrade.server.lifecycle.upkeep import Upkeep


class Lifecycle(Upkeep):
    """The whole state machine (see the module docstring)."""


__all__ = ["EMBEDDED_CODES", "UPLOAD_FIELD", "AnalysisRow", "Caller", "Lifecycle", "Outcome",
           "Submission"]
