"""Speed and agreement of the loudness / dynamics / stereo stage.

    python benchmarks/bench_loudness.py [--file TRACK] [--runs 7]

Default track: the `speed` grid (5:00 stereo 44.1 kHz techno, rendered and
cached by tests/truth.py). Prints the median wall time of each function over
`--runs` runs (this machine is shared: medians, not minima), the values next
to the file's truth, and pyloudnorm's integrated loudness and time on the same
samples when pyloudnorm is installed.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

import numpy as np
import soundfile as sf

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from trackgrade.engine import loudness as L  # noqa: E402
from trackgrade.engine.dynamics import measure_dynamics  # noqa: E402
from trackgrade.engine.stereo import channel_gram, measure_stereo  # noqa: E402


def _median_time(fn, runs: int):
    """(median wall seconds, result); `_median_time.cpu` holds the median CPU seconds
    of this process (all threads), steadier than wall time on a busy machine."""
    times, cpu, result = [], [], None
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    _median_time.cpu = statistics.median(cpu)
    _median_time.best = min(times)
    return statistics.median(times), result


def _track(path: str | None):
    if path:
        return Path(path), None
    import truth
    directory, entries = truth.render_grid("speed")
    return directory / entries[0]["file"], entries[0]


def _stage(samples, sr):
    loud = L.measure_loudness(samples, sr)
    gram = channel_gram(samples)
    return loud, measure_dynamics(samples, sr, loud, gram=gram), measure_stereo(samples, gram=gram)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file")
    parser.add_argument("--runs", type=int, default=7)
    args = parser.parse_args()
    path, entry = _track(args.file)
    samples, sr = sf.read(str(path), dtype="float32", always_2d=True)
    print(f"{path.name}: {samples.shape[0]} frames x {samples.shape[1]} ch @ {sr} Hz, "
          f"median of {args.runs} runs")
    hop = int(round(0.1 * sr))
    energies = L.hop_energies(samples, sr)
    loud = L.measure_loudness(samples, sr)
    gram = channel_gram(samples)
    rows = [
        ("hop_energies (K-weighting)", lambda: L.hop_energies(samples, sr)),
        ("integrated (from energies)", lambda: L.integrated_from_energies(energies, hop)),
        ("LRA (from energies)", lambda: L.lra_from_energies(energies, hop)),
        ("true_peak_dbtp", lambda: L.true_peak_dbtp(samples)),
        ("sample_peak_dbfs", lambda: L.sample_peak_dbfs(samples)),
        ("measure_loudness (all)", lambda: L.measure_loudness(samples, sr)),
        ("channel_gram", lambda: channel_gram(samples)),
        ("measure_stereo (gram shared)", lambda: measure_stereo(samples, gram=gram)),
        ("measure_dynamics (gram shared)", lambda: measure_dynamics(samples, sr, loud, gram=gram)),
        ("whole stage (loudness+dynamics+stereo)", lambda: _stage(samples, sr)),
    ]
    for name, fn in rows:
        seconds, _ = _median_time(fn, args.runs)
        print(f"  {name:40s} {seconds * 1000:8.1f} ms wall (min {_median_time.best * 1000:6.1f})"
              f" {_median_time.cpu * 1000:8.1f} ms cpu")
    loud, dyn, st = _stage(samples, sr)
    measured = {"lufs_integrated": loud.integrated_lufs, "loudness_range_lu": loud.loudness_range_lu,
                "true_peak_dbtp": loud.true_peak_dbtp, "sample_peak_dbfs": loud.sample_peak_dbfs,
                "rms_dbfs": dyn.rms_dbfs, "clipping_pct": dyn.clipping_pct,
                "stereo_width": st.width, "stereo_correlation": st.correlation}
    for key, value in measured.items():
        want = entry.get(key) if entry else None
        print(f"  {key:20s} {value:10.4f}" + (f"   truth {want}" if want is not None else ""))
    print(f"  crest {dyn.crest_factor_db:.2f} dB, dynamic complexity {dyn.dynamic_complexity_db:.2f} dB, "
          f"rms_mean {dyn.rms_mean:.4f}")
    try:
        import pyloudnorm
    except ImportError:
        print("  pyloudnorm not installed: no comparison")
        return
    meter = pyloudnorm.Meter(sr)              # BS.1770-4 K-weighting, 400 ms blocks
    runs = max(1, min(3, args.runs))
    seconds, value = _median_time(lambda: meter.integrated_loudness(samples.astype(np.float64)), runs)
    ours, _ = _median_time(lambda: L.integrated_loudness(samples, sr), args.runs)
    print(f"  pyloudnorm integrated {value:.4f} LUFS in {seconds * 1000:.0f} ms "
          f"(median of {runs}); ours {loud.integrated_lufs:.4f} LUFS in {ours * 1000:.0f} ms; "
          f"difference {loud.integrated_lufs - value:+.4f} LU")
    print(json.dumps({"file": path.name, "ours_ms": round(ours * 1000, 1),
                      "pyloudnorm_ms": round(seconds * 1000, 1)}))


if __name__ == "__main__":
    main()
