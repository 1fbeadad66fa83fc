"""The compiled exchange of a joining link (routing/whatif/switches_kernel.py Exchange) against
the interpreted one (routing/whatif/switches.py Cuts._exchange, itself checked against
improve_tree in test_whatif_speedups.py and against `repair` in
test_whatif_doubles_switches.py) on random fabrics (hypothesis), alone and with a dead
switch's common trees joined compiled too (switches_kernel.OneKid.join_all): for every dead
switch, and for doubles (two dead switches, a dead switch and a dead pair), the max load per cable, the
links added, the max load and the arcs at it after every exchange (SwitchIndex.trace) and
the repaired trees must be equal. The cables run in parallel, the trees carry host shares,
and the kernel may track a single most loaded arc, so that candidates take its scan of
every arc. numba comes with the test extras: without it this file fails to load rather
than pass."""

from __future__ import annotations

import random

from fabrics import random_plan, switch_index
from hypothesis import given, settings
from hypothesis import strategies as st

from vlanroute.routing.whatif.doubles_switches import double_failure
from vlanroute.routing.whatif.pairs_kernel import Rooted
from vlanroute.routing.whatif.switches import SwitchIndex
from vlanroute.routing.whatif.switches_kernel import Exchange, OneKid


def _indexes(seed: int, n: int, k: int, parallel: bool, shares: bool, tracked: int | None, one_kid: bool = False
             ) -> tuple[SwitchIndex, SwitchIndex, dict[tuple[str, str], int], list[str], list[Exchange]]:
    """The same plan's index twice: interpreted, and with the compiled exchange (counted);
    one_kid: the second also joins its common trees compiled (OneKid, all of a dead
    switch's at once: join_all)."""
    g, cables, hosts, trees = random_plan(seed, n, k, parallel, shares)
    plain, compiled = switch_index(cables, hosts, trees), switch_index(cables, hosts, trees)
    switches = sorted(g.nodes)
    arrays = Rooted(compiled.rooted, compiled.arcs, sorted(cables), set(switches), compiled.base_total)
    assert arrays.usable
    compiled.exchange = _Counted(arrays, tracked)
    if one_kid:
        compiled.kernel = OneKid(arrays, compiled.adj, compiled.rank, compiled.arcs)
    return plain, compiled, cables, switches, [compiled.exchange]


class _Counted(Exchange):
    """Exchange, counting the links it chose (the tests must see it choose some)."""

    chosen = 0

    def choose(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        got = super().choose(*args, **kwargs)
        _Counted.chosen += got is not None
        return got


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 12), st.integers(1, 5), st.booleans(), st.booleans(),
       st.sampled_from([None, 1, 2]), st.booleans())
def test_a_dead_switchs_compiled_exchanges_equal_the_interpreted(seed: int, n: int, k: int, parallel: bool,
                                                                  shares: bool, tracked: int | None,
                                                                  one_kid: bool) -> None:
    plain, compiled, cables, switches, _ = _indexes(seed, n, k, parallel, shares, tracked, one_kid)
    for w in switches:
        plain.trace, compiled.trace = [], []
        assert compiled.switch_failure(w, cables) == plain.switch_failure(w, cables), w
        assert compiled.trace == plain.trace, w


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 10_000), st.integers(5, 11), st.integers(1, 4), st.booleans(), st.booleans(),
       st.sampled_from([None, 1]))
def test_doubles_compiled_exchanges_equal_the_interpreted(seed: int, n: int, k: int, parallel: bool,
                                                          shares: bool, tracked: int | None) -> None:
    plain, compiled, cables, switches, _ = _indexes(seed, n, k, parallel, shares, tracked)
    rng = random.Random(seed + 1)
    for _ in range(6):
        w = rng.choice(switches)
        pairs = sorted(l for l in cables if w not in l)
        dead: tuple[str, ...]
        pair: tuple[str, str] | None
        if rng.random() < 0.5 and pairs:
            dead, pair = (w,), rng.choice(pairs)
        else:
            dead, pair = tuple(rng.sample(switches, 2)), None
        want: dict[int, frozenset[tuple[str, str]]] = {}
        got: dict[int, frozenset[tuple[str, str]]] = {}
        assert double_failure(compiled, dead, pair, cables, got) == double_failure(plain, dead, pair, cables, want)
        assert got == want, (dead, pair)


def test_the_compiled_exchange_chooses_links() -> None:
    """The comparisons above are not vacuous: on these fabrics the kernel replaces joining
    links, also through its scan of every arc (one tracked arc)."""
    _Counted.chosen = 0
    for seed in range(12):
        for tracked in (None, 1):
            plain, compiled, cables, switches, _ = _indexes(seed, 10, 2, seed % 2 == 0, seed % 3 == 0, tracked,
                                                            seed % 2 == 1)
            for w in switches:
                assert compiled.switch_failure(w, cables) == plain.switch_failure(w, cables)
    assert _Counted.chosen >= 20
