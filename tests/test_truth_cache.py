"""The render cache of tests/truth.py: on a cold cache the -n workers that need
the same render wait for one process to make it instead of each making it; its
keys follow the generators' source; the EBU rates are made side by side."""

from __future__ import annotations

import json
import os
import sys
import threading
import time

import pytest

from tests import truth
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


def test_a_changed_generator_gets_new_cache_keys(tmp_path, monkeypatch):
    """A render of an older generator is never read as the current one's."""
    specs = [{"name": "k", "style": "house", "seconds": 4}]
    before = (truth._spec_dir(specs), truth._ebu_dir(48000))
    copy = tmp_path / "truth_gen"
    copy.mkdir()
    for name in ("synth_edm.py", "gen_ebu.py"):
        (copy / name).write_bytes((truth.GENERATORS / name).read_bytes() + b"\n# changed\n")
    monkeypatch.setattr(truth, "GENERATORS", copy)
    truth.generator_digest.cache_clear()
    try:
        after = (truth._spec_dir(specs), truth._ebu_dir(48000))
    finally:
        monkeypatch.undo()
        truth.generator_digest.cache_clear()
    assert after[0] != before[0] and after[1] != before[1]
    assert (truth._spec_dir(specs), truth._ebu_dir(48000)) == before


def test_prepare_ebu_makes_the_missing_rates_at_once(tmp_path, monkeypatch):
    """Two missing rates are generated side by side, not one after the other."""
    spans = {}

    def fake_render(out, command):
        start = time.monotonic()
        time.sleep(0.5)
        out.mkdir(parents=True)
        (out / "expected.json").write_text('{"files": []}')
        spans[command[command.index("--rate") + 1]] = (start, time.monotonic())

    monkeypatch.setattr(truth, "CACHE", tmp_path)
    monkeypatch.setattr(truth, "_render_once", fake_render)
    truth.prepare_ebu([48000, 44100, 48000])
    assert sorted(spans) == ["44100", "48000"]
    (a0, a1), (b0, b1) = spans.values()
    assert a0 < b1 and b0 < a1                         # the two overlapped
    truth.prepare_ebu([48000, 44100])                   # cached: nothing made again
    assert len(spans) == 2


def test_render_once_runs_a_function_into_the_private_directory(tmp_path):
    out = tmp_path / "cache" / "spec"
    seen = []

    def make(work):
        seen.append(work)
        (work / "out.txt").write_text("done")

    _render_once(out, make)
    assert (out / "out.txt").read_text() == "done"
    assert seen[0] != out and not seen[0].exists()    # written aside, renamed into place


def _fake_render(log_dir):
    """A stand-in for truth._render_here (it runs in the forked child): half a
    second per group, files holding their names, and a line in `log_dir`
    (the child's memory is not the test's) naming the group and its span."""
    def render(group, work):
        start = time.time()
        time.sleep(0.5)
        for spec in group:
            (work / f"{spec['name']}.wav").write_bytes(spec["name"].encode())
        (work / "truth.json").write_text(json.dumps(
            {"tracks": [{"name": s["name"], "file": f"{s['name']}.wav"} for s in group]}))
        (log_dir / f"{group[0]['name']}-{os.getpid()}").write_text(
            json.dumps([[s["name"] for s in group], start, time.time()]))
    return render


def _made(log_dir):
    return sorted(json.loads(p.read_text()) for p in log_dir.iterdir())


def test_workers_asking_for_the_same_tracks_render_different_groups(tmp_path, monkeypatch):
    """On a cold cache two requests for the same specs share the work (one
    master group each) instead of one rendering everything while the other waits."""
    log = tmp_path / "log"
    log.mkdir()
    monkeypatch.setattr(truth, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(truth, "_render_here", _fake_render(log))
    monkeypatch.setattr(truth, "RENDER_PROCESSES", 1)       # one child per request
    specs = [{"name": "one", "style": "house", "seconds": 4, "seed": 1},
             {"name": "two", "style": "techno", "seconds": 4, "seed": 2},
             {"name": "two_quiet", "style": "techno", "seconds": 4, "seed": 2,
              "defects": [{"type": "quiet_db", "value": 6}]}]
    results = []
    threads = [threading.Thread(target=lambda: results.append(truth.render_specs(specs)))
               for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    made = _made(log)
    assert [names for names, *_ in made] == [["one"], ["two", "two_quiet"]]   # each once
    (_, a0, a1), (_, b0, b1) = made
    assert a0 < b1 and b0 < a1                               # side by side
    (folder, tracks), again = results
    assert again == (folder, tracks) and [t["name"] for t in tracks] == ["one", "two", "two_quiet"]
    assert (folder / "two_quiet.wav").read_bytes() == b"two_quiet"


def test_one_request_renders_its_groups_side_by_side(tmp_path, monkeypatch):
    log = tmp_path / "log"
    log.mkdir()
    monkeypatch.setattr(truth, "CACHE", tmp_path / "cache")
    monkeypatch.setattr(truth, "_render_here", _fake_render(log))
    folder, tracks = truth.render_specs([{"name": "a", "style": "house", "seconds": 4, "seed": 1},
                                         {"name": "b", "style": "house", "seconds": 4, "seed": 2}])
    (_, a0, a1), (_, b0, b1) = _made(log)
    assert a0 < b1 and b0 < a1
    assert [t["name"] for t in tracks] == ["a", "b"] and (folder / "b.wav").read_bytes() == b"b"


def test_a_failed_render_fails_the_request_and_leaves_nothing(tmp_path, monkeypatch):
    def broken(group, work):
        raise ValueError("no such sound")

    monkeypatch.setattr(truth, "CACHE", tmp_path)
    monkeypatch.setattr(truth, "_render_here", broken)
    with pytest.raises(RuntimeError, match="failed"):
        truth.render_specs([{"name": "a", "style": "house", "seconds": 4, "seed": 1}])
    assert not list((tmp_path / "synth").glob("[!.]*"))
