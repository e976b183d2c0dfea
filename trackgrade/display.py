"""Small presentation rules shared by the terminal screen (`cli/render.py`)
and the HTML report (`report.py`), so both read a score and a time alike."""

from __future__ import annotations

# lower bounds of the five score tiers, best first
SCORE_TIERS = ((80, "great"), (65, "good"), (50, "fair"), (40, "weak"), (float("-inf"), "poor"))


def score_tier(score: float) -> str:
    """'great' (>= 80), 'good' (>= 65), 'fair' (>= 50), 'weak' (>= 40) or 'poor'."""
    return next(name for floor, name in SCORE_TIERS if score >= floor)


def clock(seconds: float) -> str:
    """Seconds as m:ss (h:mm:ss beyond an hour)."""
    total = max(0, int(round(float(seconds))))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"
