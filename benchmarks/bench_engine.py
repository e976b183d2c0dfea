"""Speed and memory of the engine on a 5-minute stereo 44.1 kHz track, with
peers measured in the same run.

    python benchmarks/bench_engine.py            # 5-minute track, ours + peers
    python benchmarks/bench_engine.py --long     # also 20:00 tracks (mono 22.05 kHz render, stereo 44.1 kHz tiled)
    python benchmarks/bench_engine.py --no-peers

Ours: bytes in memory -> decode -> every measurement (`pipeline.measure`),
and the whole Analysis (`pipeline.analyze`), median of --runs.
Peers (need `pip install -e '.[bench]'`): Essentia (AudioLoader +
LoudnessEBUR128 + RhythmExtractor2013 + KeyExtractor 'edma'), librosa (load +
beat_track + chroma_cqt), pyloudnorm integrated loudness alone.
Memory: a child process reports its peak RSS growth (VmHWM reset after
imports) while analyzing, against the budget 2.5 x decoded float32 + 150 MB.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))


def _median_time(fn, runs: int) -> tuple[float, object]:
    times, result = [], None
    for _ in range(runs):
        t0 = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), result


def _rss_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


def child_memory(path: str) -> None:
    """Run in a child: print peak RSS growth (MB) while analyzing `path`."""
    from trackgrade import pipeline
    import soundfile as sf
    info = sf.info(path)
    Path("/proc/self/clear_refs").write_text("5")     # reset VmHWM to the current RSS
    base = _rss_kb("VmRSS")
    data = Path(path).read_bytes()
    pipeline.analyze(data, file_name=Path(path).name)
    peak = _rss_kb("VmHWM")
    decoded_mb = info.frames * info.channels * 4 / 1e6
    print(json.dumps({"peak_growth_mb": (peak - base) / 1024, "decoded_mb": decoded_mb,
                      "budget_mb": 2.5 * decoded_mb + 150}))


def ours(path: Path, runs: int) -> dict:
    from trackgrade import pipeline
    data = path.read_bytes()
    pipeline.measure(data, file_name=path.name)                      # warm-up
    t_measure, features = _median_time(lambda: pipeline.measure(data, file_name=path.name), runs)
    t_analyze, analysis = _median_time(lambda: pipeline.analyze(data, file_name=path.name), runs)
    mem = json.loads(subprocess.run([sys.executable, __file__, "--child-mem", str(path)],
                                    capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])
    return {"measure_s": t_measure, "analyze_s": t_analyze, "stages_s": features.timings_s,
            "bpm": analysis.tempo.bpm, "key": analysis.key and f"{analysis.key.key} {analysis.key.scale}",
            "lufs": analysis.mix.loudness_lufs, **mem}


def tiled(path: Path, times: int) -> Path:
    """The track repeated `times` times as FLAC (a 20:00 stereo 44.1 kHz file from the
    5-minute one), written once next to the render cache."""
    import numpy as np
    import soundfile as sf
    out = path.with_name(f"{path.stem}_x{times}.flac")   # a 20:00 16-bit stereo WAV is over 200 MiB
    if not out.exists():
        data, rate = sf.read(str(path), dtype="int16", always_2d=True)
        sf.write(str(out), np.tile(data, (times, 1)), rate, format="FLAC", subtype="PCM_16")
    return out


def essentia_pipeline(path: Path) -> dict:
    import essentia.standard as es
    audio, rate, channels, *_ = es.AudioLoader(filename=str(path))()
    momentary, short, integrated, lra = es.LoudnessEBUR128(sampleRate=rate)(audio)
    mono = es.MonoMixer()(audio, channels)
    bpm, *_ = es.RhythmExtractor2013(method="multifeature")(mono)
    key, scale, strength = es.KeyExtractor(profileType="edma", sampleRate=rate)(mono)
    return {"bpm": bpm, "key": f"{key} {scale}", "lufs": integrated}


def librosa_pipeline(path: Path) -> dict:
    import librosa
    import numpy as np
    y, rate = librosa.load(str(path), sr=22050, mono=True)
    tempo, _ = librosa.beat.beat_track(y=y, sr=rate)
    chroma = librosa.feature.chroma_cqt(y=y, sr=rate).mean(axis=1)
    return {"bpm": float(np.atleast_1d(tempo)[0]), "chroma_argmax": int(chroma.argmax())}


def pyloudnorm_integrated(path: Path) -> dict:
    import pyloudnorm
    import soundfile as sf
    data, rate = sf.read(str(path))
    return {"lufs": pyloudnorm.Meter(rate).integrated_loudness(data)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--peer-runs", type=int, default=2)
    parser.add_argument("--long", action="store_true")
    parser.add_argument("--no-peers", action="store_true")
    parser.add_argument("--child-mem")
    args = parser.parse_args()
    if args.child_mem:
        child_memory(args.child_mem)
        return
    from truth import render_grid
    speed_dir, speed_tracks = render_grid("speed")
    track = speed_dir / speed_tracks[0]["file"]
    rows = {"ours": ours(track, args.runs)}
    if not args.no_peers:
        for name, fn in (("essentia", essentia_pipeline), ("librosa", librosa_pipeline),
                         ("pyloudnorm", pyloudnorm_integrated)):
            try:
                seconds, result = _median_time(lambda: fn(track), args.peer_runs)
                rows[name] = {"seconds": seconds, **result}
            except ImportError as exc:
                rows[name] = {"skipped": str(exc)}
    if args.long:
        long_dir, long_tracks = render_grid("long")
        for entry in long_tracks:
            if entry["seconds"] <= 1200:
                rows[f"ours_{entry['name']}"] = ours(long_dir / entry["file"], max(1, args.runs // 2))
        rows["ours_20min_stereo_44k"] = ours(tiled(track, 4), max(1, args.runs // 2))
    print(f"track: {track.name} ({speed_tracks[0]['seconds']} s, truth {speed_tracks[0]['bpm']} BPM "
          f"{speed_tracks[0]['key']}, {speed_tracks[0]['lufs_integrated']} LUFS)")
    for name, row in rows.items():
        print(f"{name:28s} " + json.dumps(row, default=float))
    if "essentia" in rows and "seconds" in rows["essentia"]:
        print(f"speed-up over Essentia: {rows['essentia']['seconds'] / rows['ours']['measure_s']:.1f}x")
    out = ROOT / "benchmarks" / "out"
    out.mkdir(exist_ok=True)
    (out / "engine.json").write_text(json.dumps(rows, indent=1, default=float))


if __name__ == "__main__":
    main()
