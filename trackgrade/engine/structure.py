"""Sections (intro / buildup / drop / breakdown / outro) and the energy curve.

Bar-synchronous features (log band energies and loudness, from the shared
short STFT) feed a self-similarity checkerboard novelty plus a loudness-step
novelty; boundaries are picked greedily with a minimum section length and
land on bar lines when a beat grid exists. Labels follow energy and
position, the way electronic tracks are built.
"""

from __future__ import annotations

import numpy as np

from trackgrade.engine.features import SILENCE_LUFS, Section, Structure
from trackgrade.engine.frames import Reduction, ShortFrames, bin_power, log_band_edges, segment_sums

_N_BANDS = 12
_MIN_SECTION_S = 8.0
_DROP_DB = 3.0        # sections within this of the loudest level can be drops


def _frame_step(hop_s: float) -> int:
    """Every second frame of a short STFT (hop under 50 ms) is enough."""
    return 2 if hop_s < 0.05 else 1


def _downbeat_bins(freqs: np.ndarray) -> tuple[int, int]:
    lo, hi = np.searchsorted(freqs, (100.0, 2000.0))
    return int(lo), int(hi)


def short_reductions(freqs: np.ndarray, hop_s: float) -> list[Reduction]:
    """What `measure_structure` reads of a short STFT with these bins and hop
    (for `frames.short_reduced`)."""
    step = _frame_step(hop_s)
    lo, hi = _downbeat_bins(freqs)
    return [Reduction(starts=tuple(int(b) for b in log_band_edges(freqs, _N_BANDS)[:-1]), step=step),
            Reduction(lo=lo, hi=hi, step=step)]


def _frame_features(spec: ShortFrames, step: int) -> tuple[np.ndarray, np.ndarray, float]:
    """Every `step`-th frame: (frames, bands) band energies in dB, loudness in dB
    (relative to the loudest frame), and the times."""
    bands = segment_sums(spec, log_band_edges(spec.freqs, _N_BANDS)[:-1], step).astype(np.float64)
    total = bands.sum(axis=1)
    ref = max(float(total.max()) if total.size else 0.0, 1e-20)
    db = 10.0 * np.log10(np.maximum(bands, ref * 1e-9) / ref)
    loud = 10.0 * np.log10(np.maximum(total, ref * 1e-9) / ref)
    times = spec.times[::step]
    return db, loud, times


def _step_novelty(feat: np.ndarray, half: int) -> np.ndarray:
    """Mean absolute change of the standardised features between the `half`
    units before and after each unit start (a block-difference novelty)."""
    n = len(feat)
    nov = np.zeros(n)
    if n < 2:
        return nov
    z = (feat - feat.mean(axis=0)) / (feat.std(axis=0) + 1e-6)
    c = np.concatenate((np.zeros((1, z.shape[1])), np.cumsum(z, axis=0)))
    i = np.arange(1, n)
    a0 = np.maximum(0, i - half)
    b1 = np.minimum(n, i + half)
    before = (c[i] - c[a0]) / (i - a0)[:, None]
    after = (c[b1] - c[i]) / (b1 - i)[:, None]
    nov[1:] = np.abs(after - before).mean(axis=1)
    return nov


def _downbeat_phase(spec: ShortFrames, beat_times: np.ndarray, step: int) -> int:
    """Which beat of four starts the bars. Chords, bass notes, crashes and
    sections change on downbeats: the beat-to-beat change of the 100-2000 Hz
    log spectrum (cosine distance), averaged per beat position in the bar,
    peaks on the downbeat."""
    if len(beat_times) < 16:
        return 0
    lo, hi = _downbeat_bins(spec.freqs)
    if hi - lo < 4:
        return 0
    power = bin_power(spec, lo, hi, step).astype(np.float64)
    times = spec.times[::step]
    edges = np.concatenate((beat_times, [beat_times[-1] + float(np.median(np.diff(beat_times)))]))
    inside = (times >= edges[0]) & (times < edges[-1])
    if inside.sum() < 8:
        return 0
    per_beat = _pool(power[inside], times[inside], edges)
    log = np.log10(per_beat + max(float(per_beat.max()), 1e-20) * 1e-6)
    log -= log.mean(axis=1, keepdims=True)
    log /= np.linalg.norm(log, axis=1, keepdims=True) + 1e-9
    change = np.zeros(len(log))
    change[1:] = 1.0 - np.sum(log[1:] * log[:-1], axis=1)
    return int(np.argmax([change[r::4].mean() for r in range(4)]))


def _unit_edges(duration_s: float, beat_times, bpm, spec: ShortFrames, step: int) -> tuple[np.ndarray, bool]:
    """Analysis unit boundaries in seconds: bars (4 beats) when a grid exists,
    else 2 s blocks. Returns (edges, on_bars)."""
    if beat_times is not None and bpm and len(beat_times) >= 8:
        bt = np.asarray(beat_times, dtype=float)
        bars = bt[_downbeat_phase(spec, bt, step)::4]
        period = 240.0 / float(bpm)
        # extend the bar grid back to 0 and on to the end
        before = np.arange(bars[0] - period, -1e-9, -period)[::-1]
        after = np.arange(bars[-1] + period, duration_s, period)
        edges = np.concatenate((before, bars, after))
        edges = edges[(edges > 0.25 * period) & (edges < duration_s - 0.25 * period)]
        return np.concatenate(([0.0], edges, [duration_s])), True
    step = 2.0
    edges = np.arange(step, duration_s - 0.5 * step, step)
    return np.concatenate(([0.0], edges, [duration_s])), False


def _pool(values: np.ndarray, times: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Mean of rows of `values` whose time falls in each [edges[i], edges[i+1])."""
    idx = np.clip(np.searchsorted(edges, times, side="right") - 1, 0, len(edges) - 2)
    n = len(edges) - 1
    sums = np.zeros((n,) + values.shape[1:])
    np.add.at(sums, idx, values)
    counts = np.bincount(idx, minlength=n).astype(float)
    empty = counts == 0
    out = sums / np.maximum(counts, 1)[(...,) + (None,) * (values.ndim - 1)]
    if empty.any() and (~empty).any():  # fill empty units from the nearest filled one
        filled = np.flatnonzero(~empty)
        nearest = filled[np.clip(np.searchsorted(filled, np.flatnonzero(empty)), 0, len(filled) - 1)]
        out[empty] = out[nearest]
    return out


def _novelty(feat: np.ndarray, half: int) -> np.ndarray:
    """Block-difference novelty plus a checkerboard kernel on the cosine
    self-similarity of the standardised features, each scaled to max 1.
    Value i is the novelty of a boundary at the start of unit i."""
    n = len(feat)
    # several scales: one bar catches sharp cuts (a drop after a kick-less bar),
    # longer blocks catch slow changes (a riser) and ignore one-bar fills
    step = np.zeros(n)
    for h in sorted({1, max(1, half // 2), half}):
        nv = _step_novelty(feat, h)
        step += nv / (nv.max() + 1e-9)
    if n < 3:
        return step
    z = (feat - feat.mean(axis=0)) / (feat.std(axis=0) + 1e-6)
    z /= np.linalg.norm(z, axis=1, keepdims=True) + 1e-9
    S = z @ z.T
    # checkerboard: (within - across) over a +-half window, vectorised via 2-D cumsums
    C = np.zeros((n + 1, n + 1))
    C[1:, 1:] = S.cumsum(0).cumsum(1)

    def block(r0, r1, c0, c1):
        return (C[r1, c1] - C[r0, c1] - C[r1, c0] + C[r0, c0]) / np.maximum((r1 - r0) * (c1 - c0), 1)

    i = np.arange(1, n)
    a0 = np.maximum(0, i - half)
    b1 = np.minimum(n, i + half)
    cb = np.zeros(n)
    cb[1:] = 0.5 * (block(a0, i, a0, i) + block(i, b1, i, b1)) - block(a0, i, i, b1)
    cb = np.maximum(cb, 0.0)
    out = step / (step.max() + 1e-9) + 0.5 * cb / (cb.max() + 1e-9)
    return out


def _pick_boundaries(nov: np.ndarray, min_units: int, max_sections: int, edge_units: int) -> list[int]:
    """Greedy: strongest novelty peaks first, keeping `min_units` apart and from the ends."""
    n = len(nov)
    if n < 2 * min_units:
        return []
    left = np.concatenate(([-np.inf], nov[:-1]))
    right = np.concatenate((nov[1:], [-np.inf]))
    peaks = (nov >= left) & (nov >= right)
    order = np.argsort(nov)[::-1]
    chosen: list[int] = []
    thresh = 0.3 * float(nov.max())
    for i in order:
        if len(chosen) >= max_sections - 1 or nov[i] <= thresh:
            break
        if not peaks[i] or i < edge_units or n - i < edge_units:
            continue
        if all(abs(i - j) >= min_units for j in chosen) and _edges_ok(i, chosen, n, min_units, edge_units):
            chosen.append(int(i))
    return sorted(chosen)


def _edges_ok(i: int, chosen: list[int], n: int, min_units: int, edge_units: int) -> bool:
    """The first and last sections may be shorter (`edge_units`), not the inner ones."""
    cuts = sorted(chosen + [i])
    if cuts[0] < edge_units or n - cuts[-1] < edge_units:
        return False
    return True


def _label(level: np.ndarray, slopes: np.ndarray, risers: np.ndarray, n_units: np.ndarray) -> list[str]:
    """Energy/position labels from each section's level (0..1, 1 = the most
    energetic). Electronic tracks open with an intro and close with an outro;
    in between, high = drop, a short section right before a drop that rises
    (energy `slopes`, or a riser: the top octaves climbing, `risers`, dB) =
    buildup, the rest = breakdown."""
    n = len(level)
    if n == 1:
        return ["drop"]
    is_drop = level >= 0.7
    if n == 2:
        return ["intro", "drop"] if level[1] >= level[0] else ["drop", "outro"]
    labels = ["drop" if d else "breakdown" for d in is_drop]
    # the ends are intro/outro unless they run at full drop level (a track
    # that starts on the drop, or a last drop with a short tail); an outro is
    # never the loudest part of the track
    if level[0] < 0.9 or n_units[0] < 8:
        labels[0] = "intro"
    if level[-1] < 0.9 or (n_units[-1] < 8 and int(np.argmax(level)) != n - 1):
        labels[-1] = "outro"
    for i in range(1, n - 1):
        if not is_drop[i + 1] or n_units[i] > 8:
            continue
        if risers[i] > 6.0 or (not is_drop[i] and slopes[i] > 2.0 and level[i] >= 0.4):
            labels[i] = "buildup"
    return labels


def energy_curve(loud_db: np.ndarray, times: np.ndarray, duration_s: float, hop_s: float) -> np.ndarray:
    """0..1 energy per `hop_s`: frame loudness (dB below the loudest) mapped from
    -30..0 dB, averaged in each hop."""
    n = max(1, int(np.ceil(duration_s / hop_s))) if duration_s > 0 else 1
    edges = np.arange(n + 1) * hop_s
    lin = np.power(10.0, loud_db / 10.0)
    pooled = _pool(lin[:, None], times, edges)[:, 0] if len(times) else np.zeros(n)
    db = 10.0 * np.log10(np.maximum(pooled, 1e-9))
    return np.clip((db + 30.0) / 30.0, 0.0, 1.0)


def lufs_energy_curve(lufs: np.ndarray, duration_s: float, hop_s: float) -> np.ndarray:
    """0..1 energy from a short-term loudness curve (one value per `hop_s`):
    -30..0 LU below its loudest value, one value per hop over the track."""
    n = max(1, int(np.ceil(duration_s / hop_s))) if duration_s > 0 else 1
    vals = np.where(np.isfinite(lufs), lufs, SILENCE_LUFS)
    vals = np.resize(vals, n) if len(vals) >= n else np.concatenate((vals, np.full(n - len(vals), vals[-1])))
    top = float(vals.max())
    return np.clip((vals - top + 30.0) / 30.0, 0.0, 1.0)


def measure_structure(spec: ShortFrames, duration_s: float, *, beat_times=None, bpm=None,
                      short_term_lufs=None, curve_hop_s: float = 0.1) -> Structure:
    """Contiguous labelled sections covering [0, duration_s] and the energy curve.

    `beat_times`/`bpm` (from `measure_rhythm`) put the boundaries on bars;
    without them the track is cut in 2 s blocks. `short_term_lufs` (one value
    per `curve_hop_s`, from the loudness stage), when given, becomes the
    energy curve; otherwise the curve comes from the spectrogram, at the same
    `curve_hop_s`."""
    duration_s = float(max(duration_s, 0.0))
    step = _frame_step(spec.hop_s)
    db, loud, times = _frame_features(spec, step)
    if short_term_lufs is not None and len(short_term_lufs) > 0:
        curve = lufs_energy_curve(np.asarray(short_term_lufs, dtype=float), duration_s, curve_hop_s)
    elif duration_s > 0:
        curve = energy_curve(loud, times, duration_s, curve_hop_s)
    else:
        curve = np.zeros(1)
    if duration_s <= 0:
        return Structure((Section(0.0, 0.0, "drop", 0),), curve, curve_hop_s, None)
    edges, on_bars = _unit_edges(duration_s, beat_times, bpm, spec, step)
    n_units = len(edges) - 1
    lin = np.power(10.0, loud / 10.0)
    unit_lin = _pool(lin[:, None], times, edges)[:, 0]
    unit_loud = 10.0 * np.log10(np.maximum(unit_lin, 1e-9))
    unit_db = _pool(db, times, edges)
    low_lin = np.power(10.0, db[:, :4] / 10.0).sum(axis=1)   # 30-250 Hz: kick and bass
    feat = np.concatenate((unit_db, unit_loud[:, None]), axis=1)
    unit_len = np.diff(edges)
    med_len = float(np.median(unit_len)) if n_units else duration_s
    if on_bars:   # 4 bars, or 8 s at fast tempos
        min_units = max(4, int(np.ceil(0.9 * _MIN_SECTION_S / med_len)))
    else:
        min_units = max(1, int(np.ceil(_MIN_SECTION_S / med_len - 1e-6)))
    max_sections = int(np.clip(n_units // min_units, 1, 12))
    if duration_s < 10.0:
        max_sections = min(max_sections, 2)
    nov = _novelty(feat, int(np.clip(min_units, 2, 8)))
    bounds = _pick_boundaries(nov, min_units, max_sections, max(1, min_units // 2) if on_bars else min_units)
    cuts = [0] + bounds + [n_units]
    starts = [float(edges[c]) for c in cuts[:-1]]
    ends = [float(edges[c]) for c in cuts[1:]]
    ends[-1] = duration_s
    # energy of a unit: loudness plus the low end (kick and bass make a drop)
    low_db = 10.0 * np.log10(np.maximum(_pool(low_lin[:, None], times, edges)[:, 0], 1e-9))
    unit_energy = unit_loud + 0.5 * np.maximum(low_db, -60.0)
    sec_e = np.array([float(np.average(unit_energy[a:b], weights=unit_len[a:b]))
                      for a, b in zip(cuts[:-1], cuts[1:])])
    slopes = np.array([float(unit_energy[b - 1] - unit_energy[a]) if b - a > 1 else 0.0
                       for a, b in zip(cuts[:-1], cuts[1:])])
    # a riser: the top bands (above ~3.6 kHz) climb from the first to the last bars
    unit_hf = unit_db[:, -3:].mean(axis=1)
    risers = np.array([float(unit_hf[max(b - 2, a):b].mean() - unit_hf[a:min(a + 2, b)].mean())
                       for a, b in zip(cuts[:-1], cuts[1:])])
    spread = float(sec_e.max() - sec_e.min())
    level = (sec_e - sec_e.min()) / spread if spread > 3.0 else np.ones_like(sec_e)
    labels = _label(level, slopes, risers, np.diff(cuts))
    # adjacent sections with one label are one section (no run of five drops)
    keep = [0] + [i for i in range(1, len(labels)) if labels[i] != labels[i - 1]]
    if len(keep) < len(labels):
        cuts = [cuts[i] for i in keep] + [cuts[-1]]
        labels = [labels[i] for i in keep]
        starts = [float(edges[c]) for c in cuts[:-1]]
        ends = [float(edges[c]) for c in cuts[1:]]
        ends[-1] = duration_s
        sec_e = np.array([float(np.average(unit_energy[a:b], weights=unit_len[a:b]))
                          for a, b in zip(cuts[:-1], cuts[1:])])
        spread = float(sec_e.max() - sec_e.min())
        level = (sec_e - sec_e.min()) / spread if spread > 3.0 else np.ones_like(sec_e)
    # 0-100: half the place between the track's quietest and loudest section,
    # half the level below the loudest (20 dB = 0)
    absolute = np.clip(1.0 + (sec_e - sec_e.max()) / 20.0, 0.0, 1.0)
    energy = np.clip(np.round(100.0 * (0.5 * level + 0.5 * absolute)), 0, 100).astype(int)
    sections = tuple(Section(round(s, 3), round(e, 3), lab, int(en))
                     for s, e, lab, en in zip(starts, ends, labels, energy))
    return Structure(sections, curve, curve_hop_s, nov)
