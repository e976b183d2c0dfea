"""Does a gentle high-pass raise the frequency pillar? (CONTRACT.md section 5,
"defects never help": a high-pass at 100-200 Hz never raises it.)

Butterworth high-passes of 12 and 24 dB/octave at 100, 150 and 200 Hz on the
recorded-instrument family grooves (tests/groove_specs.py) and the synthetic
techno renders, each graded as a master through the real engine; counts the
grooves whose frequency pillar rises at some cutoff.

    python benchmarks/eval_high_pass.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy.signal import butter, sosfilt

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from genre_corpus import synthetic_items  # noqa: E402
from groove_specs import groove_items  # noqa: E402  (tests/groove_specs.py)

from trackgrade.engine.extract import extract  # noqa: E402
from trackgrade.engine.features import DecodedAudio  # noqa: E402
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


if __name__ == "__main__":
    main()
