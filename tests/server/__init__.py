"""Tests of trackgrade's server."""
