"""The five pillar scores, in the order every surface shows them, and their
titles: the one home of the list (`model.Scores` holds the values,
`grading.scores.PILLAR_WEIGHTS` weighs them; tests/test_one_home.py keeps
all three in step)."""

from __future__ import annotations

PILLAR_TITLES = {"danceability": "Danceability", "mix_quality": "Mix quality",
                 "frequency_balance": "Frequency balance", "energy": "Energy",
                 "structure": "Structure"}
PILLARS = tuple(PILLAR_TITLES)
