"""The one place that knows the order: bytes -> decode -> extract -> grade -> words.

The CLI's `analyze` and `batch`, the server's workers and the benchmarks all
call these functions, so every surface returns the same document.
"""

from __future__ import annotations

from typing import Callable

from trackgrade.engine.extract import extract
from trackgrade.engine.features import Features
from trackgrade.engine.native import decode_for_analysis
from trackgrade.grading import build_analysis
from trackgrade.grading.diagnosis import enhanced_diagnosis
from trackgrade.grading.targets import Reference, check_genre
from trackgrade.model import Analysis


def measure(data: bytes, *, file_name: str, parallel: bool = True,
            codec_preview: bool = False,
            codec_progress: Callable[[int, int], None] | None = None) -> Features:
    """Decode the bytes (in memory; above 48 kHz chunk by chunk, analysed at
    44.1/48 kHz: `engine.native`) and measure everything (on one core when
    `parallel` is False; with the codec preview when asked; see
    `engine.extract.extract`)."""
    return extract(decode_for_analysis(data, file_name=file_name, parallel=parallel),
                   parallel=parallel, codec_preview=codec_preview, codec_progress=codec_progress)


def reference(data: bytes, *, file_name: str, parallel: bool = True) -> Reference:
    """A reference track's targets (bands, loudness, LRA, width), measured from its bytes."""
    return Reference.from_features(file_name, measure(data, file_name=file_name, parallel=parallel))


def grade(features: Features, *, file_name: str, mastering_status: str = "pre-master",
          genre: str | None = None, references: tuple[Reference, ...] = ()) -> Analysis:
    """Scores, grade, genre, template diagnosis (`pending`) and feedback, against
    the detected family, `genre` (a key of GET /genres) or `references`."""
    return build_analysis(features, file_name=file_name, mastering_status=mastering_status,
                          genre=genre, references=references)


def enhance(analysis: Analysis) -> Analysis:
    """The second stage: the enhanced narrative (`ready`)."""
    return analysis.with_diagnosis(enhanced_diagnosis(analysis))


def analyze(data: bytes, *, file_name: str, mastering_status: str = "pre-master",
            enhanced: bool = True, parallel: bool = True, genre: str | None = None,
            references: tuple[Reference, ...] = (), codec_preview: bool = False,
            codec_progress: Callable[[int, int], None] | None = None) -> Analysis:
    """bytes -> the complete Analysis (with the enhanced narrative unless
    `enhanced` is False; on one core when `parallel` is False; with
    `delivery.codecs` measured when `codec_preview`, `codec_progress(done,
    total)` after each encoded passage)."""
    if genre is not None:
        check_genre(genre)                  # before the engine spends any time
    features = measure(data, file_name=file_name, parallel=parallel, codec_preview=codec_preview,
                       codec_progress=codec_progress)
    analysis = grade(features, file_name=file_name,
                     mastering_status=mastering_status, genre=genre, references=references)
    return enhance(analysis) if enhanced else analysis
