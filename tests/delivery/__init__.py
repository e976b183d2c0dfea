"""Delivery checks: platforms, mono fold-down, codec preview, compare and album."""
