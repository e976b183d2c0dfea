"""Prioritised feedback items (warn / tip / pass), each with a number and an action.

`feedback_items(analysis)` is a pure function of the Analysis (document and
extras). Items are ordered by impact: warnings by the points they cost, then
tips, then passes. Categories: frequency, mix, loudness, dynamics, stereo,
rhythm, structure, key, genre, file.
"""

from __future__ import annotations

from trackgrade import limits as L
from trackgrade.grading.wording import (as_target, balance_ok_text, band_advice, band_frame_words,
                                        clock, genre_unclear, judged_as_part, not_electronic_text,
                                        part_text, profile_name, target_name, targets,
                                        unclear_genre_text, whole_mix, band_levels_text,
                                        bands_judged, drums_to_time)
from trackgrade.limits import BAND_LABELS, BAND_TOLERANCE_DB, sentence_start
from trackgrade.display import plural
from trackgrade.grading.delivery_feedback import codec_items, mono_items
from trackgrade.musical_keys import camelot_neighbours
from trackgrade.model import FEEDBACK_TYPES, Analysis, FeedbackItem



def _file_items(a: Analysis) -> list[tuple[float, FeedbackItem]]:
    x = a.extras
    items = []
    notes = x.decoder_notes
    if notes:
        items.append((25.0, FeedbackItem("warn", "file", (
            f"The MP3 stream is damaged in places: the decoder reported {notes} bad "
            f"frame{'s' if notes != 1 else ''} and skipped or re-synchronised past "
            f"{'them' if notes != 1 else 'it'}. Short dropouts can follow; export the MP3 "
            f"again (or send the WAV/FLAC) if this is not the file you meant."))))
    if not x.truncated:
        return items
    declared = x.declared_duration_s
    promised = f" of the {declared:.1f} s its header declares" if declared else ""
    return items + [(30.0, FeedbackItem("warn", "file", (
        f"The file is truncated: only {a.duration_seconds:.1f} s decoded{promised}. Re-export or "
        f"re-upload the complete file; these results cover only the part that arrived.")))]


def _loudness_items(a: Analysis) -> list[tuple[float, FeedbackItem]]:
    if judged_as_part(a):       # a part has no loudness target: the facts only
        return [(0.0, FeedbackItem("pass", "loudness", (
            f"Integrated loudness {a.mix.loudness_lufs:.1f} LUFS, true peak {a.mix.peak_dbfs:.1f} "
            f"dBTP (a part is not held to a loudness target).")))]
    t = targets(a)
    lo, hi = t["loudness_lufs"]
    lufs = a.mix.loudness_lufs
    norm = L.STREAMING_REFERENCE_LUFS
    if a.mastering_status == "master":
        if lufs < lo:
            return [(4 * (lo - lufs), FeedbackItem("warn" if lo - lufs > 2 else "tip", "loudness", (
                f"At {lufs:.1f} LUFS the master is {lo - lufs:.1f} LU quieter than {as_target(a, 'master')} "
                f"({lo:g} to {hi:g} LUFS): raise the limiter input by about {lo - lufs:.1f} dB, "
                f"keeping the ceiling at {t['true_peak_max_dbtp']:g} dBTP.")))]
        if lufs > hi:
            return [(5 * (lufs - hi), FeedbackItem("warn" if lufs - hi > 1.5 else "tip", "loudness", (
                f"At {lufs:.1f} LUFS the master is pushed {lufs - hi:.1f} LU past {hi:g} LUFS: back "
                f"the limiter off; streaming platforms turn it down to {norm:g} LUFS anyway.")))]
        return [(0.0, FeedbackItem("pass", "loudness", (
            f"Integrated loudness {lufs:.1f} LUFS is on target for {as_target(a, 'master')} "
            f"({lo:g} to {hi:g} LUFS); streaming platforms will turn it down "
            f"{max(lufs - norm, 0):.1f} dB to {norm:g} LUFS.")))]
    if lufs > hi:
        return [(4 * (lufs - hi), FeedbackItem("warn", "loudness", (
            f"At {lufs:.1f} LUFS this pre-master is already {lufs - hi:.1f} LU louder than "
            f"{hi:g} LUFS: remove the limiter from the master bus and send the mastering engineer "
            f"a version around {L.PRE_MASTER_SEND_LUFS:g} LUFS with peaks near "
            f"{L.PRE_MASTER_IDEAL_PEAK_DBTP:g} dBTP. If this is already the finished master, grade "
            f"it as one: --mastering master (mastering_status \"master\" in the API).")))]
    if lufs < lo:
        return [(2 * (lo - lufs), FeedbackItem("tip", "loudness", (
            f"At {lufs:.1f} LUFS the pre-master is quiet ({lo:g} to {hi:g} LUFS is usual): raise the "
            f"mix bus by about {lo - lufs:.0f} dB so the mastering chain works on a healthy level.")))]
    return [(0.0, FeedbackItem("pass", "loudness", (
        f"Pre-master level {lufs:.1f} LUFS leaves the mastering stage room to work "
        f"({lo:g} to {hi:g} LUFS).")))]


def _part_peak_items(a: Analysis) -> list[tuple[float, FeedbackItem]]:
    """A part's clipping and overs: warned about, with no master-bus advice."""
    m, out = a.mix, []
    if m.clipping_pct >= 0.001:
        out.append((10 + 10 * min(m.clipping_pct, 3), FeedbackItem("warn", "mix", (
            f"{m.clipping_pct:.3f} % of samples are clipped at full scale: render or record the "
            f"part again a few dB lower, so that none clip."))))
    if m.peak_dbfs > 0.0:
        out.append((6 * m.peak_dbfs, FeedbackItem("warn", "mix", (
            f"True peak {m.peak_dbfs:+.1f} dBTP is over 0 dBTP: it will clip when played or "
            f"encoded; lower the part by about {m.peak_dbfs + 1.0:.1f} dB."))))
    elif m.clipping_pct < 0.001:
        out.append((0.0, FeedbackItem("pass", "mix", (
            f"True peak {m.peak_dbfs:.1f} dBTP: no overs and no clipped samples."))))
    return out


def _mix_items(a: Analysis) -> list[tuple[float, FeedbackItem]]:
    m, t = a.mix, targets(a)
    ceiling = t["true_peak_max_dbtp"]
    out = _part_peak_items(a) if judged_as_part(a) else []
    if out:
        pass                    # a part: its peaks are judged above
    elif m.clipping_pct >= 0.001:
        out.append((10 + 10 * min(m.clipping_pct, 3), FeedbackItem("warn", "mix", (
            f"{m.clipping_pct:.3f} % of samples are clipped at full scale: lower the master gain "
            f"until none clip and let a true-peak limiter catch the peaks at {ceiling:g} dBTP."))))
    if judged_as_part(a):
        pass
    elif m.peak_dbfs > ceiling:
        out.append((6 * (m.peak_dbfs - ceiling), FeedbackItem("warn", "mix", (
            f"True peak {m.peak_dbfs:.1f} dBTP is {m.peak_dbfs - ceiling:.1f} dB over the "
            f"{ceiling:g} dBTP ceiling for a {a.mastering_status}: lower the output or use a "
            f"true-peak limiter (lossy encoders add overs)."))))
    else:
        out.append((0.0, FeedbackItem("pass", "mix", (
            f"True peak {m.peak_dbfs:.1f} dBTP respects the {ceiling:g} dBTP ceiling for a "
            f"{a.mastering_status}."))))
    floor = a.extras.noise_floor_db
    pen = a.extras.pillars.get("mix_quality", {}).get("penalties", {})
    if pen.get("hiss") and floor is not None and not whole_mix(a):
        out.append((pen["hiss"], FeedbackItem("warn" if pen["hiss"] >= 8 else "tip", "mix", (
            f"Noise: a steady hiss sits under the sound (its quietest moments carry 5 kHz+ energy "
            f"only {-floor:.0f} dB under the average power). On a vintage break or a sampled "
            f"loop that may be the character; if it is not, gate or denoise it."))))
    elif pen.get("hiss") and floor is not None:
        out.append((pen["hiss"], FeedbackItem("warn" if pen["hiss"] >= 8 else "tip", "mix", (
            f"Noise: a steady hiss sits under the music. Even its quietest moments carry 5 kHz+ "
            f"energy only {-floor:.0f} dB under the average power (clean music falls 30 dB or "
            f"more between hits). Find the hissing source (a synth, an amp sim, a noisy sample) "
            f"and gate or denoise it."))))
    return out


def _dynamics_items(a: Analysis) -> list[tuple[float, FeedbackItem]]:
    m, t = a.mix, targets(a)
    clo, chi = t["crest_db"]
    llo, lhi = t["lra_lu"]
    out = []
    if judged_as_part(a):       # limiting and loudness range are a master's matters
        return [(0.0, FeedbackItem("pass", "dynamics", (
            f"Crest factor {m.crest_factor_db:.1f} dB, loudness range {m.dynamic_range_db:.1f} LU.")))]
    if m.crest_factor_db < clo:
        out.append((5 * (clo - m.crest_factor_db), FeedbackItem("warn", "dynamics", (
            f"Crest factor {m.crest_factor_db:.1f} dB is below {clo:g} dB: the track is "
            f"over-limited. Reduce limiting by {clo - m.crest_factor_db:.1f} dB or use a slower "
            f"release so the kick keeps its punch."))))
    club = a.extras.electronic
    if m.dynamic_range_db < llo:
        out.append((3 * (llo - m.dynamic_range_db), FeedbackItem("tip", "dynamics", (
            f"Loudness range {m.dynamic_range_db:.1f} LU is narrow (typical {llo:g}-{lhi:g} LU): "
            + ("let breakdowns drop 4-6 LU below the drops." if club else
               "the music stays at one level from start to end.")))))
    elif m.dynamic_range_db > lhi:
        out.append((1.5 * (m.dynamic_range_db - lhi), FeedbackItem("tip", "dynamics", (
            f"Loudness range {m.dynamic_range_db:.1f} LU is wide for the genre ({llo:g}-{lhi:g} LU): "
            + ("quiet passages may get lost in a club; ride the quiet sections up." if club else
               "quiet passages may get lost on small speakers; ride them up.")))))
    if not out:
        out.append((0.0, FeedbackItem("pass", "dynamics", (
            f"Dynamics are healthy: crest factor {m.crest_factor_db:.1f} dB, loudness range "
            f"{m.dynamic_range_db:.1f} LU."))))
    return out


def _stereo_items(a: Analysis) -> list[tuple[float, FeedbackItem]]:
    m = a.mix
    channels = a.extras.channels
    if m.stereo_correlation <= L.OUT_OF_PHASE_CORRELATION:
        return [(40.0, FeedbackItem("warn", "stereo", (
            f"Stereo correlation {m.stereo_correlation:.2f}: the channels are out of phase and the "
            f"track will thin out or vanish in mono "
            f"({'club systems' if a.extras.electronic else 'mono speakers'}, phones). Flip the polarity of "
            f"one channel or fix the offending stereo effect.")))]
    if m.stereo_correlation < 0:
        return [(25.0, FeedbackItem("warn", "stereo", (
            f"Stereo correlation {m.stereo_correlation:.2f} is below zero: left and right share "
            f"little and lean slightly towards opposite polarity, so parts (a centred kick or bass "
            f"first) may cancel in mono. Check the polarity of each channel and any stereo "
            f"widener, and keep the low end mono.")))]
    if channels == 1 and judged_as_part(a):
        return [(0.0, FeedbackItem("pass", "stereo", "The file is mono (1 channel)."))]
    if channels == 1:
        return [(5.0, FeedbackItem("tip", "stereo", (
            "The file is mono (1 channel): export in stereo and spread hats, pads and effects "
            "while keeping kick and bass centred.")))]
    if m.stereo_width < L.MONO_WIDTH:
        return [(15.0, FeedbackItem("warn", "stereo", (
            f"Stereo width {m.stereo_width:.3f}: left and right are identical, so the mix is mono. "
            f"Pan percussion and pads, or widen the top end (above 300 Hz) only.")))]
    if m.stereo_correlation < L.PHASE_CORRELATION_LOW:
        return [(50 * (L.PHASE_CORRELATION_LOW - m.stereo_correlation), FeedbackItem("warn", "stereo", (
            f"Stereo correlation {m.stereo_correlation:.2f} is low: parts may cancel in mono. Keep "
            f"the low end mono below ~120 Hz and narrow the widest effects.")))]
    if m.stereo_width > L.WIDE_WIDTH:
        return [(60 * (m.stereo_width - L.WIDE_WIDTH), FeedbackItem("tip", "stereo", (
            f"Stereo width {m.stereo_width:.2f} is very wide: check mono compatibility and keep "
            f"the bass centred.")))]
    low_end = _low_end_mono_loss(a)
    if low_end:             # the delivery check says the low end is not mono: so does this
        named = " and ".join(f"{BAND_LABELS[b]} {loss:.1f} dB" for b, loss in low_end)
        return [(3.0 + max(loss for _, loss in low_end), FeedbackItem("tip", "stereo", (
            f"Stereo image is healthy (correlation {m.stereo_correlation:.2f}, width "
            f"{m.stereo_width:.2f}), but the low end is not mono: summed to mono it loses "
            f"{named}. Keep the kick and bass mono below ~120 Hz.")))]
    return [(0.0, FeedbackItem("pass", "stereo", (
        f"Stereo image is healthy and mono-compatible (correlation {m.stereo_correlation:.2f}, "
        f"width {m.stereo_width:.2f}).")))]


def _low_end_mono_loss(a: Analysis) -> list[tuple[str, float]]:
    """The low-end bands that make `delivery.mono.low_end_mono` false but stay under
    the mono warn (`_mono_items` names those at MONO_LOSS_WARN_DB or more)."""
    if a.delivery is None or a.delivery.mono.low_end_mono:
        return []
    bands = a.delivery.mono.bands
    lost = [(b, getattr(bands, b).mono_loss_db) for b in L.LOW_END_BANDS]
    if any(loss >= L.MONO_LOSS_WARN_DB for _, loss in lost):
        return []
    return [(b, loss) for b, loss in lost if loss >= L.LOW_END_MONO_LOSS_DB]


# what may be cutting a light band: a high-pass under it, an EQ dip in it, a low-pass over it
FILTER_CUTTING = {"sub_bass": "a high-pass filter", "bass": "a high-pass filter",
                  "low_mid": "a high-pass filter", "mid": "an EQ dip", "upper_mid": "an EQ dip",
                  "high": "a low-pass filter", "air": "a low-pass filter"}


def _frequency_items(a: Analysis) -> list[tuple[float, FeedbackItem]]:
    if not bands_judged(a):
        return [(0.0, FeedbackItem("pass", "frequency", band_levels_text(a)))]
    target = target_name(a)
    out = []
    hz = a.extras.low_rolloff_hz
    if hz is not None and hz >= L.LOW_ROLLOFF_OK_HZ:
        out.append((25.0, FeedbackItem("warn", "frequency", (
            f"Low cut: the low end stops at about {hz:.0f} Hz, so kick and bass have lost their "
            f"fundamentals (real mixes reach down to 40-60 Hz). Check for a high-pass filter on "
            f"the master, the bass or the kick."))))
    for b, d, change, kind in band_advice(a):
        tol = BAND_TOLERANCE_DB[b]
        head = (f"{sentence_start(BAND_LABELS[b])} {d:+.1f} dB against {target}, "
                f"{band_frame_words(b)} (normal: within ±{tol:g} dB)")
        if change > 0:
            text = (f"{head}: boost by about {change:.0f} dB, or check for {FILTER_CUTTING[b]} "
                    f"cutting it.")
        else:
            text = f"{head}: cut about {-change:.0f} dB there with a broad EQ."
        out.append((abs(d) / tol * 5, FeedbackItem(kind, "frequency", text)))
    if not out:
        out.append((0.0, FeedbackItem("pass", "frequency", (
            f"{balance_ok_text(a)} (frequency score {a.frequency.score}).")))) 
    return out


def _genre_items(a: Analysis) -> list[tuple[float, FeedbackItem]]:
    if not a.extras.electronic:
        return [(35.0, FeedbackItem("warn", "genre", not_electronic_text(a)))]
    if genre_unclear(a):        # no clear family: broad targets, and how to name the genre
        return [(20.0, FeedbackItem("tip", "genre", unclear_genre_text(a)))]
    return []


def _rhythm_items(a: Analysis) -> list[tuple[float, FeedbackItem]]:
    b = a.danceability.breakdown
    t = targets(a)
    lo, hi = t["bpm_range"]
    out = []
    # drum advice only where there are drums to time: an electronic mix or a drum loop
    drums = drums_to_time(a)
    if not a.extras.tempo_salient:
        if a.genre.detected != "ambient" and drums and whole_mix(a) and not genre_unclear(a):
            out.append((15.0, FeedbackItem("warn", "rhythm", (
                f"No steady pulse was found (beat strength {b.beat_strength}/100): for a dance "
                f"track make the kick audible and on the grid."))))
        return out
    if b.beat_strength < 45 and drums and whole_mix(a):
        out.append((45 - b.beat_strength, FeedbackItem("warn" if b.beat_strength < 30 else "tip", "rhythm", (
            f"Beat strength {b.beat_strength}/100: the kick does not carry the groove. Give it a "
            f"clearer transient and 2-4 dB more level against the bass."))))
    bpm = a.tempo.bpm
    if a.extras.electronic and not judged_as_part(a) and not (lo <= bpm <= hi or lo <= bpm * 2 <= hi
                                                              or lo <= bpm / 2 <= hi):
        out.append((8.0, FeedbackItem("tip", "rhythm", (
            f"{bpm:g} BPM is outside the {lo:g}-{hi:g} BPM usual for {profile_name(a)}: "
            f"fine for an edit, but DJs will pitch it."))))
    if b.groove_clarity < 50 and drums:
        out.append((50 - b.groove_clarity, FeedbackItem("tip", "rhythm", (
            f"Groove clarity {b.groove_clarity}/100 (regularity {a.tempo.regularity:.2f}): tighten "
            f"the drum timing or quantise the kick."))))
    if not out:
        out.append((0.0, FeedbackItem("pass", "rhythm", (
            f"Solid groove at {bpm:g} BPM: beat strength {b.beat_strength}, groove clarity "
            f"{b.groove_clarity}."))))
    return out


def _structure_items(a: Analysis) -> list[tuple[float, FeedbackItem]]:
    secs = a.structure.sections
    labels = [s.label for s in secs]
    parts = a.extras.pillars.get("structure", {}).get("parts", {})
    contrast = parts.get("contrast")
    spread = a.extras.loudness_spread_lu
    if judged_as_part(a):
        return [(0.0, FeedbackItem("pass", "structure", part_text(a)))]
    if not a.extras.electronic:
        moves = spread if spread is not None else 0.0
        if contrast is not None and contrast < 40:
            return [(5.0, FeedbackItem("tip", "structure", (
                f"The loudness moves only {moves:.1f} LU across {len(secs)} section(s): the music "
                f"stays at one level from start to end.")))]
        return [(0.0, FeedbackItem("pass", "structure", (
            f"{len(secs)} section(s), the loudness moving {moves:.1f} LU across the track.")))]
    out = []
    if contrast is not None and spread is not None and contrast < 40:
        out.append((45.0 - contrast / 2, FeedbackItem("warn", "structure", (
            f"The arrangement is flat: short-term loudness moves only {spread:.1f} LU across "
            f"{plural(len(secs), 'section')} (a club track typically moves 4-8 LU). Add a breakdown "
            f"without kick and bass, and a buildup into the drop."))))
    if "drop" not in labels:
        out.append((10.0, FeedbackItem("tip", "structure", (
            f"No drop was found in {plural(len(secs), 'section')} over {a.duration_seconds:.0f} s: give the "
            f"track one clear peak section, 2-4 LU above the rest, where the full groove lands."))))
    if len(set(labels)) <= 2 and not out:
        out.append((8.0, FeedbackItem("tip", "structure", (
            f"Only {plural(len(set(labels)), 'kind')} of section ({', '.join(sorted(set(labels)))}): an "
            f"intro and outro of 16-32 bars make the track easier to mix."))))
    if not out:
        drop = next(s for s in secs if s.label == "drop")
        out.append((0.0, FeedbackItem("pass", "structure", (
            f"Clear arrangement: {len(secs)} sections, first drop at {clock(drop.start)}, "
            f"loudness moving {spread if spread is not None else 0:.1f} LU across the track."))))
    return out


def _key_items(a: Analysis) -> list[tuple[float, FeedbackItem]]:
    if a.key is None:
        return [(1.0, FeedbackItem("tip", "key", (
            f"No key detected in {a.duration_seconds:.0f} s of audio (mostly drums or noise): tag "
            f"it as atonal, or add a tonal element if you want harmonic mixing.")))]
    near = ", ".join(camelot_neighbours(a.key.camelot))
    if a.key.confidence < 0.35:
        return [(3.0, FeedbackItem("tip", "key", (
            f"The key reads as {a.key.key} {a.key.scale} ({a.key.camelot}) but with low confidence "
            f"({a.key.confidence:.2f}): check it by ear before tagging; if right, it mixes with "
            f"{near}.")))]
    return [(0.0, FeedbackItem("pass", "key", (
        f"Key {a.key.key} {a.key.scale} ({a.key.camelot}, confidence {a.key.confidence:.2f}): it "
        f"mixes harmonically with {near}.")))]


RULES = (_file_items, _genre_items, _loudness_items, _mix_items, _dynamics_items, _stereo_items,
         mono_items, codec_items, _frequency_items, _rhythm_items, _structure_items, _key_items)


def feedback_items(analysis: Analysis) -> tuple[FeedbackItem, ...]:
    """All feedback, ordered: warnings by impact, then tips by impact, then passes."""
    scored = one_verdict_per_topic([item for rule in RULES for item in rule(analysis)])
    scored.sort(key=lambda it: (FEEDBACK_TYPES.index(it[1].type), -it[0]))
    return tuple(item for _, item in scored)


def one_verdict_per_topic(scored: list[tuple[float, FeedbackItem]]
                          ) -> list[tuple[float, FeedbackItem]]:
    """A topic (category) with a warn or a tip gets no pass beside it: "Stereo
    image is healthy" never stands next to a stereo warning."""
    flagged = {item.category for _, item in scored if item.type != "pass"}
    return [(w, item) for w, item in scored
            if item.type != "pass" or item.category not in flagged]
