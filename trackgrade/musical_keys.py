"""Musical keys in DJ notation: the one home of the tonic spelling, the
Camelot wheel and Open Key (CONTRACT.md sections 1 and 4).

Camelot: A minor = 8A, C major = 8B; Open Key: C major = 1d, A minor = 1m;
on both wheels each step of a fifth adds one. Harmonic-mixing neighbours are
one step either way on the same ring and the relative key.
"""

from __future__ import annotations

TONICS = ("C", "C#", "D", "Eb", "E", "F", "F#", "G", "Ab", "A", "Bb", "B")
SCALES = ("major", "minor")
_CAMELOT_EIGHT = {"minor": TONICS.index("A"), "major": TONICS.index("C")}   # 8A, 8B


def camelot(tonic: str, scale: str) -> str:
    """Camelot code, "1A".."12B"."""
    steps = 7 * (TONICS.index(tonic) - _CAMELOT_EIGHT[scale])
    return f"{(8 - 1 + steps) % 12 + 1}{'A' if scale == 'minor' else 'B'}"


def open_key(tonic: str, scale: str) -> str:
    """Open Key code, "1d".."12m" (the Camelot number less 7: 8B = 1d)."""
    number = (int(camelot(tonic, scale)[:-1]) - 8) % 12 + 1
    return f"{number}{'m' if scale == 'minor' else 'd'}"


def camelot_neighbours(code: str) -> list[str]:
    """The keys that mix harmonically with a Camelot code: -1, +1, relative."""
    number, letter = int(code[:-1]), code[-1]
    other = "B" if letter == "A" else "A"
    return [f"{(number - 2) % 12 + 1}{letter}", f"{number % 12 + 1}{letter}", f"{number}{other}"]
