"""A set of tracks as one release (CONTRACT.md section 5, `trackgrade album`).

`album(documents)` is a pure function of Analysis documents: the median
integrated loudness; each track's loudness offset from it and the gain that
brings the track to it; each band's offset from the album's median band
level once the loudness is matched (tonal balance, so a quieter track does
not read as quieter in every band); and the outliers, 1 LU or more from the
median loudness or 2 dB or more in any band, with their reasons.
"""

from __future__ import annotations

import statistics

from trackgrade.delivery.compare import band_levels_db
from trackgrade.engine.features import BAND_NAMES
from trackgrade.grading.limits import (ALBUM_BAND_OUTLIER_DB, ALBUM_LOUDNESS_OUTLIER_LU, BAND_LABELS,
                                       TRUE_PEAK_MAX_DBTP)


def album(documents: list[dict], files: list[str] | None = None) -> dict:
    """{"median_lufs", "tracks": [{"file", "lufs", "gain_to_match_db",
    "band_offsets_db", "outlier", "reasons"}]} in the order given."""
    if not documents:
        return {"median_lufs": None, "tracks": []}
    files = files or [d.get("file_name") for d in documents]
    lufs = [float(d["mix"]["loudness_lufs"]) for d in documents]
    median = statistics.median(lufs)
    # each band relative to the track's own loudness: the loudness-matched level
    matched = [{b: level - loud for b, level in band_levels_db(d).items()}
               for d, loud in zip(documents, lufs)]
    band_median = {b: statistics.median(m[b] for m in matched) for b in BAND_NAMES}
    tracks = []
    for doc, file, loud, levels in zip(documents, files, lufs, matched):
        offsets = {b: round(levels[b] - band_median[b], 1) + 0.0 for b in BAND_NAMES}
        gain = round(median - loud, 1) + 0.0
        reasons = []
        if abs(gain) >= ALBUM_LOUDNESS_OUTLIER_LU:
            reasons.append(f"{abs(gain):.1f} LU {'quieter' if gain > 0 else 'louder'} than the "
                           f"album's median {median:.1f} LUFS: {gain:+.1f} dB matches it"
                           + _peak_warning(doc, gain))
        for b in BAND_NAMES:
            if abs(offsets[b]) >= ALBUM_BAND_OUTLIER_DB:
                reasons.append(f"{BAND_LABELS[b]} {offsets[b]:+.1f} dB against the album")
        tracks.append({"file": file, "lufs": round(loud, 1) + 0.0, "gain_to_match_db": gain,
                       "band_offsets_db": offsets, "outlier": bool(reasons), "reasons": reasons})
    return {"median_lufs": round(median, 1) + 0.0, "tracks": tracks}


def _peak_warning(doc: dict, gain_db: float) -> str:
    """", but its true peak would reach +3.0 dBTP (ceiling -1.0 dBTP)" when the gain
    pushes the track's true peak over the ceiling of its mastering status, else ""."""
    ceiling = TRUE_PEAK_MAX_DBTP.get(doc.get("mastering_status"), TRUE_PEAK_MAX_DBTP["master"])
    reached = round(float(doc["mix"]["peak_dbfs"]) + gain_db, 1) + 0.0
    if gain_db <= 0 or reached <= ceiling:
        return ""
    return f", but its true peak would reach {reached:+.1f} dBTP (ceiling {ceiling:+.1f} dBTP)"
