"""The suite's own order for -n workers (tests/scheduling.py): the slow proofs
are spread over worksteal's first shares, longest first, at their fronts."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from tests.scheduling import expected_seconds, order, share_sizes


@dataclass
class Mark:
    kwargs: dict = field(default_factory=dict)


@dataclass
class Item:
    name: str
    seconds: float | None = None          # None: not slow

    def get_closest_marker(self, name):
        if name != "slow" or self.seconds is None:
            return None
        return Mark({"seconds": self.seconds})


def shares(items, workers):
    out, pos = [], 0
    for size in share_sizes(len(items), workers):
        out.append(items[pos:pos + size])
        pos += size
    return out


def test_share_sizes_are_worksteals_first_split():
    # each idle worker in turn gets len(pending) // (workers still waiting)
    assert share_sizes(10, 4) == [2, 2, 3, 3]
    assert share_sizes(2212, 4) == [553, 553, 553, 553]
    assert sum(share_sizes(2213, 3)) == 2213


def test_the_proofs_are_dealt_longest_first_to_the_least_loaded_share():
    proofs = [Item(f"p{s}", s) for s in (75, 48, 30, 28, 28, 16, 15, 15, 14, 13)]
    quick = [Item(f"t{i}") for i in range(200)]
    items = quick[:50] + proofs[::-1] + quick[50:]       # proofs anywhere in the collection
    out = order(items, 4)
    assert sorted(i.name for i in out) == sorted(i.name for i in items)
    loads = []
    for share in shares(out, 4):
        head = [i for i in share if i.seconds is not None]
        assert share[:len(head)] == head                  # the proofs open each share
        loads.append(sum(i.seconds for i in head))
    assert loads == [75, 48 + 15, 30 + 16 + 15 + 13, 28 + 28 + 14]
    # the quick tests keep their order (a module's tests stay together)
    assert [i for i in out if i.seconds is None] == quick


def test_one_worker_keeps_the_collection_order():
    items = [Item("a"), Item("b", 30), Item("c")]
    assert order(items, 1) == items


def test_more_proofs_than_a_share_holds_keeps_every_test():
    items = [Item(f"p{i}", 10 + i) for i in range(6)] + [Item("q")]
    assert sorted(i.name for i in order(items, 4)) == sorted(i.name for i in items)


@pytest.mark.parametrize("seconds,expected", [(None, 0.15), (42, 42.0)])
def test_expected_seconds_come_from_the_slow_mark(seconds, expected):
    assert expected_seconds(Item("x", seconds)) == expected
