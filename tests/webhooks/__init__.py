"""Tests of trackgrade's webhooks."""
