"""The Analysis document of spec section 2, as frozen dataclasses.

`Analysis` holds what the library computes (scores, measurements, words).
The server adds its own envelope fields (`object`, `id`, `status`,
`livemode`, `external_id`, `created_at`, `completed_at`, `error`) around
`Analysis.to_dict()`; the CLI prints `to_dict()` as it is.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields, replace

from trackgrade.engine.features import BAND_NAMES


@dataclass(frozen=True)
class Grade:
    letter: str
    label: str


@dataclass(frozen=True)
class Scores:
    hit_potential: int
    danceability: int
    mix_quality: int
    frequency_balance: int
    energy: int
    structure: int


@dataclass(frozen=True)
class TempoAlternative:
    bpm: float
    relation: str                    # half, double, two_thirds, three_halves, ...
    confidence: float

    @classmethod
    def from_reading(cls, reading) -> "TempoAlternative":
        """From an engine `TempoReading` (rounded for the document)."""
        return cls(bpm=round(float(reading.bpm), 1), relation=reading.relation,
                   confidence=round(min(max(float(reading.confidence), 0.0), 1.0), 2))


@dataclass(frozen=True)
class Tempo:
    bpm: float
    regularity: float
    confidence: float = 0.0          # how clearly one steady pulse is present
    alternatives: tuple[TempoAlternative, ...] = ()


@dataclass(frozen=True)
class KeyAlternative:
    key: str
    scale: str
    camelot: str
    open_key: str
    confidence: float


@dataclass(frozen=True)
class KeyResult:
    key: str
    scale: str
    camelot: str
    open_key: str                    # Open Key notation: C major 1d, A minor 1m
    confidence: float
    alternatives: tuple[KeyAlternative, ...] = ()


@dataclass(frozen=True)
class GenreResult:
    detected: str
    name: str
    confidence: float
    target: str = ""                 # the profile the scores used: a genre key or "reference"


@dataclass(frozen=True)
class FrequencyBands:
    sub_bass: float
    bass: float
    low_mid: float
    mid: float
    upper_mid: float
    high: float
    air: float

    @classmethod
    def from_mapping(cls, values) -> "FrequencyBands":
        return cls(**{name: float(values[name]) for name in BAND_NAMES})


@dataclass(frozen=True)
class Frequency:
    bands: FrequencyBands
    ideal: FrequencyBands
    centroid_hz: float
    score: int
    levels_db: FrequencyBands | None = None   # each band's long-term level, dB re full scale


@dataclass(frozen=True)
class Mix:
    loudness_lufs: float
    dynamic_range_db: float
    dynamic_complexity: float
    crest_factor_db: float
    peak_dbfs: float
    stereo_width: float
    stereo_correlation: float
    clipping_pct: float
    score: int


@dataclass(frozen=True)
class StructureSection:
    start: float
    end: float
    label: str
    energy: int


@dataclass(frozen=True)
class StructureResult:
    sections: tuple[StructureSection, ...]
    score: int


@dataclass(frozen=True)
class DanceabilityBreakdown:
    tempo_fitness: int
    beat_strength: int
    rhythmic_energy: int
    bass_presence: int
    groove_clarity: int
    engine_dance: int


@dataclass(frozen=True)
class Danceability:
    breakdown: DanceabilityBreakdown
    score: int


@dataclass(frozen=True)
class Energy:
    score: int
    rms_mean: float
    onset_rate: float


@dataclass(frozen=True)
class Diagnosis:
    status: str                      # "pending" (template) | "ready" (enhanced)
    summary: str
    frequency: str | None
    mix: str | None
    danceability: str | None


@dataclass(frozen=True)
class FeedbackItem:
    type: str                        # "warn" | "tip" | "pass"
    category: str
    text: str


@dataclass(frozen=True)
class PlatformGain:
    """What one streaming platform's loudness normalisation does to the track."""
    platform: str                    # spotify, apple_music, youtube, ...
    reference_lufs: float | None     # None: the platform does not normalise
    gain_db: float                   # negative: turned down
    peak_after_gain_dbtp: float
    outcome: str                     # turned_down | unchanged | turned_up | turned_up_limited


@dataclass(frozen=True)
class MonoBand:
    correlation: float               # left against right within the band, -1..1
    mono_loss_db: float              # how much quieter the band is summed to mono


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
    correlation: float
    bands: MonoBands
    low_end_mono: bool               # sub_bass and bass each lose less than 1 dB


@dataclass(frozen=True)
class CodecCheck:
    codec: str                       # mp3 | aac | opus
    bitrate_kbps: int
    true_peak_dbtp: float            # after an in-memory encode and decode
    true_peak_rise_db: float         # over the original's true peak
    clips: bool                      # passes 0 dBTP


@dataclass(frozen=True)
class Delivery:
    """CONTRACT.md section 5, "Delivery checks"."""
    platforms: tuple[PlatformGain, ...]
    mono: MonoCheck
    codecs: tuple[CodecCheck, ...] | None = None   # None unless a codec preview was asked for


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
    """The library's part of an Analysis document (spec 2.1)."""
    file_name: str
    mastering_status: str
    duration_seconds: float
    score: int
    grade: Grade
    scores: Scores
    tempo: Tempo
    key: KeyResult | None
    genre: GenreResult
    frequency: Frequency
    mix: Mix
    structure: StructureResult
    danceability: Danceability
    energy: Energy
    diagnosis: Diagnosis
    feedback: tuple[FeedbackItem, ...]
    delivery: Delivery | None = None
    extras: Extras = field(default_factory=Extras, compare=False)
    """Not part of the document: curves and facts the report and the
    narrative use (see `Extras`)."""

    @property
    def diagnosis_status(self) -> str:
        return self.diagnosis.status

    def to_dict(self) -> dict:
        """The document fields, JSON-ready, in spec order."""
        doc = asdict(self)
        doc.pop("extras")
        doc["diagnosis_status"] = self.diagnosis.status
        doc["structure"]["sections"] = list(doc["structure"]["sections"])
        doc["feedback"] = list(doc["feedback"])
        doc["tempo"]["alternatives"] = list(doc["tempo"]["alternatives"])
        if doc["key"] is not None:
            doc["key"]["alternatives"] = list(doc["key"]["alternatives"])
        if doc["delivery"] is not None:
            delivery = doc["delivery"]
            delivery["platforms"] = list(delivery["platforms"])
            if delivery["codecs"] is not None:
                delivery["codecs"] = list(delivery["codecs"])
        order = ("file_name", "mastering_status", "diagnosis_status", "duration_seconds",
                 "score", "grade", "scores", "tempo", "key", "genre", "frequency", "mix",
                 "structure", "danceability", "energy", "diagnosis", "feedback", "delivery")
        return {name: doc[name] for name in order}

    def with_diagnosis(self, diagnosis: Diagnosis) -> "Analysis":
        return replace(self, diagnosis=diagnosis)


def analysis_from_dict(doc: dict) -> Analysis:
    """An `Analysis` rebuilt from its JSON document (`to_dict()`, or a
    complete server document: the server's own fields are ignored), so a
    remote analysis renders like a local one. Fields are read by the
    dataclasses' own type hints, so new fields need no change here."""
    return _build(Analysis, doc)


def _build(kind, value):
    import types
    import typing
    from dataclasses import fields, is_dataclass

    if value is None:
        return None
    origin = typing.get_origin(kind)
    if origin in (typing.Union, types.UnionType):
        options = [a for a in typing.get_args(kind) if a is not type(None)]
        return _build(options[0], value) if len(options) == 1 else value
    if origin is tuple:
        item = typing.get_args(kind)[0]
        return tuple(_build(item, v) for v in value)
    if isinstance(kind, type) and is_dataclass(kind):
        hints = typing.get_type_hints(kind)
        return kind(**{f.name: _build(hints[f.name], value[f.name]) for f in fields(kind)
                       if f.init and f.name in value})
    if kind is float and isinstance(value, int):
        return float(value)
    return value
