"""B against A: two Analysis documents compared (CONTRACT.md section 5).

`compare(a, b)` is a pure function of two documents (`Analysis.to_dict()`, or
a server document from `remote get`). Band differences are absolute band
energy (`frequency.levels_db`), so a +3 dB gain reads +3 dB in every band;
`matched_bands_db` takes the integrated-loudness difference out, which leaves
the change in tonal balance (0 for a pure gain change). Every value is B minus A.
"""

from __future__ import annotations

import math

from trackgrade.engine.features import BAND_NAMES
from trackgrade.grading.limits import (BAND_LABELS, LEVEL_ONLY_BAND_DB, LEVEL_ONLY_LRA_LU,
                                       LEVEL_ONLY_MIN_DB, LEVEL_ONLY_STEREO)

PILLARS = ("danceability", "mix_quality", "frequency_balance", "energy", "structure")


def band_levels_db(doc: dict) -> dict:
    """Each band's long-term level in dB: `frequency.levels_db` when the
    document has it; else (older documents) the band's share of the power
    placed at the integrated loudness (10 log10(share) + LUFS)."""
    freq = doc["frequency"]
    levels = freq.get("levels_db")
    if levels:
        return {b: float(levels[b]) for b in BAND_NAMES}
    lufs = float(doc["mix"]["loudness_lufs"])
    return {b: 10.0 * math.log10(max(float(freq["bands"][b]), 0.01) / 100.0) + lufs
            for b in BAND_NAMES}


def summary(doc: dict, file: str | None = None) -> dict:
    """The facts of one side: file, score, grade, loudness, width, correlation,
    pillars, tempo and key."""
    key = doc.get("key")
    mix = doc["mix"]
    return {"file": file or doc.get("file_name"), "score": doc["score"],
            "grade": doc["grade"]["letter"],
            "loudness_lufs": mix["loudness_lufs"], "true_peak_dbtp": mix["peak_dbfs"],
            "lra_lu": mix["dynamic_range_db"], "width": mix["stereo_width"],
            "correlation": mix["stereo_correlation"],
            "pillars": {p: doc["scores"][p] for p in PILLARS},
            "tempo_bpm": doc["tempo"]["bpm"],
            "key": None if key is None else f"{key['key']} {key['scale']} ({key['camelot']})"}


def _diff(x: float, y: float, digits: int) -> float:
    return round(float(y) - float(x), digits) + 0.0


def compare(a: dict, b: dict, *, a_file: str | None = None, b_file: str | None = None) -> dict:
    """B against A (every difference is B minus A); `a_file`/`b_file` name the
    sides (default: each document's `file_name`)."""
    la, lb = band_levels_db(a), band_levels_db(b)
    loudness = _diff(a["mix"]["loudness_lufs"], b["mix"]["loudness_lufs"], 1)
    bands = {band: _diff(la[band], lb[band], 1) for band in BAND_NAMES}
    result = {
        "a": summary(a, a_file), "b": summary(b, b_file),
        "bands_db": bands,
        "matched_bands_db": {band: round(lb[band] - la[band] - loudness, 1) + 0.0
                             for band in BAND_NAMES},
        "loudness_lufs_db": loudness,
        "true_peak_db": _diff(a["mix"]["peak_dbfs"], b["mix"]["peak_dbfs"], 1),
        "lra_db": _diff(a["mix"]["dynamic_range_db"], b["mix"]["dynamic_range_db"], 1),
        "width": _diff(a["mix"]["stereo_width"], b["mix"]["stereo_width"], 3),
        "correlation": _diff(a["mix"]["stereo_correlation"], b["mix"]["stereo_correlation"], 3),
        "pillars": {p: int(b["scores"][p]) - int(a["scores"][p]) for p in PILLARS},
        "score": int(b["score"]) - int(a["score"]),
    }
    result["level_only"] = level_only(result)
    result["verdict"] = verdict(result)
    return result


def level_only(result: dict) -> bool:
    """True when B is A at another level and nothing else: the loudness moved,
    the loudness-matched bands, the stereo image and the loudness range did not,
    and tempo and key agree."""
    a, b = result["a"], result["b"]
    return (abs(result["loudness_lufs_db"]) >= LEVEL_ONLY_MIN_DB
            and all(abs(v) <= LEVEL_ONLY_BAND_DB for v in result["matched_bands_db"].values())
            and abs(result["width"]) <= LEVEL_ONLY_STEREO
            and abs(result["correlation"]) <= LEVEL_ONLY_STEREO
            and abs(result["lra_db"]) <= LEVEL_ONLY_LRA_LU
            and abs(a["tempo_bpm"] - b["tempo_bpm"]) < 1.0 and a["key"] == b["key"])


def verdict(result: dict) -> str:
    """The first thing to say about B against A, loudness-matched first: a
    level-only change is named as such (its score change comes from level alone);
    otherwise the biggest tonal changes once loudness is matched."""
    gain = result["loudness_lufs_db"]
    if result["level_only"]:
        return (f"Level only: B is A {abs(gain):.1f} dB {'louder' if gain > 0 else 'quieter'} "
                f"(every band {gain:+.1f} dB; within {LEVEL_ONLY_BAND_DB:g} dB once loudness "
                f"is matched). The score change ({result['score']:+d}) comes from the level "
                f"alone, not from the mix.")
    moved = sorted(((b, v) for b, v in result["matched_bands_db"].items()
                    if abs(v) > LEVEL_ONLY_BAND_DB), key=lambda x: -abs(x[1]))[:3]
    tonal = ", ".join(f"{BAND_LABELS[b]} {v:+.1f} dB" for b, v in moved)
    return (f"Loudness-matched, B differs from A in {tonal}" if moved
            else "Loudness-matched, the bands of B and A agree") + \
        f"; the level differs by {gain:+.1f} dB."
