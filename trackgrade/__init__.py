"""trackgrade: grade an electronic-music track from its bytes.

The library is the product; the CLI (`trackgrade.cli`) and the HTTP server
(`trackgrade.server`) are thin shells over `trackgrade.pipeline.analyze`.
"""

__version__ = "0.1.0"


def compare(a: dict, b: dict) -> dict:
    """B against A: two Analysis documents compared, every value B minus A
    (see `trackgrade.delivery.compare.compare`)."""
    from trackgrade.delivery.compare import compare as compare_documents
    return compare_documents(a, b)
