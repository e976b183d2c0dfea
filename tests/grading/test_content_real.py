"""Judged as what it is (CONTRACT.md section 6), on real clips read in place:
a one-bar Amen break is a drum loop and is judged as a part (no band boost or
cut against a full mix's ideal, no master-bus or loudness-target advice, one
section `part`, a grade that never says "Not ready"); real parts of every
kind are never read as a mix, and get no band or master-bus advice and one
`part` section; music that is
not electronic labels its sections `section`; ragtime is never told to
quantise a kick."""

from __future__ import annotations

import csv
import re
from functools import lru_cache
from pathlib import Path

import pytest

from trackgrade.engine.extract import extract
from tests.document_check import validate_document
from trackgrade.pipeline import enhance, grade

from tests.grading.real_audio import load
from tests.truth import real_manifest, real_only, real_params

pytestmark = real_only()

ROOT = Path(__file__).resolve().parents[2]
LABELS = ROOT / "benchmarks" / "content" / "real_kinds.csv"
BAND_ADVICE = re.compile(r"\b(boost|bring up|cut (about|the))\b", re.I)
MASTER_BUS = re.compile(r"limiter|ceiling|mix bus|master bus|master gain|mastering (stage|engineer)"
                        r"|pre-master|quieter than|louder than|LUFS integrated|normalise", re.I)
CLUB_LABELS = {"intro", "buildup", "drop", "breakdown", "outro"}


def _labels() -> dict[str, str]:
    with open(LABELS, newline="", encoding="utf-8") as fh:
        return {r["clip_id"]: r["kind"] for r in csv.DictReader(fh)}


def _file(clip_id: str) -> str:
    rows = [r for r in real_manifest() if r["clip_id"] == clip_id and r["category"] != "edge-case"]
    rows.sort(key=lambda r: r["variant"] != "original")
    return rows[0]["file"]


@lru_cache(maxsize=None)
def analysed(clip_id: str):
    audio = load(_file(clip_id))
    a = enhance(grade(extract(audio, parallel=False), file_name=Path(_file(clip_id)).name,
                      mastering_status="pre-master"))
    return a


def words(a) -> list[str]:
    d = a.diagnosis
    return [d.summary, d.frequency or "", d.mix or "", d.danceability or ""] + [i.text for i in a.feedback]


def test_the_one_bar_amen_break_is_a_drum_loop_judged_as_a_part():
    a = analysed("sonicpi_loop_amen")
    assert a.content.kind == "drums" and a.content.part is True
    assert a.structure.judged is False
    assert [(s.label, s.start, s.end) for s in a.structure.sections] == [("part", 0.0, a.duration_seconds)]
    said = words(a)
    assert [t for t in said if BAND_ADVICE.search(t)] == []
    assert [t for t in said if MASTER_BUS.search(t)] == []
    assert a.grade.label not in ("Not ready", "Release ready")
    assert a.diagnosis.summary.startswith(f"Drum loop · {a.duration_seconds:.1f} s")
    assert a.frequency.levels_db is not None                    # band levels are still reported
    assert validate_document(a.to_dict()) == []


PARTS = sorted(cid for cid, kind in _labels().items() if kind != "mix") if real_manifest() else []


@pytest.mark.parametrize("clip_id", real_params(PARTS))
def test_every_real_part_gets_no_master_bus_advice_and_one_part_section(clip_id):
    a = analysed(clip_id)
    assert a.content.part is True                              # under 60 s or not a mix
    assert [s.label for s in a.structure.sections] == ["part"]
    assert [t for t in words(a) if MASTER_BUS.search(t)] == []
    assert a.grade.label != "Not ready"
    # never read as a mix (a bass line read as one gets a full mix's band advice)
    assert a.content.kind != "mix"
    assert [t for t in words(a) if BAND_ADVICE.search(t)] == []


def test_a_classical_recording_labels_its_sections_section():
    a = analysed("librosa_nutcracker")
    assert a.content.kind == "mix" and a.duration_seconds >= 60 and a.content.part is False
    assert a.extras.electronic is False
    labels = {s.label for s in a.structure.sections}
    assert labels == {"section"} and not labels & CLUB_LABELS


def test_ragtime_is_never_told_to_quantise_a_kick():
    a = analysed("librosa_pistachio")
    said = " ".join(words(a)).lower()
    assert "quantis" not in said and "kick" not in said
