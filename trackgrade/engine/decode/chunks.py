"""The samples of a file chunk by chunk, never all at once: what a high-rate
file is read through (20 minutes at 192 kHz stereo are 1.8 GB as float32).

`ChunkedAudio` yields float32 (frames, channels) chunks of `chunk_frames`
frames (the last one shorter), each sanitised as `decode` sanitises the
whole signal (NaN/inf -> 0, clipped to [-1, 1]); it never reads past 20
minutes + 1 frame. `finish()` then applies the checks `decode` makes on the
whole signal (the duration limit, too short, digital silence, a constant DC
offset) from what the chunks showed. A stream that breaks off keeps what
decoded (`truncated`), as `decode` does.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Iterator

import numpy as np

from trackgrade.engine.decode.info import AudioInfo, _Layout
from trackgrade.engine.decode.limits import (_check_duration_limit, _check_min_duration,
                                             check_not_silent, sanitise)
from trackgrade.engine.decode.pcm import _read_raw
from trackgrade.engine.decode.stream import frame_cap, open_stream, read_into, stream_end


class ChunkedAudio:
    """One pass over the samples of validated bytes (see the module docstring)."""

    def __init__(self, data: bytes, info: AudioInfo, layout: _Layout | None, *,
                 chunk_frames: int) -> None:
        self.info = info
        self.chunk_frames = max(1, int(chunk_frames))
        self.frames = 0                     # frames yielded so far
        self.truncated = bool(info.truncated) if layout is not None else False
        self._data, self._layout = data, layout
        self._maxs = np.full(info.channels, -np.inf, dtype=np.float32)
        self._mins = np.full(info.channels, np.inf, dtype=np.float32)
        self._first = 0.0

    @property
    def sample_rate(self) -> int:
        return self.info.sample_rate

    @property
    def channels(self) -> int:
        return self.info.channels

    def __iter__(self) -> Iterator[np.ndarray]:
        source = self._raw_chunks() if self._layout is not None else self._stream_chunks()
        for chunk in source:
            maxs, mins = sanitise(chunk)
            if self.frames == 0:
                self._first = float(chunk[0].max())
            np.maximum(self._maxs, maxs, out=self._maxs)
            np.minimum(self._mins, mins, out=self._mins)
            self.frames += chunk.shape[0]
            yield chunk

    def finish(self) -> None:
        """After the pass: the checks `decode` makes on the whole signal."""
        seconds = self.frames / self.info.sample_rate
        _check_duration_limit(seconds, "the audio is")
        _check_min_duration(seconds, self.info.declared_duration_s if self.truncated else None)
        check_not_silent(self._maxs, self._mins, self._first)

    def _raw_chunks(self) -> Iterator[np.ndarray]:
        """WAV/AIFF: the data chunk read `chunk_frames` frames at a time."""
        layout, align = self._layout, self._layout.block_align
        total = layout.nbytes // align
        for f0 in range(0, total, self.chunk_frames):
            f1 = min(total, f0 + self.chunk_frames)
            part = replace(layout, offset=layout.offset + f0 * align, nbytes=(f1 - f0) * align)
            yield _read_raw(self._data, part, self.info.channels)

    def _stream_chunks(self) -> Iterator[np.ndarray]:
        """FLAC/MP3 through libsndfile, never past the duration limit."""
        info, cap = self.info, frame_cap(self.info)
        handle, _ = open_stream(self._data, info)
        pos, broken = 0, ""
        with handle:
            while pos < cap and not broken:
                out = np.empty((min(self.chunk_frames, cap - pos), handle.channels),
                               dtype=np.float32)
                got, broken = read_into(handle, out)
                if got == 0:
                    break
                pos += got
                yield out if got == out.shape[0] else out[:got].copy()
                if got < out.shape[0]:
                    break
        self.truncated = stream_end(info, pos, broken)
