"""Which electronic family a track belongs to, from what defines a family.

Families differ first in rhythm, then in tempo and sound
(research/rhythm-patterns.md), so the reading rests on a handful of named
features (`FEATURES`): the rhythm-pattern cues of engine/groove.py (kick on
every beat or between them, snare on 3 or on 2 and 4 or between the beats as
in reggaeton's dembow, where the hats and the sub sit, how alike the bars
are), the onsets per beat and the pulse's strength, two band ratios (sub
against bass, the top end) and two sound cues of engine/content.py (`layers`:
how many registers play at once, the stacked synths of trance against a
sparse techno groove or a played kit; `peak_share`: how much of each octave's
power sits in its strongest partials; `spread`: the effective number of the
seven bands playing, trance's full-range supersaws and pads against a
techno groove's kick, bass and hats) and the groove's `hat_swing` (house's
shuffle against the straight grid of techno and trance); whether there
is a pulse at all counts as a yes/no feature (`pulse`: per family the share of
its items with one, smoothed). Tempo enters through the
families' conventional ranges (genres.json `bpm_range`, `genres.tempo_fit`),
not through the training items.

The classifier is a Gaussian naive Bayes: per family, per feature a mean and
a spread (genre_model.json, written by benchmarks/derive_genre_model.py from
labelled synthetic renders and real clips; each spread shrunk toward the
pooled within-family spread and floored so clean synthetic items do not make
it overconfident). A family is a mixture (`components`): one Gaussian per style it
was fitted on, equally weighted - house, deep house and tech house apart
(a sparse, straight house groove, a swung deep house one with rhodes and a
rolling tech house one are each tight, where one Gaussian over all three
was wide enough to lose a plain house sketch to techno), and the family's
recorded-instrument grooves and real clips a component each. A component's
log score is the sum of its features' Gaussian log densities (a feature not
measured - no pulse, no whole bar - drops out); a family's is the log of the
mean of its components' densities plus `tempo_weight` x log tempo fit; the scores are divided by
`temperature` (fitted by cross-validation so that the confidences are
calibrated) and turned into probabilities. Families without training items
(`families` in the data lacks them) are never detected, only chosen.

Music outside every family (hip-hop, trap, reggaeton, pop, rock, jazz, samba)
has its own class, `outside`: a mixture of Gaussians, one component per
outside style (each with a mean and spread per feature and its own pulse
share, fitted like a family on outside examples: the recorded-instrument
grooves of benchmarks/groove_specs.py and the real clips of no family,
genre_corpus.py) and a broad one over them all for a style none has seen
(its spread at least the widest family's), equally weighted, and a log prior (`outside_log_prior`,
chosen with the temperature on held-out sources). One broad Gaussian for all
of them needed a large prior to catch a reggaeton or pop groove, which took a
clear house or trance part below 0.6; a component per style fits each as
tightly as a family. Its tempo fit is the families' mean, so the tempo counts
for a family only against the others. The families' probabilities are shares
of the eleven families and the outside class together, so a family's
probability is the probability that the track IS that family.

A probability says which family fits best, not that the track is typical of
it: a drone or a lone kick drum is far from every family and still has a
"best" one. `typicality` measures how far the track sits from the winning
family (the chi-square tail of its summed squared z-scores): outside the
family's TYPICAL_P region the confidence shrinks in proportion, so only a
clear, typical track of a family reads high.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from functools import lru_cache
from importlib import resources

import numpy as np

from trackgrade.engine.features import Features
from trackgrade.grading.low_end import low_cut_share

FEATURES = ("beat_strength", "onsets_per_beat", "kick_on_beats", "kick_off_beats",
            "snare_one_per_bar", "snare_off_beats", "snare_backbeat", "hat_off_beat", "hat_sixteenths",
            "bass_off_beat", "bar_repeat", "sub_vs_bass_db", "top_db", "layers", "peak_share",
            "hat_swing", "spread")
GROOVE_CUES = ("kick_on_beats", "kick_off_beats", "snare_one_per_bar", "snare_off_beats", "snare_backbeat",
               "hat_off_beat", "hat_sixteenths", "bass_off_beat", "bar_repeat", "hat_swing")
# What a family's prototype carries beside its rhythm-pattern cues: the
# measurements a canned track (test mode) has no family-typical value of.
PROTOTYPE_FEATURES = ("onsets_per_beat", "beat_strength", "layers", "peak_share", "spread")
BAND_SHARE_FLOOR = 0.05          # % under which a band counts as this (log of a share)
# Under this length no pulse found says little (two bars at 120 BPM): the
# pulse features are then left out instead of counting as "none".
PULSE_MIN_S = 4.0
TYPICAL_P = 0.01                 # the family's 99 % region: inside it a track is typical


def genre_inputs(f: Features) -> dict:
    """Everything genre detection reads of a track, as plain JSON-able numbers."""
    r = f.rhythm
    return {"bpm": float(r.bpm), "bands": {k: float(v) for k, v in f.spectrum.bands_pct.items()},
            "tempo_salient": bool(r.tempo_salient), "beat_strength": float(r.beat_strength),
            "onset_rate": float(r.onset_rate), "crest_db": float(f.dynamics.crest_factor_db),
            "low_cut": float(low_cut_share(f)), "duration_s": float(f.duration_s),
            "timing_spread_ms": r.timing_spread_ms, "timed_onsets": int(r.timed_onsets),
            "cues": None if f.groove is None else dict(f.groove.cues),
            "content": None if f.content is None else {k: float(v) for k, v in asdict(f.content).items()}}


def feature_vector(inputs: dict) -> dict[str, float]:
    """The model's features of `genre_inputs` (missing ones left out)."""
    out = {}
    bands = {k: float(v) for k, v in inputs["bands"].items()}
    if all(math.isfinite(v) for v in bands.values()):
        share = {k: max(v, BAND_SHARE_FLOOR) for k, v in bands.items()}
        top = share["upper_mid"] + share["high"] + share["air"]
        out["sub_vs_bass_db"] = 10.0 * math.log10(share["sub_bass"] / share["bass"])
        out["top_db"] = 10.0 * math.log10(top / sum(share.values()))
    duration = inputs.get("duration_s")
    if inputs.get("tempo_salient") or duration is None or duration >= PULSE_MIN_S:
        out["pulse"] = 1.0 if inputs.get("tempo_salient") else 0.0
        out["beat_strength"] = float(inputs.get("beat_strength") or 0.0)
    bpm = float(inputs.get("bpm") or 0.0)
    if inputs.get("tempo_salient") and math.isfinite(bpm) and bpm > 0:
        out["onsets_per_beat"] = float(inputs.get("onset_rate") or 0.0) * 60.0 / bpm
    for name, value in {**(inputs.get("content") or {}), **(inputs.get("cues") or {})}.items():
        if name in FEATURES:
            out[name] = float(value)
    # a measurement that is not a finite number says nothing (hostile input)
    return {k: v for k, v in out.items() if math.isfinite(v)}


@dataclass(frozen=True)
class GenreModel:
    families: tuple[str, ...]
    features: tuple[str, ...]
    mean: np.ndarray             # (families, features)
    spread: np.ndarray           # (families, features), > 0
    pulse: np.ndarray            # (families,) probability of a salient pulse, 0 < p < 1
    tempo_weight: float
    temperature: float
    prototypes: dict = field(default_factory=dict)   # family -> cues of its clearest item
    # {"names": (components,), "mean", "spread": (components, features), "pulse": (components,), "log_prior"}
    outside: dict | None = None
    # {"names", "family": (components,) family index, "mean", "spread", "pulse"}: each
    # family as equally weighted components, one per style it was fitted on
    components: dict | None = None

    @classmethod
    def from_data(cls, data: dict) -> "GenreModel":
        fams, feats = tuple(data["families"]), tuple(data["features"])
        mean = np.array([[data["mean"][k][n] for n in feats] for k in fams], dtype=float)
        spread = np.array([[data["spread"][k][n] for n in feats] for k in fams], dtype=float)
        pulse = np.array([data["pulse"][k] for k in fams], dtype=float)
        out = data.get("outside")
        if out is not None:
            # a file of one broad Gaussian (before the mixture) reads as one component
            out = {**_gaussians_from(out.get("components") or {"any": out}, feats),
                   "log_prior": float(out["log_prior"])}
        comps = data.get("components")
        if comps is not None:
            comps = {**_gaussians_from(comps, feats),
                     "family": np.array([fams.index(comps[c]["family"]) for c in comps])}
        return cls(fams, feats, mean, spread, pulse, float(data["tempo_weight"]),
                   float(data["temperature"]), dict(data.get("prototypes", {})), out, comps)

    def to_data(self, **extra) -> dict:
        return {"families": list(self.families), "features": list(self.features),
                "mean": {k: {n: round(float(v), 4) for n, v in zip(self.features, row)}
                         for k, row in zip(self.families, self.mean)},
                "spread": {k: {n: round(float(v), 4) for n, v in zip(self.features, row)}
                           for k, row in zip(self.families, self.spread)},
                "pulse": {k: round(float(p), 4) for k, p in zip(self.families, self.pulse)},
                "tempo_weight": self.tempo_weight, "temperature": self.temperature,
                "prototypes": self.prototypes,
                "outside": None if self.outside is None else {
                    "components": _gaussians_data(self.outside, self.features),
                    "log_prior": round(float(self.outside["log_prior"]), 4)},
                "components": None if self.components is None else {
                    c: {"family": self.families[int(k)], **row} for (c, row), k in
                    zip(_gaussians_data(self.components, self.features).items(), self.components["family"])},
                **extra}


def _gaussians_from(comps: dict, feats: tuple) -> dict:
    """{"names", "mean", "spread", "pulse"} arrays of {name: {"mean", "spread", "pulse"}} data."""
    names = tuple(comps)
    return {"names": names,
            "mean": np.array([[comps[c]["mean"][n] for n in feats] for c in names], dtype=float),
            "spread": np.array([[comps[c]["spread"][n] for n in feats] for c in names], dtype=float),
            "pulse": np.array([comps[c]["pulse"] for c in names], dtype=float)}


def _gaussians_data(g: dict, feats: tuple) -> dict:
    """The data of `_gaussians_from`'s arrays, rounded."""
    return {c: {"mean": {n: round(float(v), 4) for n, v in zip(feats, mu)},
                "spread": {n: round(float(v), 4) for n, v in zip(feats, sd)},
                "pulse": round(float(p), 4)}
            for c, mu, sd, p in zip(g["names"], g["mean"], g["spread"], g["pulse"])}


@lru_cache(maxsize=1)
def default_model() -> GenreModel:
    text = resources.files("trackgrade.grading").joinpath("genre_model.json").read_text("utf-8")
    return GenreModel.from_data(json.loads(text))


def typical_cues(model: GenreModel, family: str) -> dict[str, float] | None:
    """The rhythm-pattern cues of the family's clearest labelled item (the one
    the model reads as the family most surely), or None when the model has no
    items of it. Test mode gives canned tracks these."""
    proto = model.prototypes.get(family)
    return None if proto is None else {n: v for n, v in proto.items() if n in GROOVE_CUES}


def typical_features(model: GenreModel, family: str) -> dict[str, float]:
    """The same item's PROTOTYPE_FEATURES (onsets per beat, beat strength, the
    content stage's layers, peak share and band spread), those it has."""
    proto = model.prototypes.get(family) or {}
    return {n: proto[n] for n in PROTOTYPE_FEATURES if n in proto}


def _class_log_scores(mean: np.ndarray, spread: np.ndarray, pulse: np.ndarray, features_of,
                      features: dict[str, float]) -> np.ndarray:
    """(classes,) Gaussian log densities of the measured features plus the pulse term."""
    idx = [i for i, n in enumerate(features_of) if n in features]
    score = np.zeros(mean.shape[0])
    if "pulse" in features:
        score = score + np.log(pulse if features["pulse"] else 1.0 - pulse)
    if idx:
        x = np.array([features[features_of[i]] for i in idx])
        mu, sd = mean[:, idx], spread[:, idx]
        score = score + (-0.5 * ((x - mu) / sd) ** 2 - np.log(sd)).sum(axis=1)
    return score


def log_scores(model: GenreModel, features: dict[str, float], tempo_log_fit: np.ndarray) -> np.ndarray:
    """(families,) unnormalised log scores: Gaussian log densities of the measured
    features plus tempo_weight x `tempo_log_fit` (one per family)."""
    fit = np.asarray(tempo_log_fit, dtype=float)
    c = model.components
    if c is None:
        return model.tempo_weight * fit + _class_log_scores(model.mean, model.spread, model.pulse,
                                                            model.features, features)
    comp = _class_log_scores(c["mean"], c["spread"], c["pulse"], model.features, features)
    out = np.array([_log_mean_exp(comp[c["family"] == k]) for k in range(len(model.families))])
    return model.tempo_weight * fit + out


def _log_mean_exp(scores: np.ndarray) -> float:
    """log of the mean of exp(`scores`) (-inf for none): an equally weighted mixture's log density."""
    if not scores.size:
        return -math.inf
    top = float(scores.max())
    return top + math.log(float(np.exp(scores - top).mean()))


def outside_log_score(model: GenreModel, features: dict[str, float], tempo_log_fit: np.ndarray) -> float:
    """The outside class's log score (-inf without one): the log of the mean
    of its components' densities, its prior and the families' mean tempo fit."""
    o = model.outside
    if o is None:
        return -math.inf
    fit = float(np.mean(np.asarray(tempo_log_fit, dtype=float)))
    comp = _class_log_scores(o["mean"], o["spread"], o["pulse"], model.features, features)
    return float(o["log_prior"] + model.tempo_weight * fit + _log_mean_exp(comp))


def chi2_tail(x: float, dof: int) -> float:
    """P(X >= x) for a chi-square variable of `dof` (>= 1) degrees of freedom:
    the regularised upper incomplete gamma Q(dof/2, x/2), summed in closed form."""
    h = max(float(x), 0.0) / 2.0
    if dof % 2 == 0:
        terms = [h ** i / math.factorial(i) for i in range(dof // 2)]
        return float(min(1.0, math.exp(-h) * sum(terms)))
    terms = [h ** (i - 0.5) / math.gamma(i + 0.5) for i in range(1, (dof + 1) // 2)]
    return float(min(1.0, math.erfc(math.sqrt(h)) + math.exp(-h) * sum(terms)))


def typicality(model: GenreModel, features: dict[str, float], family: int) -> float:
    """0..1: 1 when the measured features lie inside the `family`'s TYPICAL_P
    region (chi-square tail of the summed squared z-scores, one degree of
    freedom per feature), falling in proportion to the tail probability outside it."""
    idx = [i for i, n in enumerate(model.features) if n in features]
    if not idx:
        return 1.0
    x = np.array([features[model.features[i]] for i in idx])
    z2 = float((((x - model.mean[family, idx]) / model.spread[family, idx]) ** 2).sum())
    return float(min(1.0, chi2_tail(z2, len(idx)) / TYPICAL_P))


def probabilities(model: GenreModel, features: dict[str, float], tempo_log_fit: np.ndarray) -> np.ndarray:
    """(families,) calibrated probabilities that the track is each family:
    with the outside class they sum to 1 (the rest is the outside class)."""
    s = np.append(log_scores(model, features, tempo_log_fit),
                  outside_log_score(model, features, tempo_log_fit)) / model.temperature
    e = np.exp(s - s.max())
    return (e / e.sum())[:-1]
