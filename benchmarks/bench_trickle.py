"""The trickling-receiver attack (issue 29, item 2) before and after: the
victim tenant's delivery latency while 16 endpoints of another account
trickle their answer (and, as the floor, the same run with no trickle),
SIGTERM-to-exit time, whether server.lock was free
while the process still ran, and whether every abandoned attempt was made
after a restart.

    git archive main trackgrade | tar -x -C /tmp/tg-before
    python benchmarks/bench_trickle.py --before /tmp/tg-before [--repeat 2]

Each run is tests/webhooks/trickle.py's `run_attack` against a real
`trackgrade serve` process: with `--before`, the server runs from that
checkout (its working directory, so `python -m trackgrade` imports it);
the harness (accounts, endpoints, receivers) is this checkout's. Runs
alternate before/after so the machine's load falls on both alike.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.webhooks.trickle import ENDPOINTS, TIMEOUT_S, run_attack  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="a checkout of the code before the fix")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--victims", type=int, default=3)
    parser.add_argument("--victim-wait", type=float, default=10.0)
    parser.add_argument("--exit-cap", type=float, default=20.0)
    args = parser.parse_args()
    sides = ([("before", args.before, True)] if args.before else []) \
        + [("after", None, True), ("after, no attack (floor)", None, False)]
    results: dict[str, list] = {name: [] for name, *_ in sides}
    for n in range(args.repeat):
        for name, cwd, attack in sides:
            with tempfile.TemporaryDirectory() as tmp:
                report = run_attack(Path(tmp) / "data", cwd=cwd, victims=args.victims,
                                    victim_wait=args.victim_wait, exit_cap=args.exit_cap,
                                    attack=attack)
            results[name].append(report)
            print(f"--- {name}, run {n + 1}", *report.lines(), sep="\n  ", flush=True)
    print(f"\n{ENDPOINTS} trickling endpoints, TRACKGRADE_WEBHOOK_TIMEOUT={TIMEOUT_S}, "
          f"{args.repeat} runs x {args.victims} victim analyses per side")
    print("| | victim latency, median (s) | max (s) | not delivered | SIGTERM to exit (s) "
          "| lock free while running | abandoned attempts made after restart |")
    print("|---|---|---|---|---|---|---|")
    for name, reports in results.items():
        got = [x for r in reports for x in r.victim_latencies if x is not None]
        missing = sum(x is None for r in reports for x in r.victim_latencies)
        exits = [r.sigterm_exit_s for r in reports]
        exit_text = ", ".join(f"> {args.exit_cap:g} (killed)" if x is None else f"{x:.2f}"
                              for x in exits)
        print(f"| {name} | {statistics.median(got):.2f} | {max(got):.2f} | " if got else
              f"| {name} | never | never | ", end="")
        print(f"{missing} of {missing + len(got)} | {exit_text} | "
              f"{sum(r.lock_free_while_running for r in reports)} of {len(reports)} runs | "
              + ", ".join(f"{r.acknowledged_after_restart}/{r.expected_after_restart}"
                          for r in reports) + " |")


if __name__ == "__main__":
    main()
