"""Score -> letter grade (CONTRACT.md: 13 grades by lower bound, one label per letter)."""

from __future__ import annotations

from trackgrade.model import Grade

# (lower bound, letter, label), best first
GRADE_TABLE: tuple[tuple[int, str, str], ...] = (
    (95, "A+", "Exceptional"),
    (90, "A", "Excellent"),
    (85, "A-", "Release ready"),
    (80, "B+", "Very good"),
    (75, "B", "Good"),
    (70, "B-", "Solid"),
    (65, "C+", "Promising"),
    (60, "C", "Decent"),
    (55, "C-", "Needs polish"),
    (50, "D+", "Needs work"),
    (45, "D", "Weak"),
    (40, "D-", "Poor"),
    (0, "F", "Not ready"),
)
# a part's grade speaks of the sound, never of release readiness (CONTRACT.md section 6)
PART_LABELS = {"A-": "Very clean", "F": "Rough"}
GRADE_ORDER: tuple[str, ...] = tuple(letter for _, letter, _ in GRADE_TABLE)   # best first


def grade_for(score: int, *, part: bool = False) -> Grade:
    """The grade of an integer score 0-100 (values outside are clamped); a
    part's label never speaks of release readiness (`PART_LABELS`)."""
    s = min(100, max(0, int(score)))
    for bound, letter, label in GRADE_TABLE:
        if s >= bound:
            return Grade(letter=letter, label=PART_LABELS.get(letter, label) if part else label)
    raise AssertionError("unreachable: the table ends at 0")
