"""Windowed-sinc FIR design in numpy: what `scipy.signal.firwin` gives for a
Kaiser-windowed low-pass, without importing `scipy.signal` (scipy 1.17's
import takes about 2 s of CPU: it loads scipy.stats and its array-API
wrappers), so the true-peak meter, the high-rate resampler and the report's
timeline start fast."""

from __future__ import annotations

import numpy as np


def kaiser_lowpass(taps: int, cutoff: float, beta: float) -> np.ndarray:
    """Windowed-sinc low-pass FIR, `cutoff` relative to Nyquist, Kaiser window,
    unit gain at DC: scipy.signal.firwin(taps, cutoff, window=("kaiser", beta))."""
    m = np.arange(taps) - (taps - 1) / 2.0
    h = cutoff * np.sinc(cutoff * m) * np.kaiser(taps, beta)
    return h / h.sum()
