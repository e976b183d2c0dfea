"""Recorded-instrument grooves with exact truth (tests/truth_gen/recorded.py
specs): music outside the electronic families (hip-hop, lofi, trap,
reggaeton, samba, rock, jazz swing, pop) and grooves of the families
themselves, at varied tempi, kits, keys and seeds. What the genre model's
"outside" class and its evaluation read (benchmarks/genre_corpus.py), and the
tempo-level material (benchmarks/eval_tempo_level.py).

    python tests/groove_specs.py [--per-style N]     # renders them (cached)

Each style is a drum pattern (beats, roles) plus a bass line and chords in
the style's instruments; `STYLES` names each style's family (None: outside),
tempo range, swing and whether it is played (humanized) or sequenced.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))

# style -> (family or None, (bpm lo, hi), swing range, humanize_ms)
STYLES = {
    "hiphop": (None, (84, 96), (0.0, 0.2), 4.0),
    "lofi": (None, (65, 78), (0.15, 0.3), 8.0),
    "trap": (None, (130, 150), (0.0, 0.0), 0.0),
    "reggaeton": (None, (88, 100), (0.0, 0.0), 2.0),
    "samba": (None, (92, 106), (0.0, 0.05), 8.0),
    "rock": (None, (100, 140), (0.0, 0.0), 9.0),
    "jazz": (None, (110, 190), (0.33, 0.33), 10.0),
    "pop": (None, (95, 125), (0.0, 0.0), 3.0),
    "house": ("house", (120, 128), (0.0, 0.1), 0.0),
    "techno": ("techno", (128, 138), (0.0, 0.0), 0.0),
    "drum_and_bass": ("drum_and_bass", (168, 176), (0.0, 0.0), 0.0),
    "dubstep": ("dubstep", (138, 142), (0.0, 0.0), 0.0),
    "trance": ("trance", (136, 140), (0.0, 0.0), 0.0),
}
OUTSIDE = tuple(k for k, v in STYLES.items() if v[0] is None)
MINOR, MAJOR = (0, 3, 7, 10), (0, 4, 7, 11)


def _drums(style: str, bars: int, rng: np.random.Generator) -> list:
    """[[beat, role, velocity], ...] for `bars` bars of 4 beats."""
    hits = []

    def add(beat, role, vel=100):
        hits.append([round(float(beat), 4), role, int(np.clip(vel + rng.normal(0, 6), 20, 127))])

    for bar in range(bars):
        o = 4.0 * bar
        if style in ("hiphop", "lofi"):
            kicks = ([0, 1.75, 2.5] if rng.random() < 0.5 else [0, 0.75, 2.25, 2.5])
            for k in kicks:
                add(o + k, "kick", 110)
            for s in (1, 3):
                add(o + s, "snare", 105)
            step = 0.25 if style == "hiphop" and rng.random() < 0.6 else 0.5
            for h in np.arange(0, 4, step):
                add(o + h, "closed_hat", 70 if (h % 1) else 85)
        elif style == "trap":          # half time: the snare on beat 3 of the bar
            for k in ([0, 1.75, 2.75] if bar % 2 == 0 else [0, 0.75, 2.5, 3.25]):
                add(o + k, "kick", 115)
            add(o + 2, "clap", 110)
            for h in np.arange(0, 4, 0.25):
                add(o + h, "closed_hat", 80)
            roll = float(rng.choice([1.5, 3.5]))
            for r in np.arange(roll, roll + 0.5, 1 / 12):       # a triplet roll
                add(o + r, "closed_hat", 65)
        elif style == "reggaeton":     # dembow
            for b in range(4):
                add(o + b, "kick", 110)
            for s in (0.75, 1.5, 2.75, 3.5):
                add(o + s, "snare", 100)
            for h in np.arange(0, 4, 0.5):
                add(o + h, "closed_hat", 70)
        elif style == "samba":         # surdo on 2 (strong), tamborim and shaker sixteenths
            for b in range(4):
                add(o + b, "tom_low", 115 if b % 2 else 85)
            for h in np.arange(0, 4, 0.25):
                add(o + h, "shaker", 90 if (h * 4) % 4 == 0 else 65)
            for t in (0, 0.5, 0.75, 1.25, 1.75, 2.25, 2.5, 3.0, 3.5):
                add(o + t, "rim", 85)
            for c in (0, 1.5, 2, 3.5):
                add(o + c, "cowbell", 75)
        elif style == "rock":
            for k in ([0, 2, 2.5] if rng.random() < 0.6 else [0, 1.5, 2]):
                add(o + k, "kick", 115)
            for s in (1, 3):
                add(o + s, "snare", 115)
            for h in np.arange(0, 4, 0.5):
                add(o + h, "closed_hat", 85)
            if bar % 4 == 0:
                add(o, "crash", 100)
        elif style == "jazz":          # ride spang-a-lang, hat on 2 and 4, feathered kick, comping
            for r in (0, 1, 1.5, 2, 3, 3.5):
                add(o + r, "ride", 90 if r in (1, 3) else 75)
            for p in (1, 3):
                add(o + p, "pedal_hat", 75)
            for b in range(4):
                add(o + b, "kick", 45)
            for c in rng.choice([0.5, 1.5, 2.5, 3.5, 2, 3], size=2, replace=False):
                add(o + c, "snare", 60)
        elif style == "pop":
            for k in [0, 1.5, 2, 2.5]:
                add(o + k, "kick", 105)
            for s in (1, 3):
                add(o + s, "clap" if rng.random() < 0.5 else "snare", 105)
            for h in np.arange(0, 4, 0.5):
                add(o + h, "closed_hat", 80)
            add(o + 3.5, "tambourine", 70)
        elif style in ("house", "techno", "trance"):
            for b in range(4):
                add(o + b, "kick", 120)
            if style != "techno" or rng.random() < 0.5:
                for s in (1, 3):
                    add(o + s, "clap", 100)
            if style == "techno":
                for h in np.arange(0, 4, 0.25):
                    add(o + h, "closed_hat", 85 if (h % 0.5) else 70)
                for r in np.arange(0.5, 4, 1):
                    add(o + r, "ride", 70)
            else:
                for h in np.arange(0.5, 4, 1):
                    add(o + h, "open_hat", 90)
                if style == "house":
                    for h in np.arange(0.25, 4, 0.5):
                        add(o + h, "closed_hat", 60)
        elif style == "drum_and_bass":    # two-step at 170+
            for k in ([0, 2.5] if bar % 2 == 0 else [0, 2.5, 2.75]):
                add(o + k, "kick", 115)
            for s in (1, 3):
                add(o + s, "snare", 115)
            for g in rng.choice([1.75, 3.25, 3.75, 0.75], size=1):
                add(o + g, "snare", 55)
            for h in np.arange(0, 4, 0.5):
                add(o + h, "closed_hat", 80 if h % 1 else 65)
        elif style == "dubstep":          # half time at 140: the snare on beat 3
            add(o, "kick", 120)
            if rng.random() < 0.5:
                add(o + 2.75, "kick", 100)
            add(o + 2, "snare", 120)
            for h in np.arange(0, 4, 0.5):
                add(o + h, "closed_hat", 70)
    return hits


def _pitched(style: str, bars: int, rng: np.random.Generator) -> list[dict]:
    """Bass line and chords (GM programs) for the style."""
    root = 36 + int(rng.integers(0, 12))
    scale = MAJOR if style in ("pop", "samba", "reggaeton", "rock") and rng.random() < 0.6 else MINOR
    prog = [0, 5, 3, 7] if scale == MINOR else [0, 7, 9, 5]      # degrees in semitones
    bass_prog = {"hiphop": 33, "lofi": 33, "trap": 38, "reggaeton": 38, "samba": 32, "rock": 34,
                 "jazz": 32, "pop": 33, "house": 38, "techno": 39, "drum_and_bass": 38,
                 "dubstep": 39, "trance": 39}[style]
    chord_prog = {"hiphop": 4, "lofi": 4, "trap": 88, "reggaeton": 24, "samba": 24, "rock": 30,
                  "jazz": 0, "pop": 0, "house": 4, "techno": 89, "drum_and_bass": 89,
                  "dubstep": 90, "trance": 90}[style]
    bass, chords = [], []
    for bar in range(bars):
        o, deg = 4.0 * bar, prog[bar % 4]
        r = root + deg
        if style == "jazz":           # walking quarters
            walk = [0, scale[1], scale[2], 5 if rng.random() < 0.5 else scale[3] - 12]
            bass += [[o + i, 0.95, r + w, 95] for i, w in enumerate(walk)]
        elif style in ("trance", "techno"):   # rolling off-beat bass
            bass += [[o + b + off, 0.2, r, 100] for b in range(4) for off in (0.25, 0.5, 0.75)]
        elif style == "house":
            bass += [[o + b + 0.5, 0.4, r, 100] for b in range(4)]
        elif style in ("trap", "dubstep", "drum_and_bass"):
            bass += [[o, 2.0, r, 110], [o + 2.5, 1.5, r, 100]]
        elif style == "reggaeton":
            bass += [[o + b, 0.7, r, 105] for b in range(4)]
        elif style == "rock":
            bass += [[o + b / 2, 0.45, r, 100] for b in range(8)]
        else:
            bass += [[o, 1.5, r, 105], [o + 1.75, 0.5, r, 90], [o + 2.5, 1.0, r + 7, 95]]
        top = r + 24
        tones = [top + scale[i] for i in (0, 1, 2)] + ([top + scale[3]] if style in ("jazz", "lofi", "hiphop") else [])
        if style == "rock":
            tones = [top - 12, top - 5, top]                   # power chord
        if style in ("samba", "reggaeton", "rock", "jazz"):    # rhythmic comping
            starts = [0.0, 1.5, 2.5] if style != "reggaeton" else [0.75, 1.5, 2.75, 3.5]
            chords += [[o + s, 0.4, t, 80] for s in starts for t in tones]
        else:
            chords += [[o, 3.9, t, 70] for t in tones]
    tracks = [{"type": "notes", "program": bass_prog, "notes": bass, "gain_db": 0.0}]
    if style != "techno" or rng.random() < 0.5:
        tracks.append({"type": "notes", "program": chord_prog, "notes": chords, "gain_db": -6.0, "pan": 0.2})
    if style == "dubstep":
        tracks[0]["filter"] = {"type": "lowpass", "from_hz": 150, "to_hz": 2500,
                               "period_beats": float(rng.choice([0.5, 1.0, 0.25]))}
    return tracks


def groove_spec(style: str, index: int, seed: int, kits: tuple[str, ...]) -> dict:
    """One groove of `style`: tempo, swing, kit, key and pattern drawn from `seed`."""
    rng = np.random.default_rng(seed)
    fam, (lo, hi), (s_lo, s_hi), human = STYLES[style]
    bpm = round(float(rng.uniform(lo, hi)), 1)
    bars = int(rng.choice([4, 8])) if bpm < 150 else 8
    kit = kits[int(rng.integers(len(kits)))]
    drums = {"type": "drums", "kit": kit, "hits": _drums(style, bars, rng), "gain_db": 0.0}
    tracks = [drums] + (_pitched(style, bars, rng) if rng.random() < 0.75 else [])
    return {"name": f"rec_{style}_{index}", "sr": 44100, "bpm": bpm, "beats": 4 * bars, "seed": seed,
            "swing": round(float(rng.uniform(s_lo, s_hi)), 3), "humanize_ms": human,
            "tracks": tracks, "reverb": bool(rng.random() < 0.4), "peak_dbfs": -1.0}


def groove_specs(per_style: int = 6, seed: int = 2026) -> list[dict]:
    """`per_style` specs of every style; seeds from one generator, so stable."""
    from truth import recorded_module

    kits = recorded_module().KITS
    rng = np.random.default_rng(seed)
    return [groove_spec(style, i, int(rng.integers(1, 1_000_000)), kits)
            for style in STYLES for i in range(per_style)]


def family_of(style: str) -> str | None:
    return STYLES[style][0]


def groove_items(per_style: int = 6) -> list[dict]:
    """[{"path", "family", "style", "name", "kind": "recorded", "bpm"}] rendered (cached)."""
    from truth import render_recorded

    specs = groove_specs(per_style)
    paths = render_recorded(specs, skip=False)
    out = []
    for spec, path in zip(specs, paths):
        style = spec["name"].split("_", 1)[1].rsplit("_", 1)[0]
        out.append({"path": str(path), "family": family_of(style), "style": style, "name": spec["name"],
                    "kind": "recorded", "bpm": spec["bpm"]})
    return out


if __name__ == "__main__":
    n = int(sys.argv[sys.argv.index("--per-style") + 1]) if "--per-style" in sys.argv else 6
    items = groove_items(n)
    print(len(items), "recorded grooves rendered")
