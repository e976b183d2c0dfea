"""Frozen dataclasses for everything the engine measures.

`Features` is the engine's output and the grading layer's input. Curves are
numpy arrays (dataclasses with arrays use ``eq=False``); everything else is a
plain number or string. Units are in the field names or the comments.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

BAND_NAMES = ("sub_bass", "bass", "low_mid", "mid", "upper_mid", "high", "air")
# CONTRACT.md: band edges in Hz, lower edge inclusive.
BAND_EDGES_HZ = ((20, 60), (60, 250), (250, 500), (500, 2000), (2000, 4000),
                 (4000, 8000), (8000, 20000))
NOISE_FLOOR_FROM_HZ = 5000.0     # the noise floor is the power above this (noise.py)
SILENCE_LUFS = -70.0             # floor for every loudness value (BS.1770's absolute gate)
SECTION_LABELS = ("intro", "buildup", "drop", "breakdown", "outro")
# CONTRACT.md section 6: the club labels are for electronic mixes only; a part
# has one section labelled PART_LABEL, other music labels every one PLAIN_LABEL
PART_LABEL, PLAIN_LABEL = "part", "section"
DOCUMENT_SECTION_LABELS = SECTION_LABELS + (PART_LABEL, PLAIN_LABEL)
# CONTRACT.md section 4: how a tempo alternative relates to the reported tempo
# (alternative bpm = reported bpm x ratio).
TEMPO_RELATIONS = {"half": 0.5, "double": 2.0, "two_thirds": 2.0 / 3.0, "three_halves": 1.5,
                   "three_quarters": 0.75, "four_thirds": 4.0 / 3.0}


@dataclass(frozen=True, eq=False)
class DecodedAudio:
    """Decoded samples, shape (frames, channels), float32 in [-1, 1]."""
    samples: np.ndarray
    sample_rate: int
    container: str            # "wav", "aiff", "flac", "mp3"
    subtype: str              # soundfile subtype, e.g. "PCM_16", "FLOAT"
    truncated: bool = False   # header promised more audio than was present
    declared_duration_s: float | None = None
    decoder_notes: int = 0    # damaged-frame complaints of the MP3 decoder (resyncs, bad frames)
    native: NativeMeasures | None = None   # set when `samples` are resampled to the analysis
                                           # rate: what was measured at the native rate

    @property
    def channels(self) -> int:
        return int(self.samples.shape[1])

    @property
    def frames(self) -> int:
        return int(self.samples.shape[0])

    @property
    def duration_s(self) -> float:
        if self.native is not None:
            return self.native.frames / float(self.native.sample_rate)
        return self.frames / float(self.sample_rate)


@dataclass(frozen=True, eq=False)
class NativeMeasures:
    """What is measured at a file's native rate while its samples stream past,
    when the analysis runs at a lower rate (engine.high_rate): the loudness and
    peaks, clipping, and the channel Gram matrix (stereo, RMS)."""
    sample_rate: int
    frames: int
    loudness: Loudness
    gram: tuple               # stereo.channel_gram of the native samples: (products, sums, frames)
    clipping_pct: float


@dataclass(frozen=True, eq=False)
class Loudness:
    integrated_lufs: float          # BS.1770-4 gated; -70.0 floor for near-silence
    loudness_range_lu: float        # EBU Tech 3342 LRA
    true_peak_dbtp: float           # 4x oversampled, max over channels
    sample_peak_dbfs: float
    momentary_lufs: np.ndarray      # 400 ms windows, one value per `curve_hop_s`
    short_term_lufs: np.ndarray     # 3 s windows, one value per `curve_hop_s`
    curve_hop_s: float = 0.1


@dataclass(frozen=True)
class Dynamics:
    crest_factor_db: float          # sample peak over RMS, dB
    dynamic_complexity_db: float    # mean abs deviation of short-term loudness, dB
    clipping_pct: float             # % of samples (all channels) with |x| >= 0.999
    rms_dbfs: float
    rms_mean: float                 # linear RMS of the mono mix, 0..1


@dataclass(frozen=True)
class Stereo:
    width: float                    # side / (mid + side) energy, 0..1; 0 for mono
    correlation: float              # Pearson L/R, -1..1; 1.0 for mono


@dataclass(frozen=True)
class MonoFold:
    """What summing the channels to mono does to each band (engine.mono)."""
    correlation: float              # Pearson L/R over the whole file
    band_correlation: dict          # BAND_NAMES -> L/R correlation within the band, -1..1
    band_loss_db: dict              # BAND_NAMES -> dB quieter in mono, >= 0

    @classmethod
    def of_mono(cls) -> "MonoFold":
        """A one-channel file: nothing to lose, every band correlation 1."""
        return cls(correlation=1.0, band_correlation={name: 1.0 for name in BAND_NAMES},
                   band_loss_db={name: 0.0 for name in BAND_NAMES})


@dataclass(frozen=True)
class CodecPeak:
    """The true peak after an in-memory encode and decode (engine.codecs)."""
    codec: str                      # mp3 | aac | opus
    bitrate_kbps: int
    true_peak_dbtp: float


@dataclass(frozen=True, eq=False)
class Spectrum:
    bands_pct: dict                 # BAND_NAMES -> percent, summing to 100
    centroid_hz: float
    band_energy_over_time: np.ndarray | None = None   # (frames, 7) dB, optional
    low_rolloff_hz: float = 20.0    # where the low end starts (spectrum.low_rolloff_hz)
    band_levels_db: dict | None = None   # BAND_NAMES -> long-term level, dB re full scale


@dataclass(frozen=True)
class NoiseFloor:
    """The high-frequency floor of the quietest moments (noise.measure_noise_floor)."""
    floor_db: float                 # P5 of NOISE_FLOOR_FROM_HZ+ frame power re the mean total power, dB
    steadiness_db: float            # median - P5 of the 5 kHz+ frame power, dB (small = steady)


@dataclass(frozen=True, eq=False)
class Rhythm:
    bpm: float                      # 60-200, half/double decided for the style
    regularity: float               # 0..1
    beat_times: np.ndarray          # seconds
    onset_rate: float               # onsets per second
    beat_strength: float            # 0..1, salience of the pulse
    danceability: float             # DFA-based, 0..3 like Essentia's Danceability
    tempo_confidence: float         # 0..1
    tempo_salient: bool             # False when there is no pulse to speak of
    tempo_alternatives: tuple = ()  # tuple[TempoReading, ...], best first, at most 3
    timing_spread_ms: float | None = None   # onsets' RMS offset from a straight grid (timing.py)
    timed_onsets: int = 0           # how many onsets that spread rests on


@dataclass(frozen=True)
class TempoReading:
    """Another plausible reading of the tempo, related to `Rhythm.bpm` by
    `relation` (one of TEMPO_RELATIONS)."""
    bpm: float
    relation: str
    confidence: float               # 0..1


@dataclass(frozen=True)
class Key:
    tonic: str                      # C C# D Eb E F F# G Ab A Bb B
    scale: str                      # "major" | "minor"
    camelot: str                    # "1A".."12B"
    confidence: float               # 0..1
    alternatives: tuple = ()        # tuple[Key, ...]: up to 2 next-best keys, best first


@dataclass(frozen=True, eq=False)
class Tonality:
    key: Key | None                 # None for atonal input
    chroma: np.ndarray              # (12,) mean chroma, C first, sums to 1


@dataclass(frozen=True, eq=False)
class Groove:
    """The rhythm pattern (engine/groove.py): onset strength of the kick, snare
    and hat bands at each sixteenth of the bar, averaged over the bars and
    relative to each band's mean, and the named cues read from it."""
    pattern: np.ndarray             # (3, 16): kick, snare, hats x sixteenths, bar-aligned
    cues: dict                      # cue name -> number (groove.groove_cues)
    bars: int                       # whole bars the pattern averages


@dataclass(frozen=True)
class ContentCues:
    """What the audio is made of (engine/content.py): the cues grading/content.py
    decides `content.kind` from."""
    sustain_db: float               # median level re the loud (P95) level, dB (<= 0)
    attacks_per_s: float            # steep rises of the whole level per second
    attack_count: float             # how many steep rises in all
    layers: float                   # registers playing at once (median over frames), 0..4
    low_sustain_db: float           # the low register's median re its loud level, dB
    high_sustain_db: float          # the same for the registers above 2.5 kHz, dB
    peak_at: float                  # where the loudest frame sits, 0..1
    tail_db: float                  # the last fifth's mean level re the loudest frame, dB
    peak_share: float               # per octave 100 Hz-3.2 kHz: power share of its loudest 5 % of bins
    partials: float                 # semitones 100 Hz-2 kHz holding a partial within 30 dB of the top
    low_share: float                # sub-bass + bass share of the power, 0..1
    spread: float                   # effective number of the seven bands, 1..7
    # how many notes at once, and where (engine/voicing.py)
    monophony: float = 0.0          # share of the peaks' power in the strongest harmonic series, 0..1
    voices: float = 0.0             # harmonic series explaining most of a short frame, 0..6
    pitch_midi: float = 0.0         # median fundamental of the strongest series, MIDI
    pitch_moves: float = 0.0        # share of neighbouring short frames whose fundamental moves, 0..1
    semitone_peaks: float = 0.0     # semitones standing over both neighbours at once (long frames)
    register_midi: float = 0.0      # power-weighted mean semitone, MIDI
    bass_register: float = 0.0      # share of the semitone power under ~250 Hz, 0..1
    chroma_flux: float = 0.0        # change of the pitch-class shares between long frames, 0..1
    chroma_spread: float = 0.0      # effective number of pitch classes, 1..12
    octave_spread: float = 0.0      # effective number of octaves holding the power, 1..7
    rebound_db: float = 0.0         # the level's climb back after the first attack, dB (one hit: ~0)
    ring_share: float = 1.0         # share of the frames from the first attack within 30 dB of the loudest


@dataclass(frozen=True)
class Section:
    start: float                    # seconds
    end: float
    label: str                      # SECTION_LABELS
    energy: int                     # 0..100


@dataclass(frozen=True, eq=False)
class Structure:
    sections: tuple                 # tuple[Section, ...], contiguous, whole track
    energy_curve: np.ndarray        # 0..1 per `curve_hop_s`, for reports
    curve_hop_s: float
    novelty: np.ndarray | None = None


@dataclass(frozen=True, eq=False)
class Features:
    """Everything measured on one track."""
    duration_s: float
    sample_rate: int
    channels: int
    container: str
    truncated: bool
    loudness: Loudness
    dynamics: Dynamics
    stereo: Stereo
    spectrum: Spectrum
    rhythm: Rhythm
    tonality: Tonality
    structure: Structure
    timings_s: dict = field(default_factory=dict)   # stage -> seconds, for benchmarks
    declared_duration_s: float | None = None         # what a truncated file's header promised
    decoder_notes: int = 0                           # the MP3 decoder's damaged-frame complaints
    noise_floor: NoiseFloor | None = None            # None when not measured
    analysis_rate: int | None = None                 # the rate the spectra were taken at, when
                                                     # not `sample_rate` (engine.high_rate)
    groove: Groove | None = None                     # None without a pulse or a whole bar
    mono: MonoFold | None = None                     # None when not measured
    codecs: tuple | None = None                      # tuple[CodecPeak, ...] when previewed, else None
    content: ContentCues | None = None               # None when not measured (read as a mix)
