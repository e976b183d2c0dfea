"""Numbers -> judgement -> words: build the Analysis document from `Features`.

    build_analysis(features, *, file_name, mastering_status, genre=None, references=()) -> Analysis

analysis.py puts it together: genre (genres.py), the five pillars and the
headline (scores.py), the grade (grade.py), the template diagnosis
(diagnosis.py, status "pending") and feedback (feedback.py), all against
the thresholds of limits.py. The enhanced narrative is
`diagnosis.enhanced_diagnosis(analysis)`.
"""

from trackgrade.grading.analysis import (Judgement, build_analysis, check_mastering_status, judge,
                                         round_bands)
from trackgrade.limits import MASTERING_STATUSES

__all__ = ["build_analysis", "judge", "Judgement", "MASTERING_STATUSES", "check_mastering_status",
           "round_bands"]
