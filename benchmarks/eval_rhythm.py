"""Accuracy of trackgrade.engine.rhythm / structure on the synthetic and real truth.

    python benchmarks/eval_rhythm.py [--synth DIR] [--real] [--speed DIR]

Acc1: within 4 % of the bpm (or any acceptable_bpm); Acc2: also x2, x3, /2, /3.
Beat F-measure (70 ms) on the truth beat_times span; structure boundary F (+-2 s)
and frame-wise label accuracy.
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
import time
from pathlib import Path

import numpy as np
import soundfile as sf

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from trackgrade.engine.frames import mono_mix, short_stft  # noqa: E402
from trackgrade.engine.rhythm import measure_rhythm  # noqa: E402
from trackgrade.engine.structure import measure_structure  # noqa: E402


def load(path):
    x, sr = sf.read(str(path), dtype="float32", always_2d=True)
    return mono_mix(x), sr, x.shape[0] / sr


def acc(bpm, truths):
    a1 = any(abs(bpm - t) <= 0.04 * t for t in truths)
    a2 = any(abs(bpm - t * f) <= 0.04 * t * f for t in truths for f in (1, 2, 3, 0.5, 1 / 3))
    return a1, a2


def beat_f(est, ref, span, win=0.07):
    est = est[est <= span + win]
    if len(ref) == 0 or len(est) == 0:
        return 0.0
    d = np.abs(est[:, None] - ref[None, :])
    hits = 0
    used = set()
    for i in np.argsort(d.min(axis=1)):
        j = int(np.argmin(d[i]))
        if d[i, j] <= win and j not in used:
            used.add(j)
            hits += 1
    p, r = hits / len(est), hits / len(ref)
    return 0.0 if hits == 0 else 2 * p * r / (p + r)


def boundary_f(est_b, ref_b, tol):
    est_b, ref_b = list(est_b), list(ref_b)
    if not ref_b and not est_b:
        return 1.0
    hits = 0
    used = set()
    for b in est_b:
        c = [j for j, r in enumerate(ref_b) if abs(r - b) <= tol and j not in used]
        if c:
            used.add(min(c, key=lambda j: abs(ref_b[j] - b)))
            hits += 1
    if hits == 0:
        return 0.0
    p, r = hits / len(est_b), hits / len(ref_b)
    return 2 * p * r / (p + r)


def label_acc(est, ref, dur, step=0.1):
    t = np.arange(0, dur, step)
    def lab(secs):
        out = np.empty(len(t), dtype=object)
        for s in secs:
            out[(t >= s[0]) & (t < s[1])] = s[2]
        return out
    a, b = lab(est), lab(ref)
    return float(np.mean(a == b))


def eval_synth(d: Path, verbose=True):
    tracks = json.loads((d / "truth.json").read_text())["tracks"]
    rows = []
    for t in tracks:
        mono, sr, dur = load(d / t["file"])
        spec = short_stft(mono, sr)
        t0 = time.perf_counter()
        rh = measure_rhythm(spec, dur)
        t1 = time.perf_counter()
        st = measure_structure(spec, dur, beat_times=rh.beat_times, bpm=rh.bpm)
        t2 = time.perf_counter()
        a1, a2 = acc(rh.bpm, t.get("acceptable_bpm") or [t["bpm"]])
        span = t.get("beat_times_span_s") or 16.0
        bf = beat_f(rh.beat_times, np.asarray(t["beat_times"]), span)
        ref_secs = [(s["start"], s["end"], s["label"]) for s in t["sections"]]
        est_secs = [(s.start, s.end, s.label) for s in st.sections]
        bar = 240.0 / t["bpm"]
        tol = max(2.0, bar) if False else 2.0
        bF = boundary_f([s[0] for s in est_secs[1:]], [s[0] for s in ref_secs[1:]], tol)
        bFbar = boundary_f([s[0] for s in est_secs[1:]], [s[0] for s in ref_secs[1:]], bar)
        la = label_acc(est_secs, ref_secs, dur)
        rows.append(dict(name=t["name"], salient=t["tempo_salient"], bpm=rh.bpm, truth=t["bpm"], a1=a1, a2=a2,
                         beatF=bf, conf=rh.tempo_confidence, strength=rh.beat_strength, sal=rh.tempo_salient,
                         reg=rh.regularity, dance=rh.danceability, onr=rh.onset_rate, bF=bF, bFbar=bFbar, la=la,
                         tr=t1 - t0, ts=t2 - t1, style=t["style"],
                         est=" ".join(f"{s[2][:2]}{s[0]:.0f}" for s in est_secs)))
        if verbose:
            r = rows[-1]
            print(f"{r['name'][:34]:34s} bpm {r['bpm']:7.2f} ({r['truth']:6.1f}) a1={int(a1)} a2={int(a2)} "
                  f"bF={bf:.2f} conf={r['conf']:.2f} str={r['strength']:.2f} sal={int(r['sal'])} reg={r['reg']:.2f} "
                  f"dance={r['dance']:.2f} onr={r['onr']:.1f} | segF={bF:.2f} lab={la:.2f} {r['est']}", flush=True)
    sal = [r for r in rows if r["salient"]]
    print(f"\nSYNTH {d.name}: Acc1 {np.mean([r['a1'] for r in sal]):.3f}  Acc2 {np.mean([r['a2'] for r in sal]):.3f}"
          f"  (n={len(sal)})  beatF mean {np.mean([r['beatF'] for r in sal]):.3f}"
          f"  salient-correct {np.mean([r['sal'] == r['salient'] for r in rows]):.3f}")
    club = [r for r in rows if r["style"] in ("house", "deep_house", "tech_house", "techno", "trance", "hardstyle",
                                             "drum_and_bass", "dubstep")]
    for name, sub in (("all", rows), ("club/trance", club)):
        print(f"STRUCTURE {name}: boundary F(2s) {np.mean([r['bF'] for r in sub]):.3f}  F(1 bar) "
              f"{np.mean([r['bFbar'] for r in sub]):.3f}  label acc {np.mean([r['la'] for r in sub]):.3f}")
    print(f"time rhythm mean {np.mean([r['tr'] for r in rows])*1000:.1f} ms, structure "
          f"{np.mean([r['ts'] for r in rows])*1000:.1f} ms")
    return rows


def eval_real(manifest: Path):
    root = manifest.parent
    with open(manifest, newline="", encoding="utf-8") as fh:
        rows = [r for r in csv.DictReader(fh) if r["bpm_truth"]]
    res = []
    for r in rows:
        try:
            mono, sr, dur = load(root / r["file"])
        except Exception as exc:  # noqa: BLE001
            print("skip", r["file"], exc)
            continue
        rh = measure_rhythm(short_stft(mono, sr), dur)
        st = measure_structure(short_stft(mono, sr), dur, beat_times=rh.beat_times, bpm=rh.bpm)
        truth = float(r["bpm_truth"])
        a1, a2 = acc(rh.bpm, [truth])
        elec = any(w in (r["genre_truth"] + r["file"]).lower() for w in
                   ("break", "electronic", "808", "trance", "amen", "techno", "house", "edm", "drum"))
        res.append((r["file"], truth, rh.bpm, a1, a2, elec, rh.tempo_salient, dur, len(st.sections)))
        print(f"{r['file'][:60]:60s} {dur:5.1f}s truth {truth:6.1f} est {rh.bpm:6.1f} a1={int(a1)} a2={int(a2)} "
              f"elec={int(elec)} sal={int(rh.tempo_salient)} conf={rh.tempo_confidence:.2f}", flush=True)
    for name, sub in (("all", res), ("electronic", [x for x in res if x[5]])):
        print(f"REAL {name}: n={len(sub)} Acc1 {np.mean([x[3] for x in sub]):.3f} Acc2 {np.mean([x[4] for x in sub]):.3f}")


def eval_speed(d: Path):
    tracks = json.loads((d / "truth.json").read_text())["tracks"]
    for t in tracks:
        mono, sr, dur = load(d / t["file"])
        spec = short_stft(mono, sr)
        best_r = best_s = 1e9
        for _ in range(3):
            t0 = time.perf_counter()
            rh = measure_rhythm(spec, dur)
            t1 = time.perf_counter()
            measure_structure(spec, dur, beat_times=rh.beat_times, bpm=rh.bpm)
            t2 = time.perf_counter()
            best_r, best_s = min(best_r, t1 - t0), min(best_s, t2 - t1)
        print(f"SPEED {t['file']} {dur:.0f}s frames={spec.power.shape}: rhythm {best_r*1000:.0f} ms, "
              f"structure {best_s*1000:.0f} ms, bpm {rh.bpm} (truth {t['bpm']})")


if __name__ == "__main__":
    ap = argparse.ArgumentParser()
    ap.add_argument("--synth", type=Path)
    ap.add_argument("--real", type=Path)
    ap.add_argument("--speed", type=Path)
    a = ap.parse_args()
    if a.synth:
        eval_synth(a.synth)
    if a.real:
        eval_real(a.real)
    if a.speed:
        eval_speed(a.speed)
