"""The rows of `trackgrade batch`: one builder, one writer, one order.

A row is what a person sorts in a spreadsheet (`CSV_COLUMNS`, in that order).
`row_for` builds it from an Analysis *document* (`Analysis.to_dict()`, or the
`result` a remote instance returns), so the local and the remote batch write
the same rows. JSONL lines keep the whole document beside the row.
"""

from __future__ import annotations

import csv
import json
import os
from collections import Counter
from pathlib import Path

from trackgrade.errors import TrackgradeError
from trackgrade.grading.grade import GRADE_ORDER
from trackgrade.pillars import PILLARS

CSV_COLUMNS = ("file", "path", "status", "score", "grade", "grade_label", *PILLARS,
               "duration_seconds", "bpm", "tempo_confidence", "key", "camelot",
               "key_confidence", "genre", "genre_confidence", "loudness_lufs",
               "true_peak_dbtp", "loudness_range_lu", "stereo_width", "clipping_pct",
               "top_warning", "error_code", "error_message", "seconds")
OUT_FORMATS = {".csv": "csv", ".jsonl": "jsonl", ".ndjson": "jsonl"}
SORTS = ("score", "name")


# ---------------------------------------------------------------- building rows

def empty_row(path: str) -> dict:
    return {column: None for column in CSV_COLUMNS} | {"file": Path(path).name, "path": path}


def _rounded(value, digits: int):
    try:
        return round(float(value), digits)
    except (TypeError, ValueError):
        return None


def top_warning(document: dict) -> str | None:
    """The first `warn` feedback item's text (the feedback is in priority order)."""
    for item in document.get("feedback") or ():
        if item.get("type") == "warn":
            return item.get("text")
    return None


def row_for(path: str, document, seconds: float) -> dict:
    """The row of a graded file, from its Analysis document (a dict, as a
    remote instance returns it, or a `model.Analysis`)."""
    if hasattr(document, "to_dict"):
        document = document.to_dict()
    tempo, key = document.get("tempo") or {}, document.get("key")
    genre, mix, scores = document.get("genre") or {}, document.get("mix") or {}, \
        document.get("scores") or {}
    grade = document.get("grade") or {}
    confidence = tempo.get("confidence")
    return empty_row(path) | {
        "status": "ok", "score": document.get("score"),
        "grade": grade.get("letter"), "grade_label": grade.get("label"),
        **{name: scores.get(name) for name in PILLARS},
        "duration_seconds": _rounded(document.get("duration_seconds"), 2),
        "bpm": _rounded(tempo.get("bpm"), 2),
        "tempo_confidence": _rounded(confidence, 3),
        "key": f"{key['key']} {key['scale']}" if key else None,
        "camelot": key.get("camelot") if key else None,
        "key_confidence": _rounded(key.get("confidence"), 3) if key else None,
        "genre": genre.get("detected"),
        "genre_confidence": _rounded(genre.get("confidence"), 3),
        "loudness_lufs": _rounded(mix.get("loudness_lufs"), 2),
        "true_peak_dbtp": _rounded(mix.get("peak_dbfs"), 2),
        "loudness_range_lu": _rounded(mix.get("dynamic_range_db"), 2),
        "stereo_width": _rounded(mix.get("stereo_width"), 3),
        "clipping_pct": _rounded(mix.get("clipping_pct"), 4),
        "top_warning": top_warning(document),
        "seconds": round(seconds, 3),
    }


def failed_row(path: str, code: str, message: str, seconds: float) -> dict:
    return empty_row(path) | {"status": "failed", "error_code": code,
                              "error_message": message, "seconds": round(seconds, 3)}


def sorted_rows(rows: list[dict], sort: str) -> list[dict]:
    """`score`: graded files best first (ties by name), then failures by name.
    `name`: by file name, then path."""
    by_name = sorted(rows, key=lambda r: (r["file"].lower(), r["path"]))
    if sort == "name":
        return by_name
    ok = [r for r in by_name if r["status"] == "ok"]
    return sorted(ok, key=lambda r: -(r["score"] or 0)) + \
        [r for r in by_name if r["status"] != "ok"]


# ---------------------------------------------------------------- writing rows

def out_format(path: Path) -> str:
    kind = OUT_FORMATS.get(path.suffix.lower())
    if kind is None:
        raise TrackgradeError("parameter_invalid",
                              f"--out must end in .csv or .jsonl, not '{path.name}'",
                              param="out")
    return kind


class RowWriter:
    """Writes each row as it arrives (so an interrupted batch keeps its finished
    rows), then `finish` rewrites the file in the chosen order."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.format = None
        self._fh = None
        self._csv = None
        self._written: list[tuple[dict, dict | None]] = []
        if path is None:
            return
        self.format = out_format(path)
        self._fh = self._open(path)

    @staticmethod
    def _open(path: Path):
        try:
            return open(path, "w", encoding="utf-8", newline="")
        except OSError as exc:
            raise TrackgradeError("parameter_invalid",
                                  f"cannot write '{path}': {exc.strerror or exc}",
                                  param="out") from None

    def _write(self, fh, row: dict, document: dict | None) -> None:
        if self.format == "csv":
            if self._csv is None:
                self._csv = csv.DictWriter(fh, fieldnames=CSV_COLUMNS)
                self._csv.writeheader()
            self._csv.writerow({k: "" if row[k] is None else row[k] for k in CSV_COLUMNS})
        else:
            fh.write(json.dumps(row | {"analysis": document}, ensure_ascii=False) + "\n")

    def write(self, row: dict, document: dict | None) -> None:
        if self._fh is None:
            return
        self._written.append((row, document))
        self._write(self._fh, row, document)
        self._fh.flush()

    def finish(self, sort: str) -> None:
        """Rewrite the rows in `sort` order (write, then rename over the file)."""
        if self._fh is None:
            return
        self.close()
        documents = {id(row): document for row, document in self._written}
        partial = self.path.with_name(f".{self.path.name}.partial")
        with self._open(partial) as fh:
            self._csv = None
            for row in sorted_rows([row for row, _ in self._written], sort):
                self._write(fh, row, documents[id(row)])
        os.replace(partial, self.path)

    def close(self) -> None:
        if self._fh is not None and not self._fh.closed:
            self._fh.close()


# ---------------------------------------------------------------- the summary

def summarize(rows: list[dict], wall_seconds: float, skipped: list[str] = ()) -> dict:
    """The numbers of the summary, JSON-ready."""
    ok = [r for r in rows if r["status"] == "ok"]
    grades = Counter(r["grade"] for r in ok)
    slowest = max(rows, key=lambda r: r["seconds"] or 0.0) if rows else None
    return {
        "files": len(rows), "ok": len(ok), "failed": len(rows) - len(ok),
        "skipped": {"count": len(skipped), "files": list(skipped)},
        "mean_score": round(sum(r["score"] for r in ok) / len(ok), 1) if ok else None,
        "grades": {g: grades[g] for g in GRADE_ORDER if grades[g]},
        "slowest": {"path": slowest["path"], "seconds": slowest["seconds"]} if slowest else None,
        "wall_seconds": round(wall_seconds, 2),
    }
