"""Tempo, beats and pulse from the shared short STFT.

Everything starts from a band-wise, log-compressed spectral-flux onset
envelope (`onset_envelope`, 24 log bands; the 30-160 Hz kick band kept apart).
The tempo comes from a comb over the envelope's autocorrelation at 1, 2, 4 and
8 beats, the bar (4 beats) weighing double, which makes the half/double choice
the way electronic music is counted (174 d&b, 84 downtempo), with a broad
prior and parabolic interpolation (`estimate_tempo`). The beats come from a
global period/phase fit (`track_beats`: period sharpened on autocorrelation
peaks 4/16/64 beats away, then a weighted least-squares line through the
onsets, kick side chosen on the kick band); a beat-by-beat tracker replaces
the straight grid only when the tempo really drifts. The final BPM is the
slope of the beats. Vectorised throughout; the only Python loops run over
beats or a handful of scales."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from trackgrade.engine.features import TEMPO_RELATIONS, Rhythm, TempoReading
from trackgrade.engine.frames import Reduction, ShortFrames, segment_sums
from trackgrade.engine.timing import onset_peak_times, timing_spread_ms

BPM_MIN, BPM_MAX = 60.0, 200.0
_LOOP_MAX_S = 12.0
_N_BANDS = 24
_LOW_BAND_HZ = (30.0, 160.0)


@dataclass(frozen=True, eq=False)
class Onsets:
    """The onset envelope and its parts, one value per STFT frame."""
    envelope: np.ndarray      # full-band flux, detrended, >= 0
    low: np.ndarray           # flux of the kick band (30-160 Hz), detrended, >= 0
    energy_db: np.ndarray     # frame energy in dB (for DFA and structure)
    hf_activity: float        # mean flux above 4 kHz, dB/frame: hats, snares, noise
    fps: float                # frames per second
    t0: float                 # time of frame 0's centre


@dataclass(frozen=True, eq=False)
class TempoEstimate:
    bpm: float
    confidence: float         # 0..1
    salience: float           # normalised autocorrelation at the beat lag, 0..1
    candidates: tuple         # ((bpm, score), ...) best first
    ac: np.ndarray | None = None   # the (blended) envelope autocorrelation the comb read


# ---------------------------------------------------------------- onsets

def _band_edges(freqs: np.ndarray, n_bands: int = _N_BANDS) -> np.ndarray:
    """Bin indices splitting 30 Hz..min(16 kHz, Nyquist) into log-spaced bands."""
    top = min(16000.0, float(freqs[-1]))
    hz = np.geomspace(30.0, top, n_bands + 1)
    idx = np.unique(np.searchsorted(freqs, hz))
    return idx[idx < len(freqs)]


def band_energies(spec: ShortFrames, n_bands: int = _N_BANDS) -> tuple[np.ndarray, np.ndarray]:
    """(frames, bands) summed power in log-spaced bands, and the band edges (bins)."""
    edges = _band_edges(spec.freqs, n_bands)
    bands = segment_sums(spec, edges[:-1])
    return bands.astype(np.float64, copy=False), edges


def short_reductions(freqs: np.ndarray) -> list[Reduction]:
    """What `measure_rhythm` reads of a short STFT with these bins (for
    `frames.short_reduced`)."""
    return [Reduction(starts=tuple(int(b) for b in _band_edges(freqs)[:-1]))]


def _moving_mean(x: np.ndarray, width: int) -> np.ndarray:
    width = max(1, int(width))
    if width == 1 or len(x) == 0:
        return x.copy()
    c = np.concatenate(([0.0], np.cumsum(x)))
    half = width // 2
    lo = np.clip(np.arange(len(x)) - half, 0, len(x))
    hi = np.clip(np.arange(len(x)) + half + 1, 0, len(x))
    return (c[hi] - c[lo]) / (hi - lo)


def onset_envelope(spec: ShortFrames) -> Onsets:
    """Log-compressed, band-wise spectral flux (half-wave rectified), detrended."""
    bands, edges = band_energies(spec)
    fps = 1.0 / spec.hop_s
    total = bands.sum(axis=1)
    ref = max(float(total.max()) if total.size else 0.0, 1e-12)
    # log compression relative to the loudest frame: 80 dB of range
    floor = ref * 1e-8
    # and each band at most 50 dB under its own frame: a steady tone's window
    # leakage into far bands wobbles by several dB from frame to frame, which
    # is no onset (a drone or a chord would otherwise show a "pulse")
    band_floor = np.maximum(floor / len(edges), total[:, None] * 1e-5)
    logb = np.log10(np.maximum(bands, band_floor) / ref) * 10.0
    energy_db = 10.0 * np.log10(np.maximum(total, floor) / ref)
    flux = np.diff(logb, axis=0, prepend=logb[:1])
    # rises under 0.5 dB are not onsets (a steady tone's leakage wobbles by less)
    flux -= 0.5
    np.maximum(flux, 0.0, out=flux)
    freqs = spec.freqs[edges[:-1]]
    low_mask = (freqs >= _LOW_BAND_HZ[0]) & (freqs < _LOW_BAND_HZ[1])
    full = flux.mean(axis=1)
    hi_mask = freqs >= 4000.0
    loud = energy_db > -60.0
    hf = float(flux[loud][:, hi_mask].mean()) if hi_mask.any() and loud.any() else 0.0
    low = flux[:, low_mask].mean(axis=1) if low_mask.any() else np.zeros_like(full)
    # silent frames carry no onsets: weight by frame loudness (0 below -60 dB)
    gate = np.clip((energy_db + 60.0) / 20.0, 0.0, 1.0)
    full *= gate
    low *= gate
    w = int(round(0.4 * fps))
    env = np.maximum(full - _moving_mean(full, w), 0.0)
    lowe = np.maximum(low - _moving_mean(low, w), 0.0)
    # frame centre, plus the flux's latency: an onset shows most in the frame
    # whose window has just taken it in, about 0.7 hop before it (measured)
    t0 = 0.5 * spec.n_fft / spec.sample_rate + 0.7 * spec.hop_s
    return Onsets(env, lowe, energy_db, hf, fps, t0)


def pick_onsets(env: np.ndarray, fps: float) -> np.ndarray:
    """Frame indices of onset peaks: local maxima over +-50 ms above an adaptive threshold."""
    n = len(env)
    if n < 3:
        return np.zeros(0, dtype=int)
    r = max(1, int(round(0.05 * fps)))
    pad = np.pad(env, r, mode="constant")
    win = np.lib.stride_tricks.sliding_window_view(pad, 2 * r + 1)
    local_max = win.max(axis=1)
    thresh = _moving_mean(env, int(round(1.0 * fps))) * 1.5 + 0.1 * float(np.percentile(env, 99) if n else 0)
    peaks = np.flatnonzero((env >= local_max) & (env > thresh) & (env > 0))
    if peaks.size > 1:  # plateaus: keep the first frame of each
        peaks = peaks[np.concatenate(([True], np.diff(peaks) > r))]
    return peaks


# ---------------------------------------------------------------- tempo

def _autocorr(x: np.ndarray) -> np.ndarray:
    x = x - x.mean()
    n = len(x)
    if n < 2:
        return np.zeros(max(n, 1))
    nfft = 1 << int(np.ceil(np.log2(2 * n)))
    f = np.fft.rfft(x, nfft)
    ac = np.fft.irfft(f * np.conj(f), nfft)[:n]
    if ac[0] <= 0:
        return np.zeros(n)
    # unbiased: divide by the overlap, then normalise to lag 0
    ac = ac / np.maximum(n - np.arange(n), n // 4)
    return ac / ac[0]


def _interp(ac: np.ndarray, lags: np.ndarray) -> np.ndarray:
    return np.interp(lags, np.arange(len(ac)), ac, right=0.0)


def _comb_scores(ac: np.ndarray, fps: float, bpms: np.ndarray, max_lag: float) -> np.ndarray:
    """Comb filter over the autocorrelation at 1, 2, 4 and 8 beats. Electronic
    music is in 4/4 with a pattern that repeats every bar, so the bar lag
    (4 beats) weighs double: it decides the octave (a two-step drum & bass
    bar is 4 beats at 174, not 2 at 87; a downtempo bar 4 beats at 84, not
    8 at 168). Lags beyond `max_lag` frames are left out and the weights
    renormalised."""
    lag = 60.0 * fps / bpms
    score = np.zeros_like(bpms)
    wsum = np.zeros_like(bpms)
    for k, w in ((1, 1.0), (2, 1.0), (4, 2.0), (8, 1.0)):
        ok = k * lag <= max_lag
        score += np.where(ok, w * np.maximum(_interp(ac, k * lag), 0.0), 0.0)
        wsum += np.where(ok, w, 0.0)
    return np.where(wsum > 0, score / np.maximum(wsum, 1e-9), 0.0)


def _tempo_prior(bpms: np.ndarray) -> np.ndarray:
    """A broad log-Gaussian around 125 BPM (one octave = 1.2 sigma): it only
    breaks near-ties."""
    x = np.log2(bpms / 125.0)
    return np.exp(-0.5 * (x / 0.85) ** 2)


def _loop_candidates(duration_s: float | None) -> np.ndarray:
    """Tempos at which a short clip is a whole loop of 1, 2, 4 or 8 bars of 4/4
    (sample loops are cut that way)."""
    if not duration_s or duration_s <= 0 or duration_s > _LOOP_MAX_S:
        return np.zeros(0)
    c = 60.0 * np.array([4.0, 8.0, 16.0, 32.0]) / duration_s
    return c[(c >= BPM_MIN) & (c <= BPM_MAX)]


def _smooth3(x: np.ndarray) -> np.ndarray:
    """A [1, 2, 1]/4 smoothing of an onset envelope before its autocorrelation.
    A sharp onset (a click, a tight kick) sits in one frame, so when the beat
    period is not a whole number of frames its autocorrelation peak splits over
    two lags and the comb, reading between them, undervalues the true tempo
    against a 3:2 or 2:3 relative whose longer lags land on whole frames
    (clicks at 180 BPM read as 120, at 250 as 166.7). Spreading each onset over
    three frames keeps the peak whole at fractional lags."""
    if len(x) < 3:
        return x
    return np.convolve(x, np.array([0.25, 0.5, 0.25]), mode="same")


def estimate_tempo(env: np.ndarray, fps: float, low: np.ndarray | None = None,
                   duration_s: float | None = None) -> TempoEstimate:
    """Global tempo from the onset envelope (and the kick band, weighted in).
    For clips under 12 s, a tempo that makes the clip a whole number of bars
    wins when the comb supports it nearly as well as the best tempo."""
    n = len(env)
    if n < 8 or not np.any(env > 0):
        return TempoEstimate(120.0, 0.0, 0.0, ((120.0, 0.0),))
    ac = _autocorr(_smooth3(env))
    if low is not None and np.any(low > 0):
        ac = 0.6 * ac + 0.4 * _autocorr(_smooth3(low))
    bpms = np.arange(BPM_MIN, BPM_MAX + 0.01, 0.25)
    # lags beyond half the signal are unreliable: restrict the comb's support
    max_lag = 0.75 * n
    comb = _comb_scores(ac, fps, bpms, max_lag)
    usable = comb > 0
    score = comb * _tempo_prior(bpms)
    i = int(np.argmax(score))
    bpm = float(bpms[i])
    if 0 < i < len(bpms) - 1:
        a, b, c = score[i - 1], score[i], score[i + 1]
        den = a - 2 * b + c
        if den < 0:
            bpm += 0.25 * float(np.clip(0.5 * (a - c) / den, -0.5, 0.5))
    loops = _loop_candidates(duration_s)
    if loops.size:
        # the loop tempo's comb at its exact value, against the winner's
        loop_score = _comb_scores(ac, fps, loops, max_lag) * _tempo_prior(loops)
        j = int(np.argmax(loop_score))
        if loop_score[j] >= 0.7 * score[i] and abs(loops[j] - bpm) > 0.01 * bpm:
            bpm = float(loops[j])
    bpm = metrical_level(ac, env, fps, bpm, duration_s)
    salience = float(np.clip(_interp(ac, np.array([60.0 * fps / bpm]))[0], 0.0, 1.0))
    # confidence: how far the winner stands above the typical comb value
    base = float(np.median(comb[usable])) if usable.any() else 0.0
    peak = float(np.max(comb))
    conf = float(np.clip((peak - base) / 0.35, 0.0, 1.0))
    order = np.argsort(score)[::-1]
    cands = []
    for j in order:
        if all(abs(bpms[j] - c[0]) > 3 for c in cands):
            cands.append((float(bpms[j]), float(score[j])))
        if len(cands) == 5:
            break
    return TempoEstimate(bpm, conf, salience, tuple(cands), ac)


# ---------------------------------------------------------------- metrical level

_FAMILY = (2.0 / 3.0, 0.75, 4.0 / 3.0, 1.5)    # the non-octave relatives the comb can lock onto
_METER_BEATS = (3, 4)                          # bar lengths tried: ternary and binary


def grid_strength(env: np.ndarray, period: float) -> float:
    """How much onset strength a beat grid of `period` frames collects at its
    best phase, relative to the envelope's mean (1 = no better than chance)."""
    n = len(env)
    mean = float(env.mean()) if n else 0.0
    if period <= 0 or 2 * period > n or mean <= 0:
        return 0.0
    # each grid point takes the strongest frame within one frame of it: a grid
    # whose period is not a whole number of frames drifts across sharp onsets
    near = np.maximum(env, np.maximum(np.roll(env, 1), np.roll(env, -1)))
    phases = np.arange(0.0, period, 0.5)
    k = np.arange(0.0, (n - 1) // period + 1)
    idx = phases[:, None] + k[None, :] * period
    inside = idx <= n - 1
    vals = np.where(inside, near[np.minimum(np.round(idx), n - 1).astype(np.intp)], 0.0)
    folded = vals.sum(axis=1) / np.maximum(inside.sum(axis=1), 1)
    return float(folded.max() / mean)


def metrical_evidence(ac: np.ndarray, env: np.ndarray, fps: float, bpm: float,
                      duration_s: float | None) -> float:
    """Evidence that `bpm` is the beat, whatever the meter: periodicity at the
    beat level (autocorrelation at 1 and 2 beats), at the bar level (3 or 4
    beats and twice that, whichever is stronger: waltzes and swung or
    ternary material have 3-beat bars), the onset strength a beat grid
    collects (log of `grid_strength`), and for clips under 12 s how nearly
    the clip is a whole number of 4-beat bars (sample loops are cut so).
    A weak log-prior around 125 BPM breaks ties.""" 
    lag = 60.0 * fps / bpm
    max_lag = 0.75 * len(ac)

    def level(*beats: float) -> float:
        lags = np.array([b * lag for b in beats if b * lag <= max_lag])
        return float(np.maximum(_interp(ac, lags), 0.0).mean()) if lags.size else 0.0

    beat = level(1, 2)
    bar = max(level(m, 2 * m) for m in _METER_BEATS)
    evidence = beat + bar + 0.5 * np.log(max(grid_strength(env, lag), 1e-3))
    evidence += 0.1 * float(np.log(_tempo_prior(np.array([bpm]))[0]))
    if duration_s and 0 < duration_s <= _LOOP_MAX_S:
        beats = duration_s * bpm / 60.0
        miss = abs(beats - 4.0 * max(1.0, round(beats / 4.0)))     # beats off whole 4-beat bars
        evidence += float(np.exp(-0.5 * (miss / 0.12) ** 2))
    return float(evidence)


def metrical_level(ac: np.ndarray, env: np.ndarray, fps: float, bpm: float,
                   duration_s: float | None, stay: float = 0.2) -> float:
    """The comb weighs the bar as 4 beats, so a 3-beat bar (a waltz, swung or
    ternary material) or a sparse loop can make it lock onto 4/3 or 3/2 of the
    beat. Score the comb's tempo against its 2/3, 3/4, 4/3 and 3/2 relatives
    (`metrical_evidence`) and move only when a relative wins by more than
    `stay`; the winner is then sharpened within 4 % and its octave chosen by
    the comb, as for the first reading."""
    if bpm <= 0 or len(env) < 8:
        return bpm
    best, best_score = bpm, metrical_evidence(ac, env, fps, bpm, duration_s) + stay
    for ratio in _FAMILY:
        other = bpm * ratio
        if BPM_MIN <= other <= BPM_MAX:
            score = metrical_evidence(ac, env, fps, other, duration_s)
            if score > best_score:
                best, best_score = other, score
    if best == bpm:
        return float(bpm)
    # a relative won: sharpen it (the comb's peak was for another level), then let
    # the comb choose its octave as it chose the first reading's
    near = best * np.linspace(0.96, 1.04, 33)
    near = near[(near >= BPM_MIN) & (near <= BPM_MAX)]
    best = float(near[int(np.argmax([metrical_evidence(ac, env, fps, b, duration_s) for b in near]))])
    octaves = np.array([b for b in (0.5 * best, best, 2.0 * best) if BPM_MIN <= b <= BPM_MAX])
    comb = _comb_scores(ac, fps, octaves, 0.75 * len(ac)) * _tempo_prior(octaves)
    return float(octaves[int(np.argmax(comb))])


def tempo_alternatives(ac: np.ndarray | None, env: np.ndarray, fps: float, bpm: float,
                       confidence: float, duration_s: float | None) -> tuple[TempoReading, ...]:
    """Up to 3 other readings of the tempo (half, double, 2/3, 3/2, 3/4, 4/3 of
    `bpm`), best first. Each one's confidence is the reading's confidence
    scaled by exp(evidence difference / 0.5) (`metrical_evidence`), capped just
    under it; readings under a tenth of the reading's confidence are left out."""
    if ac is None or bpm <= 0 or confidence <= 0 or len(env) < 8:
        return ()
    own = metrical_evidence(ac, env, fps, bpm, duration_s)
    found = []
    for name, ratio in TEMPO_RELATIONS.items():
        other = bpm * ratio
        if 30.0 <= other <= 300.0:
            rel = float(np.exp((metrical_evidence(ac, env, fps, other, duration_s) - own) / 0.5))
            found.append((min(rel, 0.95), name, other))
    found.sort(reverse=True)
    return tuple(TempoReading(round(float(other), 2), name, round(float(confidence * rel), 4))
                 for rel, name, other in found[:3] if rel >= 0.1)


# ---------------------------------------------------------------- beats

def _env_at(env: np.ndarray, idx: np.ndarray) -> np.ndarray:
    return np.interp(idx, np.arange(len(env)), env, left=0.0, right=0.0)


def _best_phase(env: np.ndarray, period: float) -> float:
    """Phase (frames) of the period grid collecting the most onset strength."""
    phases = np.arange(0.0, period, 0.5)
    k = np.arange(0.0, len(env) / period + 1)
    grid = phases[:, None] + k[None, :] * period
    return float(phases[int(np.argmax(_env_at(env, grid).sum(axis=1)))])


def _kick_side(low: np.ndarray, period: float, phase: float) -> float:
    """On-beat or off-beat: when the off-beats of the grid carry clearly more
    kick-band onset strength than its beats, the grid sits on the off-beat
    (bass and hats) and moves half a period."""
    k = np.arange(0.0, len(low) / period)
    _, on = _onset_offsets(low, phase + k * period, period)
    _, off = _onset_offsets(low, phase + (k + 0.5) * period, period)
    if off.sum() > 1.3 * on.sum() and off.sum() > 0:
        return (phase + 0.5 * period) % period
    return phase


def _refine_period(ac: np.ndarray, period: float) -> float:
    """Sharpen the period on the autocorrelation peaks at 4, 16, 64... beats: a
    peak m beats away pins the period to 1/m of its (parabolic) position."""
    n = len(ac)
    m = 4
    while m * period < 0.5 * n:
        centre = m * period
        r = max(1, int(round(0.1 * period)))
        lo, hi = int(np.floor(centre)) - r, int(np.ceil(centre)) + r
        if lo < 1 or hi >= n - 1:
            break
        j = lo + int(np.argmax(ac[lo:hi + 1]))
        a, b, c = ac[j - 1], ac[j], ac[j + 1]
        den = a - 2 * b + c
        peak = j + (0.5 * (a - c) / den if den < 0 else 0.0)
        if b <= 0 or abs(peak / m - period) > 0.02 * period:
            break
        period = peak / m
        m *= 4
    return period


def _refine_grid(env: np.ndarray, period: float, phase: float) -> tuple[float, float]:
    """Global least-squares fit of (period, phase) to the local onset peaks near
    each grid beat, weighted by their strength."""
    n = len(env)
    for _ in range(3):
        k = np.arange(0.0, (n - phase) / period)
        if len(k) < 3:
            break
        grid = phase + k * period
        r = max(1, int(round(period * 0.12)))
        offs = np.arange(-r, r + 1)
        idx = np.clip(np.round(grid)[:, None].astype(int) + offs[None, :], 0, n - 1)
        vals = env[idx]
        j = vals.argmax(axis=1)
        peak = idx[np.arange(len(k)), j].astype(float)
        # parabolic interpolation of each peak
        jm = np.clip(j, 1, 2 * r - 1)
        a = vals[np.arange(len(k)), jm - 1]
        b = vals[np.arange(len(k)), jm]
        c = vals[np.arange(len(k)), jm + 1]
        den = a - 2 * b + c
        delta = np.where(den < 0, 0.5 * (a - c) / np.where(den < 0, den, -1), 0.0)
        peak = peak + np.where(j == jm, np.clip(delta, -0.5, 0.5), 0.0)
        w = vals.max(axis=1)
        good = w > 0.3 * (np.median(w[w > 0]) if np.any(w > 0) else 0)
        if good.sum() < 3:
            break
        kw, pw, ww = k[good], peak[good], w[good]
        A = np.stack([np.ones_like(kw), kw], axis=1) * np.sqrt(ww)[:, None]
        sol, *_ = np.linalg.lstsq(A, pw * np.sqrt(ww), rcond=None)
        new_phase, new_period = float(sol[0]), float(sol[1])
        if not (0.9 * period < new_period < 1.1 * period):
            break
        phase, period = new_phase % new_period, new_period
    return period, phase


def track_beats(env: np.ndarray, fps: float, bpm: float,
                low: np.ndarray | None = None) -> tuple[np.ndarray, float]:
    """Beat frame positions (float) over the whole envelope, and the fitted period
    (frames). A global grid fit first; then a tracker over the beats follows
    slow tempo drift, keeping the grid where there are no onsets."""
    n = len(env)
    period = 60.0 * fps / bpm
    if n < 2 or period <= 0:
        return np.zeros(0), period
    period = _refine_period(_autocorr(env), period)
    phase = _best_phase(env, period)
    period, phase = _refine_grid(env, period, phase)
    if low is not None:
        phase = _kick_side(low, period, phase)
    grid = np.arange(phase, n, period)
    if len(grid) < 4:
        return grid, period
    tracked = _follow(env, grid[0], period)
    # a steady grid (the usual case) is kept exactly; the tracker only wins when
    # the tempo really moves (its beats leave any straight line)
    if len(tracked) >= 8:
        k = np.arange(len(tracked))
        fit = np.polyval(np.polyfit(k, tracked, 1), k)
        if np.sqrt(np.mean((tracked - fit) ** 2)) > 0.06 * period:
            return tracked, period
    return grid, period


def _follow(env: np.ndarray, start: float, period: float) -> np.ndarray:
    """Beat-by-beat tracker: predict one period on, move a little toward the
    strongest onset within +-10 % of a period, adapt the period slowly."""
    n = len(env)
    r = max(1, int(round(period * 0.1)))
    offs = np.arange(-r, r + 1, dtype=float)
    weight = np.exp(-0.5 * (offs / r) ** 2)
    strong = float(np.percentile(env[env > 0], 50)) if np.any(env > 0) else 0.0
    beats = []
    pos, p = start, period
    while pos < n:
        idx = np.round(pos + offs).astype(int)
        vals = np.where((idx >= 0) & (idx < n), env[np.clip(idx, 0, n - 1)], 0.0) * weight
        j = int(np.argmax(vals))
        if vals[j] > strong:
            err = offs[j]
            pos += 0.3 * err
            p = float(np.clip(p + 0.05 * err, 0.9 * period, 1.1 * period))
        beats.append(pos)
        pos += p
    return np.asarray(beats)


# ---------------------------------------------------------------- descriptors

def danceability_dfa(energy_db: np.ndarray, fps: float) -> float:
    """Detrended fluctuation analysis of the frame amplitude (Essentia's
    Danceability in spirit): DFA exponents alpha over scales of 0.3-8 s (each
    scale with at least 8 half-overlapping windows), danceability = the mean
    of 1/alpha, 0..3. A steady, strongly periodic signal saturates the
    fluctuation at long scales (small alpha: danceable); drifting or
    unstructured energy keeps alpha near or above 1."""
    x = np.power(10.0, energy_db / 20.0)
    n = len(x)
    if n < int(4 * fps):
        return 0.0
    y = np.cumsum(x - x.mean())
    top = min(8.0 * fps, n / 4.5)
    taus = np.unique(np.round(np.geomspace(0.31 * fps, top, 10)).astype(int))
    taus = taus[taus >= 4]
    if len(taus) < 4:
        return 0.0
    F = np.empty(len(taus))
    for i, tau in enumerate(taus):
        starts = np.arange(0, n - tau + 1, max(1, tau // 2))
        seg = y[starts[:, None] + np.arange(tau)[None, :]]
        t = np.arange(tau) - (tau - 1) / 2.0
        slope = (seg * t).sum(axis=1) / (t * t).sum()
        resid = seg - seg.mean(axis=1, keepdims=True) - slope[:, None] * t[None, :]
        F[i] = np.sqrt(np.mean(resid ** 2)) + 1e-12
    lf, lt = np.log10(F), np.log10(taus)
    # local slopes over three neighbouring scales (least squares), less noisy than pairs
    alpha = np.array([np.polyfit(lt[i:i + 3], lf[i:i + 3], 1)[0] for i in range(len(taus) - 2)])
    inv = 1.0 / np.clip(alpha, 1.0 / 3.0, None)
    return float(np.clip(np.mean(inv), 0.0, 3.0))


def _onset_offsets(env: np.ndarray, beats_f: np.ndarray, period: float) -> tuple[np.ndarray, np.ndarray]:
    """For each beat (frames): offset of the strongest onset within +-12 % of a
    period (in periods) and that onset's strength."""
    n = len(env)
    if len(beats_f) == 0 or n == 0:
        return np.zeros(0), np.zeros(0)
    r = max(1, int(round(period * 0.12)))
    offs = np.arange(-r, r + 1)
    idx = np.round(beats_f)[:, None].astype(int) + offs[None, :]
    vals = np.where((idx >= 0) & (idx < n), env[np.clip(idx, 0, n - 1)], 0.0)
    j = vals.argmax(axis=1)
    return (offs[j] + np.round(beats_f) - beats_f) / period, vals.max(axis=1)


def _regularity(env: np.ndarray, beats_f: np.ndarray, period: float) -> float:
    """1 = metronomic: the onsets sit on the beats (small weighted jitter) and the
    beats lie on a straight line (no drift)."""
    if len(beats_f) < 4 or period <= 0:
        return 0.0
    off, w = _onset_offsets(env, beats_f, period)
    if np.count_nonzero(w > 0) < 4:     # a lone click in silence is no grid
        return 0.0
    mu = np.average(off, weights=w)
    jitter = float(np.sqrt(np.average((off - mu) ** 2, weights=w)))
    k = np.arange(len(beats_f), dtype=float)
    fit = np.polyval(np.polyfit(k, beats_f, 1), k)
    resid = float(np.sqrt(np.mean((beats_f - fit) ** 2))) / period
    return float(np.clip(np.exp(-jitter / 0.05) * np.exp(-resid / 0.1), 0.0, 1.0))


def _scale(x: np.ndarray) -> float:
    pos = x[x > 0]
    return float(np.percentile(pos, 95)) if pos.size else 1.0


def _extend_to_start(beats_s: np.ndarray, period_s: float) -> np.ndarray:
    """The envelope cannot show an onset in its first frame: add the grid beats
    that fall before the first tracked beat (a beat within 70 ms of 0 is put at 0)."""
    if len(beats_s) == 0 or period_s <= 0:
        return beats_s
    first = beats_s[0]
    n_before = int(np.floor((first + 0.07) / period_s))
    if n_before <= 0:
        return beats_s
    before = first - period_s * np.arange(n_before, 0, -1)
    return np.concatenate((np.maximum(before, 0.0), beats_s))


def measure_rhythm(spec: ShortFrames, duration_s: float) -> Rhythm:
    """Tempo, beats, regularity, onset rate, pulse strength, danceability."""
    on = onset_envelope(spec)
    env, fps = on.envelope, on.fps
    if not np.all(np.isfinite(env)):
        env = np.nan_to_num(env)
    est = estimate_tempo(env, fps, on.low, duration_s)
    # the kick band counts as much as all the rest: it puts the beat on the kick,
    # not on the off-beat bass and hats
    combined = env / _scale(env) + on.low / _scale(on.low)
    beats_f, period_f = track_beats(combined, fps, est.bpm, on.low)
    beats_s = beats_f / fps + on.t0
    beats_s = _extend_to_start(beats_s, period_f / fps)
    beats_s = beats_s[(beats_s >= 0) & (beats_s <= max(duration_s, 0.0))]
    # the BPM from a least-squares line through the beats (the mean tempo when
    # it drifts); the fitted grid period for a handful of beats
    bpm = est.bpm
    if len(beats_f) >= 8:
        slope = float(np.polyfit(np.arange(len(beats_f)), beats_f, 1)[0])
        if slope > 0 and abs(60.0 * fps / slope - est.bpm) < 0.06 * est.bpm:
            bpm = 60.0 * fps / slope
    elif period_f > 0:
        bpm = 60.0 * fps / period_f
    bpm = float(np.clip(bpm, BPM_MIN, BPM_MAX))
    onsets = pick_onsets(env, fps)
    onset_rate = float(len(onsets) / duration_s) if duration_s > 0 else 0.0
    ac_full = _autocorr(env)
    ac_low = _autocorr(on.low) if np.any(on.low > 0) else np.zeros_like(ac_full)
    # pulse salience: the comb (1, 2, 4, 8 beats) at the tempo, full band and kick band
    bpm_arr, max_lag = np.array([bpm]), 0.75 * len(env)
    sal_full = float(_comb_scores(ac_full, fps, bpm_arr, max_lag)[0])
    sal_low = float(_comb_scores(ac_low, fps, bpm_arr, max_lag)[0])
    # a pulse needs percussion: high-frequency transients (hats, snares) or a kick
    # pulse. Ambient bells on a grid, a few tonal notes a second, are not a beat.
    # A kick-band pulse counts when its onsets are real rises (kicks rise by
    # several dB; a drone's beating or leakage wobbles by under 1 dB)
    kick_rise = float(np.percentile(on.low, 99)) if on.low.size else 0.0
    kick = float(np.clip(sal_low / 0.4, 0.0, 1.0)) * float(np.clip((kick_rise - 0.5) / 1.0, 0.0, 1.0))
    percussive = max(float(np.clip((on.hf_activity - 0.6) / 0.8, 0.0, 1.0)), kick)
    density = float(np.clip((onset_rate - 0.5) / 1.5, 0.0, 1.0))
    beat_strength = float(np.clip(0.5 * sal_full + 0.5 * sal_low, 0.0, 1.0)) ** 0.75 * percussive * density
    confidence = float(np.clip(0.5 * est.confidence + 0.5 * min(1.0, beat_strength / 0.4), 0.0, 1.0))
    salient = bool(confidence >= 0.35 and sal_full >= 0.12 and onset_rate >= 1.0 and percussive >= 0.5)
    if not salient:
        confidence = min(confidence, 0.2)
    regularity = _regularity(combined, beats_f, period_f)
    if not salient:
        regularity *= 0.5
    dance = danceability_dfa(on.energy_db, fps)
    inner = onsets[(onsets > 0) & (onsets < len(env) - 1)]
    spread, timed = timing_spread_ms(onset_peak_times(env, fps, on.t0, inner), env[inner], beats_s)
    return Rhythm(bpm=round(bpm, 2), regularity=round(regularity, 4), beat_times=beats_s,
                  onset_rate=round(onset_rate, 3), beat_strength=round(beat_strength, 4),
                  danceability=round(dance, 4), tempo_confidence=round(confidence, 4),
                  tempo_salient=salient,
                  tempo_alternatives=tempo_alternatives(est.ac, env, fps, bpm, confidence, duration_s),
                  timing_spread_ms=None if spread is None else round(spread, 2), timed_onsets=timed)
