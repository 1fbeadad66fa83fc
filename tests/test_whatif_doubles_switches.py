"""Double failures with a dead switch (routing/whatif/doubles_switches.py), against `repair`
(routing/repair/engine.py) on random small fabrics (hypothesis): a dead switch and a dead pair, or
two dead switches (and one dead switch alone; the links between parts found link by link
and with numpy), on random plans whose trees span every switch (the fast path's case),
with parallel cables and sources that send only some of their hosts; the max load per
cable, the links added and the repaired trees must be `repair`'s, bit for bit, and `Fabric.price` (what
`vlanroute whatif` runs per sampled double) must give the verdict it gives through
`repair`.
"""

from __future__ import annotations

import random

import networkx as nx
from fabrics import random_plan, switch_index
from hypothesis import example, given, settings
from hypothesis import strategies as st

from vlanroute.bundle.failures import Failures
from vlanroute.bundle.guarantees import Fabric, Policy
from vlanroute.model.links import link
from vlanroute.routing.repair.engine import repair
from vlanroute.routing.repair.model import Degraded
from vlanroute.routing.whatif.doubles_switches import double_failure


def _doubles(g: nx.Graph, rng: random.Random, count: int) -> list[tuple[tuple[str, ...], tuple[str, str] | None]]:
    switches = sorted(g.nodes)
    out: list[tuple[tuple[str, ...], tuple[str, str] | None]] = []
    for _ in range(count):
        w = rng.choice(switches)
        if rng.random() < 0.15:
            out.append(((w,), None))        # one dead switch: the same path
            continue
        if rng.random() < 0.5:
            pairs = sorted(link(a, b) for a, b in g.edges if w not in (a, b))
            if pairs:
                out.append(((w,), rng.choice(pairs)))
                continue
        out.append((tuple(rng.sample(switches, 2)), None))
    return out


@settings(max_examples=150, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 11), st.integers(1, 4), st.booleans(), st.booleans())
@example(50, 8, 1, False, False)        # two largest parts of one size: the first by its least switch
def test_doubles_with_a_dead_switch_equal_repair(seed: int, n: int, k: int, parallel: bool, shares: bool) -> None:
    """double_failure gives repair's max load and links added, or None (then whatif runs
    repair itself); on these plans (every tree spans every switch, hosts everywhere) it
    answers whenever repair mends every tree."""
    g, cables, hosts, trees = random_plan(seed, n, k, parallel, shares)
    index, vector = switch_index(cables, hosts, trees), switch_index(cables, hosts, trees)
    vector.many = 0                     # every part's links found with numpy (_across)
    rng = random.Random(seed + 1)
    for dead, pair in _doubles(g, rng, 6):
        mended: dict[int, frozenset[tuple[str, str]]] = {}
        got = double_failure(index, dead, pair, cables, mended)
        assert double_failure(vector, dead, pair, cables) == got
        fabric = Degraded({**cables, **({pair: 0} if pair else {})}, frozenset(dead),
                          {s: m for s, m in hosts.items() if s not in dead})
        result = repair(trees, fabric, keep_deadlock_free=False, check_deadlock=False)
        if result.unrepairable:
            assert got is None, (dead, pair)
            continue
        assert got == (result.max_load, result.links_added), (dead, pair)
        assert mended == result.trees, (dead, pair)         # the very trees repair makes


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 9), st.integers(1, 3))
def test_fabric_price_of_doubles_with_a_dead_switch(seed: int, n: int, k: int) -> None:
    """Fabric.price (what whatif runs for each sampled double) through the fast path gives
    every field of the verdict it gives with repair's own figures."""
    g, cables, hosts, trees = random_plan(seed, n, k, False, False)
    host_list = [(f"h{s}-{i}", s) for s in sorted(hosts) for i in range(hosts[s])]
    policy = Policy("auto", frozenset({"pair", "switch"}), ("repair",))
    fab = Fabric(sorted(g.nodes), list(cables), host_list, trees, False, policy, False, lambda: None)  # type: ignore[arg-type,return-value]
    rng = random.Random(seed)
    healed = False
    for dead, pair in _doubles(g, rng, 4):
        failures = Failures(pairs=(pair,) if pair else (), switches=dead)
        fast = fab.price(fab.classify(failures))
        healed |= fast.heals
        result = repair(trees, fab.degraded(failures), keep_deadlock_free=False, check_deadlock=False)
        plain = fab.price(fab.classify(failures),
                          (None if result.unrepairable else result.max_load, None, ()))
        assert fast.to_json() == plain.to_json()
        assert (fast.max_link_load, fast.deadlock_free, fast.deadlock_note, fast.pairs_cut) == \
            (plain.max_link_load, plain.deadlock_free, plain.deadlock_note, plain.pairs_cut)
    assert fab._index is not None or not healed          # the fast path was asked
