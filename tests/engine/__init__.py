"""Engine tests."""
