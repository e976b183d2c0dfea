"""The piecewise-linear 0..1 ramp the scores are built from (a leaf: the
scores, the low end and the genre model's cues all read it)."""

from __future__ import annotations

import numpy as np


def ramp(x: float, x0: float, x1: float) -> float:
    """0 at x0, 1 at x1, linear between, clamped (x1 may be below x0); 0 for NaN."""
    if not np.isfinite(x):
        return 0.0
    if x1 == x0:
        return float(x >= x1)
    return float(np.clip((x - x0) / (x1 - x0), 0.0, 1.0))
