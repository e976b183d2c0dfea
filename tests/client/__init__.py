"""Tests of trackgrade's client."""
