"""The mix figures as the rows both the terminal screen and the HTML report
show: each loudness, dynamics and stereo figure with the standard or the
limit it is read against."""

from __future__ import annotations

from trackgrade.limits import TRUE_PEAK_MAX_DBTP


def mix_rows(mix, mastering_status: str = "master") -> list[tuple[str, str, str]]:
    """(label, value, note) for each loudness, dynamics and stereo figure of a
    `model.Mix`, in reading order; the true-peak note names the ceiling of
    the mastering status (limits, the same the scores use)."""
    ceiling = TRUE_PEAK_MAX_DBTP[mastering_status]
    return [
        ("Integrated loudness", f"{mix.loudness_lufs:.1f} LUFS", "ITU-R BS.1770-4 / EBU R128"),
        ("True peak", f"{mix.peak_dbfs:+.1f} dBTP",
         f"4x oversampled; ceiling {ceiling:g} dBTP for a {mastering_status}"),
        ("Loudness range", f"{mix.dynamic_range_db:.1f} LU", "EBU Tech 3342 LRA"),
        ("Crest factor", f"{mix.crest_factor_db:.1f} dB", "peak to RMS"),
        ("Dynamic complexity", f"{mix.dynamic_complexity:.2f} dB", "spread of short-term loudness"),
        ("Stereo width", f"{mix.stereo_width:.2f}", "0 mono, 1 all side"),
        ("L/R correlation", f"{mix.stereo_correlation:+.2f}", "below 0: phase trouble"),
        ("Clipping", f"{mix.clipping_pct:.3f} %", "samples at full scale"),
    ]
