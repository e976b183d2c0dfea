"""Hardening figures (issue 9): the longer runs of the proofs in
tests/server/test_proof_*.py, and `--workers 2` analysis throughput.

    python benchmarks/bench_hardening.py crash   [--cycles 50] [--seed 1]
    python benchmarks/bench_hardening.py fuzz    [--max-examples 150] [--seed 1]
    python benchmarks/bench_hardening.py mutate  [--examples 500]
    python benchmarks/bench_hardening.py workers --before DIR [--make-before]
        [--tracks 8] [--seconds 120] [--runs 3]
    python benchmarks/bench_hardening.py slow_clients [--slow 100] [--seconds 60]
        [--before main]
    python benchmarks/bench_hardening.py bodies [--concurrent 4] [--mib 150] [--rounds 3]
        [--before main]
    python benchmarks/bench_hardening.py store   [--analyses 200] [--flips 200] [--postgres]
    python benchmarks/bench_hardening.py bomb    [--minutes 20] [--rate 192000] [--before DIR]
    python benchmarks/bench_hardening.py orphans [--cycles 20]

`crash`, `fuzz` and `mutate` run the same code as the CI proofs with bigger
budgets and print what they saw. `workers` times a real `trackgrade serve
--workers 2` from the first POST of `--tracks` live analyses (rendered
techno tracks, uploaded at once) until the last is complete, alternating the
source tree under test (this one) with `--before` (the same tree with the
one-core-per-worker change taken out, e.g. made by `--make-before DIR`), and
prints each run, the medians and the per-pair ratio. `slow_clients` and
`bodies` (benchmarks/hardening_http.py) time fresh clients while slow
connections are open and measure the server's memory under unauthenticated
bodies, optionally for a `--before` git ref too. `bomb` analyses issue
18's decode bomb (20 minutes at 192 kHz stereo in constant FLAC blocks) as a
server worker and with `trackgrade analyze`: peak RSS, wall and CPU time.
`orphans` kills a real `serve --workers 2` with SIGKILL, cycle after cycle,
and counts what it started that is still running.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path
from urllib.parse import urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "tests" / "server"))
sys.path.insert(0, str(ROOT / "benchmarks"))


def crash(args) -> dict:
    import crash_cycles

    with tempfile.TemporaryDirectory() as tmp:
        started = time.monotonic()
        report = crash_cycles.run(Path(tmp) / "data", args.cycles, seed=args.seed)
    out = {"cycles": report.cycles, "accepted_202": report.accepted,
           "uploads_accepted": report.uploaded, "events": report.events,
           "events_delivered_after_restart": report.events_delivered,
           "delivery_attempts": report.attempts, "bad_signatures": report.bad_signatures,
           "kill_after_s_min_max": [min(report.kill_after_s), max(report.kill_after_s)],
           "problems": report.problems, "seconds": round(time.monotonic() - started, 1)}
    return out


def fuzz(args) -> dict:
    import fuzzing

    out = {}
    for mode in ("test", "live"):
        result = fuzzing.run(mode, max_examples=args.max_examples, seed=args.seed, timeout=3600)
        out[mode] = {"generated": result.generated, "served": result.served,
                     "failures": len(result.failures), "errors": len(result.errors),
                     "server_errors_5xx": result.server_errors,
                     "server_exceptions": result.server_exceptions,
                     "uploads_accepted": result.uploads_accepted, "statuses": result.statuses}
    return out


def mutate(args) -> dict:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    import hostile_audio as ha

    out = {}
    for fmt, seed in ha.seeds().items():
        seen: dict = {"n": 0, "outcomes": {}, "max_s": 0.0, "max_peak_mb": 0.0,
                      "over_bounds": 0, "unclear": 0}

        @settings(max_examples=args.examples, deadline=None, database=None,
                  suppress_health_check=list(HealthCheck))
        @given(st.data())
        def run(draw):
            data = draw.draw(ha.mutation(seed))
            result = ha.decode_bounded(data, f"mutated.{fmt}")
            seen["n"] += 1
            seen["outcomes"][result.outcome] = seen["outcomes"].get(result.outcome, 0) + 1
            seen["max_s"] = max(seen["max_s"], round(result.seconds, 3))
            seen["max_peak_mb"] = max(seen["max_peak_mb"], round(result.peak_bytes / 1e6, 1))
            if result.seconds >= ha.TIME_LIMIT_S or result.peak_bytes > ha.memory_bound(data):
                seen["over_bounds"] += 1
            if result.outcome != "ok" and result.outcome not in ha.CLEAR_CODES:
                seen["unclear"] += 1
        run()
        out[fmt] = seen
    out["bad_input_files"] = len(ha.bad_inputs())
    return out


# --- workers throughput -------------------------------------------------------------------

def make_before(target: Path) -> None:
    """This tree with the one-core-per-worker change taken out (the pool's
    `one_core()` and parallel=False in the server's worker)."""
    if target.exists():
        shutil.rmtree(target)
    shutil.copytree(ROOT / "trackgrade", target / "trackgrade")
    pool = target / "trackgrade" / "pool.py"
    text = pool.read_text()
    text = text.replace("    die_with(owner, parent_death_signal)\n    one_core()\n",
                        "    die_with(owner, parent_death_signal)\n")
    assert "parent_death_signal)\n    one_core()" not in text
    pool.write_text(text)
    worker = target / "trackgrade" / "server" / "worker.py"
    text = worker.read_text()
    text = text.replace("measure(data, file_name=file_name,\n" + " " * 58 + "parallel=False)",
                        "measure(data, file_name=file_name)")
    assert "parallel=False)" not in text
    worker.write_text(text)


def group_cpu_seconds(pgid: int) -> float:
    """user + system CPU seconds of every live process in the process group."""
    total = 0
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if os.getpgid(int(name)) != pgid:
                continue
            fields = Path(f"/proc/{name}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])
        except (OSError, IndexError, ValueError):
            pass
    return total / os.sysconf("SC_CLK_TCK")


def throughput_once(src: Path, tracks: list[bytes], data: Path) -> tuple[float, float]:
    from serve_process import ServeProcess
    from server_harness import multipart, request

    from trackgrade.server import accounts
    from trackgrade.server.store import open_store

    if data.exists():
        shutil.rmtree(data)
    store = open_store(data)
    try:
        account = accounts.create_account(store, plan="pro", credits=10_000)
        key, _ = accounts.create_key(store, account["id"], mode="live")
    finally:
        store.close()
    env = {"PYTHONPATH": str(src), "TRACKGRADE_IN_FLIGHT": "1000",
           "TRACKGRADE_RATE_PER_MINUTE": "100000", "TRACKGRADE_QUEUE_SIZE": "64"}
    served = ServeProcess(data, "--workers", "2", env=env, cwd=src)    # `-m` imports from cwd
    try:
        assert served.url, served.output
        assert served.proc.pid and Path(f"/proc/{served.proc.pid}/cwd").resolve() == src.resolve()
        time.sleep(8)                       # both workers import the engine first
        pgid = os.getpgid(served.proc.pid)
        cpu_before = group_cpu_seconds(pgid)
        started = time.monotonic()
        ids = []

        def submit(audio: bytes) -> None:
            accepted = request(served.url, "POST", "/v1/analyses", key=key,
                               idem=str(uuid.uuid4()), body={"file_name": "t.wav"}).json
            body, ctype = multipart({"file": ("t.wav", audio)})
            reply = request(served.url, "POST", urlsplit(accepted["upload"]["url"]).path,
                            raw=body, headers={"Content-Type": ctype, "Authorization":
                                               f"Bearer {accepted['upload']['token']}"})
            assert reply.status == 200, reply.body
            ids.append(accepted["id"])
        threads = [threading.Thread(target=submit, args=(t,)) for t in tracks]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for analysis_id in ids:
            while True:
                doc = request(served.url, "GET", f"/v1/analyses/{analysis_id}/status",
                              key=key).json
                if doc["status"] != "processing":
                    assert doc["status"] == "complete", doc
                    break
                time.sleep(0.05)
        return time.monotonic() - started, group_cpu_seconds(pgid) - cpu_before
    finally:
        served.stop()


def workers(args) -> dict:
    from truth import render_specs

    before = Path(args.before)
    folder, specs = render_specs([{"name": f"hardening_{i}", "style": "techno", "bpm": 124 + i,
                                   "seconds": args.seconds, "seed": 40 + i}
                                  for i in range(args.tracks)])
    tracks = [(folder / f"{s['name']}.wav").read_bytes() for s in specs]
    runs: dict = {"after": [], "before": []}
    cpu: dict = {"after": [], "before": []}
    loads = []
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(args.runs):
            for name, src in (("before", before), ("after", ROOT)):
                wall, used = throughput_once(src, tracks, Path(tmp) / "data")
                runs[name].append(round(wall, 2))
                cpu[name].append(round(used, 2))
                loads.append(os.getloadavg()[0])
                print(name, runs[name][-1], cpu[name][-1], flush=True)
    ratios = [round(a / b, 3) for a, b in zip(runs["after"], runs["before"])]
    audio_s = args.tracks * args.seconds
    return {"tracks": args.tracks, "seconds_each": args.seconds, "runs": runs,
            "cpu_s": cpu, "median_cpu_s": {k: statistics.median(v) for k, v in cpu.items()},
            "load_1min_min_max": [round(min(loads), 1), round(max(loads), 1)],
            "median_s": {k: statistics.median(v) for k, v in runs.items()},
            "audio_minutes_per_minute": {k: round(audio_s / statistics.median(v), 1)
                                         for k, v in runs.items()},
            "after_over_before": ratios, "median_ratio": statistics.median(ratios),
            "load_average": os.getloadavg()}


def store(args) -> dict:
    """Store damage and outage, longer than the CI proofs (tests/server/
    test_store_damage.py, test_store_outage.py): a data directory with
    `--analyses` live analyses written through a real server; `--flips` single
    bytes replaced at random positions of its journal, then of its snapshot,
    each opened afresh: refused naming the right file and record offset, or
    recovered identical; never opened with different data. Then the cost of
    the checksums (open, `admin store check`) and, on a real PostgreSQL, the
    time a request takes to answer 503 while the database is down and the
    time until service is back after it restarts."""
    import random

    from server_harness import request, start, wav_bytes

    from trackgrade.server.store import COLLECTIONS, open_store
    from trackgrade.server.store.base import StoreDamage
    from trackgrade.server.store.check import check_data_dir

    rng = random.Random(args.seed)
    out: dict = {"analyses": args.analyses, "flips_per_file": args.flips}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "data"
        opened = open_store(root)
        server = start(store=opened, in_flight=args.analyses + 1, test_in_flight=args.analyses + 1,
                       rate_per_minute=10**6, test_rate_per_minute=10**6)
        key, _ = server.key("test")
        for i in range(args.analyses):
            accepted = server.submit(key, f"t{i}.wav").json
            server.upload(accepted, wav_bytes(0.1))
        for accepted_id in [r["id"] for r in opened.select("analyses.by_key", (
                opened.scan("keys")[0]["id"],))]:
            server.wait(accepted_id, key, until=lambda d: d["diagnosis_status"] == "ready")
        server.stop()
        opened.close()

        def state(path):
            with open_store(path) as again:
                return {c: again.scan(c) for c in COLLECTIONS}

        def flips(path_of, label: str) -> dict:
            intact = state(root)
            target = path_of(root)
            data = target.read_bytes()
            starts = [0] + [i + 1 for i, b in enumerate(data) if b == 10][:-1]
            tally = {"refused_right_offset": 0, "refused_other": 0, "recovered_identical": 0,
                     "opened_different": 0}
            for n in range(args.flips):
                position = rng.randrange(len(data))
                copy = Path(tmp) / f"{label}{n}"
                shutil.copytree(root, copy)
                damaged = bytearray(data)
                damaged[position] = ord("X") if damaged[position] != ord("X") else ord("Y")
                path_of(copy).write_bytes(bytes(damaged))
                record = max(s for s in starts if s <= position)
                try:
                    seen = state(copy)
                    tally["recovered_identical" if seen == intact else "opened_different"] += 1
                except StoreDamage as exc:
                    right = exc.path == str(path_of(copy)) and (
                        exc.offset == record or label == "snapshot")
                    tally["refused_right_offset" if right else "refused_other"] += 1
                shutil.rmtree(copy)
            return {"bytes": len(data), **tally}

        journal = lambda r: sorted(r.glob("journal-*.log"))[-1]      # noqa: E731
        out["journal"] = flips(journal, "journal")
        with open_store(root) as again:
            again.compact()
        snapshot = lambda r: sorted(r.glob("snapshot-*.jsonl"))[-1]   # noqa: E731
        out["snapshot"] = flips(snapshot, "snapshot")
        started = time.perf_counter()
        open_store(root).close()
        out["open_s"] = round(time.perf_counter() - started, 3)
        started = time.perf_counter()
        check_data_dir(root)
        out["store_check_s"] = round(time.perf_counter() - started, 3)
        out["store_bytes"] = sum(p.stat().st_size for p in root.glob("*-*"))

    if args.postgres:
        from pgserver import LocalPostgres
        from serve_process import ServeProcess, make_key

        with LocalPostgres() as pg:
            database = pg.create_database()
            key, _ = make_key("live", 10, database=database, pool_size=2)
            served = ServeProcess(None, database=database, require=True,
                                  unset=("TRACKGRADE_DATABASE_URL",))
            try:
                accepted = request(served.url, "POST", "/v1/analyses", key=key, idem="b",
                                   body={"file_name": "a.wav"}).json
                path = f"/v1/analyses/{accepted['id']}"
                pg.halt()
                waits = []
                for _ in range(3):
                    started = time.monotonic()
                    reply = request(served.url, "GET", path, key=key)
                    waits.append((reply.status, round(time.monotonic() - started, 2)))
                pg.resume()
                started = time.monotonic()
                statuses = []
                while True:
                    reply = request(served.url, "GET", path, key=key)
                    statuses.append(reply.status)
                    if reply.status == 200 or time.monotonic() - started > 60:
                        break
                    time.sleep(0.1)
                out["postgres_down"] = {"answers_status_s": waits,
                                        "back_after_restart_s": round(time.monotonic() - started, 2),
                                        "statuses_until_back": sorted(set(statuses))}
            finally:
                served.stop()
    return out


# --- bounded work: the decode bomb (issue 18) -------------------------------------------

def bomb(args) -> dict:
    """The 20-minute 192 kHz stereo constant-block FLAC analysed as a server
    worker does (`score_stage`, one core) and by `trackgrade analyze`, one
    after the other: peak RSS (the child's own), wall and CPU seconds. With
    `--before DIR`: the same with DIR's trackgrade first on PYTHONPATH."""
    import decode_bomb

    out = {"file": f"{args.minutes} min, {args.rate} Hz stereo, constant blocks"}
    trees = {"after": ROOT} | ({"before": Path(args.before)} if args.before else {})
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bomb.flac"
        path.write_bytes(decode_bomb.flac_constant_blocks(args.minutes * 60, args.rate, 2))
        out["bytes"] = path.stat().st_size
        for tree_name, tree in trees.items():
            env = {"PYTHONPATH": str(tree)}
            for surface, command in (("worker", decode_bomb.worker_command),
                                     ("analyze", decode_bomb.analyze_command)):
                run = decode_bomb.finish(decode_bomb.start(command(str(path)), env))
                document = json.loads(run.out) if run.code == 0 else None
                out[f"{tree_name}_{surface}"] = {
                    "exit": run.code, "peak_rss_gb": round(run.peak_bytes / 1e9, 3),
                    "seconds": round(run.seconds, 1), "cpu_seconds": round(run.cpu_seconds, 1),
                    "complete": isinstance(document, dict) and "score" in document}
                print(tree_name, surface, out[f"{tree_name}_{surface}"], flush=True)
    out["load_average"] = os.getloadavg()
    return out


# --- no orphans: kill -9 cycles ---------------------------------------------------------

def orphans(args) -> dict:
    """`--cycles` times: a real `trackgrade serve --workers 2`, its workers up
    (the fork server, the resource tracker, the warmed-up workers), kill -9 of
    the server process alone; how long until every process it started is
    gone, and how many are left after 10 s."""
    import process_tree
    from serve_process import ServeProcess

    seconds, left_total, seen = [], 0, []
    with tempfile.TemporaryDirectory() as tmp:
        for cycle in range(args.cycles):
            server = ServeProcess(Path(tmp) / "data", "--workers", "2", require=True)
            try:
                started = process_tree.wait_for_descendants(server.proc.pid, 4, 60)
                seen.append(len(started))
                os.kill(server.proc.pid, signal.SIGKILL)
                server.proc.wait(10)
                left, took = process_tree.wait_until_gone(started, 10.0)
                seconds.append(took)
                left_total += len(left)
                print(f"cycle {cycle + 1}: {len(started)} started, {len(left)} left, "
                      f"{took:.2f} s", flush=True)
            finally:
                try:
                    os.killpg(server.proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
    return {"cycles": args.cycles, "processes_per_server": [min(seen), max(seen)],
            "orphans_left_after_10s": left_total,
            "seconds_until_gone_median": round(statistics.median(seconds), 2),
            "seconds_until_gone_max": round(max(seconds), 2), "load_average": os.getloadavg()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("crash")
    p.add_argument("--cycles", type=int, default=50)
    p.add_argument("--seed", type=int, default=1)
    p = sub.add_parser("fuzz")
    p.add_argument("--max-examples", type=int, default=150)
    p.add_argument("--seed", type=int, default=1)
    p = sub.add_parser("mutate")
    p.add_argument("--examples", type=int, default=500)
    p = sub.add_parser("workers")
    p.add_argument("--before", required=True)
    p.add_argument("--make-before", action="store_true", help="first build --before from this tree")
    p.add_argument("--tracks", type=int, default=8)
    p.add_argument("--seconds", type=float, default=120)
    p.add_argument("--runs", type=int, default=3)
    import hardening_http
    hardening_http.add_parsers(sub)
    p = sub.add_parser("store")
    p.add_argument("--analyses", type=int, default=200)
    p.add_argument("--flips", type=int, default=200)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--postgres", action="store_true", help="also stop/start a real PostgreSQL")
    p = sub.add_parser("bomb")
    p.add_argument("--minutes", type=int, default=20)
    p.add_argument("--rate", type=int, default=192000)
    p.add_argument("--before", help="a trackgrade tree to measure too (e.g. main's)")
    p = sub.add_parser("orphans")
    p.add_argument("--cycles", type=int, default=20)
    args = parser.parse_args()
    if args.what == "workers" and args.make_before:
        make_before(Path(args.before))
    result = {"crash": crash, "fuzz": fuzz, "mutate": mutate, "workers": workers,
              "store": store, "bomb": bomb, "orphans": orphans,
              **hardening_http.COMMANDS}[args.what](args)
    text = json.dumps(result, indent=2)
    print(text)
    out = ROOT / "benchmarks" / "out"
    out.mkdir(exist_ok=True)
    (out / f"hardening_{args.what}.json").write_text(text)


if __name__ == "__main__":
    main()
