"""Accuracy metrics shared by the benchmark scripts (mir_eval conventions).

tempo: Acc1 = within 4 % of the reference (or of any acceptable tempo);
       Acc2 = Acc1 also allowing factors 2, 3, 1/2 and 1/3.
key:   MIREX weighted score: 1 same key, 0.5 a perfect fifth above (same mode),
       0.3 relative major/minor, 0.2 parallel major/minor, 0 otherwise;
       a tonic-only reference scores 1 for the right tonic, else 0.
"""

from __future__ import annotations

PITCH = {"C": 0, "B#": 0, "C#": 1, "Db": 1, "D": 2, "D#": 3, "Eb": 3, "E": 4, "Fb": 4, "E#": 5,
         "F": 5, "F#": 6, "Gb": 6, "G": 7, "G#": 8, "Ab": 8, "A": 9, "A#": 10, "Bb": 10, "B": 11,
         "Cb": 11}


def tempo_acc1(estimate: float, references: list[float], tolerance: float = 0.04) -> bool:
    return any(abs(estimate - ref) <= tolerance * ref for ref in references)


def tempo_acc2(estimate: float, references: list[float], tolerance: float = 0.04) -> bool:
    factors = (1.0, 2.0, 3.0, 0.5, 1.0 / 3.0)
    return any(tempo_acc1(estimate, [ref * f for f in factors], tolerance) for ref in references)


def parse_key(text: str) -> tuple[int, str | None]:
    """'F# minor' -> (6, 'minor'); 'F' -> (5, None) (tonic only)."""
    parts = text.strip().split()
    tonic = PITCH[parts[0][0].upper() + parts[0][1:]]
    mode = parts[1].lower() if len(parts) > 1 else None
    return tonic, mode


def key_weighted(est_tonic: int | None, est_mode: str | None, reference: str) -> float:
    if est_tonic is None:
        return 0.0
    ref_tonic, ref_mode = parse_key(reference)
    if ref_mode is None:
        return 1.0 if est_tonic == ref_tonic else 0.0
    if est_mode == ref_mode:
        if est_tonic == ref_tonic:
            return 1.0
        if (est_tonic - ref_tonic) % 12 == 7:
            return 0.5
        return 0.0
    if ref_mode == "major" and est_mode == "minor" and (ref_tonic - est_tonic) % 12 == 3:
        return 0.3
    if ref_mode == "minor" and est_mode == "major" and (est_tonic - ref_tonic) % 12 == 3:
        return 0.3
    if est_tonic == ref_tonic:
        return 0.2
    return 0.0


def key_relation(est_tonic: int | None, est_mode: str | None, reference: str) -> str:
    """How an estimate relates to the reference: same, fifth (est a fifth
    above), fourth (a fifth below), relative, parallel, other, none (no key);
    a tonic-only reference gives same or other."""
    if est_tonic is None:
        return "none"
    ref_tonic, ref_mode = parse_key(reference)
    step = (est_tonic - ref_tonic) % 12
    if ref_mode is None:
        return "same" if step == 0 else "other"
    if est_mode == ref_mode:
        return {0: "same", 7: "fifth", 5: "fourth"}.get(step, "other")
    if (ref_mode == "major" and step == 9) or (ref_mode == "minor" and step == 3):
        return "relative"
    return "parallel" if step == 0 else "other"
