"""Hand-built `Features` for grading tests (no engine needed).

`make_features(**changes)` returns a believable clean 4-minute house master
(-9 LUFS, -1 dBTP, 124 BPM, A minor, club sections; a full track, not a part); keyword arguments
replace fields by dotted path, e.g. ``make_features(**{"loudness.integrated_lufs": -18})``
or whole parts (``sections=[...]``, ``bands={...}``).
`features_from_truth(entry)` maps a synthetic truth entry onto `Features`.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from trackgrade.engine.features import (BAND_NAMES, Dynamics, Features, Groove, Key, Loudness,
                                        Rhythm, Section, Spectrum, Stereo, Structure, Tonality)
from trackgrade.grading.genre_model import default_model, typical_cues, typical_features

HOUSE_TYPICAL = typical_features(default_model(), "house")   # onsets per beat, beat strength
HOUSE_BANDS = {"sub_bass": 23.3, "bass": 44.6, "low_mid": 16.3, "mid": 11.5,
               "upper_mid": 1.8, "high": 1.1, "air": 1.4}
CLUB_SECTIONS = (("intro", 0.0, 61.6, 45), ("buildup", 61.6, 92.0, 60), ("drop", 92.0, 153.6, 90),
                 ("breakdown", 153.6, 184.0, 40), ("drop", 184.0, 224.0, 92), ("outro", 224.0, 240.0, 50))


def _curve(sections, hop: float, duration: float, scale: float) -> np.ndarray:
    t = np.arange(0.0, duration, hop)
    out = np.zeros_like(t)
    for label, start, end, energy in sections:
        out[(t >= start) & (t < end)] = energy * scale
    return out


def make_features(*, sections=CLUB_SECTIONS, bands=None, duration: float = 240.0,
                  **changes) -> Features:
    lufs = changes.pop("loudness.integrated_lufs", -9.0)
    energy = _curve(sections, 0.1, duration, 1 / 100)
    level = lufs if np.isfinite(lufs) and abs(lufs) < 100 else -9.0     # curves stay finite
    short_term = np.where(energy > 0, level - 12 * (1 - energy), -70.0)
    momentary = short_term + 1.0
    momentary[-10:] = np.linspace(momentary[-11], level - 30.0, 10)     # a 1 s fade-out
    f = Features(
        duration_s=duration, sample_rate=44100, channels=2, container="wav", truncated=False,
        loudness=Loudness(integrated_lufs=lufs, loudness_range_lu=4.0, true_peak_dbtp=-1.0,
                          sample_peak_dbfs=-1.2, momentary_lufs=momentary,
                          short_term_lufs=short_term, curve_hop_s=0.1),
        dynamics=Dynamics(crest_factor_db=10.5, dynamic_complexity_db=2.5, clipping_pct=0.0,
                          rms_dbfs=-11.7, rms_mean=0.26),
        stereo=Stereo(width=0.075, correlation=0.85),
        spectrum=Spectrum(bands_pct=dict(bands or HOUSE_BANDS), centroid_hz=516.0),
        rhythm=Rhythm(bpm=124.0, regularity=0.93, beat_times=np.arange(0.0, duration, 60 / 124),
                      onset_rate=HOUSE_TYPICAL["onsets_per_beat"] * 124.0 / 60.0,
                      beat_strength=HOUSE_TYPICAL["beat_strength"], danceability=1.6, tempo_confidence=0.85,
                      tempo_salient=True),
        tonality=Tonality(key=Key("A", "minor", "8A", 0.8), chroma=np.full(12, 1 / 12)),
        structure=Structure(sections=tuple(Section(s, e, l, en) for l, s, e, en in sections),
                            energy_curve=_curve(sections, 0.1, duration, 1 / 100), curve_hop_s=0.1),
        groove=house_groove(duration, 124.0),
    )
    f = with_changes(f, **changes)
    return f if f.rhythm.tempo_salient else replace(f, groove=None)    # no pulse, no pattern


def house_groove(duration: float, bpm: float) -> Groove:
    """A house track's rhythm pattern: the model's typical house cues."""
    return Groove(pattern=np.zeros((3, 16)), cues=typical_cues(default_model(), "house"),
                  bars=int(duration * bpm / 240.0))


def with_changes(f: Features, **changes) -> Features:
    """Replace fields by dotted path: {"rhythm.bpm": 140, "truncated": True}."""
    for path, value in changes.items():
        if "." in path:
            part, name = path.split(".", 1)
            f = replace(f, **{part: replace(getattr(f, part), **{name: value})})
        else:
            f = replace(f, **{path: value})
    return f


def features_from_truth(entry: dict) -> Features:
    """A `Features` built from a synthetic truth entry (what a perfect engine would say)."""
    bpm = entry.get("perceived_bpm") or entry["bpm"]
    duration = float(entry["seconds"])
    sections = tuple((s["label"], float(s["start"]), float(s["end"]),
                      {"intro": 40, "buildup": 60, "drop": 90, "breakdown": 35, "outro": 45}[s["label"]])
                     for s in entry["sections"])
    salient = bool(entry.get("tempo_salient", True))
    corr = entry["stereo_correlation"]
    f = make_features(sections=sections, bands={b: entry["band_energy_pct"][b] for b in BAND_NAMES},
                      duration=duration, **{"loudness.integrated_lufs": entry["lufs_integrated"]})
    key = Key(entry["tonic"], entry["scale"], entry["camelot"], 0.8)
    return with_changes(
        f, channels=int(entry["channels"]), sample_rate=int(entry["sample_rate"]),
        **{"loudness.loudness_range_lu": entry["loudness_range_lu"],
           "loudness.true_peak_dbtp": entry["true_peak_dbtp"],
           "loudness.sample_peak_dbfs": entry["sample_peak_dbfs"],
           "dynamics.crest_factor_db": entry["sample_peak_dbfs"] - entry["rms_dbfs"],
           "dynamics.clipping_pct": entry["clipping_pct"],
           "dynamics.rms_dbfs": entry["rms_dbfs"],
           "stereo.correlation": 1.0 if corr is None else corr,
           "stereo.width": entry["stereo_width"] or 0.0,
           "spectrum.centroid_hz": entry["spectral_centroid_hz"],
           "rhythm.bpm": float(bpm), "rhythm.tempo_salient": salient,
           "rhythm.beat_strength": 0.7 if salient else 0.05,
           "rhythm.regularity": 0.93 if salient else 0.2,
           "tonality.key": key})
