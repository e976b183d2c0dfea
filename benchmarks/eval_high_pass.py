"""Does a gentle high-pass raise the frequency pillar? (CONTRACT.md section 5,
"defects never help": a high-pass at 100-200 Hz never raises it.)

Butterworth high-passes of 12 and 24 dB/octave at 100, 150 and 200 Hz on the
recorded-instrument family grooves (tests/groove_specs.py) and the synthetic
techno renders, each graded as a master through the real engine; counts the
grooves whose frequency pillar rises at some cutoff.

    python benchmarks/eval_high_pass.py
    python benchmarks/eval_high_pass.py --grid

`--grid`: every slope (6, 12, 24, 48 dB/octave) and corner (60-250 Hz) on the
recorded grooves of the families, the synthetic techno renders and every
real clip of 5 s or more (../shared/truth/real), counted apart. Each item is
extracted once; a filter is applied to its long-term power spectrum (|H|^2
per bin: the band shares and the low rolloff are then what the filtered
audio gives, up to the frames' edges) and the analysis graded again with the
other features of the unfiltered audio. Prints items raised of N per slope
and corner. Run both on main's code too (a checkout of main) for the figures
before a grading change: benchmarks/results/hearing.md shows the two side by side.
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
SLOPES = {"12 dB/octave": 2, "24 dB/octave": 4}


def pillar(samples: np.ndarray, rate: int, name: str) -> int:
    audio = DecodedAudio(samples=samples.astype(np.float32), sample_rate=rate, container="wav", subtype="PCM_16")
    return build_analysis(extract(audio, parallel=False), file_name=name,
                          mastering_status="master").scores.frequency_balance


def main() -> None:
    items = [i for i in groove_items(6) if i.get("family")]
    items += [i for i in synthetic_items(8) if i["style"] == "techno"]
    raised = {s: 0 for s in SLOPES}
    for item in items:
        x, rate = sf.read(item["path"], dtype="float64", always_2d=True)
        clean = pillar(x, rate, item["name"])
        row = [f"{item['name']:22s} clean {clean:3d}"]
        for slope, order in SLOPES.items():
            cut = [pillar(sosfilt(butter(order, hz, "highpass", fs=rate, output="sos"), x, axis=0), rate, item["name"])
                   for hz in CUTOFFS_HZ]
            raised[slope] += any(c > clean for c in cut)
            row.append(f"{slope} {'/'.join(map(str, cut))}")
        print("  ".join(row), flush=True)
    for slope, n in raised.items():
        print(f"{slope}: raised at some cutoff on {n} of {len(items)} grooves")


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
    for set_name, n in totals.items():
        print(f"\n{set_name} (N = {n}): items whose frequency pillar rises")
        print("| slope | " + " | ".join(f"{hz} Hz" for hz in GRID_CORNERS_HZ) + " | any corner |")
        print("|---|" + "---|" * (len(GRID_CORNERS_HZ) + 1))
        for slope in GRID_SLOPES:
            cells = [str(raised[(set_name, slope, hz)]) for hz in GRID_CORNERS_HZ]
            print(f"| {slope} dB/oct | " + " | ".join(cells) + f" | {raised[(set_name, slope)]} |")


if __name__ == "__main__":
    grid() if "--grid" in sys.argv else main()
