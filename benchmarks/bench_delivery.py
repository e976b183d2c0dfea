"""Delivery checks: what they cost and whether the codec preview is right.

    python benchmarks/bench_delivery.py agreement    # passages vs whole-track encode
    python benchmarks/bench_delivery.py speed        # whole processes, 5-minute track
    python benchmarks/bench_delivery.py mono         # CPU the mono fold-down adds
    python benchmarks/bench_delivery.py aac          # FFmpeg AAC encoder settings, whole track

agreement: every original real clip of ../shared/truth/real (edge cases left
out; --stride/--offset/--limit take a share), every track of the synthetic
`visible` grid (--grids) and the 5-minute `speed` track, each raised so its
sample peak sits at -0.1 dBFS (a master as hot as they come): the true peak
after MP3 320, AAC 256 and Opus 160 measured on the passages (what
`--codec-preview` does) against an encode of the whole track, per codec: the
largest difference, how many items agree within 0.5 dB, the share of each
item each codec encodes, the table. The passage rule was chosen on the
`defects` grid (`--grids defects` repeats that), not on these.

speed: rounds of whole processes, alternated so a busy machine slows each
alike: `trackgrade analyze --json` of this tree, the same with
`--codec-preview` (the ratio of the two medians, same run, is the figure of
issue 28), `trackgrade analyze --json` of the tree at --baseline (default
/work/main, when it exists) and, when essentia is installed, Essentia's
pipeline (bench_engine.essentia_pipeline) on the 5-minute stereo track;
medians, CPU time (wait4) and the ratios in the same run.

aac: whole-track AAC 256 encodes of the hot 5-minute track with each set of
FFmpeg `aac` options (AAC_SETTINGS): the highest true peak, the three
highest seconds and the CPU of the round trip.

mono: CPU seconds (process time, one thread) of the long spectrum of the
5-minute track with and without the mono fold-down's collector, median of
rounds.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))


def speed_track() -> Path:
    from truth import render_grid
    folder, tracks = render_grid("speed")
    return folder / tracks[0]["file"]


def hot(samples: np.ndarray) -> np.ndarray:
    peak = float(np.max(np.abs(samples)))
    return (samples * (10 ** (-0.1 / 20) / peak)).astype(np.float32) if peak > 0 else samples


def agreement(limit: int | None, stride: int = 1, offset: int = 0,
              grids: tuple[str, ...] = ("visible",)) -> None:
    from trackgrade.engine.codecs import CODECS, codec_peaks, encode_spans, passages
    from trackgrade.engine.decode import decode
    from trackgrade.engine.loudness import measure_loudness
    from trackgrade.errors import TrackgradeError
    from truth import real_manifest, render_grid

    items = [(r["file"], Path(r["path"])) for r in real_manifest()
             if r["variant"] == "original" and r["category"] != "edge-case"]
    items = items[offset::stride][:limit] if limit else items[offset::stride]
    for grid in grids:
        folder, tracks = render_grid(grid)
        items += [(f"{grid}/{t['file']}", folder / t["file"]) for t in tracks]
    items.append(("speed_techno_5min.wav", speed_track()))
    rows = []
    skipped = []
    for name, path in items:
        try:
            audio = decode(path.read_bytes(), file_name=path.name)
        except TrackgradeError as exc:              # formats the service does not take
            skipped.append(f"{name}: {exc.message}")
            continue
        x = hot(audio.samples)
        loud = measure_loudness(x, audio.sample_rate)          # the original true peak
        t0 = time.process_time()
        quick = codec_peaks(x, audio.sample_rate)
        t_quick = time.process_time() - t0
        t0 = time.process_time()
        whole = codec_peaks(x, audio.sample_rate, whole_track=True)
        t_whole = time.process_time() - t0
        windows = passages(x, audio.sample_rate)
        spans = {c: encode_spans(windows, c, audio.sample_rate, x.shape[0]) for c, *_ in CODECS}
        covered = {c: round(sum(e - s for (s, e), _ in v) / x.shape[0], 3) for c, v in spans.items()}
        row = {"file": name, "seconds": round(audio.duration_s, 1), "rate": audio.sample_rate,
               "spans": {c: len(v) for c, v in spans.items()},
               "true_peak": round(loud.true_peak_dbtp, 2), "covered": covered,
               "cpu_quick_s": round(t_quick, 2), "cpu_whole_s": round(t_whole, 2)}
        for q, w in zip(quick, whole):
            row[q.codec] = {"quick": round(q.true_peak_dbtp, 2), "whole": round(w.true_peak_dbtp, 2),
                            "diff": round(q.true_peak_dbtp - w.true_peak_dbtp, 2)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    summary = {"items": len(rows), "skipped": skipped}
    for codec, *_ in CODECS:
        diffs = [r[codec]["diff"] for r in rows]
        rises = [r[codec]["whole"] - r["true_peak"] for r in rows]
        summary[codec] = {"max_abs_diff_db": max(abs(d) for d in diffs),
                          "median_diff_db": statistics.median(diffs),
                          "within_0_5_db": sum(abs(d) <= 0.5 for d in diffs),
                          "median_rise_db": round(statistics.median(rises), 2),
                          "max_rise_db": round(max(rises), 2)}
    summary["cpu_quick_s_median"] = statistics.median(r["cpu_quick_s"] for r in rows)
    summary["cpu_whole_s_median"] = statistics.median(r["cpu_whole_s"] for r in rows)
    summary["items_encoded_in_passages"] = sum(min(r["covered"].values()) < 1 for r in rows)
    print(json.dumps(summary, indent=1))
    print(table(rows))
    out = ROOT / "benchmarks" / "out"
    out.mkdir(exist_ok=True)
    (out / "delivery_agreement.json").write_text(json.dumps({"summary": summary, "rows": rows},
                                                            indent=1))


def table(rows: list[dict]) -> str:
    """The agreement rows as a Markdown table: passages minus whole track, dB,
    and the share of the item each codec encodes (1 = the whole track)."""
    from trackgrade.engine.codecs import CODECS

    names = [c[0] for c in CODECS]
    lines = ["| item | s | share encoded " + "/".join(names) + " | "
             + " | ".join(f"{c} whole / passages / diff" for c in names) + " |",
             "|---|---:|---:|" + "---:|" * len(names)]
    for r in rows:
        share = "/".join(f"{r['covered'][c]:.2f}" for c in names)
        cells = [f"{r[c]['whole']:+.2f} / {r[c]['quick']:+.2f} / {r[c]['diff']:+.2f}" for c in names]
        lines.append(f"| {r['file']} | {r['seconds']} | {share} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


PEER = """
import json, sys
sys.path.insert(0, {bench!r})
from pathlib import Path
import bench_engine
result = bench_engine.essentia_pipeline(Path(sys.argv[1]))
Path(sys.argv[2]).write_text(json.dumps(result, default=float))
"""


def run_once(cmd: list[str], pythonpath: Path, workdir: Path) -> tuple[float, float]:
    env = dict(os.environ, PYTHONPATH=str(pythonpath))
    with open(workdir / "out.json", "wb") as sink, open(workdir / "err.txt", "wb") as err:
        t0 = time.perf_counter()
        child = subprocess.Popen(cmd, stdout=sink, stderr=err, env=env, cwd=workdir)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError((workdir / "err.txt").read_text(errors="replace")[-800:])
    return wall, usage.ru_utime + usage.ru_stime


def speed(rounds: int, baseline: Path, baseline_preview: bool = False) -> None:
    track = speed_track()
    with tempfile.TemporaryDirectory() as tmp:
        workdir = Path(tmp)
        out = str(workdir / "peer.json")
        contenders = {
            "analyze": ([sys.executable, "-m", "trackgrade", "analyze", str(track), "--json"], ROOT),
            "analyze --codec-preview": ([sys.executable, "-m", "trackgrade", "analyze", str(track),
                                         "--json", "--codec-preview"], ROOT),
        }
        if importlib.util.find_spec("essentia") is not None:
            contenders["essentia"] = ([sys.executable, "-c",
                                       PEER.format(bench=str(ROOT / "benchmarks")), str(track),
                                       out], ROOT)
        if (baseline / "trackgrade").is_dir():
            contenders["analyze (baseline)"] = (
                [sys.executable, "-m", "trackgrade", "analyze", str(track), "--json"], baseline)
            if baseline_preview:
                contenders["analyze --codec-preview (baseline)"] = (
                    [sys.executable, "-m", "trackgrade", "analyze", str(track), "--json",
                     "--codec-preview"], baseline)
        for cmd, path in contenders.values():           # warm caches and .pyc files
            run_once(cmd, path, workdir)
        times = {name: [] for name in contenders}
        cpu = {name: [] for name in contenders}
        load_before = os.getloadavg()[0]
        for r in range(rounds):
            for name, (cmd, path) in contenders.items():
                wall, used = run_once(cmd, path, workdir)
                times[name].append(wall)
                cpu[name].append(used)
            print(f"round {r + 1}: " + "  ".join(f"{n} {times[n][-1]:.2f}s" for n in contenders),
                  flush=True)
    report = {"rounds": rounds, "load_before": load_before, "load_after": os.getloadavg()[0],
              "track": track.name, "results": {}}
    ess = times.get("essentia")
    for name in contenders:
        report["results"][name] = {
            "median_s": round(statistics.median(times[name]), 3),
            "cpu_median_s": round(statistics.median(cpu[name]), 3)}
        if ess:
            report["results"][name].update(
                essentia_over_this=round(statistics.median(e / t for e, t in
                                                           zip(ess, times[name])), 3),
                cpu_essentia_over_this=round(statistics.median(cpu["essentia"]) /
                                             statistics.median(cpu[name]), 3))
    plain, preview = times["analyze"], times["analyze --codec-preview"]
    report["cpu_codec_preview_over_plain"] = round(
        statistics.median(cpu["analyze --codec-preview"]) / statistics.median(cpu["analyze"]), 3)
    report["codec_preview_over_plain"] = {      # round by round: both ran back to back
        "median": round(statistics.median(c / p for c, p in zip(preview, plain)), 3),
        "of_medians": round(statistics.median(preview) / statistics.median(plain), 3)}
    print(json.dumps(report, indent=1))
    out_dir = ROOT / "benchmarks" / "out"
    out_dir.mkdir(exist_ok=True)
    (out_dir / "delivery_speed.json").write_text(json.dumps(report, indent=1))


AAC_SETTINGS = {"defaults (twoloop)": {}, "fast": {"aac_coder": "fast"},
                "fast, pns off": {"aac_coder": "fast", "aac_pns": "0"},
                "fast, tns off": {"aac_coder": "fast", "aac_tns": "0"},
                "fast, is off": {"aac_coder": "fast", "aac_is": "0"},
                "fast, pns/is/tns off": {"aac_coder": "fast", "aac_pns": "0", "aac_is": "0",
                                          "aac_tns": "0"}}


def aac_settings() -> None:
    from trackgrade.engine.codecs import round_trip
    from trackgrade.engine.decode import decode
    from trackgrade.engine.loudness import true_peak_dbtp

    audio = decode(speed_track().read_bytes(), file_name="speed.wav")
    x, rate = hot(audio.samples), audio.sample_rate
    print(json.dumps({"original_true_peak_dbtp": round(true_peak_dbtp(x), 2)}))
    for name, options in AAC_SETTINGS.items():
        t0 = time.process_time()
        decoded, out_rate = round_trip(x, rate, "aac", options)
        cpu = time.process_time() - t0
        seconds = [true_peak_dbtp(decoded[i:i + out_rate])
                   for i in range(0, decoded.shape[0] - out_rate, out_rate)]
        top = sorted(range(len(seconds)), key=lambda i: -seconds[i])[:3]
        print(json.dumps({"options": name, "true_peak_dbtp": round(max(seconds), 2),
                          "top_seconds": {i: round(seconds[i], 2) for i in top},
                          "cpu_s": round(cpu, 1)}), flush=True)


def mono(rounds: int) -> None:
    from trackgrade.engine.decode import decode
    from trackgrade.engine.frames import long_grid, long_spectrum
    from trackgrade.engine.mono import ChannelBands, measure_mono

    audio = decode(speed_track().read_bytes(), file_name="speed.wav")
    x, rate = audio.samples, audio.sample_rate
    plain, folded = [], []
    for _ in range(rounds):
        t0 = time.process_time()
        long_spectrum(x, rate, workers=1)
        plain.append(time.process_time() - t0)
        t0 = time.process_time()
        sink = ChannelBands(*long_grid(rate, x.shape[0]))
        spec = long_spectrum(x, rate, workers=1, sink=sink)
        measure_mono(sink, spec.frame_weights(), 1.0)
        folded.append(time.process_time() - t0)
    p, f = statistics.median(plain), statistics.median(folded)
    print(json.dumps({"rounds": rounds, "long_spectrum_cpu_s": round(p, 3),
                      "with_mono_fold_cpu_s": round(f, 3), "added_cpu_s": round(f - p, 3)}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("agreement", "speed", "mono", "aac"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--limit", type=int, default=None, help="agreement: first N clips only")
    parser.add_argument("--stride", type=int, default=1, help="agreement: every Nth clip only")
    parser.add_argument("--offset", type=int, default=0, help="agreement: starting at this clip")
    parser.add_argument("--grids", default="visible",
                        help="agreement: synthetic grids besides the speed track (comma-separated)")
    parser.add_argument("--baseline", type=Path, default=Path("/work/main"))
    parser.add_argument("--baseline-preview", action="store_true",
                        help="speed: also time --codec-preview of the baseline tree")
    args = parser.parse_args()
    if args.what == "agreement":
        agreement(args.limit, args.stride, args.offset,
                  tuple(g for g in args.grids.split(",") if g))
    elif args.what == "speed":
        speed(args.rounds, args.baseline, args.baseline_preview)
    elif args.what == "aac":
        aac_settings()
    else:
        mono(args.rounds)


if __name__ == "__main__":
    main()
