"""The five pillars and the headline score, from the engine's measurements.

Every function is pure: `Features` (and the family profile and the mastering
status) in, integers 0-100 out. Each pillar also reports the penalties or
parts it was built from, so feedback and the narrative can name the numbers.

Headline (`hit_potential`, also the document's `score`)::

    blend = 0.25 mix_quality + 0.20 frequency_balance + 0.20 danceability
          + 0.15 energy + 0.20 structure     (for beatless families the danceability
                                              weight moves to mix and frequency balance)
    score = blend x electronic_factor - defect penalties  (clipping, out-of-phase channels,
            missing low end, no pulse in a dance genre, a hiss floor,
            a master far too quiet, truncated file), clamped to 0-100.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

import numpy as np

from trackgrade.engine.features import (BAND_EDGES_HZ, BAND_NAMES, NOISE_FLOOR_FROM_HZ, SILENCE_LUFS,
                                        Features)
from trackgrade import limits as L
from trackgrade.grading.genres import ELECTRONIC_MIN, tempo_fit
from trackgrade.grading.low_end import balance_excess_db, frame_db, low_cut_share
from trackgrade.grading.ramp import ramp
from trackgrade.model import DanceabilityBreakdown

# each part's share of danceability, written beside the part in the document's model
DANCE_WEIGHTS = {f.name: f.metadata["weight"] for f in fields(DanceabilityBreakdown)}
AUDIBLE_LUFS = SILENCE_LUFS + 0.1    # a short-term value above the silence floor
PILLAR_WEIGHTS = {"mix_quality": 0.25, "frequency_balance": 0.20, "danceability": 0.20,
                  "energy": 0.15, "structure": 0.20}


def pct(x: float) -> int:
    """0..1 -> integer percent (NaN -> 0)."""
    return int(round(float(np.clip(x, 0.0, 1.0)) * 100)) if np.isfinite(x) else 0


@dataclass(frozen=True)
class Pillar:
    score: int
    parts: dict = field(default_factory=dict)       # name -> int 0-100 (what went in)
    penalties: dict = field(default_factory=dict)   # name -> points taken off


# ---------------------------------------------------------------- danceability

def dance_floor_fit(bpm: float) -> float:
    """How danceable a tempo is on its own: full at 115-140 and 160-180 BPM."""
    return max(tempo_fit(bpm, (115, 140)), tempo_fit(bpm, (160, 180)))


def low_end_ratio(bands: dict, ideal: dict) -> float:
    """(sub_bass + bass) measured over the genre ideal's."""
    want = max(ideal["sub_bass"] + ideal["bass"], 1.0)
    return (bands["sub_bass"] + bands["bass"]) / want


def bass_presence(f: Features, profile: dict) -> float:
    """0..1: the low end's share against the ideal's, and whether it reaches down."""
    share = ramp(low_end_ratio(f.spectrum.bands_pct, profile["ideal_bands"]), 0.3, 0.85)
    return share * (1.0 - 0.7 * low_cut_share(f))


def electronic_factor(electronic_fit: float) -> float:
    """0.5..1: how much of a dance-floor reading (danceability, the headline)
    music keeps when no electronic profile fits it (electronic_fit under
    genres.ELECTRONIC_MIN): 1 at the threshold, 0.5 at a fit of 0."""
    return 0.5 + 0.5 * min(1.0, electronic_fit / ELECTRONIC_MIN)


def danceability(f: Features, profile: dict, electronic_fit: float = 1.0) -> Pillar:
    """The six parts, weighted (DANCE_WEIGHTS); music that is not electronic
    (electronic_fit under genres.ELECTRONIC_MIN) keeps only part of it: no
    electronic profile fits, so the dance-floor reading is unsure."""
    r = f.rhythm
    if r.tempo_salient:
        fit = tempo_fit(r.bpm, profile["bpm_range"], half_time=profile["half_time"])
        tempo = (0.6 * fit + 0.4 * dance_floor_fit(r.bpm)) * (0.7 + 0.3 * r.tempo_confidence)
    else:
        tempo = 0.1
    parts = {
        "tempo_fitness": pct(tempo),
        "beat_strength": pct(ramp(r.beat_strength, 0.2, 0.8)),
        "rhythmic_energy": pct(ramp(r.onset_rate, 0.5, 5.0)),
        "bass_presence": pct(bass_presence(f, profile)),
        "groove_clarity": pct((0.6 * ramp(r.regularity, 0.2, 0.8) + 0.4 * r.tempo_confidence)
                              * (1.0 if r.tempo_salient else 0.4)),
        "engine_dance": pct(ramp(r.danceability, 0.5, 2.8)),
    }
    score = sum(DANCE_WEIGHTS[k] * v for k, v in parts.items()) * electronic_factor(electronic_fit)
    return Pillar(int(round(score)), parts)


# ---------------------------------------------------------------- mix quality

# A master's loudness shortfall costs 5 points per LU up to this: at 12 LU
# under it outweighs every level-dependent penalty (true peak at most 25), so
# a master 6 LU or more under its target never scores a better mix than the
# same master nearer its target (CONTRACT.md section 5, defects never help).
QUIET_MASTER_MAX_PENALTY = 60.0


def loudness_penalty(lufs: float, profile: dict, status: str) -> float:
    lo, hi = profile["loudness_lufs"][status]
    if status == "master":
        return min(QUIET_MASTER_MAX_PENALTY, 5.0 * (lo - lufs)) if lufs < lo else min(25.0, 5.0 * (lufs - hi)) if lufs > hi else 0.0
    # a pre-master is judged on headroom: too hot means it was limited already
    return min(30.0, 4.0 * (lufs - hi)) if lufs > hi else min(20.0, 2.0 * (lo - lufs)) if lufs < lo else 0.0


def true_peak_penalty(tp: float, status: str) -> float:
    ceiling = L.TRUE_PEAK_MAX_DBTP[status]
    rate = 8.0 if status == "master" else 5.0
    return min(25.0, rate * (tp - ceiling)) if tp > ceiling else 0.0


def clipping_penalty(clip_pct: float) -> float:
    """Nothing below 0.0005 % of samples (a handful of overs), 10 points at
    0.001 %, +7.5 per decade, at most 40."""
    if clip_pct < 0.0005:
        return 0.0
    return float(np.clip(10.0 + 7.5 * np.log10(clip_pct / 0.001), 5.0, 40.0))


def crest_penalty(crest: float, profile: dict, status: str) -> float:
    lo = profile["crest_db"][0] + (2.0 if status == "pre-master" else 0.0)
    return min(20.0, 5.0 * (lo - crest)) if crest < lo else 0.0


def lra_penalty(lra: float, profile: dict) -> float:
    lo, hi = profile["lra_lu"]
    return min(10.0, 3.0 * (lo - lra)) if lra < lo else min(10.0, 1.5 * (lra - hi)) if lra > hi else 0.0


def stereo_penalties(f: Features, profile: dict | None = None) -> dict:
    c, w = f.stereo.correlation, f.stereo.width
    out = {}
    span = (profile or {}).get("width")          # reference tracks set a width range
    if span and f.channels > 1 and not span[0] <= w <= span[1]:
        out["width_vs_reference"] = min(10.0, 50.0 * (span[0] - w if w < span[0] else w - span[1]))
    if c < 0.0:
        out["phase"] = min(45.0, 25.0 + 25.0 * -c)
    elif c < L.PHASE_CORRELATION_LOW:
        out["phase"] = 50.0 * (L.PHASE_CORRELATION_LOW - c)
    if f.channels == 1:
        out["mono"] = 5.0
    elif w < L.MONO_WIDTH:
        out["mono"] = 15.0
    elif w > L.WIDE_WIDTH and c >= 0.0:
        out["width"] = min(15.0, 60.0 * (w - L.WIDE_WIDTH))
    return out


def hiss_share(f: Features) -> float:
    """0..1: how clearly a steady broadband noise floor sits under the music:
    the 5 kHz+ power of the quietest moments is high against the average
    power *and* steady (music's top end comes and goes; hiss stays)."""
    n = f.noise_floor
    if n is None:
        return 0.0
    return ramp(n.floor_db, *L.HISS_FLOOR_DB) * ramp(n.steadiness_db, *L.HISS_STEADY_DB)


def hiss_penalty(f: Features) -> float:
    """Up to 25 points for a noise floor."""
    return 25.0 * hiss_share(f)


def mix_quality(f: Features, profile: dict, status: str) -> Pillar:
    pens = {
        "loudness": loudness_penalty(f.loudness.integrated_lufs, profile, status),
        "true_peak": true_peak_penalty(f.loudness.true_peak_dbtp, status),
        "clipping": clipping_penalty(f.dynamics.clipping_pct),
        "crest": crest_penalty(f.dynamics.crest_factor_db, profile, status),
        "lra": lra_penalty(f.loudness.loudness_range_lu, profile),
        "hiss": hiss_penalty(f),
        **stereo_penalties(f, profile),
    }
    pens = {k: round(float(v), 1) for k, v in pens.items() if round(float(v), 1) > 0}
    return Pillar(int(round(np.clip(100.0 - sum(pens.values()), 0, 100))), {}, pens)


# ---------------------------------------------------------------- frequency balance

def hiss_bands(f: Features) -> dict:
    """The band shares (%) a steady white noise floor adds, as far as the
    grading believes there is one (`hiss_share`): the floor's 5 kHz+ power
    (`noise_floor.floor_db`, against the mean power) spread evenly over the Hz
    from 5 kHz to Nyquist, so a band holds its bandwidth's part of it."""
    share = hiss_share(f)
    if share <= 0.0 or f.noise_floor is None:
        return {b: 0.0 for b in BAND_NAMES}
    top = (f.analysis_rate or f.sample_rate) / 2.0       # the floor was measured up to there
    per_hz = 100.0 * 10.0 ** (f.noise_floor.floor_db / 10.0) / max(top - NOISE_FLOOR_FROM_HZ, 1.0)
    return {b: share * per_hz * max(min(hi, top) - lo, 0.0) for b, (lo, hi) in zip(BAND_NAMES, BAND_EDGES_HZ)}


def without(bands: dict, added: dict) -> dict:
    """`bands` (%) with `added` (%) taken out and the rest rescaled to 100. A
    band where what is left is no louder than what was taken (0 dB or less
    against the noise) counts as empty: its music cannot be measured under
    the noise, and a 1 dB error in the noise's estimate would decide it."""
    left = {}
    for b in BAND_NAMES:
        noise = added.get(b, 0.0)
        rest = float(bands[b]) - noise
        left[b] = 0.0 if noise > 0 and rest <= noise else max(rest, 0.0)
    total = sum(left.values())
    return {b: 100.0 * v / total for b, v in left.items()} if total > 0 else dict(bands)


def _balance_score(bands: dict, ideal: dict, extra_db: float, whole: bool = True) -> int:
    excess = balance_excess_db(bands, ideal, whole) + extra_db
    return int(round(100.0 / (1.0 + (excess / 8.0) ** 2)))


def frequency_balance(bands: dict, ideal: dict, low_cut: float = 0.0,
                      noise: dict | None = None, hiss: float = 0.0, missing: float = 0.0,
                      whole: bool = True) -> Pillar:
    """100 / (1 + (excess / 8 dB)^2): `excess` sums how far the bands sit
    outside their tolerances (limits.BAND_TOLERANCE_DB: a track inside one
    standard deviation of real music everywhere scores 100), the low end
    counted once (`low_end.balance_excess_db`: a high-pass moves the low
    share and the sub/bass split, never the shape above 250 Hz), plus up to 10 dB
    when a high-pass filter took the low end (`low_cut` 0..1). 90 at 2.7 dB,
    50 at 8 dB, 20 at 16 dB. With a noise floor (`noise`: the band shares it
    adds, `hiss_bands`; `hiss`: `hiss_share`) the score is the lower of the
    measured bands' and the music's without the noise, plus
    limits.HISS_BALANCE_DB x `hiss`: hiss that fills an empty band never helps.
    With no low end at all (`missing`, `low_end_missing`, 0..1) the score is
    capped at 100 x (1 - missing): a high-pass never raises it. A part
    (`whole` False, content.kind other than mix) is not held to a full mix's
    low end (`low_end.balance_excess_db`)."""
    extra = 10.0 * low_cut + L.HISS_BALANCE_DB * hiss
    score = _balance_score(bands, ideal, extra, whole)
    if noise and any(v > 0 for v in noise.values()):
        score = min(score, _balance_score(without(bands, noise), ideal, extra, whole))
    score = min(score, int(round(100.0 * (1.0 - missing))))
    parts = {name: round(float(v), 1) + 0.0 for name, v in zip(BAND_NAMES, frame_db(bands, ideal))}
    return Pillar(score, parts)


# ---------------------------------------------------------------- energy

def _busy_share(f: Features) -> float:
    """Fraction of the track in drops or sections with energy >= 70."""
    total = max(f.duration_s, 1e-6)
    busy = sum(s.end - s.start for s in f.structure.sections if s.label == "drop" or s.energy >= 70)
    return float(np.clip(busy / total, 0.0, 1.0))


def energy(f: Features, profile: dict) -> Pillar:
    r = f.rhythm
    parts = {
        "drive": pct(ramp(r.onset_rate, 0.5, 6.0)),
        "pulse": pct(ramp(r.beat_strength, 0.2, 0.8) if r.tempo_salient else 0.0),
        "low_end": pct(bass_presence(f, profile)),
        "intensity": pct(_busy_share(f) / 0.5),
    }
    score = 0.35 * parts["drive"] + 0.3 * parts["pulse"] + 0.15 * parts["low_end"] + 0.2 * parts["intensity"]
    return Pillar(int(round(score)), parts)


# ---------------------------------------------------------------- structure

def loudness_spread(f: Features) -> float:
    """P95 - P10 of the short-term loudness (LU) after the first 3 s window,
    digital silence excluded: how much the arrangement moves."""
    st = np.asarray(f.loudness.short_term_lufs, dtype=np.float64)
    skip = int(round(3.0 / max(f.loudness.curve_hop_s, 1e-3)))
    st = st[skip:] if st.size > skip + 10 else st
    st = st[np.isfinite(st) & (st > AUDIBLE_LUFS)]
    if st.size < 5:
        return 0.0
    return float(np.percentile(st, 95) - np.percentile(st, 10))


def section_loudness(f: Features, spans=None) -> list[float]:
    """Mean short-term loudness (LUFS) inside each (start, end) span, by
    default the engine's sections; SILENCE_LUFS for a span with no audible value."""
    st = np.asarray(f.loudness.short_term_lufs, dtype=np.float64)
    t = np.arange(st.size) * f.loudness.curve_hop_s
    spans = spans if spans is not None else [(s.start, s.end) for s in f.structure.sections]
    out = []
    for start, end in spans:
        inside = st[(t >= start) & (t < end) & (st > AUDIBLE_LUFS)]
        out.append(float(inside.mean()) if inside.size else SILENCE_LUFS)
    return out


def structure(f: Features) -> Pillar:
    """Contrast (loudness movement), label variety, a drop that lands above
    what precedes it, energy movement, and an intro/outro."""
    secs = f.structure.sections
    labels = [s.label for s in secs]
    contrast = ramp(loudness_spread(f), 1.0, 5.0)
    variety = ramp(len(set(labels)), 1, 4)
    loud = section_loudness(f)
    arc = 0.0
    for i in range(1, len(secs)):
        if secs[i].label == "drop" and loud[i] >= min(loud[:i]) + 1.5:
            arc = 1.0
    if arc == 0.0 and "drop" in labels:
        arc = 0.3
    curve = np.asarray(f.structure.energy_curve, dtype=np.float64)
    movement = ramp(float(curve.std()) / max(float(curve.mean()), 1e-6), 0.03, 0.25) if curve.size else 0.0
    bookends = (0.5 * (labels[:1] == ["intro"]) + 0.5 * (labels[-1:] == ["outro"])) if labels else 0.0
    parts = {"contrast": pct(contrast), "variety": pct(variety), "arc": pct(arc),
             "movement": pct(movement), "bookends": pct(bookends)}
    score = (0.35 * parts["contrast"] + 0.20 * parts["variety"] + 0.20 * parts["arc"]
             + 0.10 * parts["movement"] + 0.15 * parts["bookends"])
    return Pillar(int(round(score)), parts)


# ---------------------------------------------------------------- headline

def defect_penalties(f: Features, profile: dict, status: str, mix: Pillar, *,
                     electronic: bool = True, whole_mix: bool = True) -> dict:
    """The headline's defect penalties. A part other than a mix (`whole_mix`
    false) is not held to a full mix's low end, pulse, loudness or genre."""
    pens = {}
    if f.dynamics.clipping_pct >= 0.01:
        pens["clipping"] = 12.0 if f.dynamics.clipping_pct >= 0.1 else 6.0
    if f.stereo.correlation < 0.0:
        pens["phase"] = 12.0
    if whole_mix and (low_end_ratio(f.spectrum.bands_pct, profile["ideal_bands"]) < 0.5
                      or low_cut_share(f) >= 0.5):
        pens["low_end"] = 8.0
    if whole_mix and profile["danceable"] and not f.rhythm.tempo_salient:
        pens["no_pulse"] = 8.0
    if hiss_share(f) >= 0.3:
        pens["hiss"] = round(10.0 * hiss_share(f), 1)
    if mix.penalties.get("mono", 0) >= 15:
        pens["mono"] = 5.0
    under = profile["loudness_lufs"]["master"][0] - f.loudness.integrated_lufs
    if whole_mix and status == "master" and under > L.TOO_QUIET_MASTER_LU:
        pens["too_quiet"] = round(min(12.0, 1.5 * under), 1)
    if f.truncated:
        pens["truncated"] = 5.0
    if whole_mix and not electronic:
        pens["not_electronic"] = 10.0
    return pens


def headline(pillars: dict[str, int], penalties: dict, *, danceable: bool,
             electronic_fit: float = 1.0, structure_judged: bool = True,
             counted: tuple[str, ...] | None = None) -> int:
    """The weighted blend of the pillars (scaled by `electronic_factor` for
    music that is not electronic) minus the defect penalties, 0-100. A part
    (`structure_judged` false) leaves the structure pillar out, and only the
    `counted` pillars count (all when None: grading.content.counted_pillars);
    the other weights keep their proportions."""
    weights = dict(PILLAR_WEIGHTS)
    if counted is not None:
        weights = {k: w for k, w in weights.items() if k in counted}
    if not danceable and "danceability" in weights:   # ambient: mix and balance carry it
        shift = weights.pop("danceability")
        carriers = [k for k in ("mix_quality", "frequency_balance") if k in weights]
        for k in carriers:
            weights[k] += shift / len(carriers)
    if not structure_judged:
        weights.pop("structure", None)
    if not structure_judged or counted is not None:
        total = sum(weights.values())
        weights = {k: w / total for k, w in weights.items()}
    blend = sum(w * pillars[k] for k, w in weights.items()) * electronic_factor(electronic_fit)
    return int(round(np.clip(blend - sum(penalties.values()), 0, 100)))
