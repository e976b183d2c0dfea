"""Keep a C decoder's notes off the terminal and the server log.

libmpg123 (inside libsndfile) writes its complaints about damaged or
low-bitrate MP3 frames ("part2_3_length too large", "Illegal Audio-MPEG-Header",
"Trying to resync...") straight to file descriptor 2, below Python's
`sys.stderr`. `decoder_notes()` points fd 2 at a pipe while a decode runs,
drains the pipe on a thread (a decoder that writes more than the pipe holds
never blocks), puts fd 2 back and returns the lines, so the caller can turn
them into one warning on the analysis.

fd 2 belongs to the whole process: one lock serialises the captures, and any
line in the window that is not a decoder note (another thread's log line) is
written to the real stderr afterwards, so nothing is lost. When fd 2 cannot
be redirected (closed, or an unusual platform) the decode simply runs with
the notes going where they always went.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from contextlib import contextmanager
from typing import Iterator

_LOCK = threading.Lock()
# libmpg123's message shapes: "[src/libmpg123/layer3.c:...] error: ...", "Note: ...",
# "Warning: ..." (its resync notes), "mpg123 ..." ; libsndfile adds nothing of its own
_DECODER_LINE = re.compile(r"^(\[[^\]]*mpg123[^\]]*\]|Note: |Warning: |mpg123|\[src/)")


def is_decoder_note(line: str) -> bool:
    return bool(_DECODER_LINE.match(line.strip()))


@contextmanager
def decoder_notes() -> Iterator[list[str]]:
    """Collect the decoder notes written to fd 2 inside the block (a list
    filled when the block ends); other lines written meanwhile pass through."""
    notes: list[str] = []
    with _LOCK:
        try:
            sys.stderr.flush()
        except (OSError, ValueError, AttributeError):
            pass
        try:
            saved = os.dup(2)
        except OSError:
            yield notes
            return
        try:
            read_end, write_end = os.pipe()
        except OSError:
            os.close(saved)
            yield notes
            return
        captured = bytearray()

        def drain() -> None:
            while True:
                chunk = os.read(read_end, 65536)
                if not chunk:
                    return
                captured.extend(chunk)

        reader = threading.Thread(target=drain, name="decoder-notes", daemon=True)
        reader.start()
        os.dup2(write_end, 2)
        os.close(write_end)
        try:
            yield notes
        finally:
            os.dup2(saved, 2)            # the pipe's last write end closes: the reader ends
            os.close(saved)
            reader.join()
            os.close(read_end)
            lines = captured.decode("utf-8", errors="replace").splitlines()
            notes.extend(line for line in lines if is_decoder_note(line))
            others = [line for line in lines if line.strip() and not is_decoder_note(line)]
            if others:
                try:
                    os.write(2, ("\n".join(others) + "\n").encode("utf-8", errors="replace"))
                except OSError:
                    pass
