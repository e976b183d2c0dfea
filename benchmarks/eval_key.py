"""Key and band-balance accuracy of the engine on the synthetic and real truth.

    python benchmarks/eval_key.py [--visible DIR] [--no-real] [--no-essentia] [-v]

* synth `visible`: MIREX weighted key score (1 correct, 0.5 fifth, 0.3 relative,
  0.2 parallel), the largest band error against `band_energy_pct` (points) and
  the largest centroid error (%).
* real clips with `key_truth` (tonic-only truths scored on the tonic).
* atonal inputs (real drum loops, white noise, near-silence): share given key=None.
* timing of bands+centroid+chroma+key on the `speed` track's long spectrum.
* with --excerpts: 1-4 s excerpts of the visible grid at three offsets, read
  from every sample and from the whole frames only (how short clips were read
  before the tail frame), Essentia beside them.
Essentia's KeyExtractor (profileType='edma') is scored in the same run when
`essentia` is importable.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

from truth import real_manifest, render_grid  # noqa: E402

from trackgrade.engine.frames import long_spectrum  # noqa: E402
from trackgrade.engine.spectrum import measure_spectrum  # noqa: E402
from trackgrade.engine.tonal import PITCH_CLASSES, measure_tonality  # noqa: E402

ATONAL_CLIPS = ("beatnet__808kick120bpm", "sonicpi__loop_amen_full", "tempocnn__drumtrack",
                "dirt__breaks152_000_AMEN", "sonicpi__loop_breakbeat", "mirdata__brid_0001")

ENHARMONIC = {"Db": "C#", "D#": "Eb", "Gb": "F#", "G#": "Ab", "A#": "Bb"}


def pc_of(name: str) -> int:
    return PITCH_CLASSES.index(ENHARMONIC.get(name, name))


def mirex_score(tonic: str | None, scale: str | None, true_tonic: str,
                true_scale: str | None) -> float:
    """MIREX weighted score; a truth without scale is scored on the tonic."""
    if tonic is None:
        return 0.0
    est, ref = pc_of(tonic), pc_of(true_tonic)
    if true_scale is None:
        return 1.0 if est == ref else 0.0
    if scale == true_scale:
        if est == ref:
            return 1.0
        if (est - ref) % 12 in (5, 7):
            return 0.5
    else:
        if true_scale == "major" and scale == "minor" and (est - ref) % 12 == 9:
            return 0.3
        if true_scale == "minor" and scale == "major" and (est - ref) % 12 == 3:
            return 0.3
        if est == ref:
            return 0.2
    return 0.0


def read(path: str) -> tuple[np.ndarray, int]:
    try:
        x, sr = sf.read(path, dtype="float32", always_2d=True)
    except (sf.LibsndfileError, RuntimeError) as exc:   # formats libsndfile lacks
        raise RuntimeError(f"cannot read {path}: {exc}") from exc
    return x, sr


def essentia_key(x: np.ndarray, sr: int):
    try:
        import essentia
        import essentia.standard as es
    except ImportError:
        return None
    essentia.log.infoActive = False
    essentia.log.warningActive = False
    mono = np.ascontiguousarray(x.mean(axis=1), dtype=np.float32)
    key, scale, strength = es.KeyExtractor(profileType="edma", sampleRate=float(sr))(mono)
    return key, scale


def engine_key(x: np.ndarray, sr: int):
    spec = long_spectrum(x, sr)
    k = measure_tonality(spec).key
    return (k.tonic, k.scale, k.confidence) if k else (None, None, 0.0), spec


def parse_truth(text: str) -> tuple[str, str | None]:
    parts = text.split()
    return parts[0], (parts[1] if len(parts) > 1 else None)


def eval_visible(directory: Path, use_essentia: bool, verbose: bool) -> dict:
    tracks = json.loads((directory / "truth.json").read_text())["tracks"]
    ours, theirs, band_err, cen_err = [], [], [], []
    for t in tracks:
        x, sr = read(str(directory / t["file"]))
        (tonic, scale, conf), spec = engine_key(x, sr)
        s = mirex_score(tonic, scale, t["tonic"], t["scale"])
        ours.append(s)
        sp = measure_spectrum(spec)
        err = max(abs(sp.bands_pct[b] - v) for b, v in t["band_energy_pct"].items())
        band_err.append(err)
        cen_err.append(100 * abs(sp.centroid_hz / t["spectral_centroid_hz"] - 1))
        es_txt = ""
        if use_essentia:
            r = essentia_key(x, sr)
            if r is not None:
                theirs.append(mirex_score(r[0], r[1], t["tonic"], t["scale"]))
                es_txt = f" essentia {r[0]} {r[1]} {theirs[-1]:.1f}"
        if verbose or s < 1:
            print(f"  {t['file']:42s} truth {t['tonic']:>2} {t['scale']:5s} -> {tonic} {scale} "
                  f"conf {conf:.2f} score {s:.1f}{es_txt}  band err {err:.2f} cen err "
                  f"{cen_err[-1]:.2f}%")
    out = {"n": len(ours), "key_score": float(np.mean(ours)), "band_err_max_pt": max(band_err),
           "centroid_err_max_pct": max(cen_err)}
    if theirs:
        out["essentia_edma_key_score"] = float(np.mean(theirs))
    return out


def eval_real(use_essentia: bool, verbose: bool) -> dict:
    rows = real_manifest()
    ours, theirs, atonal = [], [], []
    for row in rows:
        stem = Path(row["file"]).stem
        is_atonal = any(stem.startswith(a) for a in ATONAL_CLIPS) and row["variant"] == "original"
        if not row["key_truth"] and not is_atonal:
            continue
        try:
            x, sr = read(row["path"])
        except RuntimeError:
            print(f"  skip (unreadable): {row['file']}")
            continue
        (tonic, scale, conf), _ = engine_key(x, sr)
        if is_atonal:
            atonal.append(tonic is None)
            print(f"  atonal {stem[:50]:50s} -> {tonic} {scale} conf {conf:.2f}")
            continue
        true_tonic, true_scale = parse_truth(row["key_truth"])
        s = mirex_score(tonic, scale, true_tonic, true_scale)
        ours.append(s)
        es_txt = ""
        if use_essentia:
            r = essentia_key(x, sr)
            if r is not None:
                theirs.append(mirex_score(r[0], r[1], true_tonic, true_scale))
                es_txt = f" | essentia {r[0]} {r[1]} {theirs[-1]:.1f}"
        if verbose or s < 1:
            print(f"  {stem[:50]:50s} truth {row['key_truth']:8s} -> {tonic} {scale} "
                  f"conf {conf:.2f} score {s:.1f}{es_txt}")
    out = {"n": len(ours), "key_score": float(np.mean(ours)) if ours else None,
           "atonal_none_share": float(np.mean(atonal)) if atonal else None,
           "n_atonal": len(atonal)}
    if theirs:
        out["essentia_edma_key_score"] = float(np.mean(theirs))
    return out


def eval_synthetic_atonal() -> dict:
    rng = np.random.default_rng(0)
    sr = 44100
    results = {}
    noise = rng.standard_normal((sr * 20, 2)).astype(np.float32) * 0.1
    results["white_noise"] = engine_key(noise, sr)[0][0] is None
    hiss = rng.standard_normal((sr * 20, 2)).astype(np.float32) * 1e-5
    results["near_silence"] = engine_key(hiss, sr)[0][0] is None
    results["digital_silence"] = engine_key(np.zeros((sr * 5, 2), np.float32), sr)[0][0] is None
    return results


EXCERPT_SECONDS = (1.0, 2.0, 2.5, 3.0, 4.0)
EXCERPT_OFFSETS_S = (8.0, 16.0, 24.0)


def eval_excerpts(directory: Path, use_essentia: bool) -> dict:
    """Short excerpts of every visible-grid track (known key) at three offsets:
    the key read from every sample (the zero-padded tail frame included) next
    to the whole frames only (how short clips were read before), and Essentia."""
    tracks = json.loads((directory / "truth.json").read_text())["tracks"]
    audio = [read(str(directory / t["file"])) for t in tracks]
    out = {}
    for seconds in EXCERPT_SECONDS:
        scores = {"every_sample": [], "whole_frames": [], "essentia_edma": []}
        for t, (x, sr) in zip(tracks, audio):
            for offset in EXCERPT_OFFSETS_S:
                clip = x[int(offset * sr):int((offset + seconds) * sr)]
                spec = long_spectrum(clip, sr)
                for name, s in (("every_sample", spec), ("whole_frames", spec.whole_frames())):
                    k = measure_tonality(s).key
                    scores[name].append(mirex_score(k and k.tonic, k and k.scale, t["tonic"],
                                                    t["scale"]))
                r = essentia_key(clip, sr) if use_essentia else None
                if r is not None:
                    scores["essentia_edma"].append(mirex_score(r[0], r[1], t["tonic"], t["scale"]))
        new, old = np.array(scores["every_sample"]), np.array(scores["whole_frames"])
        out[f"{seconds:g}s"] = {"n": int(new.size), "every_sample": round(float(new.mean()), 3),
                                "whole_frames": round(float(old.mean()), 3),
                                "better": int((new > old).sum()), "worse": int((new < old).sum())}
        if scores["essentia_edma"]:
            out[f"{seconds:g}s"]["essentia_edma"] = round(float(np.mean(scores["essentia_edma"])), 3)
    return out


def time_speed() -> dict:
    directory, tracks = render_grid("speed")
    x, sr = read(str(directory / tracks[0]["file"]))
    spec = long_spectrum(x, sr)
    best = np.inf
    for _ in range(5):
        t0 = time.perf_counter()
        measure_spectrum(spec)
        measure_tonality(spec)
        best = min(best, time.perf_counter() - t0)
    return {"frames": spec.power.shape[0], "bins": spec.power.shape[1],
            "spectrum_plus_tonality_s": round(best, 4)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--visible", type=Path, help="rendered visible grid (default: render/cached)")
    ap.add_argument("--no-real", action="store_true")
    ap.add_argument("--no-essentia", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--excerpts", action="store_true",
                    help="also score 1-4 s excerpts of the visible grid (every sample vs whole frames)")
    ap.add_argument("--json", type=Path, help="also write the report as JSON here")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    visible = args.visible or render_grid("visible")[0]
    report = {"visible": eval_visible(visible, not args.no_essentia, args.verbose)}
    print(json.dumps(report["visible"]))
    if not args.no_real:
        report["real"] = eval_real(not args.no_essentia, args.verbose)
        print(json.dumps(report["real"]))
    if args.excerpts:
        report["excerpts"] = eval_excerpts(visible, not args.no_essentia)
        print(json.dumps(report["excerpts"]))
    report["synthetic_atonal"] = eval_synthetic_atonal()
    print(json.dumps(report["synthetic_atonal"]))
    if not args.no_speed:
        report["speed"] = time_speed()
        print(json.dumps(report["speed"]))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
