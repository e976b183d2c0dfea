"""Recorded-instrument key material with exact truth: renderer specs
(tests/truth_gen/recorded.py) for every kind of part in all 24 keys.

    items(split=None) -> list[dict]   # {"spec", "tonic", "scale", "kind", "drums", "split"}

Kinds (what the benchmark tables): bass, chords, pad, melody, guitar, wobble,
mix; each with and without drums (a Hydrogen kit), alternating over the keys.
Minor keys use the progressions producers use (i-VI-III-VII, i-iv-v,
i-VII-VI-VII, i-VI-iv-v, i-iv-VII-III), major keys the common four (I-V-vi-IV,
I-IV-V-IV, I-vi-IV-V, vi-IV-I-V: a major loop that starts on its relative
minor). Bass lines sit on the root or walk; melodies are riffs that start off
the tonic. Wobbles and subs sit on the tonic (or move with the progression)
under a moving low-pass.

Fitting and scoring stay apart: `split` is "fit" only when both the
instruments and the progression are in the FIT sets; whole instruments
(HELD_PROGRAMS) and whole progressions (HELD_PROGRESSIONS) never appear in
the fit split. `SUBSET` names a few held-out items the accuracy tests render.
"""

from __future__ import annotations

from trackgrade.musical_keys import SCALES, TONICS

# chord roots in semitones above the tonic and the chord's quality
PROGRESSIONS = {
    "minor": {
        "i-VI-III-VII": ((0, "m"), (8, "M"), (3, "M"), (10, "M")),
        "i-iv-v": ((0, "m"), (5, "m"), (7, "m"), (0, "m")),
        "i-VII-VI-VII": ((0, "m"), (10, "M"), (8, "M"), (10, "M")),
        "i-VI-iv-v": ((0, "m"), (8, "M"), (5, "m"), (7, "m")),
        "i-iv-VII-III": ((0, "m"), (5, "m"), (10, "M"), (3, "M")),
    },
    "major": {
        "I-V-vi-IV": ((0, "M"), (7, "M"), (9, "m"), (5, "M")),
        "I-IV-V-IV": ((0, "M"), (5, "M"), (7, "M"), (5, "M")),
        "I-vi-IV-V": ((0, "M"), (9, "m"), (5, "M"), (7, "M")),
        "vi-IV-I-V": ((9, "m"), (5, "M"), (0, "M"), (7, "M")),
    },
}
HELD_PROGRESSIONS = ("i-VII-VI-VII", "i-VI-iv-v", "I-vi-IV-V")
ROUNDS = 3                    # passes over the 24 keys x 7 kinds (>= 12 held items per cell)

# GM programs (FluidR3 GM) per role; HELD_PROGRAMS never appear in the fit split
PROGRAMS = {
    "bass": (33, 34, 32, 35, 36),            # fingered, picked, acoustic, fretless, slap
    "chords": (0, 4, 16, 5, 18),             # piano, e-piano, organ, e-piano 2, rock organ
    "pad": (89, 48, 90, 50, 94),             # warm pad, strings, polysynth, synth strings, halo
    "melody": (80, 81, 73, 65, 11),          # square, saw, flute, sax, vibraphone
    "guitar": (27, 25, 24, 29, 26),          # clean, steel, nylon, overdrive, jazz
    "wobble": (38, 39, 87),                  # synth bass 1, 2, bass lead
}
HELD_PROGRAMS = (35, 36, 5, 18, 50, 94, 65, 11, 29, 26, 87)
DRUMS_DB = -11.0              # the kits' samples stand ~10 dB above FluidSynth's parts: level them
KITS = ("ForzeeStereo", "HardElectro1", "The Black Pearl 1.0", "ElectricEmpireKit")

MAJOR_STEPS = (0, 2, 4, 5, 7, 9, 11)
MINOR_STEPS = (0, 2, 3, 5, 7, 8, 10)
# riffs as (beat, length, scale degree 0-based, octave shift); none starts on the tonic
RIFFS = (
    ((0, 0.5, 2, 0), (0.5, 0.5, 1, 0), (1, 1, 0, 0), (2, 0.5, 4, 0), (2.5, 0.5, 3, 0),
     (3, 1, 2, 0)),
    ((0, 0.75, 4, 0), (0.75, 0.75, 2, 0), (1.5, 0.5, 3, 0), (2, 1, 1, 0), (3, 1, 0, 0)),
    ((0, 0.5, 6, -1), (0.5, 0.5, 0, 0), (1, 0.5, 2, 0), (1.5, 0.5, 4, 0), (2, 1, 2, 0),
     (3, 0.5, 1, 0), (3.5, 0.5, 0, 0)),
    ((0, 1, 2, 0), (1, 0.5, 4, 0), (1.5, 0.5, 2, 0), (2, 0.5, 1, 0), (2.5, 0.5, 0, 0),
     (3, 1, 6, -1)),
)
# held-out items the accuracy tests render, with the textbook method's MIREX
# score on each (benchmarks/eval_key.py, benchmarks/results/key.md): the floor
SUBSET = {
    "bass_walk_F#_minor_i-VI-iv-v_36_d": 0.0,
    "chords_Eb_minor_i-VI-iv-v_5_d": 0.0,
    "guitar_F#_minor_i-VI-III-VII_29_d": 0.0,
    "pad_C#_minor_i-iv-VII-III_50": 0.0,
    "wobble_G_minor_87_d": 0.0,
    "melody_G_minor_i-VI-iv-v_73_d": 1.0,
    "mix_E_minor_i-iv-VII-III_18_d": 1.0,
    "chords_F#_major_I-IV-V-IV_18": 1.0,
}


def _chord(tonic_midi: int, root: int, quality: str) -> list[int]:
    """A close triad voiced between tonic_midi-5 and tonic_midi+12."""
    third = 3 if quality == "m" else 4
    base = tonic_midi + root
    if base > tonic_midi + 6:
        base -= 12
    return [base, base + third, base + 7]


def _drums(kit: str, beats: int, style: int) -> dict:
    hits = []
    for bar in range(beats // 4):
        b = 4.0 * bar
        if style % 2 == 0:     # four to the floor
            hits += [[b + i, "kick", 112] for i in range(4)]
            hits += [[b + i + 0.5, "open_hat", 80] for i in range(4)]
            hits += [[b + 1, "clap", 100], [b + 3, "clap", 100]]
        else:                  # broken beat
            hits += [[b, "kick", 115], [b + 1.75, "kick", 100], [b + 2.5, "kick", 105],
                     [b + 1, "snare", 105], [b + 3, "snare", 105]]
            hits += [[b + i * 0.5, "closed_hat", 70 + 15 * (i % 2 == 0)] for i in range(8)]
    return {"type": "drums", "kit": kit, "hits": hits, "gain_db": DRUMS_DB}


def _bass_notes(tonic: int, chords, walk: bool, octave: int = 36) -> list[list]:
    notes = []
    low = octave + tonic
    for bar, (root, quality) in enumerate(chords * 2):
        r = low + root if root < 7 else low + root - 12
        b = 4.0 * bar
        if walk:
            third = 3 if quality == "m" else 4
            nxt = chords[(bar + 1) % len(chords)][0]
            nr = low + nxt if nxt < 7 else low + nxt - 12
            approach = nr - 1 if nr > r else nr + 2
            notes += [[b, 1, r, 100], [b + 1, 1, r + third, 90], [b + 2, 1, r + 7, 92],
                      [b + 3, 1, approach, 88]]
        else:
            notes += [[b + i * 0.5, 0.45, r, 100 - 12 * (i % 2)] for i in range(8)]
    return notes


def _chord_notes(tonic: int, chords, rhythm: str) -> list[list]:
    notes = []
    mid = 60 + tonic if tonic < 6 else 48 + tonic
    for bar, (root, quality) in enumerate(chords * 2):
        b = 4.0 * bar
        pitches = _chord(mid, root, quality)
        if rhythm == "held":
            notes += [[b, 4, p, 85] for p in pitches]
        elif rhythm == "stabs":
            for s in (0, 1.5, 2.5, 3):
                notes += [[b + s, 0.4, p, 95] for p in pitches]
        else:                  # arpeggio / strum
            for i in range(8):
                notes.append([b + 0.5 * i, 0.5, pitches[i % 3] + 12 * (i % 6 == 5), 90])
    return notes


def _melody_notes(tonic: int, scale: str, riff) -> list[list]:
    steps = MAJOR_STEPS if scale == "major" else MINOR_STEPS
    top = 72 + tonic if tonic < 6 else 60 + tonic
    notes = []
    for rep in range(8):
        for beat, length, degree, octv in riff:
            notes.append([4.0 * rep + beat, length, top + steps[degree] + 12 * octv, 100])
    return notes


def _wobble_notes(tonic: int, chords, moving: bool) -> list[list]:
    low = 36 + tonic if tonic < 5 else 24 + tonic
    if not moving:
        return [[4.0 * bar, 4, low, 110] for bar in range(8)]
    return [[4.0 * bar, 4, low + (root if root < 7 else root - 12), 110]
            for bar, (root, _) in enumerate(chords * 2)]


def items(split: str | None = None) -> list[dict]:
    """Every item (or those of one split), deterministic: ROUNDS passes over
    the 24 keys x 7 kinds, each round with other instruments, progressions,
    tempi and drum choices (round 0 is the original 168; later rounds' names
    end in _r1, _r2...)."""
    out = []
    for r, k in ((r, k) for r in range(ROUNDS) for k in range(24)):
        tonic, scale = k % 12, SCALES[k // 12]
        progs = list(PROGRESSIONS[scale].items())
        for kind_i, kind in enumerate(("bass", "chords", "pad", "melody", "guitar", "wobble", "mix")):
            n = k + 3 * kind_i + 5 * r
            prog_name, chords = progs[n % len(progs)]
            drums = (k + kind_i + r) % 2 == 0
            programs = PROGRAMS.get(kind, PROGRAMS["chords"])
            program = programs[(k // 2 + kind_i + 2 * r) % len(programs)]
            bpm = (90.0, 100.0, 120.0, 128.0, 140.0, 174.0)[n % 6]
            tracks, name_bits, used = [], [kind], [program]
            if kind == "bass":
                walk = n % 2 == 0
                name_bits.insert(1, "walk" if walk else "root")
                tracks.append({"type": "notes", "program": program,
                               "notes": _bass_notes(tonic, chords, walk)})
            elif kind in ("chords", "guitar", "pad"):
                rhythm = {"pad": "held", "guitar": ("arp" if n % 2 else "stabs")}.get(
                    kind, ("stabs", "held", "arp")[n % 3])
                tracks.append({"type": "notes", "program": program,
                               "notes": _chord_notes(tonic, chords, rhythm)})
            elif kind == "melody":
                tracks.append({"type": "notes", "program": program,
                               "notes": _melody_notes(tonic, scale, RIFFS[n % len(RIFFS)])})
            elif kind == "wobble":
                moving = n % 3 == 0
                sub = n % 4 == 1
                name_bits.insert(1, "sub" if sub else ("moving" if moving else ""))
                filt = ({"type": "lowpass", "from_hz": 60, "to_hz": 180, "period_beats": 2.0} if sub
                        else {"type": "lowpass", "from_hz": 150, "to_hz": 2500,
                              "period_beats": (0.5, 1.0, 0.25)[n % 3]})
                tracks.append({"type": "notes", "program": program,
                               "notes": _wobble_notes(tonic, chords, moving), "filter": filt})
                if not moving:
                    prog_name = ""
            else:                                        # mix: bass + chords + melody
                bass_p = PROGRAMS["bass"][(k + r) % len(PROGRAMS["bass"])]
                lead_p = PROGRAMS["melody"][(k // 3 + 2 * r) % len(PROGRAMS["melody"])]
                used = [program, bass_p, lead_p]
                tracks += [{"type": "notes", "program": bass_p,
                            "notes": _bass_notes(tonic, chords, n % 2 == 0), "gain_db": -1.0},
                           {"type": "notes", "program": program,
                            "notes": _chord_notes(tonic, chords, "stabs"), "gain_db": -4.0},
                           {"type": "notes", "program": lead_p,
                            "notes": _melody_notes(tonic, scale, RIFFS[(k + r) % len(RIFFS)]),
                            "gain_db": -3.0}]
            if drums:
                tracks.append(_drums(KITS[n % len(KITS)], 32, n))
            name = "_".join(bit for bit in (*name_bits, TONICS[tonic], scale, prog_name,
                                            str(program), "d" if drums else "",
                                            f"r{r}" if r else "") if bit)
            held = prog_name in HELD_PROGRESSIONS or any(p in HELD_PROGRAMS for p in used)
            item = {"spec": {"name": name, "sr": 44100, "bpm": bpm, "beats": 32, "seed": k + 24 * r,
                             "tracks": tracks},
                    "tonic": TONICS[tonic], "scale": scale, "kind": kind, "drums": drums,
                    "split": "held" if held else "fit"}
            if kind == "wobble" and not prog_name:
                item["scale"] = None              # one note: scored on the tonic, like real wobbles
            out.append(item)
    return [i for i in out if split is None or i["split"] == split]


def subset() -> list[dict]:
    """The few held-out items the accuracy tests render."""
    by_name = {i["spec"]["name"]: i for i in items()}
    return [{**by_name[n], "textbook_score": floor} for n, floor in SUBSET.items()]
