"""The order the suite's tests are collected in, for `-n` workers.

pytest-xdist's worksteal scheduler (pyproject's `--dist worksteal`) first
hands each worker one contiguous share of the collected tests, then lets an
idle worker take half of the busiest one's queue from its end. A long proof
never moves once handed out, so where the proofs sit in the collection
decides the run's length: all of them at the front (one share) made one
worker run some 330 s of proofs in a row while the others ran out of work.

`order` deals the tests marked `slow` (`@pytest.mark.slow(seconds=N)`, N their
time on a quiet 2-core machine) over the workers' shares, longest first, each
to the share with the least work so far (longest-processing-time-first), and
puts them at the front of that share, so every worker starts on its long
proofs at once; the other tests keep their order (a module's tests together,
for its fixtures) and fill the shares, whose ends are what the stealing moves.
"""

from __future__ import annotations

import os

DEFAULT_SLOW_S = 20.0       # a `slow` mark without its seconds
OTHER_S = 0.15              # a typical short test (most take 0.01-0.5 s)


def worker_count() -> int:
    """The -n workers of this run (1 outside pytest-xdist)."""
    return int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1") or 1)


def share_sizes(total: int, workers: int) -> list[int]:
    """The sizes of the contiguous shares worksteal hands out first: each
    idle worker in turn gets len(pending) // workers still waiting."""
    sizes, left = [], total
    for i in range(workers):
        sizes.append(left // (workers - i))
        left -= sizes[-1]
    return sizes


def expected_seconds(item) -> float:
    mark = item.get_closest_marker("slow")
    if mark is None:
        return OTHER_S
    return float(mark.kwargs.get("seconds", DEFAULT_SLOW_S))


def order(items: list, workers: int) -> list:
    """`items` reordered so that worksteal's first shares each start with
    their part of the slow proofs (see the module docstring)."""
    if workers <= 1:
        return list(items)
    slow = sorted((i for i in items if i.get_closest_marker("slow")),
                  key=expected_seconds, reverse=True)
    slow_ids = {id(i) for i in slow}
    rest = [i for i in items if id(i) not in slow_ids]
    sizes = share_sizes(len(items), workers)
    heads: list[list] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for item in slow:
        # the share with the least work, among those that still have room
        open_shares = [w for w in range(workers) if len(heads[w]) < sizes[w]] or range(workers)
        w = min(open_shares, key=lambda s: load[s])
        heads[w].append(item)
        load[w] += expected_seconds(item)
    out, pos = [], 0
    for w in range(workers):
        fill = max(0, sizes[w] - len(heads[w]))
        # the short tests even out at run time: an idle worker steals the
        # end of the longest queue, which is the one behind the longest proofs
        out += heads[w] + rest[pos:pos + fill]
        pos += fill
    return out + rest[pos:]
