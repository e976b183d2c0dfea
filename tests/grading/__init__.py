"""Grading tests."""
