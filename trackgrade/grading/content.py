"""What the audio is (`content`, CONTRACT.md section 6): the one home of the
kinds, the inputs the decision reads and the decision itself.

The engine measures the cues (engine/content.py: how the level moves, how
many registers play at once, how much of the power sits in partials of notes,
the low register's share; engine/voicing.py: how many notes sound at once,
one voice or several, in which register, how the pitch moves); `inputs`
turns them, with the length and the pulse, into one vector, and a
multinomial logistic model (`content_model.json`, fitted by
benchmarks/content/fit.py on recorded-instrument renders and part of the
real clips, whole sources held out) gives each kind a probability. Its temperature is fitted on the calibration
sources so that `content.confidence` (the best kind's probability) is
calibrated: at 0.6 or more the kind is right at least 9 times in 10
(benchmarks/results/content.md). When `drums` leads, a second model of the
same file (`drums_or_mix`, fitted on drum loops and mixes only, among them
grooves whose kit stands far over a bass line and chords) shares the drums'
and the mix's probability between them (`split_drums_mix`).

`decide` holds the decision table (MIX_MARGIN, LONG_PART_MIN, ONE_EVENT_DB,
ONE_EVENT_RING). A file the engine measured no cues for (documents of older
versions, canned test-mode tracks without them) reads as a `mix` with
confidence 1.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from trackgrade.engine.features import Features
from trackgrade.limits import PART_MAX_S

KINDS = ("mix", "drums", "bass", "harmony", "lead", "texture", "one_shot")
MIX, DRUMS, ONE_SHOT = "mix", "drums", "one_shot"
# how each kind is named in a headline ("drum loop · 1.7 s")
KIND_NAMES = {"mix": "mix", "drums": "drum loop", "bass": "bass line", "harmony": "chord part",
              "lead": "lead line", "texture": "texture", "one_shot": "one-shot"}
# what `score` measures for each kind (README, the report's headline)
KIND_SCORE = {
    "mix": "the mix as a release: balance against the genre, loudness, dynamics, groove, arrangement",
    "drums": "the drum sound: punch, groove and timing, peaks and clipping, stereo and noise",
    "bass": "the bass sound: its pulse, peaks and clipping, mono compatibility and noise",
    "harmony": "the sound of the chords: peaks and clipping, stereo and noise",
    "lead": "the sound of the line: peaks and clipping, stereo and noise",
    "texture": "the sound of the texture: peaks and clipping, stereo and noise",
    "one_shot": "the sound of the hit: peaks and clipping, noise",
}
MODEL_PATH = Path(__file__).with_name("content_model.json")
# the decision table: a part (any kind but a mix) is read only when it leads
# the mix by MIX_MARGIN, and a recording of PART_MAX_S or more only when that
# part is LONG_PART_MIN likely (a long recording is usually a track; no long
# part was measured). The first pass needed a margin of 0.1 so that a mix with
# a defect (a high-pass that took its low end) did not read as a chord part;
# with engine/voicing.py's cues (how many voices, over how many octaves) the
# high-passed mix of tests/grading/test_defects.py reads `mix` at 0.58, and
# the margin only turned pitched parts into mixes (benchmarks/results/content.md)
MIX_MARGIN = 0.0
LONG_PART_MIN = 0.7
# one event is one hit or one note, whatever the model's best kind: after its
# attack the level never climbs back ONE_EVENT_DB (a new attack climbs 6 dB
# and more; a loop's next hit 10-40 dB) and it has fallen 30 dB under the
# attack before ONE_EVENT_RING of the audio is over (a held note or a drone is
# heard to the end), in audio shorter than PART_MAX_S. No render, real clip or
# fresh source other than a one-shot meets both (benchmarks/results/content.md);
# a riser (a reverse cymbal) does not: it climbs the last ~6 dB to its peak
# after its first loud frame
ONE_EVENT_DB = 5.0
ONE_EVENT_RING = 0.6


def inputs(f: Features) -> dict[str, float]:
    """The decision's inputs of a measured track (the names `content_model.json`
    carries), or {} when the engine measured no content cues."""
    c = f.content
    if c is None:
        return {}
    r = f.rhythm
    return {
        "sustain_db": c.sustain_db, "attacks_per_s": min(c.attacks_per_s, 12.0),
        "one_attack": float(c.attack_count <= 1.0), "layers": c.layers,
        "low_sustain_db": c.low_sustain_db, "peak_at": c.peak_at, "tail_db": c.tail_db,
        # one event or many: a one-shot only decays after its attack, and
        # rings for a moment (engine/content.py `event_cues`)
        "rebound_db": c.rebound_db, "ring_share": c.ring_share,
        "peak_share": c.peak_share, "partials": min(c.partials, 80.0),
        "low_share": c.low_share, "spread": c.spread,
        "log_duration": math.log(max(f.duration_s, 0.5)),
        "onset_rate": min(r.onset_rate, 20.0), "beat_strength": r.beat_strength,
        "tempo_salient": float(r.tempo_salient),
        # how many notes at once, and where (engine/voicing.py)
        "monophony": c.monophony, "voices": c.voices, "pitch_midi": c.pitch_midi,
        "pitch_moves": c.pitch_moves, "semitone_peaks": c.semitone_peaks,
        "register_midi": c.register_midi, "bass_register": c.bass_register,
        "chroma_flux": c.chroma_flux, "chroma_spread": c.chroma_spread,
        "octave_spread": c.octave_spread,
    }


@dataclass(frozen=True)
class ContentReading:
    kind: str
    confidence: float
    probabilities: dict          # kind -> probability


@lru_cache(maxsize=1)
def model() -> dict:
    """{"inputs": [names], "mean", "scale", "weights" (kinds x inputs), "bias", "temperature"}."""
    return json.loads(MODEL_PATH.read_text("utf-8"))


def probabilities(values: dict[str, float], fitted: dict | None = None) -> np.ndarray:
    """(len(KINDS),) the calibrated probability of each kind."""
    m = fitted or model()
    x = np.array([values[name] for name in m["inputs"]], dtype=np.float64)
    z = (x - np.asarray(m["mean"])) / np.asarray(m["scale"])
    logits = (np.asarray(m["weights"]) @ z + np.asarray(m["bias"])) / m["temperature"]
    logits -= logits.max()
    p = np.exp(logits)
    p = p / p.sum()
    if "drums_or_mix" in m:
        p = split_drums_mix(p, values, m["drums_or_mix"])
    return p


def drums_or_mix(values: dict[str, float], second: dict) -> float:
    """The second model's calibrated probability that drums heard are a mix."""
    x = np.array([values[name] for name in second["inputs"]], dtype=np.float64)
    z = (x - np.asarray(second["mean"])) / np.asarray(second["scale"])
    logit = (float(np.asarray(second["weight"]) @ z) + second["bias"]) / second["temperature"]
    return float(1.0 / (1.0 + math.exp(-logit)))


def split_drums_mix(p: np.ndarray, values: dict[str, float], second: dict) -> np.ndarray:
    """`p` with the drums' and the mix's probability shared by `drums_or_mix`
    when `drums` leads; otherwise `p` as it is. The first model, fitted on
    every kind, saw few mixes whose drums stand far over the parts and read
    such a groove as a drum loop; the second is fitted on drum loops and mixes
    only (among them grooves whose kit stands 0 to +12 dB over a bass line and
    chords), its temperature calibrated on readings of generators it never
    heard too (benchmarks/content/fit.py `fit_drums_or_mix`; issue 26's third
    pass, benchmarks/results/content.md)."""
    mix, drums = KINDS.index(MIX), KINDS.index(DRUMS)
    if int(np.argmax(p)) != drums:
        return p
    both, q = p[mix] + p[drums], drums_or_mix(values, second)
    out = p.copy()
    out[mix], out[drums] = both * q, both * (1.0 - q)
    return out


def detect_content(f: Features) -> ContentReading:
    """The kind with the largest probability and that probability."""
    values = inputs(f)
    if not values:
        return ContentReading(MIX, 1.0, {MIX: 1.0})
    p = probabilities(values)
    best = decide(p, f.duration_s, values)
    return ContentReading(KINDS[best], float(p[best]), {k: float(v) for k, v in zip(KINDS, p)})


def one_event(values: dict[str, float]) -> bool:
    """Whether the level curve is one hit or one note (the table above)."""
    return values["rebound_db"] < ONE_EVENT_DB and values["ring_share"] < ONE_EVENT_RING


def decide(p: np.ndarray, duration_s: float, values: dict[str, float] | None = None,
           margin: float = MIX_MARGIN) -> int:
    """The kind's index from the probabilities and, when given, the inputs
    (the table above; `margin`: another MIX_MARGIN, for comparisons)."""
    if values is not None and duration_s < PART_MAX_S and one_event(values):
        return KINDS.index(ONE_SHOT)
    best, mix = int(np.argmax(p)), KINDS.index(MIX)
    if best != mix and (p[best] - p[mix] < margin
                        or duration_s >= PART_MAX_S and p[best] < LONG_PART_MIN):
        return mix
    return best


def is_part(kind: str, duration_s: float) -> bool:
    """CONTRACT.md section 6: the one test of a part."""
    return kind != MIX or duration_s < PART_MAX_S


# the pillars `score` counts for each kind (README "What score measures"): a
# part other than a mix is not held to a full mix's balance; only drums and
# bass carry a pulse to dance to; structure counts only for a mix of 60 s or
# more (`structure.judged`)
COUNTED_PILLARS = {
    "mix": None,                                            # all of them
    "drums": ("danceability", "mix_quality", "energy"),
    "bass": ("danceability", "mix_quality", "energy"),
    "harmony": ("mix_quality", "energy"),
    "lead": ("mix_quality", "energy"),
    "texture": ("mix_quality", "energy"),
    "one_shot": ("mix_quality", "energy"),
}


def counted_pillars(kind: str) -> tuple[str, ...] | None:
    """The pillars `score` blends for this kind (None: all five)."""
    return COUNTED_PILLARS[kind]
