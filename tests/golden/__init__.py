"""Golden documents of the canned test-mode analysis (regenerate: python -m tests.golden.regen)."""
