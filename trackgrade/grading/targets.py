"""What a track is graded against: the detected family, a profile the caller
names (`genre`), or the caller's own reference tracks.

A label-layer key is scored against its family (loudness, crest, LRA,
structure) with the label's own ideal bands and tempo range. References
replace the ideal bands (their mean level per band in dB, renormalised to
percent), the master loudness range (their mean integrated loudness +-
`REFERENCE_LUFS_SPAN`), the loudness range (their span, widened by
`REFERENCE_LRA_SPAN`) and the stereo width (their mean +- `REFERENCE_WIDTH_SPAN`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trackgrade.engine.features import BAND_NAMES, Features
from trackgrade.errors import TrackgradeError
from trackgrade.grading.genres import GENRES, get_profile

REFERENCE = "reference"
REFERENCE_LUFS_SPAN = 1.5        # LU either side of the references' mean
REFERENCE_LRA_SPAN = 1.5         # LU beyond the references' lowest and highest LRA
REFERENCE_WIDTH_SPAN = 0.1       # width either side of the references' mean


@dataclass(frozen=True)
class Reference:
    """The measurements of one reference track that become targets."""
    name: str
    bands_pct: dict
    integrated_lufs: float
    loudness_range_lu: float
    width: float

    @classmethod
    def from_features(cls, name: str, f: Features) -> "Reference":
        return cls(name=name, bands_pct={b: float(f.spectrum.bands_pct[b]) for b in BAND_NAMES},
                   integrated_lufs=float(f.loudness.integrated_lufs),
                   loudness_range_lu=float(f.loudness.loudness_range_lu), width=float(f.stereo.width))


def profile_for(key: str) -> dict:
    """The scoring profile of a genre key (family, or label on its family);
    raises parameter_invalid (param `genre`) for an unknown key."""
    chosen = get_profile(check_genre(key))
    if "family" not in chosen:
        return chosen
    family = get_profile(chosen["family"])
    return {**family, "key": chosen["key"], "name": chosen["name"],
            "ideal_bands": chosen["ideal_bands"], "bpm_range": chosen["bpm_range"]}


def mean_bands(references) -> dict:
    """Per band the mean level in dB of the references' shares, back in percent (sum 100)."""
    shares = np.array([[max(r.bands_pct[b], 0.01) for b in BAND_NAMES] for r in references])
    level = np.exp(np.log(shares).mean(axis=0))
    pct = 100.0 * level / level.sum()
    out = {b: round(float(v), 1) for b, v in zip(BAND_NAMES, pct)}
    big = max(out, key=out.get)
    out[big] = round(out[big] + 100.0 - sum(out.values()), 1)
    return out


def reference_profile(base: dict, references) -> dict:
    """`base` (the detected family's profile) with the references' targets."""
    refs = list(references)
    lufs = float(np.mean([r.integrated_lufs for r in refs]))
    lras = [r.loudness_range_lu for r in refs]
    width = float(np.mean([r.width for r in refs]))
    loudness = dict(base["loudness_lufs"])
    loudness["master"] = [round(lufs - REFERENCE_LUFS_SPAN, 1), round(lufs + REFERENCE_LUFS_SPAN, 1)]
    return {**base, "key": REFERENCE, "name": "your references",
            "ideal_bands": mean_bands(refs), "loudness_lufs": loudness,
            "lra_lu": [round(max(0.0, min(lras) - REFERENCE_LRA_SPAN), 1),
                       round(max(lras) + REFERENCE_LRA_SPAN, 1)],
            "width": [round(max(0.0, width - REFERENCE_WIDTH_SPAN), 3),
                      round(min(1.0, width + REFERENCE_WIDTH_SPAN), 3)],
            "references": [r.name for r in refs]}


def check_genre(key, *, listed_by: str = "a key of GET /genres") -> str:
    """`key` if it names a profile of GET /genres; parameter_invalid (param `genre`) otherwise,
    naming where the keys are listed (`listed_by`: the API's route, or the CLI's command)."""
    if not isinstance(key, str) or key not in GENRES:
        raise TrackgradeError("parameter_invalid", f"genre must be {listed_by} (a family "
                              f"such as 'house' or a label such as 'deep_house'), given {key!r}",
                              param="genre")
    return key
