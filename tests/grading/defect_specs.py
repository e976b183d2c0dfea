"""The synthetic variants the defect tests grade: one clean 30 s house master
at -9 LUFS and the same track with one defect each (synth README `defects`),
plus flattened arrangements (every section 'drop' or every section 'breakdown'),
which are full tracks of 64 s (a clip under 60 s is a part, whose arrangement
is not judged) beside their own clean 64 s track, `clean_full`."""

BASE = {"style": "house", "bpm": 124, "key": "A", "scale": "minor", "seconds": 30,
        "target_lufs": -9, "seed": 7}

DEFECTS = {
    "clip": {"defects": [{"type": "clip_db", "value": 6}]},
    "lowcut": {"defects": [{"type": "lowcut_hz", "value": 150}]},
    "mono": {"defects": ["mono"]},
    "phase": {"defects": ["phase_invert_right"]},
    "quiet": {"defects": [{"type": "quiet_db", "value": 12}]},
    "no_kick": {"defects": ["no_kick"]},
    "noise": {"defects": [{"type": "noise_db", "value": -30}]},
    "all_drop": {"seconds": 64, "sections": [["drop", 8], ["drop", 8], ["drop", 8], ["drop", 8]]},
    "all_breakdown": {"seconds": 64, "sections": [["breakdown", 8], ["breakdown", 8],
                                                  ["breakdown", 8], ["breakdown", 8]]},
    "clean_full": {"seconds": 64},
}
# each defect's clean counterpart (same length): the full-length arrangements
# are compared with the clean full-length track
CLEAN_OF = {"all_drop": "clean_full", "all_breakdown": "clean_full"}


def specs() -> list[dict]:
    out = [{**BASE, "name": "g_clean"}]
    out += [{**BASE, **extra, "name": f"g_{name}"} for name, extra in DEFECTS.items()]
    return out
