"""Hostile audio for the proofs: the real odd files of ../shared/truth/real/
bad-input, WAV/AIFF/FLAC/MP3 seeds (real clips when ../shared is there, else
synthetic tracks rendered by the project's generator), and the mutations hypothesis makes
of their headers and frames; plus `decode_bounded`, which decodes one input
and measures its time and peak traced memory (numpy's buffers included).

Used by tests/server/test_proof_hostile_audio.py (bounded) and
benchmarks/bench_hardening.py (more examples)."""

from __future__ import annotations

import io
import time
import tracemalloc
from dataclasses import dataclass
from pathlib import Path

import soundfile as sf
from hypothesis import strategies as st

from trackgrade.errors import TrackgradeError

from tests.truth import REAL, have_real, need_real, render_specs

BAD_INPUT = REAL / "bad-input"
SEED_CLIPS = {"wav": "madmom__sample2.wav", "flac": "sonicpi__bass_trance_c.flac",
              "mp3": "beatnet__808kick120bpm.mp3"}
# the codes a hostile file may end in (anything else, or an exception that is
# not a TrackgradeError, is a failure of the proof)
CLEAR_CODES = {"unprocessable_audio", "file_rejected", "file_too_large"}
TIME_LIMIT_S = 10.0
MEMORY_SLACK = 64 << 20


SYNTH_SEEDS = [{"name": f"hostile_seed_{fmt.lower()}", "style": "house", "bpm": 124, "seconds": 4,
                "seed": 11, "channels": 1, "sample_rate": 22050, "format": fmt}
               for fmt in ("WAV", "FLAC", "MP3")]


def bad_inputs() -> list[Path]:
    need_real()
    return sorted(p for p in BAD_INPUT.iterdir() if p.is_file())


def seeds() -> dict[str, bytes]:
    """Files of the four formats (the AIFF carries the WAV's samples): real
    clips when ../shared is there, else short synthetic tracks."""
    if have_real():
        out = {fmt: (REAL / "clips" / name).read_bytes() for fmt, name in SEED_CLIPS.items()}
    else:
        folder, tracks = render_specs(SYNTH_SEEDS)
        out = {t["file"].rsplit(".", 1)[1].lower(): (folder / t["file"]).read_bytes() for t in tracks}
    samples, rate = sf.read(io.BytesIO(out["wav"]), dtype="int16")
    aiff = io.BytesIO()
    sf.write(aiff, samples, rate, format="AIFF", subtype="PCM_16")
    out["aiff"] = aiff.getvalue()
    return out


@st.composite
def mutation(draw, data: bytes) -> bytes:
    """A mutated copy: byte flips and overwrites in the header, chunk-size
    fields set to extremes, frames overwritten, cut short or padded with junk."""
    buf = bytearray(data)
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(("flip_header", "size_field", "frames", "truncate",
                                     "junk", "zero_run")))
        if not buf:
            break
        if kind == "flip_header":
            at = draw(st.integers(0, min(len(buf), 512) - 1))
            buf[at] = draw(st.integers(0, 255))
        elif kind == "size_field":
            at = draw(st.integers(0, max(0, min(len(buf), 256) - 4)))
            buf[at:at + 4] = draw(st.sampled_from(
                (b"\xff\xff\xff\xff", b"\x00\x00\x00\x00", b"\xff\xff\xff\x7f",
                 b"\x01\x00\x00\x00", b"\x00\x00\x00\x80")))
        elif kind == "frames":
            at = draw(st.integers(0, len(buf) - 1))
            buf[at:at + 64] = draw(st.binary(min_size=1, max_size=64))
        elif kind == "truncate":
            del buf[draw(st.integers(0, len(buf) - 1)):]
        elif kind == "junk":
            at = draw(st.integers(0, len(buf)))
            buf[at:at] = draw(st.binary(min_size=1, max_size=256))
        else:
            at = draw(st.integers(0, len(buf) - 1))
            buf[at:at + 4096] = bytes(min(4096, len(buf) - at))
    return bytes(buf)


@dataclass
class Decoded:
    outcome: str             # "ok" or the error code
    seconds: float
    peak_bytes: int


def decode_bounded(data: bytes, file_name: str) -> Decoded:
    """Decode (what the upload step and the worker do first: probe, then the
    samples) and measure it; raises whatever is not a TrackgradeError."""
    from trackgrade.engine.decode import decode, probe

    tracemalloc.start()
    started = time.perf_counter()
    try:
        probe(data, file_name=file_name)
        decode(data, file_name=file_name, parallel=False)
        outcome = "ok"
    except TrackgradeError as err:
        outcome = err.code
    finally:
        seconds = time.perf_counter() - started
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
    return Decoded(outcome, seconds, peak)


def memory_bound(data: bytes) -> int:
    """What decoding `data` may allocate: 64 MiB plus 1 KiB per input byte
    (the decoder believes a header's length only up to 64 stereo float32
    frames per byte; more decoded audio than that grows the buffer as it
    comes, so a lying header cannot make it reserve minutes of samples)."""
    return MEMORY_SLACK + 1024 * len(data)
