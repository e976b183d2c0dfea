"""WAV and AIFF samples are converted and sanitised piece by piece
(`decode.pcm.read_sanitised`): the same samples and extremes as converting
the whole data chunk and then sanitising it, across piece boundaries."""

from __future__ import annotations

import io

import numpy as np
import pytest
import soundfile as sf

from trackgrade.engine.decode import _probe, decode
from trackgrade.engine.decode.limits import sanitise
from trackgrade.engine.decode.pcm import _SANITISE_FRAMES, _read_raw, read_sanitised


def _file(fmt: str, subtype: str, channels: int) -> bytes:
    rng = np.random.default_rng(7)
    x = rng.standard_normal((2 * _SANITISE_FRAMES + 1001, channels)) * 0.3
    if subtype in ("FLOAT", "DOUBLE"):      # overs and non-finite values in the later pieces
        x[_SANITISE_FRAMES + 5, 0] = 1.7
        x[_SANITISE_FRAMES + 9, -1] = np.nan
        x[2 * _SANITISE_FRAMES + 1000, 0] = -np.inf
    out = io.BytesIO()
    sf.write(out, x, 44100, format=fmt, subtype=subtype)
    return out.getvalue()


@pytest.mark.parametrize("fmt,subtype", [("WAV", "PCM_16"), ("WAV", "PCM_24"), ("WAV", "PCM_U8"),
                                         ("WAV", "PCM_32"), ("WAV", "FLOAT"), ("WAV", "DOUBLE"),
                                         ("AIFF", "PCM_24"), ("AIFF", "FLOAT")])
@pytest.mark.parametrize("channels", [1, 2])
def test_pieces_give_the_whole_chunks_samples_and_extremes(fmt, subtype, channels):
    data = _file(fmt, subtype, channels)
    info, layout = _probe(data, "x")
    whole = _read_raw(data, layout, channels)
    maxs, mins = sanitise(whole)
    samples, piece_maxs, piece_mins = read_sanitised(data, layout, channels)
    assert samples.shape == whole.shape == (2 * _SANITISE_FRAMES + 1001, channels)
    assert np.array_equal(samples.view(np.uint32), whole.view(np.uint32))    # bit for bit
    assert np.array_equal(piece_maxs, maxs) and np.array_equal(piece_mins, mins)
    if subtype == "FLOAT":
        assert samples[_SANITISE_FRAMES + 5, 0] == 1.0 and samples[_SANITISE_FRAMES + 9, -1] == 0.0
    assert np.array_equal(decode(data, file_name="x").samples, samples)
