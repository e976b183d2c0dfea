"""The `delivery` object of an Analysis from the engine's measurements."""

from __future__ import annotations

from trackgrade.delivery.platforms import platform_gains
from trackgrade.engine.features import BAND_NAMES, MonoFold
from trackgrade.limits import LOW_END_BANDS, LOW_END_MONO_LOSS_DB
from trackgrade.model import CodecCheck, Delivery, MonoBand, MonoBands, MonoCheck


def _clamped(x: float, digits: int, lo: float, hi: float) -> float:
    return round(min(max(float(x), lo), hi), digits) + 0.0


def mono_check(fold: MonoFold) -> MonoCheck:
    """`delivery.mono`: per band the L/R correlation and the mono loss."""
    bands = MonoBands(**{name: MonoBand(correlation=_clamped(fold.band_correlation[name], 2, -1.0, 1.0),
                                        mono_loss_db=_clamped(fold.band_loss_db[name], 1, 0.0, 60.0))
                         for name in BAND_NAMES})
    low_end = all(getattr(bands, name).mono_loss_db < LOW_END_MONO_LOSS_DB for name in LOW_END_BANDS)
    return MonoCheck(correlation=_clamped(fold.correlation, 3, -1.0, 1.0), bands=bands,
                     low_end_mono=low_end)


def delivery_checks(*, loudness_lufs: float, true_peak_dbtp: float, mono: MonoFold,
                    codecs: tuple[CodecCheck, ...] | None = None) -> Delivery:
    """`delivery` from the document's (rounded) loudness and true peak, the
    engine's mono fold-down and, when measured, the codec preview."""
    return Delivery(platforms=platform_gains(loudness_lufs, true_peak_dbtp),
                    mono=mono_check(mono), codecs=codecs)
