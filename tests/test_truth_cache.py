"""The render cache of tests/truth.py: on a cold cache the -n workers that need
the same render wait for one process to make it instead of each making it."""

from __future__ import annotations

import sys
import threading

from tests.truth import _render_once

# counts its runs in `count`, takes a moment, then writes its output into {dir}
RENDER = ("import sys, time, pathlib; open(sys.argv[1], 'a').write('x'); time.sleep(0.5); "
          "pathlib.Path(sys.argv[2], 'out.txt').write_text('done')")


def test_concurrent_requests_for_one_render_make_it_once(tmp_path):
    count, out = tmp_path / "count", tmp_path / "cache" / "spec"
    command = [sys.executable, "-c", RENDER, str(count), "{dir}"]
    threads = [threading.Thread(target=_render_once, args=(out, command)) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert (out / "out.txt").read_text() == "done"
    assert count.read_text() == "x"                   # one render, not four
    assert [p.name for p in out.parent.iterdir() if not p.name.endswith(".lock")] == ["spec"]
