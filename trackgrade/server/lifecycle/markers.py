"""The state machine's bookkeeping: one small document per analysis, in two
collections of their own, so a restart or a sweep never scans the analyses.

    uploads  {"id": <analysis id>, "at": <upload deadline, Unix s>}
             analyses awaiting their bytes; the sweeper reads the expired
             ones through the `uploads.by_deadline` index
    jobs     {"id": <analysis id>, "at": <accepted, Unix s>, "node": <name>}
             bytes accepted, work not finished; lost in a crash, they are
             recovered at the next start (by the node that held them)

Data directories written before these collections kept the same markers as
"settings" documents named `server.upload:<id>` / `server.job:<id>`;
`adopt_legacy` moves them over once, at start.
"""

from __future__ import annotations

UPLOADS = "uploads"
JOBS = "jobs"
_LEGACY = {"server.upload:": UPLOADS, "server.job:": JOBS}


def set_upload(txn, analysis_id: str, deadline: float) -> None:
    txn.put(UPLOADS, {"id": analysis_id, "at": float(deadline)})


def set_job(txn, analysis_id: str, at: float, node: str) -> None:
    txn.put(JOBS, {"id": analysis_id, "at": float(at), "node": node})


def clear(txn, analysis_id: str) -> None:
    """Drop both markers of an analysis (absent ones are fine)."""
    for collection in (UPLOADS, JOBS):
        if txn.get(collection, analysis_id) is not None:
            txn.delete(collection, analysis_id)


def expired_uploads(store, now: float, limit: int) -> list[str]:
    return [doc["id"] for doc in store.select("uploads.by_deadline", upto=(now,), limit=limit)]


def jobs_of(store, node: str | None) -> list[str]:
    """Analyses with unfinished work: all of them, or only `node`'s."""
    return [doc["id"] for doc in store.scan(JOBS)
            if node is None or doc.get("node", "") == node]


def adopt_legacy(store) -> int:
    """Move markers kept in "settings" by older versions into their collections."""
    legacy = [doc for doc in store.scan("settings")
              if any(doc["id"].startswith(prefix) for prefix in _LEGACY)]
    if not legacy:
        return 0
    with store.transaction() as txn:
        for doc in legacy:
            prefix = next(p for p in _LEGACY if doc["id"].startswith(p))
            moved = {"id": doc["analysis_id"], "at": float(doc["at"])}
            if _LEGACY[prefix] == JOBS:
                moved["node"] = doc.get("node", "")
            txn.put(_LEGACY[prefix], moved)
            txn.delete("settings", doc["id"])
    return len(legacy)
