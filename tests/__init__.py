"""Tests for trackgrade; tests/truth.py reaches ../shared/truth."""
