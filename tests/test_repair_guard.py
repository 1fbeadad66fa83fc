"""The repair's incremental deadlock guard (routing/repair.py `AcyclicWith`) answers as
networkx does on the whole channel dependency graph: random dependency sets over a few
switches (cycles are common there), base acyclic or not, added sets overlapping base or not."""

from __future__ import annotations

import networkx as nx
from hypothesis import given, settings
from hypothesis import strategies as st

from vlanroute.routing.repair import AcyclicWith

SWITCHES = "abcde"


def dependencies() -> st.SearchStrategy[set[tuple[str, str, str]]]:
    """Sets of (p, q, r): channel p->q waits for q->r (p, q, r distinct neighbours-to-be)."""
    triple = st.tuples(*[st.sampled_from(SWITCHES)] * 3).filter(lambda t: t[0] != t[1] != t[2] != t[0])
    return st.sets(triple, max_size=14)


def networkx_acyclic(deps: set[tuple[str, str, str]]) -> bool:
    g = nx.DiGraph()
    g.add_edges_from(((a, b), (b, c)) for a, b, c in deps)
    return nx.is_directed_acyclic_graph(g)


@settings(max_examples=200, deadline=None)
@given(dependencies(), st.lists(dependencies(), min_size=1, max_size=4))
def test_the_guard_agrees_with_networkx(base: set[tuple[str, str, str]], more: list[set[tuple[str, str, str]]]) -> None:
    guard = AcyclicWith(base)
    assert guard.base_acyclic == networkx_acyclic(base)
    for extra in more:                      # one guard asked many times, as improve_tree does
        assert guard.accepts(extra) == networkx_acyclic(base | extra)
        assert guard.accepts(extra | base) == networkx_acyclic(base | extra)


def test_a_cycle_through_base_and_two_added_dependencies_is_found() -> None:
    # a->b waits for b->c (base); the added b->c => c->a and c->a => a->b close the ring
    guard = AcyclicWith({("a", "b", "c")})
    assert guard.accepts({("b", "c", "a")})
    assert not guard.accepts({("b", "c", "a"), ("c", "a", "b")})
    assert not AcyclicWith({("a", "b", "c"), ("b", "c", "a"), ("c", "a", "b")}).accepts(set())
