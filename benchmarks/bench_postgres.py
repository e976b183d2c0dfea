"""PostgreSQL figures: `trackgrade serve --database` nodes on one local
PostgreSQL holding 100,000 analyses.

    python benchmarks/bench_postgres.py [--analyses 100000] [--requests 2000]
        [--rate 200] [--post-rate 100] [--connections 8] [--seconds 20]

The analyses are made as bench_server.py makes them (a data directory filled
through the store API, cached), then copied into a throwaway PostgreSQL
(tests/pgserver.py: initdb + pg_ctl on a free loopback port) with `admin
migrate`'s library function, which is timed too. Figures:

    GET /v1/analyses/{id} p50/p99 and POST /v1/analyses p99, paced (open
    loop) on one node, median of --repeat runs
    throughput: closed-loop GETs from the same clients for --seconds, against
    one node, then split over two nodes on the same database
    resident memory per node (the server process; its analysis worker apart)

Each figure is measured beside the embedded store's (`serve --data` on the
same 100,000 analyses), runs alternating, so the ratio holds on a busy machine.

Prints one table; nothing is asserted. On a 2-core machine the two nodes,
the clients and PostgreSQL share the same cores: read the 1-vs-2 ratio with
that in mind.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import bench_server  # noqa: E402
from bench_server import Requests, fill, paced_load, pct, send  # noqa: E402
from pgserver import LocalPostgres, free_port  # noqa: E402


class Node(bench_server.Server):
    """A `trackgrade serve --database` process (bench_server's Server otherwise)."""

    def __init__(self, database: str, port: int, key: str, name: str) -> None:
        env = {**os.environ, "TRACKGRADE_RATE_PER_MINUTE": "100000000",
               "TRACKGRADE_IN_FLIGHT": "100000000", "TRACKGRADE_DAILY_QUOTA": "100000000",
               "TRACKGRADE_QUEUE_SIZE": "8"}
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "trackgrade", "serve", "--database", database, "--port",
             str(port), "--workers", "1", "--node-id", name], env=env, start_new_session=True,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.host, self.port = "127.0.0.1", port
        self.start_s = self._wait_ready(key)


def throughput(nodes: list, make_request, *, connections: int, seconds: float) -> float:
    """Requests/s completed by `connections` closed-loop clients spread over
    `nodes` (connection i talks to node i mod len(nodes))."""
    import multiprocessing

    bench_server._MAKE_REQUEST = make_request
    context = multiprocessing.get_context("fork")
    deadline = time.perf_counter() + 0.5 + seconds
    with context.Pool(connections) as pool:
        counts = pool.starmap(_closed_loop, [
            (nodes[i % len(nodes)].host, nodes[i % len(nodes)].port, i, deadline)
            for i in range(connections)])
    return sum(counts) / seconds


def _closed_loop(host, port, index, deadline) -> int:
    import http.client
    import random

    make_request = bench_server._MAKE_REQUEST
    conn = http.client.HTTPConnection(host, port, timeout=30)
    rng = random.Random(index)
    done = 0
    while time.perf_counter() < deadline:
        send(conn, make_request(rng))
        done += 1
    return done


def migrate_into(data: Path, database: str) -> tuple[float, dict]:
    from trackgrade.server import admin
    from trackgrade.server.store import open_store

    source, target = open_store(data), open_store(database=database, pool_size=2)
    try:
        started = time.perf_counter()
        counts = admin.migrate(source, target)
        return time.perf_counter() - started, counts
    finally:
        source.close()
        target.close()


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--analyses", type=int, default=100_000)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--rate", type=float, default=200.0)
    parser.add_argument("--post-rate", type=float, default=100.0)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--data", type=Path,
                        default=Path.home() / ".cache" / "trackgrade" / "bench-server")
    args = parser.parse_args(argv)

    pristine = args.data / f"n{args.analyses}" / "pristine"
    keys = fill(pristine, args.analyses)["keys"]
    figures: dict[str, float] = {}
    with LocalPostgres() as pg:
        database = pg.create_database("trackgrade_bench")
        figures["migrate_s"], counts = migrate_into(pristine, database)
        assert counts["analyses"]["target"] == args.analyses

        requests = Requests(keys)
        get_one, post = requests.get_one, requests.post

        run_dir = args.data / f"n{args.analyses}" / "run-embedded"
        if run_dir.exists():
            shutil.rmtree(run_dir)
        shutil.copytree(pristine, run_dir)
        embedded = bench_server.Server(run_dir, free_port(), keys[0]["key"])
        nodes = [Node(database, free_port(), keys[0]["key"], "bench-a")]
        try:
            figures["start_s"] = {"embedded": embedded.start_s, "postgres": nodes[0].start_s}
            time.sleep(5)           # the worker processes finish importing
            for server in (embedded, nodes[0]):
                paced_load(server, get_one, total=400, rate=args.rate,
                           connections=args.connections)
            for name, fn, rate in (("get", get_one, args.rate), ("post", post, args.post_rate)):
                runs: dict[str, list] = {"embedded": [], "postgres": []}
                for _ in range(args.repeat):        # A B A B: both see the same machine
                    for label, server in (("embedded", embedded), ("postgres", nodes[0])):
                        runs[label].append(paced_load(server, fn, total=args.requests,
                                                      rate=rate, connections=args.connections))
                for q in (50, 99):
                    figures[f"{name}_p{q}_ms"] = {
                        label: statistics.median(pct(lat, q) for lat in lats)
                        for label, lats in runs.items()}
            figures["rss_node_mb"] = {"embedded": embedded.rss_mb()[0],
                                      "postgres": nodes[0].rss_mb()[0]}
            figures["get_rps_1_node"] = {
                "embedded": throughput([embedded], get_one, connections=args.connections,
                                       seconds=args.seconds),
                "postgres": throughput(nodes, get_one, connections=args.connections,
                                       seconds=args.seconds)}
            embedded.stop()
            nodes.append(Node(database, free_port(), keys[0]["key"], "bench-b"))
            time.sleep(5)
            figures["get_rps_2_nodes"] = {"postgres": throughput(
                nodes, get_one, connections=args.connections, seconds=args.seconds)}
            figures["rss_node_b_mb"] = {"postgres": nodes[1].rss_mb()[0]}
        finally:
            embedded.stop()
            for node in nodes:
                node.stop()

    print(f"trackgrade PostgreSQL benchmark: {args.analyses} analyses in one local "
          f"PostgreSQL, {args.connections} connections; paced GETs at {args.rate:.0f} req/s, "
          f"POSTs at {args.post_rate:.0f} req/s ({args.requests} per run, median of "
          f"{args.repeat}); closed-loop GETs for {args.seconds:.0f} s per throughput figure")
    print(f"{'figure':24s} {'embedded':>10s} {'postgres':>10s} {'ratio':>7s}")
    for name, values in figures.items():
        if not isinstance(values, dict):
            print(f"{name:24s} {'':>10s} {values:10.2f}")
            continue
        emb, pgv = values.get("embedded"), values.get("postgres")
        ratio = f"{pgv / emb:7.2f}" if emb and pgv is not None else ""
        print(f"{name:24s} {'' if emb is None else f'{emb:10.2f}':>10s} {pgv:10.2f} {ratio}")


if __name__ == "__main__":
    main()
