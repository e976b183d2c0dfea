"""The batched real FFT (scipy's pocketfft loaded without scipy.fft) equals scipy.fft."""

import subprocess
import sys

import numpy as np
import pytest
import scipy.fft

from trackgrade.engine import fft


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("workers", [1, -1])
def test_rfft_rows_equals_scipy(dtype, workers):
    x = np.random.default_rng(3).standard_normal((37, 2048)).astype(dtype)
    got = fft.rfft_rows(x.copy(), workers=workers)
    want = scipy.fft.rfft(x, axis=1)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)


def test_pocketfft_loads_without_scipy_fft():
    assert fft._pocketfft() is not None
    code = ("import sys; from trackgrade.engine import fft; import numpy as np; "
            "fft.rfft_rows(np.ones((2, 64), np.float32)); "
            "print(sorted(m for m in sys.modules if m.startswith('scipy')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
