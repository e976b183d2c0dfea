import pytest

from trackgrade.grading.grade import GRADE_TABLE, grade_for

CONTRACT_BOUNDS = {"A+": 95, "A": 90, "A-": 85, "B+": 80, "B": 75, "B-": 70, "C+": 65, "C": 60,
                   "C-": 55, "D+": 50, "D": 45, "D-": 40, "F": 0}


@pytest.mark.parametrize("letter,bound", CONTRACT_BOUNDS.items())
def test_each_lower_bound_starts_its_letter(letter, bound):
    assert grade_for(bound).letter == letter
    if bound > 0:
        assert grade_for(bound - 1).letter != letter


def test_thirteen_letters_each_with_one_label():
    grades = [grade_for(s) for s in range(101)]
    letters = {g.letter for g in grades}
    assert letters == set(CONTRACT_BOUNDS)
    labels = {}
    for g in grades:
        labels.setdefault(g.letter, set()).add(g.label)
    assert all(len(v) == 1 for v in labels.values())
    assert len({next(iter(v)) for v in labels.values()}) == 13
    assert len(GRADE_TABLE) == 13


def test_extremes_and_clamping():
    assert grade_for(100).letter == "A+"
    assert grade_for(0).letter == "F"
    assert grade_for(39).letter == "F"
    assert grade_for(150).letter == "A+" and grade_for(-5).letter == "F"
