"""Accuracy of tempo, key and loudness against ../shared/truth, with peers in
the same run.

    python benchmarks/bench_accuracy.py                 # synth visible grid + real clips
    python benchmarks/bench_accuracy.py --no-peers

Synthetic set (`visible` grid, 30 tracks): tempo Acc1/Acc2 over the
tempo-salient tracks (truth `acceptable_bpm`), MIREX weighted key score, and
integrated LUFS error. Real clips (manifest rows with bpm_truth / key_truth):
the same tempo and key scores, over every file, and over the electronic ones.
The engine is fed decoded samples (soundfile) so that clips our decoder
refuses as inputs (Ogg, under 2 s) still measure the engine itself.
Peers: Essentia RhythmExtractor2013 (multifeature) and KeyExtractor 'edma';
librosa beat_track and a chroma_cqt + Krumhansl key.
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
sys.path.insert(0, str(ROOT))

from metrics import key_relation, key_weighted, parse_key, tempo_acc1, tempo_acc2  # noqa: E402

from trackgrade.musical_keys import TONICS  # noqa: E402

ELECTRONIC_WORDS = ("electronic", "breakbeat", "trance", "drum", "breaks", "electronica", "house",
                    "techno", "808")


def ours(path: Path) -> dict:
    from trackgrade.engine.extract import extract
    from trackgrade.engine.features import DecodedAudio
    samples, rate = sf.read(str(path), dtype="float32", always_2d=True)
    features = extract(DecodedAudio(samples, rate, path.suffix.lstrip(".").lower(), "PCM_16"))
    key = features.tonality.key
    return {"bpm": features.rhythm.bpm, "tonic": key and parse_key(key.tonic)[0],
            "mode": key and key.scale, "lufs": features.loudness.integrated_lufs,
            "bpm_alternatives": [alt.bpm for alt in features.rhythm.tempo_alternatives],
            "key_alternatives": [(parse_key(alt.tonic)[0], alt.scale)
                                 for alt in (key.alternatives if key else ())]}


def essentia(path: Path) -> dict:
    import essentia.standard as es
    audio = es.MonoLoader(filename=str(path), sampleRate=44100)()
    bpm = es.RhythmExtractor2013(method="multifeature")(audio)[0]
    key, scale, _ = es.KeyExtractor(profileType="edma", sampleRate=44100)(audio)
    stereo, rate, *_ = es.AudioLoader(filename=str(path))()
    try:
        lufs = float(es.LoudnessEBUR128(sampleRate=rate)(stereo)[2])
    except RuntimeError:
        lufs = float("nan")
    return {"bpm": float(bpm), "tonic": parse_key(key)[0], "mode": scale, "lufs": lufs}


KRUMHANSL_MAJOR = np.array([6.35, 2.23, 3.48, 2.33, 4.38, 4.09, 2.52, 5.19, 2.39, 3.66, 2.29, 2.88])
KRUMHANSL_MINOR = np.array([6.33, 2.68, 3.52, 5.38, 2.60, 3.53, 2.54, 4.75, 3.98, 2.69, 3.34, 3.17])


def librosa_peer(path: Path) -> dict:
    import librosa
    y, rate = librosa.load(str(path), sr=22050, mono=True)
    tempo, _ = librosa.beat.beat_track(y=y, sr=rate)
    chroma = librosa.feature.chroma_cqt(y=y, sr=rate).mean(axis=1)
    best = max(((np.corrcoef(np.roll(profile, t), chroma)[0, 1], t, mode)
                for mode, profile in (("major", KRUMHANSL_MAJOR), ("minor", KRUMHANSL_MINOR))
                for t in range(12)))
    return {"bpm": float(np.atleast_1d(tempo)[0]), "tonic": best[1], "mode": best[2], "lufs": None}


def _score(rows: list[dict], tool: str) -> dict:
    tempo = [r for r in rows if r["bpm_refs"] and tool in r]
    keys = [r for r in rows if r["key_ref"] and tool in r]
    out = {"tempo_n": len(tempo), "key_n": len(keys)}
    if tempo:
        out["acc1"] = np.mean([tempo_acc1(r[tool]["bpm"], r["bpm_refs"]) for r in tempo])
        out["acc2"] = np.mean([tempo_acc2(r[tool]["bpm"], r["bpm_refs"]) for r in tempo])
    if tempo and all("bpm_alternatives" in r[tool] for r in tempo):
        out["acc1_or_alternatives"] = np.mean([
            any(tempo_acc1(b, r["bpm_refs"]) for b in [r[tool]["bpm"], *r[tool]["bpm_alternatives"]])
            for r in tempo])
    if keys:
        out["key_weighted"] = np.mean([key_weighted(r[tool]["tonic"], r[tool]["mode"], r["key_ref"])
                                       for r in keys])
        relations = [key_relation(r[tool]["tonic"], r[tool]["mode"], r["key_ref"]) for r in keys]
        out["key_relations"] = {name: relations.count(name) for name in sorted(set(relations))}
        if all("key_alternatives" in r[tool] for r in keys):
            out["key_or_alternatives"] = np.mean([
                max(key_weighted(t, m, r["key_ref"]) == 1.0 for t, m in
                    [(r[tool]["tonic"], r[tool]["mode"]), *r[tool]["key_alternatives"]])
                for r in keys])
    lufs = [abs(r[tool]["lufs"] - r["lufs_ref"]) for r in rows
            if tool in r and r.get("lufs_ref") is not None and r[tool].get("lufs") is not None]
    if lufs:
        out["lufs_max_err"] = float(np.nanmax(lufs))
        out["lufs_within_0.1"] = float(np.mean(np.array(lufs) <= 0.1))
    return {k: round(float(v), 3) if isinstance(v, (float, np.floating, bool)) else v
            for k, v in out.items()}


def _run(tools: dict, rows: list[dict]) -> dict:
    seconds = {}
    for name, fn in tools.items():
        t0 = time.perf_counter()
        for row in rows:
            try:
                row[name] = fn(Path(row["path"]))
            except Exception as exc:  # a peer that cannot read a file scores 0 on it
                row[name] = {"bpm": 0.0, "tonic": None, "mode": None, "lufs": None, "error": str(exc)}
        seconds[name] = round(time.perf_counter() - t0, 2)
    return seconds


def synth_rows() -> list[dict]:
    from truth import render_grid
    directory, tracks = render_grid("visible")
    return [{"path": str(directory / t["file"]), "name": t["name"],
             "bpm_refs": t["acceptable_bpm"] if t["tempo_salient"] else [],
             "key_ref": f"{t['tonic']} {t['scale']}", "lufs_ref": t["lufs_integrated"]} for t in tracks]


def real_rows() -> list[dict]:
    from truth import real_manifest
    rows = []
    for m in real_manifest():
        if not m["file"].startswith("clips/") or not (m["bpm_truth"] or m["key_truth"]):
            continue
        refs = [float(b) for b in m["bpm_truth"].replace("/", " ").split()[:1]] if m["bpm_truth"] else []
        text = (m["genre_truth"] + " " + m["file"]).lower()
        rows.append({"path": m["path"], "name": m["file"][6:], "bpm_refs": refs,
                     "key_ref": m["key_truth"] or None, "lufs_ref": None,
                     "electronic": any(w in text for w in ELECTRONIC_WORDS)})
    return rows


def key_table(rows: list[dict], tools) -> str:
    """One line per clip with a key annotation: the truth, then each tool's
    reading and how it relates to the truth (same, fifth, fourth, relative...)."""
    lines = []
    for r in rows:
        if not r["key_ref"]:
            continue
        cells = []
        for tool in tools:
            tonic, mode = r[tool]["tonic"], r[tool]["mode"]
            reading = "none" if tonic is None else f"{TONICS[tonic]} {mode}"
            cells.append(f"{reading} ({key_relation(tonic, mode, r['key_ref'])})")
        lines.append(f"{r['name'][:56]:56s} {r['key_ref']:8s} " + " | ".join(cells))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args()
    tools = {"ours": ours}
    if not args.no_peers:
        tools.update({"essentia": essentia, "librosa": librosa_peer})
    report = {}
    for set_name, rows in (("synth_visible", synth_rows()), ("real_clips", real_rows())):
        seconds = _run(tools, rows)
        report[set_name] = {tool: {**_score(rows, tool), "seconds": seconds[tool]} for tool in tools}
        if set_name == "real_clips":
            electronic = [r for r in rows if r["electronic"]]
            report["real_electronic"] = {tool: _score(electronic, tool) for tool in tools}
            print("key per clip: truth, then " + " | ".join(tools))
            print(key_table(rows, tools))
        if args.verbose:
            for r in rows:
                print(r["name"][:50].ljust(50), r["bpm_refs"], r["key_ref"],
                      {t: (round(r[t]["bpm"], 1), r[t]["tonic"], r[t]["mode"]) for t in tools})
    for set_name, by_tool in report.items():
        print(set_name)
        for tool, figures in by_tool.items():
            print(f"  {tool:10s} {json.dumps(figures)}")
    out = ROOT / "benchmarks" / "out"
    out.mkdir(exist_ok=True)
    (out / "accuracy.json").write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
