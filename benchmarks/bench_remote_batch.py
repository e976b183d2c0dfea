"""Benchmark: `trackgrade batch --remote` against a local server, next to a
local `trackgrade batch --jobs 2` on the same files (not a test).

The files are one-minute tracks rendered by the shared synth generator
(`bench_batch.batch_specs`: eleven styles, WAV/FLAC/MP3, cached outside git).
One `trackgrade serve --workers 2` process runs on loopback for the whole
benchmark (started before the clock, as a shared instance would be). Each
remote run uses a fresh live key (in-flight limit 2, credits; the per-minute
limit is raised to --rate so the engine, not the request budget, is
measured), so nothing is replayed; then the same folder is re-run with the
same key to time a replayed batch (no credit spent). Runs alternate remote,
local, remote, local... and each is timed as a whole process; the medians and
the pair-by-pair ratio are printed, and the scores of the two paths are
compared file by file.

    python benchmarks/bench_remote_batch.py                     # 50 files x 60 s, 3 pairs
    python benchmarks/bench_remote_batch.py --count 10 --seconds 20 --repeat 1
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_batch import batch_specs  # noqa: E402
from truth import render_specs  # noqa: E402

CLI = [sys.executable, "-m", "trackgrade"]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


ACCESS: list[str] = []     # the server's access-log lines (one per request)


def start_server(data: Path, workers: int) -> tuple[subprocess.Popen, str]:
    port = free_port()
    proc = subprocess.Popen(CLI + ["serve", "--data", str(data), "--port", str(port),
                                   "--workers", str(workers)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, cwd=ROOT)
    for line in proc.stdout:
        if re.search(r"serving on http://", line):
            threading.Thread(target=lambda: ACCESS.extend(
                line for line in proc.stdout if "trackgrade.access" in line),
                daemon=True).start()
            return proc, f"http://127.0.0.1:{port}"
    raise SystemExit("the server did not start")


def new_key(data: Path, *, credits: int, in_flight: int, rate: int) -> tuple[str, str]:
    """A live key on credits billing with the given limits (the server keeps running)."""
    from trackgrade.server import accounts
    from trackgrade.server.store import open_store

    store = open_store(data)
    try:
        account = accounts.create_account(store, plan="studio", credits=credits)
        with store.transaction() as txn:
            doc = txn.get("accounts", account["id"])
            doc["limits"] = {"in_flight": in_flight, "per_minute": rate}
            txn.put("accounts", doc)
        key, _ = accounts.create_key(store, account["id"], mode="live")
        return key, account["id"]
    finally:
        store.close()


def balance(data: Path, account_id: str) -> int:
    from trackgrade.server.store import open_store

    store = open_store(data)
    try:
        return int(store.get("accounts", account_id)["credits"])
    finally:
        store.close()


def timed(command: list[str], env: dict | None = None) -> tuple[float, dict]:
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, **(env or {})})
    wall = time.perf_counter() - start
    if done.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command[2:5])} failed ({done.returncode}): "
                         f"{done.stderr.strip()[-400:]}")
    return wall, json.loads(done.stdout)["summary"]


def scores(path: Path) -> dict[str, str]:
    with open(path, newline="") as fh:
        return {Path(r["path"]).name: r["score"] for r in csv.DictReader(fh)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--workers", type=int, default=2, help="server worker processes")
    parser.add_argument("--in-flight", type=int, default=2, help="the key's in-flight limit")
    parser.add_argument("--rate", type=int, default=600, help="the key's requests per minute")
    parser.add_argument("--jobs", type=int, default=2, help="local batch --jobs")
    parser.add_argument("--repeat", type=int, default=3, help="remote/local pairs")
    args = parser.parse_args()

    directory, _ = render_specs(batch_specs(args.count, args.seconds), jobs=2)
    print(f"files: {args.count} x {args.seconds:g} s in {directory}; cpus {os.cpu_count()}",
          flush=True)
    tmp = Path(tempfile.mkdtemp(prefix="bench_remote_"))
    data = tmp / "data"
    new_key(data, credits=0, in_flight=1, rate=1)              # creates the store
    server, url = start_server(data, args.workers)
    remote_walls, local_walls, ratios, replays = [], [], [], []
    try:
        for run in range(args.repeat):
            key, account = new_key(data, credits=args.count * 2, in_flight=args.in_flight,
                                   rate=args.rate)
            env = {"TRACKGRADE_BASE_URL": url, "TRACKGRADE_API_KEY": key}
            load = os.getloadavg()[0]
            remote_csv, local_csv = tmp / f"remote{run}.csv", tmp / f"local{run}.csv"
            seen = len(ACCESS)
            r_wall, r_sum = timed(CLI + ["batch", str(directory), "--remote", "--json",
                                         "--out", str(remote_csv)], env)
            time.sleep(0.2)                                      # the log catches up
            lines = ACCESS[seen:]
            keyed = sum(1 for line in lines if "/v1/uploads/" not in line)
            limited = sum(1 for line in lines if " 429 " in line)
            spent = args.count * 2 - balance(data, account)
            again, again_sum = timed(CLI + ["batch", str(directory), "--remote", "--json",
                                            "--out", str(tmp / "replay.csv")], env)
            replay_spent = args.count * 2 - balance(data, account) - spent
            l_wall, l_sum = timed(CLI + ["batch", str(directory), "--jobs", str(args.jobs),
                                         "--json", "--out", str(local_csv)])
            same = sum(1 for name, score in scores(remote_csv).items()
                       if scores(local_csv).get(name) == score)
            remote_walls.append(r_wall)
            local_walls.append(l_wall)
            ratios.append(r_wall / l_wall)
            replays.append(again)
            print(f"pair {run + 1} (load before {load:.1f}): remote {r_wall:6.1f} s "
                  f"({args.count / r_wall:.2f} files/s, ok {r_sum['ok']}, credits {spent}, "
                  f"{keyed / args.count:.1f} keyed requests per file, {limited} x 429) | "
                  f"replayed re-run {again:5.1f} s (ok {again_sum['ok']}, credits "
                  f"{replay_spent}) | local --jobs {args.jobs} {l_wall:6.1f} s "
                  f"({args.count / l_wall:.2f} files/s, ok {l_sum['ok']}) | ratio "
                  f"{r_wall / l_wall:.3f} | same score {same}/{args.count}", flush=True)
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
    med = statistics.median
    print(f"median remote {med(remote_walls):.2f} s ({args.count / med(remote_walls):.2f} "
          f"files/s), local --jobs {args.jobs} {med(local_walls):.2f} s "
          f"({args.count / med(local_walls):.2f} files/s); ratio remote/local median "
          f"{med(ratios):.3f} (min {min(ratios):.3f}, max {max(ratios):.3f}); replayed re-run "
          f"median {med(replays):.2f} s")


if __name__ == "__main__":
    main()
