"""The vocabulary every sentence shares: what a track is compared with (the
genre ideal, the caller's profile, reference tracks), bands in dB against it,
the EQ each band needs, and the genre warning. Pure functions of an
`Analysis`; the diagnosis (diagnosis.py), the feedback (feedback.py) and the
terminal (cli/render.py) all speak through them, so a number reads the same
everywhere.
"""

from __future__ import annotations

import math

from trackgrade.engine.features import BAND_EDGES_HZ, BAND_NAMES
from trackgrade import limits as L
from trackgrade.grading.content import DRUMS, KIND_NAMES, MIX
from trackgrade.grading.genres import (BROAD_PROFILE, ELECTRONIC, GENRES, TIMING_GRID_MS,
                                       TIMING_PLAYED_MS)
from trackgrade.grading.low_end import UPPER, change_to_edge_db, frame_db
from trackgrade.limits import BAND_LABELS, BAND_TOLERANCE_DB, UNCLEAR_BELOW
from trackgrade.grading.targets import REFERENCE
from trackgrade.model import Analysis


def a_an(phrase: str) -> str:
    """The phrase with its indefinite article: "a house", "an ambient"."""
    return ("an " if phrase[:1].lower() in "aeiou" else "a ") + phrase


def clock(seconds: float) -> str:
    s = int(round(seconds))
    return f"{s // 60}:{s % 60:02d}"


_SPLIT_HZ = BAND_EDGES_HZ[UPPER.start][0]        # where the upper bands start (250 Hz)
# What a band's dB means (the terminal's band table, the report's chart, the
# README's frequency paragraph): the frequency pillar's frame, `low_end.frame_db`.
BAND_FRAME_TEXT = (f"each band from {_SPLIT_HZ} Hz up is read as its share of those bands, "
                   f"sub-bass and bass as their level over them, yours against the target's "
                   f"(so a boomy low end moves only the two low bands)")


def band_frame_words(band: str) -> str:
    """How a band's reading is taken, in a sentence: "its level over the bands above 250 Hz"."""
    low = BAND_NAMES.index(band) < UPPER.start
    return (f"{'its level over' if low else 'its share of'} the bands above {_SPLIT_HZ} Hz")


def band_db(a: Analysis) -> dict[str, float]:
    """Each band's reading in the frequency pillar's frame, dB against the
    target's (`low_end.frame_db`; BAND_FRAME_TEXT says what it means): the one
    band unit of the advice, the terminal's table and the report."""
    m = {b: getattr(a.frequency.bands, b) for b in BAND_NAMES}
    i = {b: getattr(a.frequency.ideal, b) for b in BAND_NAMES}
    return {b: round(float(v), 1) + 0.0 for b, v in zip(BAND_NAMES, frame_db(m, i))}


def band_advice(a: Analysis) -> list[tuple[str, float, float, str]]:
    """(band, reading in dB, suggested change in dB, "warn"|"tip") for every
    band well outside its tolerance, worst first. The change, on that band
    alone, brings its reading back to the tolerance's edge (rounded up, so
    inside it); sign: + boost, - cut."""
    ideal = {b: getattr(a.frequency.ideal, b) for b in BAND_NAMES}
    out = []
    for b, d in band_db(a).items():
        tol = BAND_TOLERANCE_DB[b]
        if abs(d) < L.SUGGEST_BEYOND * tol:
            continue
        change = change_to_edge_db(ideal, b, d, tol if d > 0 else -tol)
        out.append((b, d, float(math.copysign(math.ceil(abs(change) - 1e-6), change)),
                    "warn" if abs(d) >= L.WARN_BEYOND * tol else "tip"))
    return sorted(out, key=lambda x: -abs(x[1]) / BAND_TOLERANCE_DB[x[0]])


def near_misses(a: Analysis) -> list[tuple[str, float]]:
    """Bands outside their tolerance but not far enough to suggest EQ."""
    return [(b, d) for b, d in band_db(a).items()
            if BAND_TOLERANCE_DB[b] < abs(d) < L.SUGGEST_BEYOND * BAND_TOLERANCE_DB[b]]


def balance_ok_text(a: Analysis) -> str:
    """The sentence for a balance that needs no EQ (naming any band just outside its spread)."""
    near = near_misses(a)
    if not near:
        return f"Every band sits within the normal spread of {target_name(a)}"
    listed = " and ".join(f"{BAND_LABELS[b]} {d:+.1f} dB" for b, d in near)
    return (f"No band is far enough from {target_name(a)} to need EQ ({listed} sit"
            f"{'s' if len(near) == 1 else ''} just outside the normal spread)")


def target_name(a: Analysis) -> str:
    """The one wording of what the bands and levels are compared with, read from
    `genre.target` (so a local analysis, a server document and a canned one say
    the same): "the house ideal", "the broad electronic ideal", "your references
    (a.wav, b.wav)". The terminal, the report, `remote` and the diagnosis use it."""
    refs = a.extras.references or []
    if refs:
        return "your reference" + ("s" if len(refs) > 1 else "") + " (" + ", ".join(refs) + ")"
    if a.genre.target == REFERENCE:
        return "your reference tracks"
    return f"the {profile_name(a)} ideal"


def profile_name(a: Analysis) -> str:
    """The name of the profile the scores used (lower case), from `genre.target`:
    "house", "deep house", "broad electronic" (never `genre.name`, which may read
    "Not electronic (nearest: Ambient)" or name a family the scores did not use)."""
    target = a.genre.target
    if target in GENRES:
        return GENRES[target]["name"].lower()
    if target == ELECTRONIC:
        return BROAD_PROFILE["name"].lower()
    return (a.extras.target_name or nearest_family(a)).lower()


def as_target(a: Analysis, kind: str) -> str:
    """"a house master", "your references" (for a loudness comparison)."""
    if a.extras.references:
        return "your references"
    return a_an(f"{profile_name(a)} {kind}")


def targets(a: Analysis) -> dict:
    t = a.extras.targets
    if t:
        return t
    g = GENRES[a.genre.detected]
    return {"loudness_lufs": g["loudness_lufs"][a.mastering_status],
            "true_peak_max_dbtp": L.TRUE_PEAK_MAX_DBTP[a.mastering_status],
            "crest_db": g["crest_db"], "lra_lu": g["lra_lu"], "bpm_range": g["bpm_range"],
            "structure": g["structure"]}


def nearest_family(a: Analysis) -> str:
    """The detected family's own name (for music that is not electronic,
    `genre.name` reads "Not electronic (nearest: ...)")."""
    return GENRES[a.genre.detected]["name"] if a.genre.detected in GENRES else a.genre.name


def judged_as_part(a: Analysis) -> bool:
    """`content.part` (documents before it: the arrangement was not judged)."""
    return a.content.part if a.content is not None else not a.structure.judged


def score_caption(part: bool) -> str:
    """What the 0-100 score is called beside it: a part's score speaks of its
    sound, a whole track's of its hit potential (terminal, report, badge)."""
    return "sound" if part else "hit potential"


def document_part(doc: dict) -> bool:
    """`content.part` of a stored Analysis document (documents before it:
    the arrangement was not judged)."""
    content = doc.get("content")
    if isinstance(content, dict):
        return bool(content.get("part"))
    return not (doc.get("structure") or {}).get("judged", True)


def whole_mix(a: Analysis) -> bool:
    """Whether the audio is a mix (a part other than a mix is never held to a
    full mix's band ideal)."""
    return a.content is None or a.content.kind == MIX


def drums_to_time(a: Analysis) -> bool:
    """Whether drum advice (kick, timing, quantising) applies: an electronic
    mix or a drum loop; never ragtime, an orchestra or a chord part."""
    return a.extras.electronic and (a.content is None or a.content.kind in (MIX, DRUMS))


def bands_judged(a: Analysis) -> bool:
    """Whether band advice is given: for a mix, or against the caller's own
    reference tracks (never a family's full-mix ideal for another part)."""
    return whole_mix(a) or bool(a.extras.references)


def what_it_is(a: Analysis) -> str:
    """What the audio is, first in every headline: "drum loop · 1.7 s",
    "mix · 4:05"; "unclear (best guess: drum loop) · 1.7 s" when the kind
    reads under 0.1."""
    content = a.content
    return kind_length(content.kind if content else MIX, content.confidence if content else 1.0,
                       a.duration_seconds)


def kind_length(kind: str, confidence: float | None, duration_s: float) -> str:
    """`what_it_is` from its parts (the badge reads them from a stored document)."""
    length = f"{duration_s:.1f} s" if duration_s < L.PART_MAX_S else clock(duration_s)
    return f"{reading(KIND_NAMES.get(kind, kind), confidence)} · {length}"


def reading(text: str, confidence: float | None) -> str:
    """A tempo, key, genre or kind as shown: itself, or "unclear (best
    guess: G minor)" when its confidence is under UNCLEAR_BELOW (never "0 %")."""
    if confidence is not None and confidence < UNCLEAR_BELOW:
        return f"unclear (best guess: {text})"
    return text


def band_levels_text(a: Analysis) -> str:
    """A part's band levels, reported and not judged."""
    bands = a.frequency.bands
    listed = ", ".join(f"{BAND_LABELS[b]} {getattr(bands, b):.0f} %" for b in BAND_LABELS
                       if getattr(bands, b) >= 1.0)
    return (f"Band levels: {listed} (centroid {a.frequency.centroid_hz:.0f} Hz); a part is not "
            f"held to a full mix's balance.")


def genre_reading(a: Analysis) -> str:
    """The genre as shown: its name, or "unclear (best guess: …)" under 0.1."""
    return reading(a.genre.name, a.genre.confidence)


def caption(a: Analysis) -> str:
    """The one-line caption of a verdict (the badge, the report's headline):
    for a part what it is first ("drum loop · 1.7 s · Breakbeat"), for a
    mix the genre."""
    return f"{what_it_is(a)} · {genre_reading(a)}" if judged_as_part(a) else genre_reading(a)


def document_caption(doc: dict) -> str:
    """`caption` of a stored Analysis document (documents before `content`
    read as a mix)."""
    genre = doc.get("genre") or {}
    text = reading(str(genre.get("name", "")), genre.get("confidence"))
    content = doc.get("content")
    if isinstance(content, dict) and content.get("part"):
        what = kind_length(content.get("kind", MIX), content.get("confidence"),
                           float(doc.get("duration_seconds") or 0.0))
        return f"{what} · {text}"
    return text


def percent_sure(confidence: float | None) -> str:
    """" (73 % sure)" beside a reading, or "" when it shows as unclear."""
    if confidence is None or confidence < UNCLEAR_BELOW:
        return ""
    return f" ({confidence:.0%} sure)"


def part_text(a: Analysis) -> str:
    """The sentence for a part: what it is and what is not judged."""
    kind = a.content.kind if a.content is not None else MIX
    if kind == MIX:
        return (f"This is a part of {a.duration_seconds:.1f} s (under {L.PART_MAX_S:.0f} s: a loop, an "
                f"excerpt or a stem), so its arrangement is not judged and the structure score is "
                f"not in the total.")
    return (f"This is a {KIND_NAMES[kind]} ({a.duration_seconds:.1f} s), judged as a part: its sound "
            f"(peaks, clipping, noise, stereo) is judged, its band levels are reported but not held "
            f"to a full mix's balance, and it gets no master-bus or loudness-target advice.")
def genre_unclear(a: Analysis) -> bool:
    """No clear family: the scores use the broad electronic targets."""
    return a.genre.target == ELECTRONIC


def genre_word(a: Analysis) -> str:
    """What the track is called in a sentence: its family, or "electronic" when unclear."""
    return "electronic" if genre_unclear(a) else a.genre.name.lower()


def unclear_genre_text(a: Analysis) -> str:
    """The sentence for no clear family (genre.confidence under 0.5)."""
    alts = "".join(f", then {g.name} ({g.confidence:.2f})" for g in a.genre.alternatives)
    return (f"The genre is unclear (nearest: {nearest_family(a)}, confidence {a.genre.confidence:.2f}"
            f"{alts}), so it is judged against electronic music as a whole, not one family's "
            f"ideal. Name the genre with --genre (or the API's genre field) to judge it against "
            f"that family.")


def not_electronic_text(a: Analysis) -> str:
    """The one sentence for music that no electronic profile fits."""
    spread = a.extras.timing_spread_ms
    played = (f" Its notes wander {spread:.0f} ms around the beat grid, as played music does "
              f"(sequenced music sits within {TIMING_GRID_MS:.0f} ms)."
              if spread is not None and spread >= TIMING_PLAYED_MS else "")
    hz = a.extras.low_rolloff_hz
    low = (f" Part of that reading is the missing low end (it stops at about {hz:.0f} Hz): if this "
           f"is electronic music with a high-pass on it, fix that first."
           if hz is not None and hz >= L.LOW_ROLLOFF_CUT_HZ else "")
    head = (f"This does not sound like electronic music (electronic fit "
            f"{(a.extras.electronic_fit or 0.0):.2f}).{played}{low} The nearest family is {nearest_family(a)}")
    if a.genre.target not in (a.genre.detected, ELECTRONIC):      # the caller chose the profile
        return f"{head}; the scores use {target_name(a)}, as asked."
    return (f"{head}, so the scores judge it against {profile_name(a)} and mean little for "
            f"this style. Choose a profile with --genre (or the API's genre field) or give "
            f"reference tracks.")
