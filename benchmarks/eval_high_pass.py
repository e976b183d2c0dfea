"""Does a gentle high-pass raise the frequency pillar? (CONTRACT.md section 5,
"defects never help": a high-pass at 100-200 Hz never raises it.)

Butterworth high-passes of 6, 12 and 24 dB/octave at 100, 150 and 200 Hz on
the audio (scipy sosfilt) of the recorded-instrument family grooves
(tests/groove_specs.py), the synthetic techno renders and every real clip of
5 s or more (../shared/truth/real), each extracted in full and graded as a
master; prints items raised of N per slope and corner, the sets apart (5 min).

    python benchmarks/eval_high_pass.py
    python benchmarks/eval_high_pass.py --grid
    python benchmarks/eval_high_pass.py --readings

`--grid`: every slope (6, 12, 24, 48 dB/octave) and corner (60-250 Hz) on the
same items. Each item is extracted once; a filter is applied to its
long-term power spectrum (|H|^2 per bin: the band shares and the low rolloff
are then what the filtered audio gives, up to the frames' edges) and the
analysis graded again with the other features of the unfiltered audio.

`--readings`: two readings of the bottom octaves (the 20-28 Hz level against
the low end's strongest 1/6-octave band; 30-50 Hz against 80-125 Hz) on
every item before and after a 12 dB/octave high-pass at 100 Hz, and how many
filtered items fall inside the range the unfiltered ones span.

Run on main's code too (a checkout of main) for the figures before a grading
change: benchmarks/results/hearing.md shows the two side by side.
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import butter, sosfilt, sosfreqz

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
sys.path.insert(0, str(ROOT))

from genre_corpus import synthetic_items  # noqa: E402
from groove_specs import groove_items  # noqa: E402  (tests/groove_specs.py)

from trackgrade.engine.extract import extract  # noqa: E402
from trackgrade.engine.features import DecodedAudio  # noqa: E402
from trackgrade.engine.frames import long_spectrum  # noqa: E402
from trackgrade.engine import spectrum as spectral  # noqa: E402
from trackgrade.grading import build_analysis  # noqa: E402

CUTOFFS_HZ = (100, 150, 200)
SLOPES_DB = (6, 12, 24)


def graded(audio: DecodedAudio):
    return build_analysis(extract(audio, parallel=False), file_name="clip", mastering_status="master")


def butterworth(audio: DecodedAudio, hz: float, db_per_octave: int) -> DecodedAudio:
    sos = butter(db_per_octave // 6, hz, "highpass", fs=audio.sample_rate, output="sos")
    y = sosfilt(sos, np.asarray(audio.samples, dtype=np.float64), axis=0)
    return DecodedAudio(samples=y.astype(np.float32), sample_rate=audio.sample_rate, container=audio.container,
                        subtype=audio.subtype)


def main() -> None:
    """Real Butterworth high-passes on the audio, each extracted in full."""
    raised: dict = {}
    totals: dict = {}
    for set_name, name, audio in grid_items():
        clean = graded(audio)
        before = clean.scores.frequency_balance
        totals[set_name] = totals.get(set_name, 0) + 1
        rises = []
        for slope in SLOPES_DB:
            some = False
            for hz in CUTOFFS_HZ:
                after = graded(butterworth(audio, hz, slope)).scores.frequency_balance
                raised[(set_name, slope, hz)] = raised.get((set_name, slope, hz), 0) + (after > before)
                if after > before:
                    rises.append(f"{slope}@{hz}:{after}")
                    some = True
            raised[(set_name, slope)] = raised.get((set_name, slope), 0) + some
        print(f"{set_name:9s} {name[:40]:40s} {clean.content.kind:8s} clean {before:3d}  "
              f"raised at {' '.join(rises) or '-'}", flush=True)
    table(raised, totals, SLOPES_DB, CUTOFFS_HZ)


def table(raised: dict, totals: dict, slopes, corners) -> None:
    for set_name, n in totals.items():
        print(f"\n{set_name} (N = {n}): items whose frequency pillar rises")
        print("| slope | " + " | ".join(f"{hz} Hz" for hz in corners) + " | any corner |")
        print("|---|" + "---|" * (len(corners) + 1))
        for slope in slopes:
            cells = [str(raised.get((set_name, slope, hz), 0)) for hz in corners]
            print(f"| {slope} dB/oct | " + " | ".join(cells) + f" | {raised.get((set_name, slope), 0)} |")


def sixth_octave_db(power: np.ndarray, freqs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(lower edges, dB re the strongest) of the 1/6-octave bands from 20 to 500 Hz."""
    edges = 20.0 * 2.0 ** (np.arange(int(np.log2(500.0 / 20.0) * 6) + 1) / 6.0)
    idx = np.searchsorted(freqs, edges)
    levels = np.array([power[a:b].sum() for a, b in zip(idx[:-1], idx[1:])])
    db = 10.0 * np.log10(np.maximum(levels, levels.max() * 1e-12))
    return edges[:-1], db - db.max()


def readings(power: np.ndarray, freqs: np.ndarray) -> tuple[float, float]:
    """Two slope-aware readings of the bottom octaves: the 20-28 Hz level
    against the low end's strongest 1/6-octave band, and the 30-50 Hz level
    against 80-125 Hz (dB)."""
    edges, db = sixth_octave_db(power, freqs)

    def band(lo: float, hi: float) -> float:
        return 10.0 * np.log10(max(float(power[(freqs >= lo) & (freqs < hi)].sum()), 1e-30))
    return float(db[edges < 28.0].max()), band(30, 50) - band(80, 125)


def bottom_readings() -> None:
    """`--readings`: can the bottom octaves tell a 12 dB/octave high-pass at
    100 Hz from a natural low end? Each item's readings before and after it
    (the filter applied to the long-term power spectrum, |H|^2 per bin), and
    the range the unfiltered items span."""
    clean_rows, cut_rows = [], []
    for set_name, name, audio in grid_items():
        spec = long_spectrum(np.asarray(audio.samples), audio.sample_rate, workers=1).whole_frames()
        power, freqs = spectral.long_term_power(spec), spec.freqs
        sos = butter(2, 100, "highpass", fs=audio.sample_rate, output="sos")
        cut = power * np.abs(sosfreqz(sos, worN=freqs, fs=audio.sample_rate)[1]) ** 2
        clean_rows.append(readings(power, freqs))
        cut_rows.append(readings(cut, freqs))
        print(f"{set_name:9s} {name[:40]:40s} clean {clean_rows[-1][0]:6.1f} {clean_rows[-1][1]:6.1f}  "
              f"12 dB/oct at 100 Hz {cut_rows[-1][0]:6.1f} {cut_rows[-1][1]:6.1f}", flush=True)
    for k, what in enumerate(("20-28 Hz re the strongest", "30-50 Hz re 80-125 Hz")):
        c, f = [r[k] for r in clean_rows], [r[k] for r in cut_rows]
        print(f"{what}: unfiltered {min(c):.1f} .. {max(c):.1f}, filtered {min(f):.1f} .. {max(f):.1f} "
              f"(N = {len(c)}); filtered inside the unfiltered range: "
              f"{sum(min(c) <= v <= max(c) for v in f)} of {len(f)}")


GRID_SLOPES = (6, 12, 24, 48)
GRID_CORNERS_HZ = (60, 80, 100, 125, 150, 200, 250)


def grid_items() -> list[tuple[str, str, DecodedAudio]]:
    """(set, name, audio): recorded family grooves, synthetic techno, real clips of 5 s or more."""
    from tests.grading.real_audio import _originals, load

    out = []
    for set_name, items in (("recorded", [i for i in groove_items(6) if i.get("family")]),
                            ("synthetic", [i for i in synthetic_items(8) if i["style"] == "techno"])):
        for item in items:
            x, rate = sf.read(item["path"], dtype="float32", always_2d=True)
            out.append((set_name, item["name"], DecodedAudio(samples=x, sample_rate=rate, container="wav",
                                                             subtype="PCM_16")))
    for row in _originals():
        if float(row["duration_s"] or 0) >= 5.0:
            out.append(("real", row["file"].rsplit("/", 1)[-1], load(row["file"])))
    return out


def grid_pillar(features, power, freqs) -> int:
    spectrum = dataclasses.replace(features.spectrum, bands_pct=spectral.band_balance(power, freqs),
                                   centroid_hz=spectral.spectral_centroid(power, freqs),
                                   low_rolloff_hz=spectral.low_rolloff_hz(power, freqs))
    return build_analysis(dataclasses.replace(features, spectrum=spectrum), file_name="clip",
                          mastering_status="master").scores.frequency_balance


def grid() -> None:
    raised: dict = {}
    totals: dict = {}
    for set_name, name, audio in grid_items():
        features = extract(audio, parallel=False)
        spec = long_spectrum(np.asarray(audio.samples), audio.sample_rate, workers=1).whole_frames()
        power, freqs = spectral.long_term_power(spec), spec.freqs
        clean = grid_pillar(features, power, freqs)
        totals[set_name] = totals.get(set_name, 0) + 1
        rises = []
        for slope in GRID_SLOPES:
            some = False
            for hz in GRID_CORNERS_HZ:
                sos = butter(slope // 6, hz, "highpass", fs=audio.sample_rate, output="sos")
                gain = np.abs(sosfreqz(sos, worN=freqs, fs=audio.sample_rate)[1]) ** 2
                cut = grid_pillar(features, power * gain, freqs)
                key = (set_name, slope, hz)
                raised[key] = raised.get(key, 0) + (cut > clean)
                if cut > clean:
                    rises.append(f"{slope}@{hz}:{cut}")
                    some = True
            raised[(set_name, slope)] = raised.get((set_name, slope), 0) + some
        print(f"{set_name:9s} {name[:40]:40s} clean {clean:3d}  raised at {' '.join(rises) or '-'}", flush=True)
    table(raised, totals, GRID_SLOPES, GRID_CORNERS_HZ)


if __name__ == "__main__":
    bottom_readings() if "--readings" in sys.argv else grid() if "--grid" in sys.argv else main()
