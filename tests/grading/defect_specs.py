"""The synthetic variants the defect tests grade: one clean 30 s house master
at -9 LUFS and the same track with one defect each (synth README `defects`),
plus flattened arrangements (every section 'drop' or every section 'breakdown')."""

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
    "all_drop": {"sections": [["drop", 4], ["drop", 4], ["drop", 4], ["drop", 4]]},
    "all_breakdown": {"sections": [["breakdown", 4], ["breakdown", 4], ["breakdown", 4],
                                   ["breakdown", 4]]},
}


def specs() -> list[dict]:
    out = [{**BASE, "name": "g_clean"}]
    out += [{**BASE, **extra, "name": f"g_{name}"} for name, extra in DEFECTS.items()]
    return out
