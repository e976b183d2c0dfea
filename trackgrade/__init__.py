"""trackgrade: grade an electronic-music track from its bytes.

The library is the product; the CLI (`trackgrade.cli`) and the HTTP server
(`trackgrade.server`) are thin shells over `trackgrade.pipeline.analyze`.
"""

__version__ = "0.1.0"
