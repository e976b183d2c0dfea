"""The key profiles and how a chroma is read against them (engine/tonal.py
decides the key from these readings): the EDM-A and Temperley profiles, their
24 rotations, the correlations, the more decisive of two readings, and the
relations between keys (relative, subdominant, dominant)."""

from __future__ import annotations

from functools import lru_cache

import numpy as np

# Faraldo, Gómez, Jordà, Herrera (2016), "Key estimation in electronic dance
# music": profiles estimated from an EDM corpus (tonic first).
EDMA_MAJOR = np.array([0.16519551, 0.04749026, 0.08293076, 0.06687112, 0.09994645, 0.09274123,
                       0.05294487, 0.13159476, 0.05218986, 0.07443653, 0.06940723, 0.0642515])
EDMA_MINOR = np.array([0.17235348, 0.05336489, 0.0761009, 0.10043649, 0.05621498, 0.08527853,
                       0.0497915, 0.13451001, 0.07458916, 0.05003023, 0.09187879, 0.05545106])
# Temperley (1999), "What's key for key?".
TEMPERLEY_MAJOR = np.array([5.0, 2.0, 3.5, 2.0, 4.5, 4.0, 2.0, 4.5, 2.0, 3.5, 1.5, 4.0])
TEMPERLEY_MINOR = np.array([5.0, 2.0, 3.5, 4.5, 2.0, 4.0, 2.0, 4.5, 3.5, 2.0, 1.5, 4.0])
PROFILE_BLEND = 0.5           # weight of Temperley's profile next to EDM-A
MIN_TONIC_SHARE = 0.6         # Temperley's reading needs its tonic at >= this x the chroma's max


def zscore(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=np.float64)
    d = x - x.mean(axis=-1, keepdims=True)
    n = np.linalg.norm(d, axis=-1, keepdims=True)
    return d / np.where(n > 0, n, 1.0)


@lru_cache(maxsize=1)
def key_templates() -> np.ndarray:
    """(24, 12) z-scored templates: rows 0-11 major on C..B, 12-23 minor."""
    return _rotations(zscore(EDMA_MAJOR) + PROFILE_BLEND * zscore(TEMPERLEY_MAJOR),
                      zscore(EDMA_MINOR) + PROFILE_BLEND * zscore(TEMPERLEY_MINOR))


def _rotations(major: np.ndarray, minor: np.ndarray) -> np.ndarray:
    """(24, 12) the profiles' 12 rotations each (major C..B, then minor), z-scored."""
    rows = [np.roll(major, t) for t in range(12)] + [np.roll(minor, t) for t in range(12)]
    return zscore(np.array(rows))


@lru_cache(maxsize=1)
def temperley_templates() -> np.ndarray:
    """(24, 12) z-scored rotations of Temperley's profiles alone (major, then minor)."""
    return _rotations(TEMPERLEY_MAJOR, TEMPERLEY_MINOR)


def key_correlations(chroma: np.ndarray) -> np.ndarray:
    """(24,) correlation of the chroma with each key template (major C..B, minor C..B)."""
    return key_templates() @ zscore(chroma)


def _margin(corr: np.ndarray) -> float:
    top = np.partition(corr, -2)[-2:]
    return float(top[1] - top[0])


def decisive_correlations(chroma: np.ndarray) -> np.ndarray:
    """(24,) the correlations the key is read from: those with the blended
    templates (`key_templates`) or with Temperley's alone, whichever reading
    is the more decisive (the larger margin of the best key over the second),
    Temperley's only when its tonic is heard (at least MIN_TONIC_SHARE of
    the chroma's strongest pitch class: a lone wobble note's partials fit a
    major key a fifth below better than the note's own).
    The blend's EDM-A half leans to minor keys and its tonic (a minor loop,
    a chord part); Temperley's profile names major keys that the blend reads
    as their relative or iii (a walking bass, a riff, a mix). On the recorded-
    instrument renders and the real clips each alone errs where the other is
    sure: benchmarks/results/key.md has the gain."""
    z = zscore(chroma)
    blend, temperley = key_templates() @ z, temperley_templates() @ z
    tonic = int(np.argmax(temperley)) % 12
    heard = chroma[tonic] >= MIN_TONIC_SHARE * np.max(chroma)
    return temperley if heard and _margin(temperley) > _margin(blend) else blend


def relative_of(index: int) -> int:
    """The index (0-23, major C..B then minor C..B) of a key's relative key."""
    tonic, minor = index % 12, index >= 12
    return (tonic + 3) % 12 if minor else (tonic + 9) % 12 + 12


def subdominant_of(index: int) -> int:
    """The index of the key a fifth below a key, in the same mode."""
    return (index % 12 + 5) % 12 + 12 * (index // 12)


def dominant_of(index: int) -> int:
    """The index of the key a fifth above a key, in the same mode."""
    return (index % 12 + 7) % 12 + 12 * (index // 12)
