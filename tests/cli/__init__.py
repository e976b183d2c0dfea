"""Tests of trackgrade's cli."""
