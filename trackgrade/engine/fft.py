"""Real FFTs of many frames at once, without importing `scipy.fft`.

`scipy.fft` is the fast batched real FFT here (pocketfft, SIMD across rows:
about 3x numpy.fft on float32 frames), but importing the package costs more
than analysing a short track: its `__init__` pulls in scipy.special and
scipy's array-API layer (numpy.testing, numpy.f2py...). The transform itself
is one compiled module, `scipy/fft/_pocketfft/pypocketfft`, which needs only
numpy. `rfft_rows` loads that module straight from the installed scipy (about
1 ms) and falls back to `scipy.fft.rfft` when the file is not where this
scipy release keeps it. Both give the same numbers (a test checks).
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import os
from functools import lru_cache
from pathlib import Path

import numpy as np


@lru_cache(maxsize=1)
def _pocketfft():
    """scipy's compiled pocketfft module, loaded without scipy.fft, or None."""
    try:
        spec = importlib.util.find_spec("scipy")      # locates scipy; runs nothing of it
        if spec is None or not spec.submodule_search_locations:
            return None
        folder = Path(spec.submodule_search_locations[0]) / "fft" / "_pocketfft"
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = folder / f"pypocketfft{suffix}"
            if path.is_file():
                loader = importlib.machinery.ExtensionFileLoader("pypocketfft", str(path))
                module = importlib.util.module_from_spec(
                    importlib.util.spec_from_loader("pypocketfft", loader))
                loader.exec_module(module)
                return module if hasattr(module, "r2c") else None
    except (ImportError, OSError):
        return None
    return None


def rfft_rows(frames: np.ndarray, *, workers: int = 1) -> np.ndarray:
    """Forward real FFT of each row of a 2-D float32/float64 array (no
    normalisation), complex64/complex128 of shape (rows, n // 2 + 1);
    `workers` threads (-1: all cores). May overwrite `frames`."""
    module = _pocketfft()
    if module is None:
        import scipy.fft
        return scipy.fft.rfft(frames, axis=1, workers=workers, overwrite_x=True)
    threads = workers + (os.cpu_count() or 1) + 1 if workers < 0 else workers   # as scipy.fft
    return module.r2c(frames, axes=(1,), forward=True, inorm=0, nthreads=threads)
