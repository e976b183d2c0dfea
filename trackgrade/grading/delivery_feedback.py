"""The feedback on the delivery checks (CONTRACT.md section 5): bands that
get quieter summed to mono, and lossy codecs that clip. Part of the feedback
(`feedback.RULES`); here because they read `Analysis.delivery`."""

from __future__ import annotations

from trackgrade import limits as L
from trackgrade.delivery.platforms import CODEC_NAMES
from trackgrade.grading.wording import judged_as_part
from trackgrade.limits import BAND_LABELS
from trackgrade.model import Analysis, FeedbackItem


def mono_items(a: Analysis) -> list[tuple[float, FeedbackItem]]:
    """A `stereo` warn naming every band that loses MONO_LOSS_WARN_DB or more in mono."""
    if a.delivery is None:
        return []
    bands = a.delivery.mono.bands
    lost = [(name, getattr(bands, name).mono_loss_db) for name in BAND_LABELS
            if getattr(bands, name).mono_loss_db >= L.MONO_LOSS_WARN_DB]
    if not lost:
        return []
    named = ", ".join(f"{BAND_LABELS[name]} {loss:.1f} dB" for name, loss in lost)
    low = any(name in L.LOW_END_BANDS for name, _ in lost)
    advice = ("Keep the kick and bass mono below ~120 Hz (a mono utility or an M/S EQ on the "
              "low end)" if low else "Narrow the widest effects or check for a polarity problem "
              "in those parts")
    return [(12.0 + max(loss for _, loss in lost), FeedbackItem("warn", "stereo", (
        f"Summed to mono ({'club systems' if a.extras.electronic else 'mono speakers'}, phones, "
        f"one speaker) these bands get quieter: {named}. "
        f"{advice}.")))]


def codec_items(a: Analysis) -> list[tuple[float, FeedbackItem]]:
    """A `mix` warn when any previewed codec pushes the true peak past 0 dBTP."""
    codecs = a.delivery.codecs if a.delivery is not None else None
    clipping = [c for c in codecs or () if c.clips]
    if not clipping:
        return []
    named = ", ".join(f"{CODEC_NAMES.get(c.codec, c.codec)} {c.bitrate_kbps} kbps "
                      f"{c.true_peak_dbtp:+.1f} dBTP" for c in clipping)
    worst = max(c.true_peak_dbtp for c in clipping)
    if judged_as_part(a):
        return [(15.0 + 5.0 * worst, FeedbackItem("warn", "mix", (
            f"After lossy encoding the true peak passes 0 dBTP and will clip on playback: {named}. "
            f"Lower the part by about {worst + 1.0:.1f} dB.")))]
    return [(15.0 + 5.0 * worst, FeedbackItem("warn", "mix", (
        f"After lossy encoding the true peak passes 0 dBTP and will clip on playback: {named}. "
        f"Lower the limiter ceiling by about {worst + 1.0:.1f} dB (to leave 1 dB of headroom) or "
        f"tame the brightest peaks.")))]
