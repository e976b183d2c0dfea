"""Key accuracy per kind of part: trackgrade before and after, Essentia, librosa.

    python benchmarks/eval_parts.py [--seeds 2 3] [--before 2c5da6a ...] [--no-peers] [--json F]

Parts from benchmarks/gen_parts.py (held-out seeds by default: the engine's
thresholds were chosen on seeds 0-1 and on the atonal clips), the real clips
of ../shared/truth/real with a `key_truth`, and the atonal inputs (drum
loops, real drum recordings, noise, silence) scored as the share given no
key. "before <rev>" is trackgrade/engine/tonal.py (with the engine/bass.py
and engine/pitch.py of that revision, when it had them) at each given git
revision, run on the same long spectrum. MIREX weighted score (1 same, 0.5
fifth, 0.3 relative, 0.2 parallel; tonic-only truths score the tonic) and
counts of null keys and of right tonics.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import gen_parts  # noqa: E402
from eval_key import ATONAL_CLIPS, essentia_key, mirex_score, parse_truth, pc_of, read  # noqa: E402
from parts import TONIC_ONLY, drum_loop  # noqa: E402
from truth import real_manifest  # noqa: E402

from trackgrade.engine.frames import long_spectrum  # noqa: E402
from trackgrade.engine.tonal import PITCH_CLASSES, measure_tonality  # noqa: E402

KRUMHANSL_MAJOR = np.array([6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88])
KRUMHANSL_MINOR = np.array([6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17])


def _module_at(rev: str, path: str, name: str):
    """`path` as of git revision `rev`, as a module (None when it did not exist)."""
    shown = subprocess.run(["git", "-C", str(ROOT), "show", f"{rev}:{path}"],
                           capture_output=True, text=True)
    if shown.returncode != 0:
        return None
    spec = importlib.util.spec_from_loader(name, loader=None)
    module = importlib.util.module_from_spec(spec)
    exec(compile(shown.stdout, f"{path}@{rev}", "exec"), module.__dict__)
    return module


def tonal_at(rev: str):
    """trackgrade/engine/tonal.py as of git revision `rev`, as a module, with
    the engine/bass.py and engine/pitch.py of that revision when it had them."""
    saved = {}
    try:
        for name in ("bass", "pitch"):              # pitch imports bass: in this order
            module = _module_at(rev, f"trackgrade/engine/{name}.py", f"{name}_{rev}")
            if module is not None:
                key = f"trackgrade.engine.{name}"
                saved[key] = sys.modules.get(key)
                sys.modules[key] = module
        return _module_at(rev, "trackgrade/engine/tonal.py", f"tonal_{rev}")
    finally:
        for key, module in saved.items():
            if module is None:
                sys.modules.pop(key, None)
            else:
                sys.modules[key] = module


def librosa_key(x: np.ndarray, sr: int):
    import librosa
    y = librosa.resample(np.ascontiguousarray(x.mean(axis=1)), orig_sr=sr, target_sr=22050)
    chroma = librosa.feature.chroma_cqt(y=y, sr=22050).mean(axis=1)
    if not np.any(chroma > 0):
        return None
    best = max(((np.corrcoef(np.roll(profile, t), chroma)[0, 1], t, mode)
                for mode, profile in (("major", KRUMHANSL_MAJOR), ("minor", KRUMHANSL_MINOR))
                for t in range(12)))
    return PITCH_CLASSES[best[1]], best[2]


def engines(befores: dict, peers: bool) -> dict:
    """{name: fn(x, sr, spec) -> (tonic, scale)}: each earlier revision's
    engine ("before <rev>"), this tree's ("after"), and the peers."""
    def ours(module):
        def run(x, sr, spec):
            takes_samples = "samples" in inspect.signature(module.measure_tonality).parameters
            k = (module.measure_tonality(spec, x) if takes_samples else module.measure_tonality(spec)).key
            return (k.tonic, k.scale) if k else (None, None)
        return run
    out = {f"before {rev}": ours(module) for rev, module in befores.items()}
    out["after"] = ours(sys.modules[measure_tonality.__module__])
    if peers:
        out["essentia"] = lambda x, sr, spec: essentia_key(x, sr) or (None, None)
        out["librosa"] = lambda x, sr, spec: librosa_key(x, sr) or (None, None)
    return out


def score_rows(rows, tools) -> dict:
    """rows: (group, x (n, ch), sr, true_tonic, true_scale or None)."""
    table: dict = {}
    for group, x, sr, tonic, scale in rows:
        spec = long_spectrum(x, sr)
        for name, fn in tools.items():
            est_tonic, est_scale = fn(x, sr, spec)
            cell = table.setdefault(group, {}).setdefault(name, {"scores": [], "null": 0,
                                                                  "tonic": 0})
            cell["scores"].append(mirex_score(est_tonic, est_scale, tonic, scale))
            cell["null"] += est_tonic is None
            cell["tonic"] += est_tonic is not None and pc_of(est_tonic) == pc_of(tonic)
    return {g: {n: {"n": len(c["scores"]), "mirex": round(float(np.mean(c["scores"])), 3),
                    "null": c["null"], "right_tonic": c["tonic"]} for n, c in t.items()}
            for g, t in table.items()}


def part_rows(seeds):
    for item in gen_parts.grid(seeds):
        x = gen_parts.load(item)[:, None]
        group = item["kind"] + (" + drums" if item["drums"] and item["kind"] != "mix" else "")
        scale = None if item["kind"] in TONIC_ONLY else item["scale"]
        yield group, x, gen_parts.SR, PITCH_CLASSES[item["tonic_pc"]], scale


def real_rows():
    for row in real_manifest():
        if row["key_truth"]:
            x, sr = read(row["path"])
            tonic, scale = parse_truth(row["key_truth"])
            yield "real clips", x, sr, tonic, scale


def atonal_rows(seeds):
    """Drums, noise and silence: no key is right (scored as the share of nulls)."""
    rng = np.random.default_rng(7)
    for seed in seeds:
        for i in range(12):
            r = np.random.default_rng([seed, i])
            bars, beat = 4, 60.0 / float(r.choice([90, 120, 128, 140, 174]))
            n = int(bars * 4 * beat * 44100)
            x = drum_loop(r, bars, beat, 44100, n)
            yield "drum loops (synthetic)", (0.5 * x / np.abs(x).max())[:, None].astype(np.float32), 44100
    for row in real_manifest():
        stem = Path(row["file"]).stem
        if any(stem.startswith(a) for a in ATONAL_CLIPS) and row["variant"] == "original":
            yield "drum recordings (real)", read(row["path"])[0], read(row["path"])[1]
    yield "noise, silence", (0.1 * rng.standard_normal((44100 * 10, 2))).astype(np.float32), 44100
    yield "noise, silence", (1e-5 * rng.standard_normal((44100 * 5, 2))).astype(np.float32), 44100
    yield "noise, silence", np.zeros((44100 * 3, 2), np.float32), 44100


def score_atonal(rows, tools) -> dict:
    table: dict = {}
    for group, x, sr in rows:
        spec = long_spectrum(x, sr)
        for name, fn in tools.items():
            cell = table.setdefault(group, {}).setdefault(name, [])
            cell.append(fn(x, sr, spec)[0] is None)
    return {g: {n: {"n": len(v), "null": int(sum(v))} for n, v in t.items()} for g, t in table.items()}


def markdown(parts_table: dict, atonal: dict, names) -> str:
    head = "| kind of part | n | " + " | ".join(names) + " |\n|---|---|" + "---|" * len(names)
    lines = [head]
    for group, cells in parts_table.items():
        n = next(iter(cells.values()))["n"]
        lines.append(f"| {group} | {n} | " + " | ".join(
            f"{cells[t]['mirex']:.3f} ({cells[t]['right_tonic']} tonic, {cells[t]['null']} null)"
            for t in names) + " |")
    lines.append("")
    lines.append("| no pitch (null is right) | n | " + " | ".join(names) + " |")
    lines.append("|---|---|" + "---|" * len(names))
    for group, cells in atonal.items():
        n = next(iter(cells.values()))["n"]
        lines.append(f"| {group} | {n} | " + " | ".join(f"{cells[t]['null']} null" for t in names)
                     + " |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=list(gen_parts.HELD_OUT_SEEDS))
    ap.add_argument("--before", nargs="*", default=["2c5da6a"],
                    help="git revisions of the engines to compare (tonal.py and bass.py as of each)")
    ap.add_argument("--no-peers", action="store_true")
    ap.add_argument("--no-real", action="store_true")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    tools = engines({rev: tonal_at(rev) for rev in args.before}, not args.no_peers)
    t0 = time.perf_counter()
    table = score_rows(part_rows(tuple(args.seeds)), tools)
    if not args.no_real:
        table.update(score_rows(real_rows(), tools))
    atonal = score_atonal(atonal_rows(tuple(args.seeds)), tools)
    print(markdown(table, atonal, list(tools)))
    print(f"\n{time.perf_counter() - t0:.0f} s")
    if args.json:
        args.json.write_text(json.dumps({"parts": table, "atonal": atonal}, indent=2))


if __name__ == "__main__":
    main()
