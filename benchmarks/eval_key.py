"""Key accuracy of the engine beside its peers, in one run.

    python benchmarks/eval_key.py [--split held|fit|all] [--no-real] [--no-renders]
                                  [--visible] [--no-speed] [--json FILE] [-v]

Every run scores three methods on the same audio:

* trackgrade: `measure_tonality` on the long spectrum, as `analyze` runs it;
* Essentia's `KeyExtractor(profileType="edma")`;
* the textbook baseline: librosa `chroma_cqt` averaged over the clip,
  correlated with the Krumhansl-Schmuckler major and minor profiles, the
  best of 24 (`textbook_key`).

MIREX weighted (1 same key, 0.5 a fifth away in the same mode, 0.3 relative,
0.2 parallel; a truth without a scale, such as a wobble named by its root, is
scored on the tonic), per kind of part and with/without drums, on

* the real clips of ../shared/truth/real that carry `key_truth` (original
  encodings only: the wav/flac conversions are the same audio);
* the recorded-instrument renders of benchmarks/key_material.py (`--split held`,
  the default, scores only items whose instruments and progressions no rule
  was fitted on);
* atonal inputs (real drum loops, white noise, near-silence, silence): the
  share given key=None;
* with --visible, the synthetic `visible` grid too.

librosa and essentia are the `bench` extra (benchmark-only). On a busy
machine the peers take most of a run (~1-6 s per item against trackgrade's
~0.05 s): their answers are kept in PEER_CACHE (under TRACKGRADE_CACHE),
keyed by a hash of the decoded samples, the method and the peer's version,
so a peer is rerun whenever the audio or the peer changes (--fresh-peers:
rerun them all).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np
import soundfile as sf

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import key_material  # noqa: E402
from truth import CACHE, real_manifest, render_grid, render_recorded  # noqa: E402

from trackgrade.engine.frames import long_spectrum  # noqa: E402
from trackgrade.engine.spectrum import measure_spectrum  # noqa: E402
from trackgrade.engine.tonal import PITCH_CLASSES, measure_tonality  # noqa: E402

ATONAL_CLIPS = ("beatnet__808kick120bpm", "sonicpi__loop_amen_full", "tempocnn__drumtrack",
                "dirt__breaks152_000_AMEN", "sonicpi__loop_breakbeat", "mirdata__brid_0001")
# what each real clip with a key is (kind of part, drums or not)
REAL_KINDS = {
    "mirdata__gtzan_country": ("mix", True),
    "mirdata__giantsteps_key_10089": ("mix", True),
    "mirdata__beatport_key_100066": ("mix", True),
    "mirdata__tonality_classicaldb": ("mix", False),
    "librosa__Hungarian_Dance": ("mix", False),
    "librosa__sorohanro_-_solo-trumpet": ("melody", False),
    "sonicpi__loop_drone_g": ("pad", False),
    "sonicpi__bass_trance_c": ("bass", False),
    "sonicpi__bass_dnb_f": ("bass", False),
    "sonicpi__bass_voxy_c": ("wobble", False),
}
METHODS = ("trackgrade", "essentia", "textbook")
PEERS = ("essentia", "textbook")
PEER_CACHE = CACHE / "key_peers.json"
ENHARMONIC = {"Db": "C#", "D#": "Eb", "Gb": "F#", "G#": "Ab", "A#": "Bb"}
# Krumhansl & Kessler (1982) probe-tone profiles, tonic first
KS_MAJOR = np.array([6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88])
KS_MINOR = np.array([6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17])


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


def parse_truth(text: str) -> tuple[str, str | None]:
    parts = text.split()
    return parts[0], (parts[1] if len(parts) > 1 else None)


def essentia_key(x: np.ndarray, sr: int):
    try:
        import essentia
        import essentia.standard as es
    except ImportError:
        return None
    essentia.log.infoActive = False
    essentia.log.warningActive = False
    mono = np.ascontiguousarray(x.mean(axis=1), dtype=np.float32)
    key, scale, _ = es.KeyExtractor(profileType="edma", sampleRate=float(sr))(mono)
    return ENHARMONIC.get(key, key), scale


def ks_key(chroma: np.ndarray) -> tuple[str, str]:
    """The best of the 24 Krumhansl-Schmuckler correlations of a (12,) chroma."""
    corr = [np.corrcoef(chroma, np.roll(profile, t))[0, 1]
            for profile in (KS_MAJOR, KS_MINOR) for t in range(12)]
    best = int(np.argmax(corr))
    return PITCH_CLASSES[best % 12], ("major", "minor")[best // 12]


def textbook_key(x: np.ndarray, sr: int):
    import librosa
    chroma = librosa.feature.chroma_cqt(y=np.ascontiguousarray(x.mean(axis=1)), sr=sr)
    return ks_key(chroma.mean(axis=1))


def trackgrade_key(x: np.ndarray, sr: int):
    k = measure_tonality(long_spectrum(x, sr), x).key
    return (k.tonic, k.scale) if k else (None, None)


def peer_version(method: str) -> str:
    """The installed version of the peer's package ("absent" without it)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version({"essentia": "essentia", "textbook": "librosa"}[method])
    except PackageNotFoundError:
        return "absent"


class PeerAnswers:
    """The peers' answers by (method, peer version, sha1 of the samples and rate)."""

    def __init__(self, path: Path | None):
        self.path = path
        self.answers = json.loads(path.read_text()) if path and path.is_file() else {}
        self.dirty = 0

    def key(self, method: str, x: np.ndarray, sr: int) -> str:
        digest = hashlib.sha1(np.ascontiguousarray(x, np.float32).tobytes())
        digest.update(str(sr).encode())
        return f"{method} {peer_version(method)} {digest.hexdigest()}"

    def get(self, method: str, x: np.ndarray, sr: int, compute):
        if self.path is None:
            return compute()
        k = self.key(method, x, sr)
        if k not in self.answers:
            self.answers[k] = list(compute())
            self.dirty += 1
            if self.dirty % 20 == 0:
                self.save()
        return tuple(self.answers[k])

    def save(self) -> None:
        if self.path is not None and self.dirty:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.answers))


PEER_ANSWERS = PeerAnswers(None)


def run_methods(x: np.ndarray, sr: int, methods=METHODS) -> dict:
    fns = {"trackgrade": trackgrade_key, "essentia": essentia_key, "textbook": textbook_key}
    return {m: (PEER_ANSWERS.get(m, x, sr, lambda m=m: fns[m](x, sr)) if m in PEERS else fns[m](x, sr))
            for m in methods}


def table(rows: list[dict], title: str) -> dict:
    """Mean MIREX score per method, per kind x drums, per kind, and overall."""
    groups = defaultdict(list)
    for r in rows:
        for g in (f"{r['kind']} {'+drums' if r['drums'] else 'dry'}", r["kind"], "all"):
            groups[g].append(r)
    out = {}
    print(f"\n{title}\n{'group':18s} {'n':>4s} " + " ".join(f"{m:>10s}" for m in METHODS))
    for g in sorted(groups, key=lambda g: (g == "all", g)):
        items = groups[g]
        means = {m: float(np.mean([r["scores"][m] for r in items])) for m in METHODS}
        out[g] = {"n": len(items), **{m: round(v, 3) for m, v in means.items()}}
        flag = "" if means["trackgrade"] >= max(means["essentia"], means["textbook"]) - 1e-9 else \
            f"  BELOW by {max(means['essentia'], means['textbook']) - means['trackgrade']:.3f}"
        print(f"{g:18s} {len(items):4d} " + " ".join(f"{means[m]:10.3f}" for m in METHODS) + flag)
    return out


def score_item(x, sr, tonic, scale, kind, drums, name, verbose, methods=METHODS) -> dict:
    found = run_methods(x, sr, methods)
    scores = {m: mirex_score(*found[m], tonic, scale) for m in methods}
    if verbose or scores["trackgrade"] < max(scores.values()):
        print(f"  {name[:48]:48s} {tonic:>2} {str(scale):5s} " + " | ".join(
            f"{m[:5]} {found[m][0]} {found[m][1]} {scores[m]:.1f}" for m in methods))
    return {"name": name, "kind": kind, "drums": drums, "scores": scores, "found": found}


def eval_real(verbose: bool) -> tuple[list[dict], dict]:
    rows, atonal = [], {}
    for row in real_manifest():
        stem = Path(row["file"]).stem
        if row["variant"] != "original":
            continue
        if any(stem.startswith(a) for a in ATONAL_CLIPS):
            x, sr = read(row["path"])
            atonal[stem] = trackgrade_key(x, sr)[0] is None
            continue
        if not row["key_truth"]:
            continue
        kind, drums = next(v for k, v in REAL_KINDS.items() if stem.startswith(k))
        x, sr = read(row["path"])
        rows.append(score_item(x, sr, *parse_truth(row["key_truth"]), kind, drums, stem, verbose))
    return rows, atonal


def eval_renders(split: str | None, verbose: bool) -> list[dict]:
    items = key_material.items(split)
    paths = render_recorded([i["spec"] for i in items], skip=False)
    rows = []
    for item, path in zip(items, paths):
        x, sr = read(str(path))
        rows.append(score_item(x, sr, item["tonic"], item["scale"], item["kind"], item["drums"],
                               item["spec"]["name"], verbose))
    return rows


def eval_visible(verbose: bool) -> list[dict]:
    directory, tracks = render_grid("visible")
    rows = []
    for t in tracks:
        x, sr = read(str(directory / t["file"]))
        rows.append(score_item(x, sr, t["tonic"], t["scale"], "synth", False, t["file"], verbose))
    return rows


def eval_synthetic_atonal() -> dict:
    rng = np.random.default_rng(0)
    sr = 44100
    noise = rng.standard_normal((sr * 20, 2)).astype(np.float32) * 0.1
    hiss = rng.standard_normal((sr * 20, 2)).astype(np.float32) * 1e-5
    return {"white_noise": trackgrade_key(noise, sr)[0] is None,
            "near_silence": trackgrade_key(hiss, sr)[0] is None,
            "digital_silence": trackgrade_key(np.zeros((sr * 5, 2), np.float32), sr)[0] is None}


def time_key_stage() -> dict:
    """The key stage's CPU on the `speed` track's long spectrum, beside the
    spectrum's bands (best of 5, process CPU seconds)."""
    directory, tracks = render_grid("speed")
    x, sr = read(str(directory / tracks[0]["file"]))
    spec = long_spectrum(x, sr)

    def best_of(fn) -> float:
        best = np.inf
        for _ in range(5):
            t0 = time.process_time()
            fn()
            best = min(best, time.process_time() - t0)
        return round(best, 4)

    t0 = time.process_time()
    long_spectrum(x, sr)
    return {"seconds": round(len(x) / sr, 1), "long_spectrum_cpu_s": round(time.process_time() - t0, 4),
            "spectrum_cpu_s": best_of(lambda: measure_spectrum(spec)),
            "tonality_cpu_s": best_of(lambda: measure_tonality(spec, x))}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=("held", "fit", "all"), default="held")
    ap.add_argument("--no-real", action="store_true")
    ap.add_argument("--no-renders", action="store_true")
    ap.add_argument("--no-speed", action="store_true")
    ap.add_argument("--visible", action="store_true", help="also the synthetic visible grid")
    ap.add_argument("--json", type=Path, help="also write the report as JSON here")
    ap.add_argument("--fresh-peers", action="store_true",
                    help="rerun the peers on every item (default: reuse their answers on the same audio)")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    global PEER_ANSWERS
    PEER_ANSWERS = PeerAnswers(None if args.fresh_peers else PEER_CACHE)
    report = {}
    if not args.no_real:
        rows, atonal = eval_real(args.verbose)
        report["real"] = table(rows, f"real clips with a key ({len(rows)})")
        report["real_atonal_none"] = atonal
        print("real atonal clips given no key:", atonal)
    if not args.no_renders:
        split = None if args.split == "all" else args.split
        rows = eval_renders(split, args.verbose)
        report["renders"] = table(rows, f"recorded-instrument renders, split {args.split} "
                                        f"({len(rows)})")
    if args.visible:
        rows = eval_visible(args.verbose)
        report["visible"] = table(rows, f"synthetic visible grid ({len(rows)})")
    PEER_ANSWERS.save()
    report["synthetic_atonal"] = eval_synthetic_atonal()
    print("synthetic atonal given no key:", report["synthetic_atonal"])
    if not args.no_speed:
        report["speed"] = time_key_stage()
        print(json.dumps(report["speed"]))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
