"""The rhythm pattern: where in the bar each drum band hits, and the cues
that tell the electronic families apart (research/rhythm-patterns.md).

From the shared short STFT, reduced to a handful of bands (`short_reductions`:
no extra FFT), the onset strength (log-energy rise) of three drum bands - kick
(30-180 Hz), snare and clap (180-2500 Hz, beyond the kick band's rise), hats
(5-16 kHz) - is read at the
sixteenths of the beat grid and averaged over the bars: a (3, 16) matrix
(`Groove.pattern`). The bar starts on the beat with the most kick and the
least snare. `groove_cues` turns the matrix (and the sub band's level at each
sixteenth) into a few named numbers:

* `kick_on_beats`: how evenly the kick sits on all four beats, the weakest
  beat's kick over the strongest (1: four on the floor);
* `kick_off_beats`: the strongest kick between the beats over the strongest on
  them (breaks, two-step and drum & bass put kicks between the beats);
* `snare_one_per_bar`: the strongest beat's snare over the next strongest,
  log2 (half time, one hit on beat 3: high; a backbeat or a snare on every
  beat: near 0);
* `snare_off_beats`: the strongest snare between the beats over the strongest
  on them, capped at 2 (a clap on the beats, house and trance: near 0; the
  dembow of reggaeton, snares on the 'a' of 1 and the 'and' of 2: above 1);
* `snare_backbeat`: how much the snare alternates from beat to beat (the
  two-beat component of the four beats' snare, over their sum: a backbeat on
  2 and 4 is 1, the same snare on every beat 0, one hit per bar 0.5);
* `hat_off_beat`: hats on the off-beat eighths over hats on the beats, log2;
* `hat_sixteenths`: hats on the odd sixteenths over the even ones, log2;
* `bass_off_beat`: the sub band's level on the off-beat eighths minus on the
  beats, dB (a rolling, off-beat or reverse bass ducked under each kick);
* `bar_repeat`: how alike the bars are (mean correlation of each bar's pattern
  with the average pattern: a loop or a sequencer 1, played or varied less);
* `hat_swing`: how late the hats' hits on the odd sixteenths land against
  those on the even ones, as a share of a sixteenth (`swing`: a straight
  techno or trance grid near 0, house's shuffle 0.1-0.3).

Every function is pure: arrays in, numbers out.
"""

from __future__ import annotations

import numpy as np

from trackgrade.engine.features import Groove
from trackgrade.engine.frames import Reduction, ShortFrames, segment_sums

# the reduction's segment edges, Hz: sub, kick punch, snare/clap body, presence, hats, the rest
_EDGES_HZ = (30.0, 90.0, 180.0, 2500.0, 5000.0, 16000.0)
DRUM_BANDS = ("kick", "snare", "hats")
STEPS = 16                      # sixteenths of a 4/4 bar
_MIN_BARS = 1                   # a pattern needs one whole bar
BAND_RANGE_DB = 30.0            # a band's level is read down to this far under its loud level


def _bins(freqs: np.ndarray) -> tuple[int, ...]:
    top = float(freqs[-1])
    hz = [h for h in _EDGES_HZ if h < top]
    return tuple(int(b) for b in np.unique(np.searchsorted(freqs, hz)))


def short_reductions(freqs: np.ndarray) -> list[Reduction]:
    """What `measure_groove` reads of a short STFT with these bins."""
    return [Reduction(starts=_bins(freqs))]


def band_levels_db(spec: ShortFrames) -> dict[str, np.ndarray]:
    """Per frame, dB re the band's own loud level (its 95th percentile), floored
    BAND_RANGE_DB under it (so leakage far under a band's hits is no onset):
    `sub` (30-90 Hz), `kick` (30-180), `snare` (180-2500), `hats` (5-16 kHz;
    absent at low sample rates)."""
    starts = _bins(spec.freqs)
    power = segment_sums(spec, starts).astype(np.float64)
    tiny = max(float(power.sum(axis=1).max()) if power.size else 0.0, 1e-20) * 1e-10

    def db(x: np.ndarray) -> np.ndarray:
        ref = max(float(np.percentile(x, 95)) if x.size else 0.0, tiny)
        return 10.0 * np.log10(np.maximum(x, ref * 10.0 ** (-BAND_RANGE_DB / 10.0)) / ref)

    seg = {hz: power[:, i] for i, hz in enumerate(_EDGES_HZ[:power.shape[1]])}
    out = {"sub": db(seg[30.0])}
    if 90.0 in seg:
        out["kick"] = db(seg[30.0] + seg[90.0])
    if 180.0 in seg:
        out["snare"] = db(seg[180.0])
    if 5000.0 in seg:
        out["hats"] = db(seg[5000.0])
    return out


def onset_strength(level_db: np.ndarray) -> np.ndarray:
    """Half-wave rectified rise of a band's level, dB per frame."""
    return np.maximum(np.diff(level_db, prepend=level_db[:1]), 0.0)


def sixteenth_frames(beat_times: np.ndarray, t0: float, hop_s: float) -> np.ndarray:
    """Frame positions (float) of the sixteenths of a beat grid: four per beat,
    interpolated between beats; the last beat's four use the last period."""
    beats = np.asarray(beat_times, dtype=np.float64)
    if len(beats) < 2:
        return np.zeros(0)
    ends = np.append(beats[1:], beats[-1] + (beats[-1] - beats[-2]))
    sixteenths = beats[:, None] + (ends - beats)[:, None] * (np.arange(4) / 4.0)[None, :]
    return (sixteenths.ravel() - t0) / hop_s


def sample_at(curve: np.ndarray, frames: np.ndarray, reach: int = 1) -> np.ndarray:
    """The largest value of `curve` within +-`reach` frames of each position
    (0 outside the curve)."""
    n = len(curve)
    idx = np.round(frames).astype(int)[:, None] + np.arange(-reach, reach + 1)[None, :]
    vals = np.where((idx >= 0) & (idx < n), curve[np.clip(idx, 0, max(n - 1, 0))], 0.0)
    return vals.max(axis=1)


def bar_matrix(values: np.ndarray) -> np.ndarray:
    """(bars, STEPS) of the whole bars in a run of sixteenth values."""
    bars = len(values) // STEPS
    return values[:bars * STEPS].reshape(bars, STEPS)


def downbeat_shift(kick: np.ndarray, snare: np.ndarray) -> int:
    """Sixteenths (0, 4, 8 or 12) to the beat that starts the bar: the beat with
    the most kick against snare (patterns are (STEPS,) means over bars)."""
    k = kick / max(float(kick.max()), 1e-9)
    s = snare / max(float(snare.max()), 1e-9)
    return int(np.argmax([k[b] - s[b] for b in (0, 4, 8, 12)])) * 4


def _log2_ratio(a: float, b: float) -> float:
    """log2(a / b), within +-3 (a band that is silent at one position is no more telling)."""
    return float(np.clip(np.log2((a + 1e-2) / (b + 1e-2)), -3.0, 3.0))


def groove_cues(pattern: dict[str, np.ndarray], sub_db: np.ndarray, repeat: float) -> dict[str, float]:
    """The named cues (see the module doc) of bar-aligned (STEPS,) patterns per
    drum band and the sub band's mean level per sixteenth (dB)."""
    beats, offbeats = np.array([0, 4, 8, 12]), np.array([2, 6, 10, 14])
    between = np.setdiff1d(np.arange(STEPS), beats)
    kick, snare = pattern["kick"], pattern["snare"]
    kick_top = max(float(kick[beats].max()), 1e-9)
    on_beat = snare[beats]
    ranked = np.sort(on_beat)[::-1]
    cues = {
        "kick_on_beats": float(kick[beats].min() / kick_top),
        "kick_off_beats": float(min(kick[between].max() / kick_top, 2.0)),
        "snare_one_per_bar": _log2_ratio(float(ranked[0]), float(ranked[1])),
        "snare_off_beats": float(min(snare[between].max() / max(float(on_beat.max()), 1e-9), 2.0)),
        "snare_backbeat": float(abs(on_beat[0] - on_beat[1] + on_beat[2] - on_beat[3])
                                / max(float(on_beat.sum()), 1e-9)),
        "bass_off_beat": float(sub_db[offbeats].mean() - sub_db[beats].mean()),
        "bar_repeat": float(repeat),
    }
    hats = pattern.get("hats")
    if hats is not None and float(hats.max()) > 0:
        cues["hat_off_beat"] = _log2_ratio(float(hats[offbeats].mean()), float(hats[beats].mean()))
        cues["hat_sixteenths"] = _log2_ratio(float(hats[1::2].mean()), float(hats[0::2].mean()))
    return {k: round(v, 4) for k, v in cues.items()}


SWING_REACH = 0.45             # a hit belongs to the sixteenth within this share of a sixteenth
SWING_MIN_MASS = 0.1           # the odd sixteenths need this share of the even ones' hat flux


def swing(flux: np.ndarray, frames: np.ndarray) -> float | None:
    """How late the onsets of `flux` on the odd sixteenths (frame positions
    `frames`, consecutive sixteenths from a beat) land against those on the
    even ones, as a share of a sixteenth: each position's flux-weighted mean
    offset within +-SWING_REACH of it (the curve read between frames), the
    odd ones' minus the even ones' (so a constant latency cancels). None when
    the odd sixteenths hold too little."""
    if len(frames) < 8:
        return None
    span = np.diff(frames, append=frames[-1] + (frames[-1] - frames[-2]))
    u = np.linspace(-SWING_REACH, SWING_REACH, 10)
    vals = np.interp(frames[:, None] + span[:, None] * u[None, :], np.arange(len(flux)), flux,
                     left=0.0, right=0.0)
    mass = vals.sum(axis=1)
    odd = np.arange(len(frames)) % 2 == 1
    m_odd, m_even = float(mass[odd].sum()), float(mass[~odd].sum())
    if m_even <= 0 or m_odd < SWING_MIN_MASS * m_even:
        return None
    late = (vals * u[None, :]).sum(axis=1)
    return float(late[odd].sum() / m_odd - late[~odd].sum() / m_even)


def bar_repeat(bars: np.ndarray) -> float:
    """Mean correlation of each bar's (bands x STEPS) pattern with the average; 1 for one bar."""
    if bars.shape[0] < 2:
        return 1.0
    flat = bars.reshape(bars.shape[0], -1)
    mean = flat.mean(axis=0)
    a = flat - flat.mean(axis=1, keepdims=True)
    b = mean - mean.mean()
    den = np.sqrt((a * a).sum(axis=1) * (b * b).sum()) + 1e-12
    return float(np.clip(((a @ b) / den).mean(), -1.0, 1.0))


def measure_groove(spec: ShortFrames, beat_times: np.ndarray, *, tempo_salient: bool = True) -> Groove | None:
    """The bar pattern and its cues; None without a pulse or a whole bar of beats."""
    if not tempo_salient or len(beat_times) < 4 * _MIN_BARS + 1:
        return None
    levels = band_levels_db(spec)
    if "snare" not in levels:
        return None
    t0 = 0.5 * spec.n_fft / spec.sample_rate + 0.7 * spec.hop_s   # frame centre + flux latency
    frames = sixteenth_frames(beat_times, t0, spec.hop_s)
    drums = [b for b in DRUM_BANDS if b in levels]
    flux = {b: onset_strength(levels[b]) for b in drums}
    # a kick's click rises in the snare band too: a snare is a rise beyond the kick band's
    flux["snare"] = np.maximum(flux["snare"] - flux["kick"], 0.0)
    runs = {b: bar_matrix(sample_at(flux[b], frames)) for b in drums}
    sub_run = bar_matrix(sample_at(levels["sub"], frames, reach=0))
    if runs["kick"].shape[0] < _MIN_BARS:
        return None
    # each band's strength relative to its mean over the track: patterns compare positions
    scale = {b: max(float(runs[b].mean()), 1e-9) for b in drums}
    means = {b: runs[b].mean(axis=0) / scale[b] for b in drums}
    shift = downbeat_shift(means["kick"], means["snare"])
    pattern = {b: np.roll(means[b], -shift) for b in drums}
    sub = np.roll(sub_run.mean(axis=0), -shift)
    stacked = np.stack([np.roll(runs[b], -shift, axis=1) / scale[b] for b in drums], axis=1)
    cues = groove_cues(pattern, sub, bar_repeat(stacked))
    late = swing(flux["hats"], frames) if "hats" in flux else None
    if late is not None:
        cues["hat_swing"] = round(late, 4)
    matrix = np.stack([pattern.get(b, np.zeros(STEPS)) for b in DRUM_BANDS])
    return Groove(pattern=np.round(matrix, 4), cues=cues, bars=int(runs["kick"].shape[0]))
