"""Musical parts in a known key, rendered deterministically: the material for
the key tests (tests/engine/test_tonal_parts.py) and the key benchmark
(benchmarks/gen_parts.py, benchmarks/eval_parts.py).

    render_part("wobble", tonic_pc=0, scale="minor", seed=3, drums=True) -> (samples,)

Kinds, each a loop of whole bars in one key:

* `bass`   a bass line (E1-E2 register) walking the progression's roots with
           octave jumps, fifths and scale passing notes; saw, square or sub
           sine with a second harmonic, through a static low-pass.
* `wobble` a dubstep wobble bass on one root note (C1-B1, sometimes an octave
           up): detuned saws and a square through a resonant low-pass whose
           cutoff an LFO (1/4, 1/8 or triplet) sweeps from ~100 Hz to a few
           kHz, with or without a sub sine and drive. Its key is the root.
* `melody` a single-voice lead (C4-B5) walking the scale, chord tones on the
           strong beats, starting and ending on the tonic.
* `chords` chord stabs (triads, some with sevenths) on off-beats, filtered saws.
* `pad`    detuned supersaw pads holding the progression, slow attack.
* `note`   one held note with harmonics: its key is the note, a low confidence.
* `mix`    bass + chords or pad + melody, with drums.
* `drums`  drums alone (no key).

`drums=True` lays a drum loop (pitched kick, snare, hats) under the part.
Everything is a pure function of its arguments (numpy's seeded generator).
"""

from __future__ import annotations

import numpy as np
from scipy.signal import butter, lfilter, sosfilt

KINDS = ("bass", "wobble", "melody", "chords", "pad", "note", "mix")
TONIC_ONLY = ("wobble", "note")            # parts whose key is their root note alone
SCALE_STEPS = {"major": (0, 2, 4, 5, 7, 9, 11), "minor": (0, 2, 3, 5, 7, 8, 10)}
# chord progressions as scale degrees (0 = tonic), one chord per bar
PROGRESSIONS = {
    "major": ((0, 4, 5, 3), (0, 3, 4, 0), (0, 5, 3, 4), (0, 3, 0, 4)),
    "minor": ((0, 5, 2, 6), (0, 3, 4, 0), (0, 5, 6, 0), (0, 3, 5, 4)),
}


def midi_hz(note: float) -> float:
    return 440.0 * 2.0 ** ((note - 69) / 12)


def _polyblep(phase: np.ndarray, dt: np.ndarray) -> np.ndarray:
    """Band-limiting correction of a naive saw's jump at phase 0."""
    out = np.zeros_like(phase)
    lo = phase < dt
    x = phase[lo] / dt[lo]
    out[lo] = 2 * x - x * x - 1
    hi = phase > 1 - dt
    x = (phase[hi] - 1) / dt[hi]
    out[hi] = x * x + 2 * x + 1
    return out


def oscillator(freq_hz, n: int, sr: int, shape: str, phase0: float = 0.0) -> np.ndarray:
    """`shape` in sine, saw, square, triangle; `freq_hz` a number or (n,) array."""
    dt = np.broadcast_to(np.asarray(freq_hz, dtype=np.float64) / sr, (n,))
    phase = (phase0 + np.cumsum(dt)) % 1.0
    if shape == "sine":
        return np.sin(2 * np.pi * phase)
    saw = 2 * phase - 1 - _polyblep(phase, dt)
    if shape == "saw":
        return saw
    shifted = (phase + 0.5) % 1.0
    square = saw - (2 * shifted - 1 - _polyblep(shifted, dt))
    if shape == "square":
        return 0.5 * square
    if shape == "triangle":
        return 2 * np.abs(2 * phase - 1) - 1
    raise ValueError(f"unknown shape {shape!r}")


def envelope(n: int, sr: int, attack: float, decay: float, sustain: float,
             release: float) -> np.ndarray:
    """ADSR over n samples (the release inside the note's last `release` s)."""
    t = np.arange(n) / sr
    env = np.where(t < attack, t / max(attack, 1e-6),
                   sustain + (1 - sustain) * np.exp(-(t - attack) / max(decay, 1e-6)))
    r = int(release * sr)
    if 0 < r < n:
        env[-r:] *= np.linspace(1.0, 0.0, r)
    return env


def lowpass(x: np.ndarray, sr: int, cutoff_hz: float, order: int = 2) -> np.ndarray:
    sos = butter(order, min(cutoff_hz, 0.45 * sr), btype="low", fs=sr, output="sos")
    return sosfilt(sos, x)


def swept_lowpass(x: np.ndarray, sr: int, cutoff_hz: np.ndarray, q: float,
                  block: int = 32) -> np.ndarray:
    """A resonant (RBJ) low-pass whose cutoff follows `cutoff_hz` (n,),
    coefficients updated every `block` samples, state carried across."""
    out = np.empty_like(x)
    zi = np.zeros(2)
    for s in range(0, x.size, block):
        f = min(float(cutoff_hz[s]), 0.45 * sr)
        w = 2 * np.pi * f / sr
        alpha = np.sin(w) / (2 * q)
        c = np.cos(w)
        b = np.array([(1 - c) / 2, 1 - c, (1 - c) / 2])
        a = np.array([1 + alpha, -2 * c, 1 - alpha])
        out[s:s + block], zi = lfilter(b / a[0], a / a[0], x[s:s + block], zi=zi)
    return out


def _scale_note(tonic_midi: int, scale: str, degree: int) -> int:
    """MIDI note of a scale degree (any integer; 7 = the tonic an octave up)."""
    steps = SCALE_STEPS[scale]
    octave, d = divmod(degree, 7)
    return tonic_midi + 12 * octave + steps[d]


def _chord(tonic_midi: int, scale: str, degree: int, seventh: bool = False) -> list[int]:
    return [_scale_note(tonic_midi, scale, degree + k) for k in ((0, 2, 4, 6) if seventh else (0, 2, 4))]


def _render_notes(notes, n: int, sr: int, voice) -> np.ndarray:
    """Sum of voice(freq, length) for each (start_s, dur_s, midi, velocity)."""
    out = np.zeros(n)
    for start, dur, midi, vel in notes:
        s = int(start * sr)
        m = min(n - s, int(dur * sr))
        if m > 0:
            out[s:s + m] += vel * voice(midi_hz(midi), m)
    return out


def _bass(rng, tonic_pc, scale, bars, beat, sr, n) -> np.ndarray:
    root = 28 + (tonic_pc - 4) % 12                     # E1..D#2
    prog = PROGRESSIONS[scale][rng.integers(4)]
    shape = ("saw", "square", "sub")[rng.integers(3)]
    cutoff = float(rng.uniform(250, 900))
    notes = []
    for bar in range(bars):
        deg = prog[bar % len(prog)]
        r = _scale_note(root, scale, deg)
        r -= 12 if r - root > 7 else 0
        for step in range(8):
            t = (bar * 4 + step / 2) * beat
            if rng.random() < 0.15 and step not in (0, 4):
                continue
            roll = rng.random()
            if step == 0 or roll < 0.55:
                m = r
            elif roll < 0.7:
                m = r + 12
            elif roll < 0.85:
                m = _scale_note(root, scale, deg + 4) - (12 if _scale_note(root, scale, deg + 4) - r > 12 else 0)
            else:
                m = _scale_note(root, scale, deg + (1 if rng.random() < 0.5 else -1))
            notes.append((t, beat * 0.45, m, 1.0 if step % 2 == 0 else 0.8))

    def voice(f, m):
        env = envelope(m, sr, 0.005, 0.15, 0.6, 0.02)
        if shape == "sub":
            return env * (oscillator(f, m, sr, "sine") + 0.3 * oscillator(2 * f, m, sr, "sine"))
        return env * oscillator(f, m, sr, shape)

    x = _render_notes(notes, n, sr, voice)
    return lowpass(x, sr, cutoff, order=4) if shape != "sub" else x


def _wobble(rng, tonic_pc, bars, beat, sr, n) -> np.ndarray:
    root = 24 + tonic_pc + (12 if rng.random() < 0.3 else 0)     # C1..B1, or an octave up
    f0 = midi_hz(root)
    t = np.arange(n) / sr
    rates = rng.choice([1.0, 2.0, 1.5, 0.5], size=bars * 2)       # LFO cycles per beat, per half bar
    half = np.minimum((t / (2 * beat)).astype(int), rates.size - 1)
    cycles = np.cumsum(rates[half] / beat / sr)
    shape = rng.integers(2)
    lfo = 0.5 - 0.5 * np.cos(2 * np.pi * cycles) if shape == 0 else 1 - (cycles % 1.0)
    f_lo, f_hi = float(rng.uniform(80, 160)), float(rng.uniform(1500, 5000))
    cutoff = f_lo * (f_hi / f_lo) ** lfo
    detune = 2 ** (float(rng.uniform(0.05, 0.2)) / 12)
    body = (oscillator(f0, n, sr, "saw") + oscillator(f0 * detune, n, sr, "saw", 0.3)
            + oscillator(f0 / detune, n, sr, "square", 0.6))
    x = swept_lowpass(body, sr, cutoff, q=float(rng.uniform(2.0, 8.0)))
    if rng.random() < 0.5:
        x = np.tanh(3 * x / (np.max(np.abs(x)) + 1e-9))
    x /= np.max(np.abs(x)) + 1e-9
    if rng.random() < 0.7:
        sub_root = root - 12 if root >= 36 else root
        x += 0.8 * oscillator(midi_hz(sub_root), n, sr, "sine")
    gate = envelope(n, sr, 0.005, 1.0, 1.0, 0.05)
    return x * gate


def _melody(rng, tonic_pc, scale, bars, beat, sr, n) -> np.ndarray:
    tonic = 60 + tonic_pc + (12 if rng.random() < 0.3 else 0)
    prog = PROGRESSIONS[scale][rng.integers(4)]
    shape = ("saw", "square", "triangle", "sine")[rng.integers(4)]
    notes, deg, t_end = [], 0, bars * 4 * beat
    t = 0.0
    while t < t_end - 1e-9:
        dur = beat * float(rng.choice([0.5, 0.5, 1.0, 1.0, 1.5, 2.0]))
        dur = min(dur, t_end - t)
        on_bar = abs((t / beat) % 4) < 1e-6
        last = t + dur >= t_end - 1e-9
        if t == 0.0 or last:
            deg = 0 if t == 0.0 else 7 * round(deg / 7)
        elif on_bar:
            chord_deg = prog[int(t / beat / 4) % len(prog)]
            tones = [chord_deg + k + 7 * o for k in (0, 2, 4) for o in (-1, 0, 1)]
            deg = min(tones, key=lambda d: abs(d - deg))
        else:
            deg += int(rng.choice([-2, -1, -1, 1, 1, 2, 0]))
        deg = int(np.clip(deg, -3, 9))
        if rng.random() > 0.12 or t == 0.0 or last:
            notes.append((t, dur * 0.9, _scale_note(tonic, scale, deg), float(rng.uniform(0.7, 1.0))))
        t += dur
    vib = float(rng.uniform(0, 0.15))

    def voice(f, m):
        env = envelope(m, sr, 0.01, 0.3, 0.7, 0.03)
        wobble = 2 ** (vib / 12 * np.sin(2 * np.pi * 5.5 * np.arange(m) / sr))
        return env * oscillator(f * wobble, m, sr, shape)

    x = _render_notes(notes, n, sr, voice)
    return lowpass(x, sr, float(rng.uniform(2000, 6000))) if shape in ("saw", "square") else x


def _chords(rng, tonic_pc, scale, bars, beat, sr, n) -> np.ndarray:
    tonic = 48 + tonic_pc
    prog = PROGRESSIONS[scale][rng.integers(4)]
    seventh = rng.random() < 0.4
    hits = ((0.5, 1.5, 2.5, 3.5), (0.0, 0.75, 1.5, 2.5, 3.0), (0.5, 1.0, 2.0, 2.75, 3.5))[rng.integers(3)]
    notes = []
    for bar in range(bars):
        chord = _chord(tonic, scale, prog[bar % len(prog)], seventh)
        chord = [m - 12 if m > tonic + 16 else m for m in chord]
        for h in hits:
            notes += [((bar * 4 + h) * beat, 0.4 * beat, m, 0.6) for m in chord]

    def voice(f, m):
        env = envelope(m, sr, 0.003, 0.12, 0.3, 0.02)
        return env * (oscillator(f, m, sr, "saw") + oscillator(f * 1.004, m, sr, "saw", 0.5))

    return lowpass(_render_notes(notes, n, sr, voice), sr, float(rng.uniform(1500, 5000)))


def _pad(rng, tonic_pc, scale, bars, beat, sr, n) -> np.ndarray:
    tonic = 48 + tonic_pc
    prog = PROGRESSIONS[scale][rng.integers(4)]
    spread = float(rng.uniform(0.1, 0.3))                  # semitones of detune, outer voices
    notes = []
    for bar in range(bars):
        chord = _chord(tonic, scale, prog[bar % len(prog)], rng.random() < 0.3)
        chord = [m - 12 if m > tonic + 16 else m for m in chord]
        notes += [(bar * 4 * beat, 4 * beat, m, 0.5) for m in chord]

    def voice(f, m):
        env = envelope(m, sr, 0.4, 1.0, 1.0, 0.3)
        x = sum(oscillator(f * 2 ** (d * spread / 12), m, sr, "saw", (0.37 * i) % 1)
                for i, d in enumerate((-1.0, -0.5, 0.0, 0.5, 1.0)))
        return env * x

    return lowpass(_render_notes(notes, n, sr, voice), sr, float(rng.uniform(1200, 3500)))


def _note(rng, tonic_pc, sr, n) -> np.ndarray:
    f = midi_hz(36 + tonic_pc + 12 * int(rng.integers(3)))
    x = sum(oscillator(f * h, n, sr, "sine") / h ** 1.5 for h in range(1, 7) if f * h < 0.45 * sr)
    return x * envelope(n, sr, 0.02, 1.0, 0.8, 0.1)


def drum_loop(rng, bars: int, beat: float, sr: int, n: int) -> np.ndarray:
    """Kick (a pitch sweep to 45-60 Hz) on the beats or half-time, snare, hats."""
    out = np.zeros(n)
    t = np.arange(int(0.4 * sr)) / sr
    base = float(rng.uniform(45, 60))
    kick = np.sin(2 * np.pi * np.cumsum(base + 110 * np.exp(-t / 0.03)) / sr) * np.exp(-t / 0.15)
    ts = np.arange(int(0.2 * sr)) / sr
    snare = (0.6 * rng.standard_normal(ts.size) + 0.4 * np.sin(2 * np.pi * 185 * ts)) * np.exp(-ts / 0.06)
    th = np.arange(int(0.05 * sr)) / sr
    hat = 0.25 * np.diff(rng.standard_normal(th.size + 1)) * np.exp(-th / 0.015)
    half_time = rng.random() < 0.3
    for k in range(bars * 16):
        s = int(k * beat / 4 * sr)
        kick_on = (k % 16 in (0, 10)) if half_time else (k % 4 == 0)
        snare_on = (k % 16 == 8) if half_time else (k % 8 == 4)
        for on, x in ((kick_on, kick), (snare_on, snare), (k % 2 == 0 or rng.random() < 0.5, hat)):
            if on and s < n:
                e = min(n, s + x.size)
                out[s:e] += x[:e - s]
    return out


def _rms(x: np.ndarray) -> float:
    return float(np.sqrt(np.mean(x * x))) + 1e-12


def render_part(kind: str, tonic_pc: int, scale: str, *, seed: int = 0, sr: int = 44100,
                bars: int = 4, bpm: float | None = None, drums: bool = False) -> np.ndarray:
    """(samples,) float32 mono, peak 0.9: `kind` in KINDS or `drums`."""
    rng = np.random.default_rng([seed, tonic_pc, SCALE_STEPS[scale][2], KINDS.index(kind) if kind in KINDS else 99])
    bpm = float(bpm or rng.choice([90, 120, 126, 128, 140, 150, 174]))
    beat = 60.0 / bpm
    n = int(round(bars * 4 * beat * sr))
    if kind == "bass":
        x = _bass(rng, tonic_pc, scale, bars, beat, sr, n)
    elif kind == "wobble":
        x = _wobble(rng, tonic_pc, bars, beat, sr, n)
    elif kind == "melody":
        x = _melody(rng, tonic_pc, scale, bars, beat, sr, n)
    elif kind == "chords":
        x = _chords(rng, tonic_pc, scale, bars, beat, sr, n)
    elif kind == "pad":
        x = _pad(rng, tonic_pc, scale, bars, beat, sr, n)
    elif kind == "note":
        x = _note(rng, tonic_pc, sr, n)
    elif kind == "mix":
        layers = [_bass(rng, tonic_pc, scale, bars, beat, sr, n),
                  (_chords if rng.random() < 0.5 else _pad)(rng, tonic_pc, scale, bars, beat, sr, n),
                  _melody(rng, tonic_pc, scale, bars, beat, sr, n)]
        x = sum(layer / _rms(layer) * g for layer, g in zip(layers, (1.0, 0.6, 0.5)))
        drums = True
    elif kind == "drums":
        x = np.zeros(n)
        drums = True
    else:
        raise ValueError(f"unknown kind {kind!r}")
    if drums:
        d = drum_loop(rng, bars, beat, sr, n)
        x = x / _rms(x) + d / _rms(d) * float(rng.uniform(0.7, 1.2)) if _rms(x) > 1e-9 else d
    return (0.9 * x / (np.max(np.abs(x)) + 1e-12)).astype(np.float32)
