"""The connection layer's figures (issues 29 and 30), on a real `trackgrade
serve` built from this tree and, with `--before REF`, from a git ref too
(extracted by hardening_http.source_tree), in the same run:

    python benchmarks/conn_attacks.py tenant [--before main] [--ttl 8]
    python benchmarks/conn_attacks.py stalled_store [--before main]
    python benchmarks/conn_attacks.py upload_memory [--before main] [--mib 200]

- `tenant`: the body-budget attack of tests/server/tenant_attacks.py (one key
  trickles three uploads declaring the whole budget); the victim's answers
  and latency, and what became of the attacker's uploads.
- `stalled_store`: PostgreSQL stopped under a running server, a body in
  progress and a small POST every second; the latency of GET
  /v1/openapi.json (tests/server/test_proof_loop_never_waits_on_store.py).
- `upload_memory`: one `--mib` WAV uploaded to a live analysis; the
  server's peak RSS growth (VmHWM) over its RSS before the upload.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "server")]

from hardening_http import source_tree  # noqa: E402


def trees(before: str | None):
    yield "this tree", None
    if before:
        yield before, before


def tenant(args) -> None:
    from tests.server.tenant_attacks import body_budget_attack

    for name, ref in trees(args.before):
        with source_tree(ref) as src, tempfile.TemporaryDirectory() as tmp:
            result = body_budget_attack(Path(tmp) / "data", token_ttl=args.ttl,
                                        victim_for=args.ttl + 3.0,
                                        env={"PYTHONPATH": str(src)}, cwd=src)
            print(f"{name}: {result.summary()}")


def stalled_store(args) -> None:
    from tests.pgserver import LocalPostgres
    from tests.server.serve_process import ServeProcess
    from tests.server.test_proof_loop_never_waits_on_store import stalled_store_latencies

    with LocalPostgres() as pg:
        for name, ref in trees(args.before):
            if not pg.running():
                pg.resume()
            with source_tree(ref) as src:
                server = ServeProcess(None, database=pg.create_database(), require=True,
                                      env={"PYTHONPATH": str(src)}, cwd=src,
                                      unset=("TRACKGRADE_DATABASE_URL",))
                try:
                    lat = sorted(stalled_store_latencies(server.url, pg.halt, args.tries))
                finally:
                    server.stop()
            slow = sum(1 for s in lat if s > 1.0)
            resets = sum(1 for s in lat if s == float("inf"))
            print(f"{name}: GET /v1/openapi.json x{len(lat)} with PostgreSQL stopped: "
                  f"median {lat[len(lat) // 2] * 1e3:.0f} ms, worst {lat[-1] * 1e3:.0f} ms, "
                  f"{slow} over 1 s ({resets} reset); all (ms): "
                  + ", ".join("reset" if s == float("inf") else f"{s * 1e3:.0f}" for s in lat))


def upload_memory(args) -> None:
    from tests.server.upload_memory import upload_peak

    for name, ref in trees(args.before):
        with source_tree(ref) as src, tempfile.TemporaryDirectory() as tmp:
            before, peak, size = upload_peak(Path(tmp) / "data", args.mib,
                                             env={"PYTHONPATH": str(src)}, cwd=src)
            print(f"{name}: a {size / 2**20:.0f} MiB WAV upload: RSS before {before:.0f} MB, "
                  f"peak growth {peak:.0f} MB = {peak * 2**20 / 1e6 / (size / 1e6):.2f}x "
                  "the file")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("tenant")
    p.add_argument("--ttl", type=int, default=8)
    p.add_argument("--before", default=None)
    p = sub.add_parser("stalled_store")
    p.add_argument("--tries", type=int, default=16)
    p.add_argument("--before", default=None)
    p = sub.add_parser("upload_memory")
    p.add_argument("--mib", type=int, default=200)
    p.add_argument("--before", default=None)
    args = parser.parse_args()
    {"tenant": tenant, "stalled_store": stalled_store, "upload_memory": upload_memory}[
        args.what](args)


if __name__ == "__main__":
    main()
