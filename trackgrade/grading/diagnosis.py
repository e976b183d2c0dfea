"""Words from numbers: the template diagnosis and the enhanced narrative.

Both are pure, deterministic functions of an `Analysis` (its document fields
and `extras`): no engine, no network. `template_diagnosis` is short (status
"pending"); `enhanced_diagnosis` is the second stage (status "ready"): it
names sections with their times, compares every band with the genre ideal,
says what streaming platforms will do to the loudness and gives fixes.
"""

from __future__ import annotations

from trackgrade import limits as L
from trackgrade.delivery.platforms import STREAMING_LUFS
from trackgrade.grading.content import KIND_SCORE, counted_pillars
from trackgrade.grading.genres import GENRES
from trackgrade.limits import BAND_LABELS, sentence_start
from trackgrade.grading.scores import AUDIBLE_LUFS
from trackgrade.grading.wording import (as_target, balance_ok_text, band_advice, band_levels_text, clock,
                                        genre_unclear, genre_word, judged_as_part, nearest_family,
                                        not_electronic_text, part_text, profile_name, reading,
                                        target_name, targets, unclear_genre_text, what_it_is,
                                        whole_mix, bands_judged, drums_to_time)
from trackgrade.model import Analysis, Diagnosis
from trackgrade.pillars import PILLAR_TITLES, PILLARS
from trackgrade.status import PENDING, READY



def _pillars(a: Analysis) -> dict[str, int]:
    """The pillars in the headline (a part's structure is not; a part other
    than a mix counts only `content.counted_pillars`)."""
    s = a.scores
    p = {name: getattr(s, name) for name in PILLARS}
    if not a.structure.judged:
        p.pop("structure")
    counted = counted_pillars(a.content.kind) if a.content is not None else None
    return p if counted is None else {k: v for k, v in p.items() if k in counted}



def _key_text(a: Analysis) -> str:
    if a.key is None:
        return "no clear key (atonal or drums only)"
    return reading(f"{a.key.key} {a.key.scale} ({a.key.camelot})", a.key.confidence)


def _tempo_text(a: Analysis) -> str:
    return reading(f"{a.tempo.bpm:g} BPM", a.tempo.confidence)



# ---------------------------------------------------------------- template (pending)

def summary_sentence(a: Analysis) -> str:
    p = _pillars(a)
    best = max(p, key=p.get)
    worst = min(p, key=p.get)
    part = (" " + part_text(a)) if judged_as_part(a) else ""
    strongest, weakest = PILLAR_TITLES[best].lower(), PILLAR_TITLES[worst].lower()
    tail = f" Strongest: {strongest} ({p[best]}); weakest: {weakest} ({p[worst]}).{part}"
    if not whole_mix(a):        # what it is comes first, then what the score measures
        return (f"{sentence_start(what_it_is(a))}: {a.grade.label} ({a.grade.letter}, {a.score}/100) "
                f"for {KIND_SCORE[a.content.kind]}; at {_tempo_text(a)} in {_key_text(a)}." + tail)
    if not a.extras.electronic:
        # what the score measures comes first: it is no verdict on the music
        return (f"Not electronic music (electronic fit {(a.extras.electronic_fit or 0.0):.2f}): the "
                f"score measures the recording (mix, loudness, frequency balance and pulse) against "
                f"the nearest electronic family, {nearest_family(a)}, not the music itself. "
                f"{a.grade.label} ({a.grade.letter}, {a.score}/100) at {_tempo_text(a)} in "
                f"{_key_text(a)}." + tail)
    genre = genre_word(a)
    article = "an" if genre[:1] in "aeiou" else "a"
    lead = f"{sentence_start(what_it_is(a))}: " if judged_as_part(a) else ""
    return (f"{lead}{a.grade.label} ({a.grade.letter}, {a.score}/100): {article} {genre} track at "
            f"{_tempo_text(a)} in {_key_text(a)}." + tail)


def frequency_sentence(a: Analysis) -> str:
    if not bands_judged(a):
        return band_levels_text(a)
    worst = band_advice(a)[:2]
    cut = _low_cut_text(a)
    if not worst:
        return (f"{balance_ok_text(a)} (score {a.frequency.score})." + (" " + cut if cut else ""))
    parts = [f"{BAND_LABELS[b]} {d:+.1f} dB" for b, d, _, _ in worst]
    return (f"Against {target_name(a)} the biggest gaps are {' and '.join(parts)} "
            f"(score {a.frequency.score}); the spectral centroid is {a.frequency.centroid_hz:.0f} Hz."
            + (" " + cut if cut else ""))


def _low_cut_text(a: Analysis) -> str:
    hz = a.extras.low_rolloff_hz
    if not whole_mix(a):
        return ""
    if hz is None or hz < L.LOW_ROLLOFF_OK_HZ:
        return ""
    return (f"The low end stops at about {hz:.0f} Hz (real mixes reach down to 40-60 Hz): "
            f"check for a high-pass filter on the master or the bass.")


def loudness_verdict(a: Analysis) -> str:
    if judged_as_part(a) and not a.extras.references:
        return "not held to a target (a part)"
    t = targets(a)
    lo, hi = t["loudness_lufs"]
    lufs = a.mix.loudness_lufs
    kind = "master" if a.mastering_status == "master" else "pre-master"
    if lufs < lo:
        return f"{lo - lufs:.1f} LU quieter than {as_target(a, kind)} ({lo:g} to {hi:g} LUFS)"
    if lufs > hi:
        return f"{lufs - hi:.1f} LU louder than {as_target(a, kind)} ({lo:g} to {hi:g} LUFS)"
    return f"within the {lo:g} to {hi:g} LUFS range of {as_target(a, kind)}"


def mix_sentence(a: Analysis) -> str:
    m = a.mix
    t = targets(a)
    if judged_as_part(a):       # a part has no ceiling of a master: only overs count
        peak = f"true peak {m.peak_dbfs:.1f} dBTP" + (", over 0 dBTP" if m.peak_dbfs > 0 else "")
    else:
        peak = (f"true peak {m.peak_dbfs:.1f} dBTP"
                + (f", over the {t['true_peak_max_dbtp']:g} dBTP ceiling"
                   if m.peak_dbfs > t["true_peak_max_dbtp"] else ""))
    extra = []
    if m.clipping_pct >= 0.001:
        extra.append(f"{m.clipping_pct:.3f} % of samples clip")
    if m.stereo_correlation <= L.OUT_OF_PHASE_CORRELATION:
        extra.append(f"the channels are out of phase (correlation {m.stereo_correlation:.2f})")
    elif m.stereo_correlation < 0:
        extra.append(f"the stereo correlation is below zero ({m.stereo_correlation:.2f})")
    elif m.stereo_width < L.MONO_WIDTH and a.extras.channels > 1:
        extra.append("the stereo image is mono")
    tail = ("; " + "; ".join(extra)) if extra else ""
    return (f"Integrated loudness {m.loudness_lufs:.1f} LUFS is {loudness_verdict(a)}; {peak}, "
            f"crest factor {m.crest_factor_db:.1f} dB, loudness range {m.dynamic_range_db:.1f} LU"
            f"{tail} (mix score {m.score}).")


def danceability_sentence(a: Analysis) -> str:
    b = a.danceability.breakdown
    parts = {"tempo fit": b.tempo_fitness, "beat strength": b.beat_strength,
             "rhythmic energy": b.rhythmic_energy, "bass presence": b.bass_presence,
             "groove clarity": b.groove_clarity, "dance feel": b.engine_dance}
    weak = min(parts, key=parts.get)
    strong = max(parts, key=parts.get)
    if not a.extras.tempo_salient:
        return (f"There is no steady pulse to dance to (danceability {a.danceability.score}); "
                f"the tempo estimate of {a.tempo.bpm:g} BPM is a guess.")
    return (f"Danceability {a.danceability.score}: {strong} is the strong point ({parts[strong]}), "
            f"{weak} the weak one ({parts[weak]}); beat regularity {a.tempo.regularity:.2f}.")


def template_diagnosis(a: Analysis) -> Diagnosis:
    """The short diagnosis present as soon as the scores are (status "pending")."""
    summary = summary_sentence(a) + (" " + unclear_genre_text(a) if genre_unclear(a) else "")
    return Diagnosis(status=PENDING, summary=summary, frequency=frequency_sentence(a),
                     mix=mix_sentence(a), danceability=danceability_sentence(a))


# ---------------------------------------------------------------- enhanced (ready)

def _contrast(a: Analysis) -> tuple[int | None, float | None]:
    """(structure contrast part 0-100, short-term loudness spread LU) from extras."""
    parts = a.extras.pillars.get("structure", {}).get("parts", {})
    return parts.get("contrast"), a.extras.loudness_spread_lu


def _sections_text(a: Analysis) -> str:
    secs = a.structure.sections
    if not secs:
        return ""
    if not a.structure.judged:
        return ""           # a part: its sections are in the document, its arrangement is not judged
    if not a.extras.electronic:
        spread = a.extras.loudness_spread_lu or 0.0
        return f"The loudness moves {spread:.1f} LU across {len(secs)} section(s)."
    loud = a.extras.section_loudness_lufs or []
    if len(loud) != len(secs):
        loud = [None] * len(secs)

    def one(s, level):
        at = f"{s.label} at {clock(s.start)}"
        return at + (f" ({level:.1f} LUFS)" if level is not None and level > AUDIBLE_LUFS else "")

    described = ", ".join(one(s, v) for s, v in list(zip(secs, loud))[:8])
    more = f" and {len(secs) - 8} more sections" if len(secs) > 8 else ""
    text = f"The arrangement runs {described}{more}."
    drops = [i for i, s in enumerate(secs) if s.label == "drop"]
    contrast, spread = _contrast(a)
    if drops:
        main = max(drops, key=lambda i: (loud[i] if loud[i] is not None else secs[i].energy,
                                         secs[i].end - secs[i].start))
        s = secs[main]
        text += f" The main drop at {clock(s.start)} lasts {s.end - s.start:.0f} s"
        before = [v for v in loud[:main] if v is not None and v > AUDIBLE_LUFS]
        if loud[main] is not None and before:
            text += f" and lands {loud[main] - min(before):.1f} LU above the quietest section before it"
        text += "."
    else:
        text += (" No section reads as a drop: the track never reaches a clear peak; a section where "
                 "kick and bass come in together after a breakdown would give it one.")
    if contrast is not None and contrast < 40 and spread is not None:
        text += (f" The loudness moves only {spread:.1f} LU across the track, so nothing stands out: "
                 f"strip the drums and bass for 8-16 bars before the drop to give it contrast.")
    return text


def _bands_text(a: Analysis) -> str:
    if not bands_judged(a):
        return ""
    fixes = []
    for b, d, change, _ in band_advice(a)[:3]:
        if change > 0:
            fixes.append(f"bring up the {BAND_LABELS[b]} by about {change:.0f} dB (shelf or a fuller "
                         f"sound there), or check for a filter cutting it")
        else:
            fixes.append(f"cut the {BAND_LABELS[b]} by about {-change:.0f} dB with a broad EQ")
    if fixes:
        return "Fixes: " + "; ".join(fixes) + "."
    return "Leave the EQ alone."


def _streaming_text(a: Analysis) -> str:
    if judged_as_part(a):       # no loudness targets for a part
        return ""
    lufs = a.mix.loudness_lufs
    norm = L.STREAMING_REFERENCE_LUFS
    same = ", ".join(name for name, level in STREAMING_LUFS if level == norm)
    others = [(name, level) for name, level in STREAMING_LUFS if level != norm]
    gap = norm - lufs
    if gap < -0.5:
        text = (f"Streaming: {same} normalise to {norm:g} LUFS, so they will turn this {lufs:.1f} LUFS "
                f"file down by {-gap:.1f} dB" + "".join(f"; {name} ({level:g} LUFS) by {lufs - level:.1f} dB"
                                                       for name, level in others)
                + ". Extra loudness buys nothing there, only lost punch.")
    elif gap > 0.5:
        text = (f"Streaming: at {lufs:.1f} LUFS the file sits {gap:.1f} dB under the {norm:g} LUFS that "
                f"{same} normalise to" + "".join(f" ({name}: {level:g} LUFS)" for name, level in others)
                + "; Spotify only raises quiet tracks as far as the peaks allow, so it may play "
                "quieter than neighbouring tracks.")
    else:
        text = (f"Streaming: at {lufs:.1f} LUFS it plays about as loud as the {norm:g} LUFS that "
                f"{same} normalise to" + "".join(f" ({name} turns it down {lufs - level:.1f} dB to "
                                                 f"{level:g} LUFS)" for name, level in others) + ".")
    lo, hi = targets(a)["loudness_lufs"]
    if a.mastering_status == "master":
        like = "your references" if a.extras.references else f"{profile_name(a)} masters"
        text += f" The target for {like} is {lo:g} to {hi:g} LUFS integrated" + (
            "; for DJ use that matters more than streaming." if a.extras.electronic else ".")
    else:
        text += (f" As a pre-master it should keep its headroom: leave the loudness to the mastering "
                 f"stage ({lo:g} to {hi:g} LUFS, peaks below {targets(a)['true_peak_max_dbtp']:g} dBTP, "
                 f"ideally {L.PRE_MASTER_IDEAL_PEAK_DBTP:g}).")
    return text


def _part_fixes(a: Analysis) -> list[str]:
    """A part's fixes: its peaks and its stereo, never the master bus."""
    m, fixes = a.mix, []
    if m.clipping_pct >= 0.001:
        fixes.append(f"{m.clipping_pct:.3f} % of samples hit full scale: render or record the part "
                     f"a few dB lower")
    if m.peak_dbfs > 0.0:
        fixes.append(f"true peak {m.peak_dbfs:+.1f} dBTP is over 0 dBTP: lower the part by about "
                     f"{m.peak_dbfs + 1.0:.1f} dB")
    if m.stereo_correlation <= L.OUT_OF_PHASE_CORRELATION:
        fixes.append(f"the channels cancel in mono (correlation {m.stereo_correlation:.2f}): flip the "
                     f"polarity of one channel")
    return fixes


def _mix_fixes(a: Analysis) -> list[str]:
    if judged_as_part(a):
        return _part_fixes(a)
    m, t = a.mix, targets(a)
    fixes = []
    lo, hi = t["loudness_lufs"]
    if m.clipping_pct >= 0.001:
        fixes.append(f"{m.clipping_pct:.3f} % of samples hit full scale: lower the master gain or the "
                     f"limiter input until no sample clips, then set the ceiling to "
                     f"{t['true_peak_max_dbtp']:g} dBTP")
    if m.peak_dbfs > t["true_peak_max_dbtp"]:
        fixes.append(f"true peak {m.peak_dbfs:.1f} dBTP: use a true-peak limiter with the ceiling at "
                     f"{t['true_peak_max_dbtp']:g} dBTP")
    if m.loudness_lufs < lo:
        fixes.append(f"raise the integrated loudness by {lo - m.loudness_lufs:.1f} LU to reach {lo:g} LUFS")
    elif m.loudness_lufs > hi:
        fixes.append(f"back the limiter off by {m.loudness_lufs - hi:.1f} dB (target {hi:g} LUFS or below)")
    if m.stereo_correlation <= L.OUT_OF_PHASE_CORRELATION:
        fixes.append(f"the channels cancel in mono (correlation {m.stereo_correlation:.2f}): flip the "
                     f"polarity of one channel and check mid/side processing")
    elif m.stereo_correlation < 0:
        fixes.append(f"stereo correlation {m.stereo_correlation:.2f} is below zero: check the polarity "
                     f"of each channel and any stereo widener, and keep the low end mono")
    elif m.stereo_width < L.MONO_WIDTH and a.extras.channels > 1:
        fixes.append("the image is mono: pan percussion and pads, or add width to the top end only")
    elif m.stereo_correlation < L.PHASE_CORRELATION_LOW:
        fixes.append(f"stereo correlation {m.stereo_correlation:.2f} is low: keep everything below "
                     f"~120 Hz mono and narrow the widest effects so the mix survives mono playback")
    elif m.stereo_width > L.WIDE_WIDTH:
        fixes.append(f"stereo width {m.stereo_width:.2f} is extreme: check the mix in mono")
    hiss = a.extras.pillars.get("mix_quality", {}).get("penalties", {}).get("hiss")
    if hiss:
        fixes.append(f"a steady noise floor sits under the music (its quietest moments still carry "
                     f"5 kHz+ energy {(a.extras.noise_floor_db or 0.0):.0f} dB under the average "
                     f"power): find the hissing source and gate or denoise it")
    if m.crest_factor_db < t["crest_db"][0]:
        fixes.append(f"crest factor {m.crest_factor_db:.1f} dB is below {t['crest_db'][0]:g} dB: less "
                     f"limiting or slower release to give the kick room")
    return fixes


def reference_text(a: Analysis) -> str:
    """Loudness, loudness range and width against the references (empty without them)."""
    refs, t = a.extras.references, targets(a)
    if not refs:
        return ""
    lo, hi = t["loudness_lufs"]
    their = "their" if len(refs) > 1 else "its"
    parts = [f"integrated loudness {a.mix.loudness_lufs:.1f} LUFS against {their} "
             f"{(lo + hi) / 2:.1f} ({a.mix.loudness_lufs - (lo + hi) / 2:+.1f} LU)",
             f"loudness range {a.mix.dynamic_range_db:.1f} LU against {their} "
             f"{t['lra_lu'][0]:g}-{t['lra_lu'][1]:g} LU"]
    if t.get("width"):
        w_lo, w_hi = t["width"]
        parts.append(f"stereo width {a.mix.stereo_width:.2f} against {their} {w_lo:.2f}-{w_hi:.2f}")
    worst = band_advice(a)[:2]
    bands = (" The biggest band differences: " + " and ".join(
        f"{BAND_LABELS[b]} {d:+.1f} dB" for b, d, _, _ in worst) + "." if worst else "")
    return f"Against {target_name(a)}: " + "; ".join(parts) + "." + bands


def enhanced_diagnosis(analysis: Analysis) -> Diagnosis:
    """The full narrative (status "ready"); a pure function of the Analysis."""
    a = analysis
    subgenre = a.extras.subgenre
    sub = (f", closest to {GENRES[subgenre]['name']}" if subgenre in GENRES else "")
    alt = [g.name for g in a.genre.alternatives]
    conf = (" " + unclear_genre_text(a) if genre_unclear(a) else f" Genre confidence {a.genre.confidence:.2f}"
            + (f" (it also fits {' and '.join(alt)})." if alt and a.genre.confidence < 0.6 else "."))
    truncated = (" The file ends early: the header promised more audio than it holds, so the "
                 "numbers describe only what arrived." if a.extras.truncated else "")
    read = f" Read as {a.genre.name}{sub}." if a.extras.electronic else ""
    structure = (f"Structure scores {a.structure.score} and energy" if a.structure.judged
                 else "Energy scores")
    sections = _sections_text(a)
    summary = (summary_sentence(a) + read + conf + (" " + sections if sections else "") + f" {structure} "
               f"{a.energy.score} ({a.energy.onset_rate:.1f} onsets per second)." + truncated)
    bands = _bands_text(a)
    frequency = frequency_sentence(a) + (" " + bands if bands else "")
    if not a.extras.electronic:
        summary += " " + not_electronic_text(a)
    if a.extras.references:
        summary += " " + reference_text(a)
    fixes = _mix_fixes(a)
    streaming = _streaming_text(a)
    mix = (mix_sentence(a) + (" " + streaming if streaming else "")
           + (" Fixes: " + "; ".join(fixes) + "." if fixes else " Nothing in the mix needs fixing."))
    b = a.danceability.breakdown
    t = targets(a)
    lo, hi = t["bpm_range"]
    tempo_note = (f"{_tempo_text(a)}" if judged_as_part(a) else
                  f"{a.tempo.bpm:g} BPM sits inside the {lo:g}-{hi:g} BPM range of {profile_name(a)}"
                  if lo <= a.tempo.bpm <= hi or lo <= a.tempo.bpm * 2 <= hi
                  else f"{a.tempo.bpm:g} BPM is outside the usual {lo:g}-{hi:g} BPM of {profile_name(a)}")
    dance_fixes = []
    pulse = a.extras.tempo_salient
    # drum advice only where there are drums: an electronic mix or a drum loop
    drums = drums_to_time(a)
    if not pulse:
        if GENRES[a.genre.detected].get("danceable", True) and drums and whole_mix(a) \
                and not genre_unclear(a):
            dance_fixes.append("there is no steady pulse: a kick on the grid would make it danceable")
    elif b.bass_presence < 60 and whole_mix(a) and a.extras.electronic:
        dance_fixes.append(f"bass presence is {b.bass_presence}: the low end (sub + bass "
                           f"{a.frequency.bands.sub_bass + a.frequency.bands.bass:.0f} % vs "
                           f"{a.frequency.ideal.sub_bass + a.frequency.ideal.bass:.0f} % ideal) needs a "
                           f"fuller kick or bass line")
    if pulse and b.beat_strength < 50 and drums and whole_mix(a):
        dance_fixes.append(f"beat strength is {b.beat_strength}: a clearer kick transient (shorter "
                           f"attack, less sidechain on the kick itself) helps "
                           + ("DJs and dancers lock in" if a.extras.electronic else "the groove"))
    if pulse and b.groove_clarity < 50 and drums:
        dance_fixes.append(f"groove clarity is {b.groove_clarity}: quantise the drums or steady the tempo")
    danceability = (danceability_sentence(a) + f" {tempo_note}. In detail: tempo fit {b.tempo_fitness}, "
                    f"beat strength {b.beat_strength}, rhythmic energy {b.rhythmic_energy}, bass "
                    f"presence {b.bass_presence}, groove clarity {b.groove_clarity}, dance feel "
                    f"{b.engine_dance}." + (" Fixes: " + "; ".join(dance_fixes) + "." if dance_fixes else ""))
    return Diagnosis(status=READY, summary=summary, frequency=frequency, mix=mix,
                     danceability=danceability)
