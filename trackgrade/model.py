"""The Analysis document of spec section 2, as frozen dataclasses: the one
home of the document's shape.

`Analysis` holds what the library computes (scores, measurements, words).
The server adds its own envelope fields (`object`, `id`, `status`,
`livemode`, `external_id`, `created_at`, `completed_at`, `error`) around
`Analysis.to_dict()`; the CLI prints `to_dict()` as it is.

Each field's annotation is its JSON type; `spec(...)` adds what the type
cannot say (range, rounding, the vocabulary it is drawn from, array sizes).
trackgrade/document.py derives the served OpenAPI schema and the document
checker from these, so a new field is written here once.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace

from trackgrade.engine.features import BAND_NAMES
from trackgrade.musical_keys import SCALES
from trackgrade.model_fields import document_fields, json_ready, pct, spec, unit
from trackgrade.status import DIAGNOSIS_STATUSES

FEEDBACK_TYPES = ("warn", "tip", "pass")
FEEDBACK_CATEGORIES = ("frequency", "mix", "loudness", "dynamics", "stereo", "rhythm",
                       "structure", "key", "genre", "file")
RESULT_FROM = "score"      # Analysis fields from this one on exist only on a complete analysis


@dataclass(frozen=True)
class Grade:
    letter: str = spec(choices="grade_letters")
    label: str = spec()


@dataclass(frozen=True)
class Scores:
    hit_potential: int = pct(description="the headline score (equals `score`)")
    danceability: int = pct()
    mix_quality: int = pct()
    frequency_balance: int = pct()
    energy: int = pct()
    structure: int = pct()


@dataclass(frozen=True)
class TempoAlternative:
    bpm: float = spec(lo=0, hi=400)
    relation: str = spec(choices="tempo_relations")
    confidence: float = unit()

    @classmethod
    def from_reading(cls, reading) -> "TempoAlternative":
        """From an engine `TempoReading` (rounded for the document)."""
        return cls(bpm=round(float(reading.bpm), 1), relation=reading.relation,
                   confidence=round(min(max(float(reading.confidence), 0.0), 1.0), 2))


@dataclass(frozen=True)
class Tempo:
    bpm: float = spec(lo=0, hi=300, decimals=1)
    regularity: float = unit()
    confidence: float = unit(default=0.0, description="how clearly one steady pulse is present")
    alternatives: tuple[TempoAlternative, ...] = spec(default=(), max_items=3)


@dataclass(frozen=True)
class KeyAlternative:
    key: str = spec(choices="tonics")
    scale: str = spec(choices=SCALES)
    camelot: str = spec()
    open_key: str = spec()
    confidence: float = unit()


@dataclass(frozen=True)
class KeyResult:
    key: str = spec(choices="tonics")
    scale: str = spec(choices=SCALES)
    camelot: str = spec()
    open_key: str = spec(description="Open Key notation: C major 1d, A minor 1m")
    confidence: float = unit()
    alternatives: tuple[KeyAlternative, ...] = spec(default=(), max_items=2)


@dataclass(frozen=True)
class GenreAlternative:
    key: str = spec(choices="genre_keys")
    name: str = spec()
    confidence: float = unit(description="calibrated like genre.confidence")


@dataclass(frozen=True)
class GenreResult:
    detected: str = spec(choices="genre_keys")
    name: str = spec()
    confidence: float = unit(description="calibrated: at 0.6 or more the family is right at least "
                                         "9 times in 10; under 0.5 the target is `electronic`")
    target: str = spec(default="", choices="genre_targets",
                       description="the profile the scores were computed against: a genre key, "
                                   "`reference`, or `electronic` (no clear family)")
    alternatives: tuple[GenreAlternative, ...] = spec(default=(), max_items=2)


@dataclass(frozen=True)
class FrequencyBands:
    sub_bass: float = spec(lo=0, hi=100, decimals=2)
    bass: float = spec(lo=0, hi=100, decimals=2)
    low_mid: float = spec(lo=0, hi=100, decimals=2)
    mid: float = spec(lo=0, hi=100, decimals=2)
    upper_mid: float = spec(lo=0, hi=100, decimals=2)
    high: float = spec(lo=0, hi=100, decimals=2)
    air: float = spec(lo=0, hi=100, decimals=2)

    @classmethod
    def from_mapping(cls, values) -> "FrequencyBands":
        return cls(**{name: float(values[name]) for name in BAND_NAMES})


@dataclass(frozen=True)
class BandLevels:
    """Each band's long-term level in dB re a full-scale sine in one channel."""
    sub_bass: float = spec(lo=-120, hi=30, decimals=2)
    bass: float = spec(lo=-120, hi=30, decimals=2)
    low_mid: float = spec(lo=-120, hi=30, decimals=2)
    mid: float = spec(lo=-120, hi=30, decimals=2)
    upper_mid: float = spec(lo=-120, hi=30, decimals=2)
    high: float = spec(lo=-120, hi=30, decimals=2)
    air: float = spec(lo=-120, hi=30, decimals=2)

    @classmethod
    def from_mapping(cls, values) -> "BandLevels":
        return cls(**{name: float(values[name]) for name in BAND_NAMES})


@dataclass(frozen=True)
class Frequency:
    bands: FrequencyBands
    ideal: FrequencyBands
    centroid_hz: float = spec(lo=0, hi=24000)
    score: int = pct()
    levels_db: BandLevels | None = spec(
        default=None, description="each band's long-term level, dB re a full-scale sine "
                                  "(absolute: a +3 dB gain raises every band by 3)")


@dataclass(frozen=True)
class Mix:
    loudness_lufs: float = spec(lo=-120, hi=10, decimals=1)
    dynamic_range_db: float = spec(lo=0, hi=100)
    dynamic_complexity: float = spec(lo=0, hi=100)
    crest_factor_db: float = spec(lo=0, hi=200)
    peak_dbfs: float = spec(lo=-200, hi=30)
    stereo_width: float = unit()
    stereo_correlation: float = spec(lo=-1, hi=1)
    clipping_pct: float = spec(lo=0, hi=100)
    score: int = pct()


@dataclass(frozen=True)
class StructureSection:
    start: float = spec(lo=0)
    end: float = spec(lo=0)
    label: str = spec(choices="section_labels")
    energy: int = pct()


@dataclass(frozen=True)
class Content:
    """What the audio is (CONTRACT.md section 6), decided before any judgement."""
    kind: str = spec(choices="content_kinds",
                     description="mix, drums, bass, harmony, lead, texture or one_shot")
    confidence: float = unit(decimals=2, description="calibrated: at 0.6 or more the kind is "
                                                     "right at least 9 times in 10")
    part: bool = spec(description="true when kind is not `mix` or the audio is shorter than 60 s: "
                                  "judged as a part (no full-mix band, master-bus or loudness-"
                                  "target advice; one section `part`; structure not in score)")


@dataclass(frozen=True)
class StructureResult:
    sections: tuple[StructureSection, ...] = spec(min_items=1)
    score: int = pct()
    judged: bool = spec(default=True, description="`not content.part`: false for a part, whose "
                        "arrangement is not judged and whose structure pillar is not in score")


@dataclass(frozen=True)
class DanceabilityBreakdown:
    """The parts of the danceability pillar; `weight` is each part's share of it
    (grading.scores.DANCE_WEIGHTS reads them from here)."""
    tempo_fitness: int = pct(weight=0.15)
    beat_strength: int = pct(weight=0.20)
    rhythmic_energy: int = pct(weight=0.15)
    bass_presence: int = pct(weight=0.20)
    groove_clarity: int = pct(weight=0.15)
    engine_dance: int = pct(weight=0.15)


@dataclass(frozen=True)
class Danceability:
    breakdown: DanceabilityBreakdown
    score: int = pct()


@dataclass(frozen=True)
class Energy:
    score: int = pct()
    rms_mean: float = spec(lo=0, hi=2)
    onset_rate: float = spec(lo=0, hi=100)


@dataclass(frozen=True)
class Diagnosis:
    status: str = spec(choices=DIAGNOSIS_STATUSES,
                       description="pending (template) or ready (enhanced)")
    summary: str = spec()
    frequency: str | None = spec()
    mix: str | None = spec()
    danceability: str | None = spec()


@dataclass(frozen=True)
class FeedbackItem:
    type: str = spec(choices=FEEDBACK_TYPES)
    category: str = spec(choices=FEEDBACK_CATEGORIES)
    text: str = spec()


@dataclass(frozen=True)
class PlatformGain:
    """What one streaming platform's loudness normalisation does to the track."""
    platform: str = spec(choices="platforms")
    reference_lufs: float | None = spec(lo=-40, hi=0,
                                        description="null: the platform does not normalise")
    gain_db: float = spec(lo=-200, hi=200, decimals=1, description="negative: turned down")
    peak_after_gain_dbtp: float = spec(lo=-400, hi=200, decimals=1)
    outcome: str = spec(choices="platform_outcomes")


@dataclass(frozen=True)
class MonoBand:
    correlation: float = spec(lo=-1, hi=1, description="left against right within the band")
    mono_loss_db: float = spec(lo=0, hi=60, decimals=1,
                               description="how much quieter the band is summed to mono")


@dataclass(frozen=True)
class MonoBands:
    sub_bass: MonoBand
    bass: MonoBand
    low_mid: MonoBand
    mid: MonoBand
    upper_mid: MonoBand
    high: MonoBand
    air: MonoBand


@dataclass(frozen=True)
class MonoCheck:
    correlation: float = spec(lo=-1, hi=1)
    bands: MonoBands
    low_end_mono: bool = spec(description="sub_bass and bass each lose less than 1 dB")


@dataclass(frozen=True)
class CodecCheck:
    codec: str = spec(choices="codecs")
    bitrate_kbps: int = spec(lo=1, hi=1000)
    true_peak_dbtp: float = spec(lo=-200, hi=50, decimals=1,
                                 description="after an in-memory encode and decode")
    true_peak_rise_db: float = spec(lo=-200, hi=200, decimals=1,
                                    description="over the original's true peak")
    clips: bool = spec(description="passes 0 dBTP")


@dataclass(frozen=True)
class Delivery:
    """CONTRACT.md section 5, "Delivery checks"."""
    platforms: tuple[PlatformGain, ...] = spec(min_items=7, max_items=7)
    mono: MonoCheck
    codecs: tuple[CodecCheck, ...] | None = spec(
        default=None, description="null unless a codec preview was asked for")


@dataclass(frozen=True)
class Extras:
    """What the narrative, the terminal screen and the HTML report use beside
    the document (never serialised into it). The top-level facts are typed;
    nested values are JSON-safe: `loudness_curve` {"hop_s", "short_term_lufs"},
    `energy_curve` {"hop_s", "values"}, `targets` {"loudness_lufs", "true_peak_max_dbtp",
    "crest_db", "lra_lu", "bpm_range", "structure", "width"}, `pillars` {pillar: parts
    or penalties}, `headline_penalties` {name: points}. `get(name, default)` reads a
    field by name (templates); `to_dict()` is the JSON form."""
    truncated: bool = False
    declared_duration_s: float | None = None
    decoder_notes: int = 0                   # damaged MP3 frames the decoder complained about
    sample_rate: int = 0
    channels: int = 2
    container: str = ""
    integrated_lufs: float | None = None
    true_peak_dbtp: float | None = None
    sample_peak_dbfs: float | None = None
    loudness_range_lu: float | None = None
    loudness_curve: dict | None = None
    energy_curve: dict | None = None
    beat_strength: float | None = None
    tempo_confidence: float | None = None
    tempo_salient: bool = True
    genre_candidates: tuple = ()             # ({"key", "name", "score"}, ...) best first
    subgenre: str | None = None
    target_name: str | None = None           # the profile the scores used, e.g. "Deep House"
    references: tuple[str, ...] = ()         # names of the reference tracks, if any
    targets: dict | None = None
    pillars: dict = field(default_factory=dict)
    headline_penalties: dict = field(default_factory=dict)
    noise_floor_db: float | None = None
    low_rolloff_hz: float | None = None
    electronic_fit: float | None = None
    electronic: bool = True                  # False: no electronic profile fits
    timing_spread_ms: float | None = None    # onsets off the beat grid, when a pulse carries it
    loudness_spread_lu: float | None = None
    section_loudness_lufs: tuple = ()

    def get(self, name: str, default=None):
        """The field `name`, or `default` when it is unset (None) or not a field."""
        value = getattr(self, name, None) if name in _EXTRAS_FIELDS else None
        return default if value is None else value

    def __getitem__(self, name: str):
        if name not in _EXTRAS_FIELDS:
            raise KeyError(name)
        return getattr(self, name)

    def to_dict(self) -> dict:
        return asdict(self)


_EXTRAS_FIELDS = frozenset(f.name for f in fields(Extras))


@dataclass(frozen=True)
class Analysis:
    """The library's part of an Analysis document (spec 2.1). The document
    adds `diagnosis_status` (the diagnosis's status) after `mastering_status`."""
    file_name: str = spec()
    mastering_status: str = spec(choices="mastering_statuses")
    duration_seconds: float = spec(lo=0, hi=20 * 60 + 1)
    score: int = pct(description="the headline hit-potential score")
    grade: Grade
    scores: Scores
    tempo: Tempo
    key: KeyResult | None = spec(description="null for drums only, noise and silence")
    genre: GenreResult
    frequency: Frequency
    mix: Mix
    structure: StructureResult
    danceability: Danceability
    energy: Energy
    diagnosis: Diagnosis
    feedback: tuple[FeedbackItem, ...] = spec()
    delivery: Delivery | None = spec(
        default=None, description="delivery checks (CONTRACT.md section 5); null only in "
                                  "documents of versions before them")
    content: Content | None = spec(
        default=None, description="what the audio is (CONTRACT.md section 6); null only in "
                                  "documents of versions before it")
    extras: Extras = field(default_factory=Extras, compare=False, metadata={"document": False})
    """Not part of the document: curves and facts the report and the
    narrative use (see `Extras`)."""

    @property
    def diagnosis_status(self) -> str:
        return self.diagnosis.status

    def to_dict(self) -> dict:
        """The document fields, JSON-ready, in spec order."""
        doc = {}
        for f in document_fields(Analysis):
            doc[f.name] = json_ready(getattr(self, f.name))
            if f.name == "mastering_status":
                doc["diagnosis_status"] = self.diagnosis.status
        return doc

    def with_diagnosis(self, diagnosis: Diagnosis) -> "Analysis":
        return replace(self, diagnosis=diagnosis)
