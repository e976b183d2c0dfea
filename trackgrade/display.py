"""Small presentation rules shared by the terminal screen (`cli/render.py`)
and the HTML report (`report.py`), so both read a score and a time alike."""

from __future__ import annotations

from trackgrade.grading.limits import TRUE_PEAK_MAX_DBTP

# lower bounds of the five score tiers, best first
SCORE_TIERS = ((80, "great"), (65, "good"), (50, "fair"), (40, "weak"), (float("-inf"), "poor"))


def score_tier(score: float) -> str:
    """'great' (>= 80), 'good' (>= 65), 'fair' (>= 50), 'weak' (>= 40) or 'poor'."""
    return next(name for floor, name in SCORE_TIERS if score >= floor)


def plural(count: int, word: str, many: str | None = None) -> str:
    """"1 check", "2 checks", "1 analysis" / "3 analyses" (`many`: the irregular plural)."""
    return f"{count} {word if count == 1 else (many or word + 's')}"


def clock(seconds: float) -> str:
    """Seconds as m:ss (h:mm:ss beyond an hour)."""
    total = max(0, int(round(float(seconds))))
    hours, rest = divmod(total, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def mix_rows(mix, mastering_status: str = "master") -> list[tuple[str, str, str]]:
    """(label, value, note) for each loudness, dynamics and stereo figure of a
    `model.Mix`, in reading order; the true-peak note names the ceiling of
    the mastering status (grading.limits, the same the scores use)."""
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


# bidirectional and zero-width format characters that reorder or hide what a
# terminal shows (the "Trojan Source" set), escaped like the C0/C1 controls
# and refused like them in names (file_name, external_id)
_FORMAT_CONTROLS = frozenset("\u061c\u200b\u200e\u200f\u202a\u202b\u202c\u202d\u202e"
                             "\u2066\u2067\u2068\u2069\ufeff")
# the same set as a regular-expression character class body (C0, DEL, C1, the above)
CONTROLS_CLASS = "\\x00-\\x1f\\x7f-\\x9f" + "".join(
    f"\\u{ord(ch):04x}" for ch in sorted(_FORMAT_CONTROLS))


def is_control(ch: str) -> bool:
    """A C0, DEL or C1 control (Unicode category Cc) or one of the bidi and
    zero-width format characters above."""
    import unicodedata

    return unicodedata.category(ch) == "Cc" or ch in _FORMAT_CONTROLS


def has_controls(text: str) -> bool:
    """Whether `text` holds any character `is_control` names."""
    return not (text.isprintable() and not any(ch in _FORMAT_CONTROLS for ch in text)) \
        and any(is_control(ch) for ch in text)


def escape_controls(text: object, *, keep: str = "") -> str:
    """`text` with every control character (`is_control`: C0, DEL, C1, bidi
    and zero-width format characters) written as a visible escape (`\\x1b`,
    `\\u202e`), so a name from a file or the API can never drive the
    terminal; characters in `keep` (e.g. a newline) are left as they are."""
    text = str(text)
    if not has_controls(text):
        return text
    return "".join(ch.encode("unicode_escape").decode("ascii")
                   if ch not in keep and is_control(ch) else ch
                   for ch in text)
