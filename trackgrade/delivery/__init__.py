"""Delivery checks, comparing bounces and albums (CONTRACT.md section 5).

    platforms.py  the platforms' published loudness rules (one table) -> `delivery.platforms`
    checks.py     Features -> the `delivery` object (platforms, mono, codecs)
    compare.py    compare(a, b): B against A, two Analysis documents
    album.py      album(documents): the set as one release

compare and album are pure functions of Analysis documents (dicts), so they
work on local analyses and on `remote get` output alike.
"""
