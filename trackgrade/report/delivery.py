"""What the report's delivery section and comparison view show: rows built
from the Analysis's `delivery` and from `trackgrade.compare`'s result."""

from __future__ import annotations

from trackgrade.delivery.platforms import CODEC_NAMES, PLATFORM_NAMES
from trackgrade.engine.features import BAND_NAMES
from trackgrade.grading.limits import BAND_LABELS, MONO_LOSS_WARN_DB
from trackgrade.model import Analysis

OUTCOMES = {"turned_down": "turned down", "unchanged": "unchanged", "turned_up": "turned up",
            "turned_up_limited": "turned up, peak-limited"}
PILLAR_TITLES = (("danceability", "Danceability"), ("mix_quality", "Mix quality"),
                 ("frequency_balance", "Frequency balance"), ("energy", "Energy"),
                 ("structure", "Structure"))
BAR_SPAN_DB = 12.0          # a comparison bar reaches the edge at this many dB


def delivery_block(analysis: Analysis) -> dict | None:
    """Platform rows, mono rows per band and codec rows (None when not measured)."""
    d = analysis.delivery
    if d is None:
        return None
    platforms = [{"name": PLATFORM_NAMES.get(p.platform, p.platform),
                  "reference": "none" if p.reference_lufs is None else f"{p.reference_lufs:g} LUFS",
                  "gain": f"{p.gain_db:+.1f} dB", "peak": f"{p.peak_after_gain_dbtp:+.1f} dBTP",
                  "outcome": OUTCOMES[p.outcome], "limited": p.outcome == "turned_up_limited"}
                 for p in d.platforms]
    mono = [{"band": BAND_LABELS[b], "correlation": f"{getattr(d.mono.bands, b).correlation:+.2f}",
             "loss": f"{-getattr(d.mono.bands, b).mono_loss_db:+.1f} dB"
                     if getattr(d.mono.bands, b).mono_loss_db else "0.0 dB",
             "warn": getattr(d.mono.bands, b).mono_loss_db >= MONO_LOSS_WARN_DB}
            for b in BAND_NAMES]
    codecs = None if d.codecs is None else [
        {"name": f"{CODEC_NAMES.get(c.codec, c.codec)} {c.bitrate_kbps} kbps",
         "peak": f"{c.true_peak_dbtp:+.1f} dBTP", "rise": f"{c.true_peak_rise_db:+.1f} dB",
         "clips": c.clips} for c in d.codecs]
    return {"platforms": platforms, "mono": mono, "low_end_mono": d.mono.low_end_mono,
            "correlation": f"{d.mono.correlation:+.2f}", "codecs": codecs}


def _bar(db: float) -> dict:
    """Left offset and width (percent of the cell) of a bar from the centre."""
    half = min(abs(db), BAR_SPAN_DB) / BAR_SPAN_DB * 50.0
    return {"left": round(50.0 - half if db < 0 else 50.0, 1), "width": round(half, 1),
            "sign": "up" if db > 0 else "down"}


def comparison_block(result: dict | None) -> dict | None:
    """The comparison view of `trackgrade.compare(a, b)`'s result (B against A)."""
    if result is None:
        return None
    a, b = result["a"], result["b"]
    rows = [("Score", f"{a['score']} ({a['grade']})", f"{b['score']} ({b['grade']})",
             f"{result['score']:+d}"),
            ("Loudness", f"{a['loudness_lufs']:.1f} LUFS", f"{b['loudness_lufs']:.1f} LUFS",
             f"{result['loudness_lufs_db']:+.1f} dB"),
            ("True peak", f"{a['true_peak_dbtp']:+.1f} dBTP", f"{b['true_peak_dbtp']:+.1f} dBTP",
             f"{result['true_peak_db']:+.1f} dB"),
            ("Loudness range", f"{a['lra_lu']:.1f} LU", f"{b['lra_lu']:.1f} LU",
             f"{result['lra_db']:+.1f} LU"),
            ("Stereo width", f"{a['width']:.3f}", f"{b['width']:.3f}", f"{result['width']:+.3f}"),
            ("Correlation", f"{a['correlation']:.3f}", f"{b['correlation']:.3f}",
             f"{result['correlation']:+.3f}")]
    rows += [(title, str(a["pillars"][k]), str(b["pillars"][k]), f"{result['pillars'][k]:+d}")
             for k, title in PILLAR_TITLES]
    rows += [("Tempo", f"{a['tempo_bpm']:.1f} BPM", f"{b['tempo_bpm']:.1f} BPM", ""),
             ("Key", a["key"] or "–", b["key"] or "–", "")]
    bands = [{"band": BAND_LABELS[band], "level": f"{result['bands_db'][band]:+.1f} dB",
              "matched": f"{result['matched_bands_db'][band]:+.1f} dB",
              "bar": _bar(result["matched_bands_db"][band])} for band in BAND_NAMES]
    if result.get("level_only"):
        rows[0] = (*rows[0][:3], f"{rows[0][3]} (level)")
    return {"a": a["file"], "b": b["file"], "rows": [dict(zip(("label", "a", "b", "diff"), r))
                                                     for r in rows], "bands": bands,
            "verdict": result.get("verdict"), "level_only": bool(result.get("level_only"))}
