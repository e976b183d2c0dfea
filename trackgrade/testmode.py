"""Test mode: deterministic canned analyses and scripted failures.

`canned_analysis(file_name, mastering_status)` is a pure function of its two
arguments. It never decodes or measures anything: the SHA-256 of the file
name picks a template from `trackgrade/canned/profiles.json` (a measured-
looking track of one family) and varies tempo, key, loudness, length and one
typical flaw; those numbers go through the ordinary grading
(`trackgrade.grading.build_analysis`), so a canned document has exactly the
shape, ranges and words of a real one, with `diagnosis.status` "pending".
The enhanced narrative comes from `grading.diagnosis.enhanced_diagnosis`
as for live analyses.

A canned result says so first: its diagnosis summary opens with
`CANNED_NOTE` (in both stages, `canned_diagnosis`), so the document itself
says it wherever it goes, and `is_canned` lets the terminal, the report and
the badge put a TEST marking before anything else.

`failure_code(file_name)`: a stem ending in `_fail_<code>` with one of
`FAILURE_CODES` (the codes a failed analysis embeds, spec 7.2) makes the test
analysis fail with that code, e.g. `kick_fail_unprocessable_audio.wav`.
An unknown code (`x_fail_banana.wav`) is *not* a failure: the name is an
ordinary file name and gets a canned analysis, so only the four documented
codes ever fail (a name such as `fail_safe_mix.wav` stays harmless).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import replace
from functools import lru_cache
from pathlib import Path, PurePosixPath, PureWindowsPath

import numpy as np

from trackgrade.engine.features import (BAND_NAMES, TEMPO_RELATIONS, CodecPeak, ContentCues, Dynamics,
                                        Features,
                                        Groove, Key, Loudness, MonoFold, Rhythm, Section, Spectrum,
                                        Stereo, Structure, TempoReading, Tonality)
from trackgrade.grading import build_analysis, check_mastering_status
from trackgrade.grading.genre_model import default_model, typical_cues, typical_features
from trackgrade.grading.genres import get_profile
from trackgrade.musical_keys import TONICS
from trackgrade.musical_keys import camelot as camelot_for
from trackgrade.model import Analysis, Diagnosis

FAILURE_CODES = ("upload_incomplete", "file_rejected", "unprocessable_audio", "engine_error")
FAILURE_MESSAGES = {
    "upload_incomplete": "Test mode: the upload never completed (simulated by the file name).",
    "file_rejected": "Test mode: the file exceeds the size or duration limit (simulated by the file name).",
    "unprocessable_audio": "Test mode: the audio could not be decoded (simulated by the file name).",
    "engine_error": "Test mode: the analysis engine failed (simulated by the file name).",
}
CANNED_NOTE = ("Canned test result (a test-mode key): made up from the file name alone; nothing "
               "in the file was measured. Use a live key for a real analysis.")
CANNED_BANNER = "TEST MODE: a canned test result, not an analysis of this file"
_FAIL_RE = re.compile(r"_fail_([a-z_]+)$")
CURVE_HOP_S = 0.1


@lru_cache(maxsize=1)
def _canned() -> dict:
    return json.loads((Path(__file__).parent / "canned" / "profiles.json").read_text("utf-8"))


def _stem(file_name: str) -> str:
    base = PureWindowsPath(PurePosixPath(str(file_name)).name).name
    return base.rsplit(".", 1)[0] if "." in base.strip(".") else base


def failure_code(file_name: str) -> str | None:
    """The failure code a test-mode file name asks for, or None."""
    match = _FAIL_RE.search(_stem(file_name))
    if not match:
        return None
    code = match.group(1)
    if code in FAILURE_CODES:
        return code
    # "x_fail_engine_error" also matches greedily as e.g. "y_fail_file_rejected"; try suffixes
    return next((c for c in FAILURE_CODES if _stem(file_name).endswith("_fail_" + c)), None)


class _Dice:
    """Deterministic numbers in [0, 1) from the name's SHA-256."""

    def __init__(self, text: str) -> None:
        self.bytes = hashlib.sha256(text.encode("utf-8")).digest()
        self.i = 0

    def next(self) -> float:
        value = int.from_bytes(self.bytes[self.i:self.i + 2], "big") / 65536.0
        self.i = (self.i + 2) % (len(self.bytes) - 1)
        return value

    def pick(self, seq):
        return seq[int(self.next() * len(seq))]


def _sections(pattern, bpm: float, duration: float, flat: bool) -> tuple[Section, ...]:
    bar_s = 4 * 60.0 / bpm
    total = sum(bars for _, bars, _ in pattern) * bar_s
    scale = duration / total
    out, start = [], 0.0
    for i, (label, bars, energy) in enumerate(pattern):
        end = duration if i == len(pattern) - 1 else round(start + bars * bar_s * scale, 2)
        if flat:
            label, energy = "drop", 80 + (i % 2) * 3
        out.append(Section(start, end, label, int(energy)))
        start = end
    if flat:
        return (Section(0.0, duration, "drop", 81),)
    return tuple(out)


def _curves(sections, duration: float, lufs: float) -> tuple[np.ndarray, np.ndarray]:
    t = np.arange(0.0, duration, CURVE_HOP_S)
    energy = np.zeros_like(t)
    for s in sections:
        energy[(t >= s.start) & (t < s.end)] = s.energy / 100.0
    wobble = 0.03 * np.sin(2 * np.pi * t / 7.3)
    energy = np.clip(energy + wobble, 0.0, 1.0)
    short_term = lufs + 2.0 - 14.0 * (1.0 - energy)
    return np.round(short_term, 2), np.round(energy, 3)


def _tempo_alternatives(bpm: float, dice: _Dice) -> tuple[TempoReading, ...]:
    """The half- or double-time reading, as a real analysis of a steady track gives it."""
    relation = "half" if bpm >= 120 else "double"
    other = round(bpm * TEMPO_RELATIONS[relation], 1)
    return (TempoReading(other, relation, round(0.2 + 0.2 * dice.next(), 2)),)


def _key_alternatives(tonic: str, scale: str, confidence: float, dice: _Dice) -> tuple[Key, ...]:
    """The relative key and the key a fifth up, less likely than the reading."""
    pc = TONICS.index(tonic)
    rel_tonic, rel_scale = (TONICS[(pc + 3) % 12], "major") if scale == "minor" \
        else (TONICS[(pc + 9) % 12], "minor")
    fifth = TONICS[(pc + 7) % 12]
    first = round(confidence * (0.4 + 0.3 * dice.next()), 2)
    second = round(first * (0.5 + 0.3 * dice.next()), 2)
    return (Key(rel_tonic, rel_scale, camelot_for(rel_tonic, rel_scale), first),
            Key(fifth, scale, camelot_for(fifth, scale), second))


def _canned_key(tonic: str, scale: str, confidence: float, dice: _Dice) -> Key:
    return Key(tonic, scale, camelot_for(tonic, scale), confidence,
               alternatives=_key_alternatives(tonic, scale, confidence, dice))


# how much of the track's overall decorrelation each band carries (low end near mono)
_BAND_SPREAD = (0.02, 0.1, 0.5, 0.9, 1.2, 1.4, 1.5)
# a plausible true-peak rise of each previewed codec (engine.codecs.CODECS order)
_CODEC_RISE_DB = (("mp3", 320, 0.3), ("aac", 256, 0.5), ("opus", 160, 0.6))


def _canned_mono(correlation: float) -> MonoFold:
    """Per band: correlation falling from the mono low end to the track's own
    overall figure in the top; mono loss for equal channel energies, -10 log10((1 + c) / 2)."""
    corr = {b: round(max(min(1.0 - (1.0 - correlation) * w, 1.0), -0.99), 3)
            for b, w in zip(BAND_NAMES, _BAND_SPREAD)}
    return MonoFold(correlation=correlation, band_correlation=corr,
                    band_loss_db={b: float(-10.0 * np.log10((1.0 + c) / 2.0)) for b, c in corr.items()})


def _canned_content(duration: float, typical: dict[str, float]) -> ContentCues:
    """A full mix's content cues (profiles.json "content"), with the family's
    typical layers, peak share and band spread where the genre model has them."""
    cues = dict(_canned()["content"]["cues"])
    cues.update({n: v for n, v in typical.items() if n in cues})
    return ContentCues(attack_count=round(cues["attacks_per_s"] * duration), **cues)


BAND_NUDGE = 0.25            # each band of a canned track within +-12.5 % of its family's ideal


def canned_bands(family: str, dice: "_Dice") -> dict[str, float]:
    """A canned track's band shares: its family's ideal of genres.json (the
    profile it is graded against, so the two cannot drift apart), each band
    nudged by a few percent, as a measured track would be."""
    ideal = get_profile(family)["ideal_bands"]
    return {band: ideal[band] * (1.0 + BAND_NUDGE * (dice.next() - 0.5)) for band in BAND_NAMES}


def canned_features(file_name: str, mastering_status: str, codec_preview: bool = False) -> Features:
    """Believable measurements for a file name (no audio involved)."""
    data = _canned()
    dice = _Dice(file_name)
    tpl = dice.pick(data["templates"])
    flaw = dice.pick(data["flaws"])
    lo, hi = tpl["bpm"]
    bpm = round(lo + dice.next() * (hi - lo), 1)
    duration = round(150.0 + dice.next() * 210.0, 2)
    tonic = dice.pick(TONICS)
    scale = "minor" if dice.next() < 0.7 else "major"
    if mastering_status == "master":
        lufs = round(tpl["master_lufs"] + (dice.next() - 0.5) * 3.0, 1)
        tp = round(-1.0 - dice.next() * 0.6, 1)
    else:
        lufs = round(-18.0 + (dice.next() - 0.5) * 4.0, 1)
        tp = round(-6.5 + dice.next() * 2.0, 1)
    bands = canned_bands(tpl["family"], _Dice(file_name + "\n" + "bands"))
    crest, width, corr = tpl["crest_db"], tpl["width"], tpl["correlation"]
    if flaw == "wide":
        width, corr = 0.42, 0.18
    elif flaw == "thin_low_end":
        bands["sub_bass"] *= 0.35
        bands["bass"] *= 0.6
    elif flaw == "over_limited" and mastering_status == "master":
        crest, lufs, tp = 5.0, round(lufs + 2.5, 1), -0.2
    elif flaw == "harsh_top":
        bands["upper_mid"] *= 2.6
        bands["high"] *= 2.4
    total = sum(bands.values())
    bands = {k: 100.0 * v / total for k, v in bands.items()}
    sections = _sections(tpl["sections"], bpm, duration, flaw == "flat_arrangement")
    short_term, energy = _curves(sections, duration, lufs)
    beats = np.round(np.arange(0.0, duration, 60.0 / bpm), 3)
    rms_dbfs = tp - crest - 0.3
    alt_dice = _Dice(file_name + "\n" + "alternatives")
    tempo_alts = _tempo_alternatives(bpm, alt_dice)
    cues = typical_cues(default_model(), tpl["family"])     # the family's typical rhythm pattern
    typical = typical_features(default_model(), tpl["family"])  # and its onsets, beat and layers
    onset_rate = typical["onsets_per_beat"] * bpm / 60.0 if "onsets_per_beat" in typical else tpl["onset_rate"]
    beat_strength = typical.get("beat_strength", round(0.5 + 0.3 * dice.next(), 2))
    groove = None if cues is None else Groove(pattern=np.zeros((3, 16)), cues=cues,
                                              bars=int(duration * bpm / 240.0))
    return Features(
        duration_s=duration, sample_rate=44100, channels=2, container="wav", truncated=False,
        loudness=Loudness(integrated_lufs=lufs, loudness_range_lu=tpl["lra_lu"], true_peak_dbtp=tp,
                          sample_peak_dbfs=round(tp - 0.3, 1), momentary_lufs=short_term + 1.0,
                          short_term_lufs=short_term, curve_hop_s=CURVE_HOP_S),
        dynamics=Dynamics(crest_factor_db=crest, dynamic_complexity_db=round(tpl["lra_lu"] * 0.6, 2),
                          clipping_pct=0.0, rms_dbfs=round(rms_dbfs, 1),
                          rms_mean=round(10 ** (rms_dbfs / 20), 4)),
        stereo=Stereo(width=width, correlation=corr),
        spectrum=Spectrum(bands_pct=bands, centroid_hz=float(tpl["centroid_hz"]),
                          # both channels at the mix's RMS: 6 dB over a one-channel sine of that RMS
                          band_levels_db={b: 10.0 * np.log10(max(v, 0.01) / 100.0) + rms_dbfs + 6.0
                                          for b, v in bands.items()}),
        rhythm=Rhythm(bpm=bpm, regularity=round(0.86 + 0.1 * dice.next(), 2), beat_times=beats,
                      onset_rate=round(onset_rate, 2), beat_strength=round(beat_strength, 2),
                      danceability=round(1.2 + 0.6 * dice.next(), 2),
                      tempo_confidence=round(0.7 + 0.25 * dice.next(), 2), tempo_salient=True,
                      tempo_alternatives=tempo_alts),
        tonality=Tonality(key=_canned_key(tonic, scale, round(0.55 + 0.4 * dice.next(), 2), alt_dice),
                          chroma=np.full(12, 1.0 / 12)),
        structure=Structure(sections=sections, energy_curve=energy, curve_hop_s=CURVE_HOP_S),
        groove=groove,
        mono=_canned_mono(corr),
        content=_canned_content(duration, typical),
        codecs=(tuple(CodecPeak(codec=c, bitrate_kbps=k, true_peak_dbtp=round(tp + rise, 1))
                      for c, k, rise in _CODEC_RISE_DB) if codec_preview else None),
    )


def canned_analysis(file_name: str, mastering_status: str = "pre-master",
                    genre: str | None = None, codec_preview: bool = False) -> Analysis:
    """The deterministic test-mode Analysis (diagnosis "pending") for these arguments."""
    status = check_mastering_status(mastering_status)
    analysis = build_analysis(canned_features(file_name, status, codec_preview),
                              file_name=file_name, mastering_status=status, genre=genre)
    return analysis.with_diagnosis(_noted(analysis.diagnosis))


def canned_diagnosis(analysis: Analysis) -> Diagnosis:
    """The enhanced narrative of a canned analysis (status "ready"), still
    opening with `CANNED_NOTE`."""
    from trackgrade.grading.diagnosis import enhanced_diagnosis

    return _noted(enhanced_diagnosis(analysis))


def _noted(diagnosis: Diagnosis) -> Diagnosis:
    return replace(diagnosis, summary=f"{CANNED_NOTE} {diagnosis.summary}")


def is_canned(analysis: Analysis | dict) -> bool:
    """True for a test-mode result (an Analysis or its document): its summary
    opens with `CANNED_NOTE`, which no measured analysis ever does."""
    diagnosis = analysis.get("diagnosis") if isinstance(analysis, dict) else analysis.diagnosis
    summary = (diagnosis or {}).get("summary") if isinstance(diagnosis, dict) \
        else getattr(diagnosis, "summary", None)
    return isinstance(summary, str) and summary.startswith(CANNED_NOTE)
