"""Ground truth for tests and benchmarks: made here, or read from ../shared.

What the tests can make themselves they make inside the project, with the
generators in tests/truth_gen/ (our own): the EBU Tech 3341/3342 loudness
signals (`ebu_signals`) and synthetic electronic tracks with exact truth
(`render_specs`, `render_grid`). Renders are cached outside the repository
(`TRACKGRADE_CACHE`, default ~/.cache/trackgrade), keyed by a hash of the spec
and of the generator's source (`generator_digest`: a changed generator makes
new renders), so a second run is instant; a render is written to a private
directory and renamed into place, so a reader never sees half of one. On a
cold cache each master group of tracks is made once, in a child forked from
the test worker (numpy and scipy already loaded), two at a time, and the -n
workers that need the same tracks take different groups (`_render_groups`).

Only the licensed real clips live outside the project, in
../shared/truth/real beside the clone (or `TRACKGRADE_SHARED`). Their licences
forbid copying them in, so they are read in place, and a test that needs them
calls `need_real()` (or takes `real_rows(...)` parameters) and is skipped,
with a message naming both, when they are not there. `.ci/run` has them and
fails on any skip.
"""

from __future__ import annotations

import csv
import fcntl
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("TRACKGRADE_SHARED", ROOT.parent / "shared")).resolve()
TRUTH = SHARED / "truth"
REAL = TRUTH / "real"
CACHE = Path(os.environ.get("TRACKGRADE_CACHE", Path.home() / ".cache" / "trackgrade")).resolve()
GENERATORS = Path(__file__).resolve().parent / "truth_gen"

REAL_MISSING = (f"needs the licensed real clips of ../shared/truth/real (looked in {REAL}): "
                "put ../shared beside the clone or set TRACKGRADE_SHARED to it")


@lru_cache(maxsize=None)
def generator_module(name: str):
    """The project's generator tests/truth_gen/`name`.py, imported as a module."""
    spec = importlib.util.spec_from_file_location(name, GENERATORS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def synth_module():
    """The project's generator tests/truth_gen/synth_edm.py, imported as a module."""
    return generator_module("synth_edm")


def _render_once(out: Path, command, wait: bool = True) -> bool:
    """Run `command` (a process whose arguments give the directory to write
    into as {dir}, or a function called with that directory) into a private
    directory and rename it to `out`. One process renders a spec: the others
    (the -n workers, on a cold cache) wait on its lock file, then read the
    render instead of making the same one in parallel. With wait=False a
    render another process is making is left to it: returns whether `out` is
    there."""
    if out.exists():
        return True
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f".{out.name}.lock", "w") as lock:
        try:
            fcntl.flock(lock, fcntl.LOCK_EX | (0 if wait else fcntl.LOCK_NB))
        except BlockingIOError:
            return False
        if out.exists():          # rendered while this process waited
            return True
        work = Path(tempfile.mkdtemp(prefix=f".{out.name}.", dir=out.parent))
        try:
            if callable(command):
                command(work)
            else:
                subprocess.run([str(work) if part == "{dir}" else part for part in command],
                               check=True, stdout=subprocess.DEVNULL)
            try:
                os.rename(work, out)
            except OSError:       # a copy of an older helper, without the lock, was first
                if not out.exists():
                    raise
        finally:
            shutil.rmtree(work, ignore_errors=True)
    return True


def _settle(out: Path, marker: str, quiet_s: float = 120.0) -> None:
    """A cache directory without its `marker` was written in place by an older
    copy of this helper: wait while it is still being written, drop it once it
    has been quiet for `quiet_s` (a render that died)."""
    while out.exists() and not (out / marker).exists():
        stamps = [p.stat().st_mtime for p in out.iterdir()] or [out.stat().st_mtime]
        if time.time() - max(stamps) > quiet_s:
            shutil.rmtree(out, ignore_errors=True)
            return
        time.sleep(1.0)


@lru_cache(maxsize=None)
def generator_digest(name: str) -> str:
    """12 hex digits of the SHA-256 of the generator tests/truth_gen/`name`: part
    of every cache key, so renders of an older generator (other audio, other
    truth) are never read as this one's."""
    return hashlib.sha256((GENERATORS / name).read_bytes()).hexdigest()[:12]


def _spec_dir(specs: list[dict]) -> Path:
    key = json.dumps({"generator": generator_digest("synth_edm.py"), "specs": specs}, sort_keys=True)
    return CACHE / "synth" / hashlib.sha256(key.encode()).hexdigest()[:16]


def _ebu_dir(rate: int) -> Path:
    return CACHE / "ebu" / generator_digest("gen_ebu.py") / str(rate)


def _render_here(specs: list[dict], work: Path) -> None:
    """Render specs into `work` in this process, one track after another."""
    synth = synth_module()
    try:
        _, errors = synth.run_specs(specs, str(work), jobs=1, label="render_specs", quiet=True)
    finally:
        synth.forget_master()
    if errors:
        raise RuntimeError("synth_edm failed: " + "; ".join(
            f"{e['spec'].get('name')}: {e['error']}" for e in errors))


def _render_forked(specs: list[dict], work: Path) -> None:
    """`_render_here` in a child forked from this process: it has numpy, scipy and
    the generator loaded already (a new process would import them again, ~2 s of
    CPU), and it renders on its own core beside its siblings, which threads
    sharing the GIL do not."""
    pid = os.fork()
    if pid == 0:                          # the child: render, report, leave without cleanup
        code = 1
        try:
            _render_here(specs, work)
            code = 0
        except BaseException:
            os.write(2, traceback.format_exc().encode())
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    if status:
        raise RuntimeError(f"rendering {[s.get('name') for s in specs]} failed (wait status {status})")


# Master groups a test worker renders at once, each in a forked child (`_render_forked`):
# the two cores of this machine for one worker's renders.
RENDER_PROCESSES = 2


def _render_groups(specs: list[dict], out: Path) -> None:
    """Render specs into `out` one master group at a time (synth_edm.master_groups:
    the tracks made from one master), each group cached on its own, so the
    children of this process (RENDER_PROCESSES) and the -n workers that need
    the same specs on a cold cache each render a group nobody else is
    rendering instead of waiting for one of them. Then `out` is made of links
    to the groups' files and one truth.json."""
    names = [synth_module().normalize_spec(spec)["name"] for spec in specs]
    if len(set(names)) < len(names):
        raise ValueError(f"duplicate track names in {names}")
    groups = [[specs[i] for i in group] for group in synth_module().master_groups(specs)]
    dirs = [(one := _spec_dir(group)).with_name("group-" + one.name) for group in groups]

    def work_through(todo):               # one thread per child at a time
        while todo:                       # first what nobody is making, then wait for the rest
            todo = [(group, folder) for group, folder in todo
                    if not _render_once(folder, lambda work, group=group: _render_forked(group, work),
                                        wait=False)]
            if todo:
                _render_once(todo[0][1], lambda work, group=todo[0][0]: _render_forked(group, work))

    threads = min(RENDER_PROCESSES, len(groups))
    with ThreadPoolExecutor(threads) as pool:
        for done in [pool.submit(work_through, list(zip(groups, dirs))) for _ in range(threads)]:
            done.result()

    def assemble(work: Path) -> None:
        entries = {}
        for folder in dirs:
            for entry in json.loads((folder / "truth.json").read_text())["tracks"]:
                try:
                    os.link(folder / entry["file"], work / entry["file"])
                except OSError:           # no hard links here
                    shutil.copy2(folder / entry["file"], work / entry["file"])
                entries[entry["name"]] = entry
        (work / "truth.json").write_text(json.dumps(
            {"generator": "synth_edm.py", "tracks": [entries[n] for n in names]}, indent=1))

    _render_once(out, assemble)


def render_specs(specs: list[dict], jobs: int = 1) -> tuple[Path, list[dict]]:
    """Render track specs (cached); returns (directory, truth entries in spec order).
    jobs=1 renders in this process (`_render_groups`): a test worker has
    numpy and scipy loaded already, where a new process would import them
    again for every render (scipy.signal alone is ~1.8 s of CPU); the -n
    workers are the parallelism. jobs > 1 renders in a process with that
    many workers."""
    out = _spec_dir(specs)
    _settle(out, "truth.json")
    if not (out / "truth.json").exists() and jobs <= 1:
        _render_groups(specs, out)
    elif not (out / "truth.json").exists():
        spec_file = Path(tempfile.mkdtemp(prefix="trackgrade-spec-")) / "specs.json"
        spec_file.write_text(json.dumps(specs))
        try:
            _render_once(out, [sys.executable, str(GENERATORS / "synth_edm.py"), "--out", "{dir}",
                               "--spec", str(spec_file), "--jobs", str(jobs)])
        finally:
            shutil.rmtree(spec_file.parent, ignore_errors=True)
    tracks = json.loads((out / "truth.json").read_text())["tracks"]
    by_name = {t["name"]: t for t in tracks}
    names = [s.get("name") for s in specs]
    if all(names):
        tracks = [by_name[n] for n in names]
    return out, tracks


def render_grid(grid: str, jobs: int = 2) -> tuple[Path, list[dict]]:
    """Render a built-in grid (visible, defects, speed, long), cached."""
    specs = json.loads((GENERATORS / "grids" / f"{grid}.json").read_text())["tracks"]
    return render_specs(specs, jobs=jobs)


def ebu_signals(rate: int = 48000) -> tuple[Path, dict]:
    """Generate the EBU Tech 3341/3342 signals (cached); returns (dir, expected.json)."""
    out = _ebu_dir(rate)
    _settle(out, "expected.json")
    if not (out / "expected.json").exists():
        _render_once(out, [sys.executable, str(GENERATORS / "gen_ebu.py"), "{dir}",
                           "--rate", str(rate)])
    return out, json.loads((out / "expected.json").read_text())


def ebu_cases(rate: int = 48000) -> list[dict]:
    """The EBU signals' files and expectations ("file", "expect", as in their
    expected.json) without making them: enough to collect the tests over them,
    which then make the signals when the first of them runs."""
    return generator_module("gen_ebu").cases(rate)


def prepare_ebu(rates) -> None:
    """Make the EBU signals of every rate in `rates` not yet cached, one
    process per rate at the same time: on a cold cache the -n workers, which
    all need them to collect the loudness tests, wait for the slowest rate
    instead of for the sum of them."""
    missing = [rate for rate in dict.fromkeys(rates) if not (_ebu_dir(rate) / "expected.json").exists()]
    if missing:
        with ThreadPoolExecutor(len(missing)) as pool:
            list(pool.map(ebu_signals, missing))


# --- recorded-instrument renders (FluidR3 GM, Hydrogen kits) -------------------

def recorded_module():
    """The project's renderer tests/truth_gen/recorded.py, imported as a module."""
    return generator_module("recorded")


def _recorded_dir(spec: dict) -> Path:
    key = json.dumps({"generator": generator_digest("recorded.py"), "spec": spec}, sort_keys=True)
    return CACHE / "recorded" / hashlib.sha256(key.encode()).hexdigest()[:16]


def _render_recorded_one(spec: dict) -> None:
    _render_once(_recorded_dir(spec), lambda work: recorded_module().write(spec, work))


def render_recorded(specs: list[dict], *, skip: bool = True, jobs: int = RENDER_PROCESSES) -> list[Path]:
    """The specs (tests/truth_gen/recorded.py's format) rendered through
    recorded instruments: one cached WAV per spec, keyed by the spec and the
    renderer's source; cold ones are made `jobs` at a time in children forked
    from this process. Without Debian's fluidsynth, fluid-soundfont-gm and
    hydrogen-drumkits the calling test is skipped naming them (skip=False:
    RuntimeError, for benchmarks)."""
    lacking = recorded_module().missing()
    if lacking:
        if not skip:
            raise RuntimeError(lacking)
        import pytest

        pytest.skip(lacking)
    names = [spec["name"] for spec in specs]
    assert len(set(names)) == len(names), "recorded specs need unique names"
    todo = [spec for spec in specs if not _recorded_dir(spec).exists()]
    if len(todo) > 1 and jobs > 1:
        import multiprocessing

        with multiprocessing.get_context("fork").Pool(min(jobs, len(todo))) as pool:
            pool.map(_render_recorded_one, todo, chunksize=1)
    else:
        for spec in todo:
            _render_recorded_one(spec)
    return [_recorded_dir(spec) / f"{spec['name']}.wav" for spec in specs]


# --- the licensed real clips (../shared only) ----------------------------------

def have_real() -> bool:
    """Whether ../shared/truth/real (or TRACKGRADE_SHARED's) is there."""
    return (REAL / "manifest.csv").is_file()


def need_real() -> None:
    """Skip the calling test, naming ../shared and TRACKGRADE_SHARED, without the real clips."""
    if not have_real():
        import pytest

        pytest.skip(REAL_MISSING)


def real_manifest() -> list[dict]:
    """Rows of ../shared/truth/real/manifest.csv with an absolute `path`
    ([] when the real clips are not there: see `real_rows`)."""
    if not have_real():
        return []
    with open(REAL / "manifest.csv", newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    for row in rows:
        row["path"] = str(REAL / row["file"])
    return rows


def real_params(values, ids=None):
    """Parameters for a test over real clips: `values` as given (with `ids`),
    or, without the real clips, one parameter that is skipped naming
    ../shared and TRACKGRADE_SHARED (never an empty set, whose skip says neither)."""
    import pytest

    if have_real():
        values = list(values)
        ids = list(ids(v) for v in values) if callable(ids) else ids
        return [pytest.param(v, id=i) for v, i in zip(values, ids)] if ids else values
    return [pytest.param(None, id="needs-shared", marks=pytest.mark.skip(reason=REAL_MISSING))]


def real_row(suffix: str) -> dict:
    """The manifest row of the one real clip whose file name ends with `suffix`
    (the test is skipped without the real clips, fails if the clip is missing)."""
    need_real()
    rows = [r for r in real_manifest() if r["file"].endswith(suffix)]
    assert rows, f"{suffix} missing from {REAL / 'manifest.csv'}"
    return rows[0]


def real_only():
    """The `pytestmark` of a module whose every test reads the real clips."""
    import pytest

    return pytest.mark.skipif(not have_real(), reason=REAL_MISSING)
