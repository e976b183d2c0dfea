"""Recorded-instrument renders with exact truth: parts and grooves played by
real sampled instruments instead of our synthesizer.

Pitched tracks are MIDI notes rendered by FluidSynth through FluidR3 GM
(Debian `fluidsynth` + `fluid-soundfont-gm`, MIT: recorded basses, pianos,
electric pianos, organs, guitars, strings, leads and pads); drum tracks are
hits placed on the recorded samples of a Hydrogen drum kit (Debian
`hydrogen-drumkits`). A spec is plain JSON (times in beats, so a groove is one
spec at any tempo); the truth is in the spec: the notes, hence the key, the
tempo, which instruments play. See tests/truth.py `render_recorded` for the
cached renders and RENDERER notes in the spec format below.

    {"name": "boom_bap_90", "sr": 44100, "bpm": 90.0, "beats": 16, "seed": 7,
     "swing": 0.0, "humanize_ms": 0.0, "reverb": false, "peak_dbfs": -1.0,
     "tracks": [
       {"type": "notes", "program": 33, "notes": [[start_beat, length_beats, midi, velocity], ...],
        "gain_db": 0.0, "pan": 0.0,
        "filter": {"type": "lowpass", "from_hz": 200, "to_hz": 2500, "period_beats": 0.5}},
       {"type": "drums", "kit": "ForzeeStereo", "hits": [[beat, "kick", 110], ...], "gain_db": 0.0}]}

The render is exactly `beats * 60 / bpm` seconds; what rings past the end is
folded onto the start, so a render loops seamlessly like a producer's loop.

Command line: `recorded.py --spec specs.json --out DIR` writes DIR/<name>.wav
(PCM_24) for each spec.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import struct
import subprocess
import tempfile
import xml.etree.ElementTree as ET
from functools import lru_cache
from pathlib import Path

import numpy as np
import soundfile as sf
from scipy import signal

SOUNDFONT = Path("/usr/share/sounds/sf2/FluidR3_GM.sf2")
KIT_ROOT = Path("/usr/share/hydrogen/data/drumkits")
PACKAGES = "fluidsynth fluid-soundfont-gm hydrogen-drumkits"

# General MIDI programs (0-based) by the names the material modules use.
GM = {
    "piano": 0, "bright_piano": 1, "epiano": 4, "epiano2": 5, "harpsichord": 6, "clavinet": 7,
    "vibraphone": 11, "marimba": 12, "organ": 16, "perc_organ": 17, "rock_organ": 18,
    "nylon_guitar": 24, "steel_guitar": 25, "jazz_guitar": 26, "clean_guitar": 27,
    "muted_guitar": 28, "overdrive_guitar": 29, "distortion_guitar": 30,
    "acoustic_bass": 32, "fingered_bass": 33, "picked_bass": 34, "fretless_bass": 35,
    "slap_bass": 36, "synth_bass_1": 38, "synth_bass_2": 39,
    "violin": 40, "cello": 42, "strings": 48, "slow_strings": 49, "synth_strings": 50,
    "choir": 52, "trumpet": 56, "trombone": 57, "brass": 61, "synth_brass": 62,
    "sax": 65, "flute": 73, "pan_flute": 75,
    "square_lead": 80, "saw_lead": 81, "calliope_lead": 82, "chiff_lead": 83,
    "charang_lead": 84, "voice_lead": 85, "fifths_lead": 86, "bass_lead": 87,
    "new_age_pad": 88, "warm_pad": 89, "polysynth_pad": 90, "choir_pad": 91,
    "bowed_pad": 92, "metallic_pad": 93, "halo_pad": 94, "sweep_pad": 95,
    "rain_fx": 96, "soundtrack_fx": 97, "crystal_fx": 98, "atmosphere_fx": 99,
    "brightness_fx": 100, "goblins_fx": 101, "echoes_fx": 102, "scifi_fx": 103,
    "sitar": 104, "steel_drums": 114, "reverse_cymbal": 119, "seashore": 122,
}

# Drum roles and the patterns that find them in a kit's instrument names, in
# order of preference; a role a kit lacks falls back along FALLBACK.
ROLE_PATTERNS = {
    "kick": r"kick|bass ?drum|\bbd\b",
    "snare": r"^(?!.*(rim|roll|stick)).*snare",
    "rim": r"rim|stick",
    "clap": r"clap",
    "closed_hat": r"(hh|hi-?hat|hat).*(clos|tight|\bcl\b)|clos.*(hh|hat)",
    "open_hat": r"(hh|hi-?hat|hat).*\bop|open.*(hh|hat)",
    "pedal_hat": r"pedal|(hh|hat).*\bpd\b",
    "ride": r"^(?!.*bell).*ride",
    "crash": r"crash|splash|china",
    "tom_low": r"(tom.*(low|lo\b|floor))|floor ?tom",
    "tom_mid": r"tom.*mid",
    "tom_high": r"tom.*(hi|high)",
    "shaker": r"shak|maraca",
    "tambourine": r"tamb",
    "cowbell": r"cowbell|agogo",
    "conga": r"conga",
    "bongo": r"bongo",
}
ROLES = tuple(ROLE_PATTERNS)
FALLBACK = {
    "clap": "snare", "rim": "snare", "pedal_hat": "closed_hat", "closed_hat": "pedal_hat",
    "open_hat": "closed_hat", "ride": "closed_hat", "crash": "open_hat", "shaker": "closed_hat",
    "tambourine": "open_hat", "cowbell": "rim", "conga": "tom_mid", "bongo": "tom_high",
    "tom_mid": "tom_low", "tom_high": "tom_mid", "tom_low": "kick",
}
# Kits with at least a kick, a snare and a closed hat found by the patterns.
KITS = ("ForzeeStereo", "Audiophob", "BJA_Pacific", "ColomboAcousticDrumkit",
        "ElectricEmpireKit", "HardElectro1", "Millo-Drums_v.1", "Millo_MultiLayered2",
        "Millo_MultiLayered3", "The Black Pearl 1.0", "VariBreaks", "rumpf_kit_z01_h2")

TICKS_PER_BEAT = 480


def missing() -> str | None:
    """None when the renderer can run here, else what to install."""
    lacking = [what for what, ok in (("fluidsynth", shutil.which("fluidsynth")),
                                     ("fluid-soundfont-gm", SOUNDFONT.exists()),
                                     ("hydrogen-drumkits", KIT_ROOT.is_dir())) if not ok]
    if not lacking:
        return None
    return (f"the recorded-instrument renders need Debian's {', '.join(lacking)}: "
            f"apt-get install {PACKAGES}")


# ---- time -------------------------------------------------------------------

def _beat_to_s(beat: float, spec: dict, rng: np.random.Generator) -> float:
    """A beat position in seconds, with the spec's swing (off-beat 16ths late)
    and humanization (normal jitter)."""
    sixteenth = beat * 4.0
    if abs(sixteenth - round(sixteenth)) < 1e-6 and int(round(sixteenth)) % 2 == 1:
        beat += spec.get("swing", 0.0) * 0.25
    seconds = beat * 60.0 / spec["bpm"]
    jitter = spec.get("humanize_ms", 0.0)
    if jitter:
        seconds += rng.normal(0.0, jitter / 1000.0)
    return max(0.0, seconds)


# ---- pitched tracks: a MIDI file through FluidSynth -----------------------

def _vlq(value: int) -> bytes:
    out = [value & 0x7F]
    value >>= 7
    while value:
        out.append(0x80 | (value & 0x7F))
        value >>= 7
    return bytes(reversed(out))


def midi_file(notes_s: list[tuple[float, float, int, int]], program: int, bpm: float) -> bytes:
    """A format-0 Standard MIDI File: one program on channel 0 playing
    (start_s, length_s, pitch, velocity) notes at `bpm`."""
    ticks_per_s = TICKS_PER_BEAT * bpm / 60.0
    events = []
    for start, length, pitch, velocity in notes_s:
        on = int(round(start * ticks_per_s))
        off = max(on + 1, int(round((start + length) * ticks_per_s)))
        events.append((on, 1, bytes([0x90, pitch & 0x7F, max(1, min(127, velocity))])))
        events.append((off, 0, bytes([0x80, pitch & 0x7F, 0])))
    events.sort(key=lambda e: (e[0], e[1]))
    tempo = int(round(60_000_000 / bpm))
    body = bytearray(b"\x00\xff\x51\x03" + tempo.to_bytes(3, "big"))
    body += b"\x00" + bytes([0xC0, program & 0x7F])
    now = 0
    for tick, _, data in events:
        body += _vlq(tick - now) + data
        now = tick
    body += b"\x00\xff\x2f\x00"
    return (b"MThd" + struct.pack(">IHHH", 6, 0, 1, TICKS_PER_BEAT)
            + b"MTrk" + struct.pack(">I", len(body)) + bytes(body))


def _fluidsynth(midi: bytes, sr: int, reverb: bool) -> np.ndarray:
    with tempfile.TemporaryDirectory(prefix="recorded-") as work:
        mid, wav = Path(work) / "part.mid", Path(work) / "part.wav"
        mid.write_bytes(midi)
        flag = "1" if reverb else "0"
        subprocess.run(["fluidsynth", "-ni", "-q", "-R", flag, "-C", flag, "-g", "0.5",
                        "-r", str(sr), "-O", "float", "-T", "wav", "-F", str(wav),
                        str(SOUNDFONT), str(mid)],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        audio, rate = sf.read(wav, dtype="float32", always_2d=True)
    assert rate == sr, (rate, sr)
    return audio if audio.shape[1] == 2 else np.repeat(audio[:, :1], 2, axis=1)


def _rbj_lowpass(cutoff: float, sr: int, q: float) -> np.ndarray:
    w0 = 2 * np.pi * min(cutoff, 0.45 * sr) / sr
    alpha = np.sin(w0) / (2 * q)
    cos = np.cos(w0)
    b = np.array([(1 - cos) / 2, 1 - cos, (1 - cos) / 2])
    a = np.array([1 + alpha, -2 * cos, 1 - alpha])
    return np.concatenate([b / a[0], a / a[0]])


def moving_lowpass(audio: np.ndarray, sr: int, *, from_hz: float, to_hz: float,
                   period_s: float, q: float = 2.5, block: int = 128) -> np.ndarray:
    """A resonant low-pass whose cutoff sweeps log-sinusoidally between
    `from_hz` and `to_hz`, one cycle per `period_s` (a wobble), two biquads
    in cascade, coefficients updated every `block` samples."""
    out = np.empty_like(audio)
    zi = np.zeros((2, 2, audio.shape[1]))
    lo, hi = np.log(from_hz), np.log(to_hz)
    for start in range(0, len(audio), block):
        t = (start + block / 2) / sr
        cutoff = np.exp(lo + (hi - lo) * (0.5 - 0.5 * np.cos(2 * np.pi * t / period_s)))
        sos = np.tile(_rbj_lowpass(cutoff, sr, q), (2, 1))
        out[start:start + block], zi = signal.sosfilt(sos, audio[start:start + block], axis=0, zi=zi)
    return out


def _pan(audio: np.ndarray, pan: float) -> np.ndarray:
    angle = (pan + 1) * np.pi / 4
    return audio * np.array([np.cos(angle), np.sin(angle)]) * np.sqrt(2)


def render_notes(track: dict, spec: dict, rng: np.random.Generator) -> np.ndarray:
    notes = [(_beat_to_s(b, spec, rng), length * 60.0 / spec["bpm"], int(p), int(v))
             for b, length, p, v in track["notes"]]
    audio = _fluidsynth(midi_file(notes, int(track["program"]), spec["bpm"]), spec["sr"],
                        spec.get("reverb", False))
    sweep = track.get("filter")
    if sweep:
        audio = moving_lowpass(audio, spec["sr"], from_hz=sweep["from_hz"], to_hz=sweep["to_hz"],
                               period_s=sweep["period_beats"] * 60.0 / spec["bpm"])
    return _pan(audio, track.get("pan", 0.0))


# ---- drum tracks: recorded samples of a Hydrogen kit -----------------------

@lru_cache(maxsize=None)
def kit_instruments(kit: str) -> tuple[tuple[str, float, tuple[tuple[float, float, float, str], ...]], ...]:
    """(name, volume, ((min_velocity, max_velocity, gain, path), ...)) for each
    instrument of the kit's drumkit.xml, in the kit's order."""
    folder = KIT_ROOT / kit
    root = ET.parse(folder / "drumkit.xml").getroot()
    strip = re.compile(r"\{.*\}")
    found = []
    for inst in root.iter():
        if strip.sub("", inst.tag) != "instrument":
            continue
        fields = {strip.sub("", child.tag): child for child in inst}
        name = (fields.get("name").text or "") if "name" in fields else ""
        volume = float(fields["volume"].text) if "volume" in fields else 1.0
        layers = []
        for child in inst.iter():
            tag = strip.sub("", child.tag)
            if tag == "layer":
                parts = {strip.sub("", c.tag): c.text for c in child}
                if parts.get("filename"):
                    layers.append((float(parts.get("min", 0)), float(parts.get("max", 1)),
                                   float(parts.get("gain", 1)), str(folder / parts["filename"])))
        if not layers and "filename" in fields and fields["filename"].text:
            layers.append((0.0, 1.0, 1.0, str(folder / fields["filename"].text)))
        layers = tuple(layer for layer in layers if Path(layer[3]).exists())
        if name and layers:
            found.append((name, volume, layers))
    return tuple(found)


@lru_cache(maxsize=None)
def kit_roles(kit: str) -> dict[str, int]:
    """Role -> index into kit_instruments(kit), with the fallbacks applied."""
    instruments = kit_instruments(kit)
    roles = {}
    for role, pattern in ROLE_PATTERNS.items():
        for index, (name, _, _) in enumerate(instruments):
            if re.search(pattern, name.lower()):
                roles[role] = index
                break
    for role in ROLES:
        seen, visited = role, {role}
        while seen not in roles and FALLBACK.get(seen) not in (None, *visited):
            seen = FALLBACK[seen]
            visited.add(seen)
        if seen in roles:
            roles.setdefault(role, roles[seen])
    return roles


@lru_cache(maxsize=256)
def _sample(path: str, sr: int) -> np.ndarray:
    audio, rate = sf.read(path, dtype="float32", always_2d=True)
    audio = audio[:, :2] if audio.shape[1] >= 2 else np.repeat(audio, 2, axis=1)
    if rate != sr:
        g = np.gcd(int(rate), sr)
        audio = signal.resample_poly(audio, sr // g, int(rate) // g, axis=0).astype(np.float32)
    return audio


def render_drums(track: dict, spec: dict, rng: np.random.Generator, frames: int) -> np.ndarray:
    kit, sr = track["kit"], spec["sr"]
    instruments, roles = kit_instruments(kit), kit_roles(kit)
    out = np.zeros((frames, 2), np.float32)
    for beat, role, velocity in track["hits"]:
        if role not in roles:
            raise KeyError(f"kit {kit!r} has no {role!r} (nor a fallback); it has "
                           f"{[name for name, _, _ in instruments]}")
        _, volume, layers = instruments[roles[role]]
        level = velocity / 127.0
        fitting = [layer for layer in layers if layer[0] <= level <= layer[1]] or list(layers)
        _, _, gain, path = fitting[int(rng.integers(len(fitting)))]
        hit = _sample(path, sr) * (volume * gain * level ** 1.6)
        start = int(round(_beat_to_s(beat, spec, rng) * sr))
        end = min(frames, start + len(hit))
        if start < frames:
            out[start:end] += hit[:end - start]
    return out


# ---- the whole spec ---------------------------------------------------------

def render(spec: dict) -> tuple[np.ndarray, int]:
    """The spec as (frames, 2) float32 audio and its sample rate."""
    sr = int(spec.get("sr", 44100))
    spec = {**spec, "sr": sr}
    rng = np.random.default_rng(spec.get("seed", 0))
    length = int(round(spec["beats"] * 60.0 / spec["bpm"] * sr))
    tail = sr * 4
    mix = np.zeros((length + tail, 2), np.float32)
    for track in spec["tracks"]:
        if track["type"] == "notes":
            part = render_notes(track, spec, rng)
        elif track["type"] == "drums":
            part = render_drums(track, spec, rng, length + tail)
        else:
            raise ValueError(f"track type must be notes or drums, given {track['type']!r}")
        part = part[:length + tail] * 10 ** (track.get("gain_db", 0.0) / 20)
        mix[:len(part)] += part
    looped = mix[:length].copy()
    for start in range(length, len(mix), length):       # fold the ringing tail onto the start
        piece = mix[start:start + length]
        looped[:len(piece)] += piece
    peak = float(np.max(np.abs(looped))) or 1.0
    return looped * (10 ** (spec.get("peak_dbfs", -1.0) / 20) / peak), sr


def write(spec: dict, out_dir: Path) -> Path:
    audio, sr = render(spec)
    path = Path(out_dir) / f"{spec['name']}.wav"
    sf.write(path, audio, sr, subtype="PCM_24")
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--spec", required=True, help="a JSON file with a list of specs")
    parser.add_argument("--out", required=True, help="the folder to write <name>.wav into")
    args = parser.parse_args()
    Path(args.out).mkdir(parents=True, exist_ok=True)
    for spec in json.loads(Path(args.spec).read_text()):
        write(spec, Path(args.out))


if __name__ == "__main__":
    main()
