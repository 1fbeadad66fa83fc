"""routing/repair/push_order.py's search with the memberships kept per VLAN and undone
step by step (MembershipModel), against the search as it was: every VLAN's memberships in
one set, scanned whole per question and copied whole per step (hypothesis). Same orders,
same verdicts, dead ends and the step budget included."""

from __future__ import annotations

import random
from collections.abc import Mapping

import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlanroute.model.links import Link, link
from vlanroute.routing.repair.push_order import MembershipModel, forest, membership_changes, push_order


def _reference(old: Mapping[int, frozenset[Link]], new: Mapping[int, frozenset[Link]],
               switches: list[str], budget: int, trace: list[object]) -> tuple[list[str], bool]:
    changes = membership_changes(old, new)
    todo = [s for s in switches if s in changes]
    position = {s: i for i, s in enumerate(switches)}
    members = {(vid, x, y) for vid, links in old.items() for a, b in links for x, y in ((a, b), (b, a))}
    dead_ends: set[frozenset[str]] = set()
    order: list[str] = []
    steps = [0]

    def active(vid: int) -> set[Link]:
        return {link(x, y) for v, x, y in members if v == vid and (v, y, x) in members}

    def search(left: list[str]) -> bool:
        nonlocal members
        if not left:
            return True
        if frozenset(order) in dead_ends or steps[0] > budget:
            return False
        for x in sorted(left, key=lambda s: (any((v, y, s) in members for v, _, y in changes[s][0]),
                                             not changes[s][1], position[s])):
            steps[0] += 1
            gained, lost = changes[x]
            saved = set(members)
            members |= set(gained)
            vids = sorted({m[0] for m in gained + lost})
            trace.append([(v, sorted(active(v))) for v in vids])
            if all(forest(active(v)) for v in vids):
                members -= set(lost)
                order.append(x)
                if search([s for s in left if s != x]):
                    return True
                order.pop()
            members = saved
        dead_ends.add(frozenset(order))
        return False

    if search(todo):
        return order, True
    return todo, False


def _memberships(rng: random.Random, g: nx.Graph, vids: int, trees: bool) -> dict[int, frozenset[Link]]:
    out = {}
    edges = sorted(g.edges)
    for vid in range(1, vids + 1):
        if trees:
            t = nx.random_spanning_tree(g, seed=rng.randrange(10**6))
            out[vid] = frozenset(link(a, b) for a, b in t.edges)
        else:                    # any links at all: loops in the old or new state, dead ends
            out[vid] = frozenset(link(a, b) for a, b in edges if rng.random() < 0.5)
    return out


@settings(max_examples=120, deadline=None)
@given(seed=st.integers(0, 10**6), n=st.integers(3, 8), extra=st.integers(0, 8), vids=st.integers(1, 4),
       trees=st.booleans(), budget=st.sampled_from([3, 20, 20_000]))
def test_push_order_is_the_reference_search(seed: int, n: int, extra: int, vids: int, trees: bool,
                                            budget: int) -> None:
    # Every state the search looks at, not only its answer: a failed search answers the
    # natural order whatever it went through, and a wrong undo rarely changes the answer.
    rng = random.Random(seed)
    names = [f"s{i}" for i in range(n)]
    g = nx.Graph()
    g.add_nodes_from(names)
    for i in range(1, n):
        g.add_edge(names[i], names[rng.randrange(i)])
    for _ in range(extra):
        a, b = rng.sample(names, 2)
        g.add_edge(a, b)
    old, new = _memberships(rng, g, vids, trees), _memberships(rng, g, vids, trees)
    switches = sorted(names, key=lambda _: rng.random())
    seen: list[object] = []
    want: list[object] = []
    looked = MembershipModel.loop_free

    def loop_free(model: MembershipModel, vids: set[int]) -> bool:
        seen.append([(v, sorted(model.active(v))) for v in sorted(vids)])
        return looked(model, vids)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(MembershipModel, "loop_free", loop_free)
        got = push_order(old, new, switches, budget)
    assert got == _reference(old, new, switches, budget, want)
    assert seen == want


@settings(max_examples=60, deadline=None)
@given(ops=st.lists(st.tuples(st.integers(1, 3), st.sampled_from("abcd"), st.sampled_from("abcd"), st.booleans()),
                    max_size=30))
def test_undo_restores_every_vlans_ports(ops: list[tuple[int, str, str, bool]]) -> None:
    model = MembershipModel({1: frozenset({link("a", "b"), link("b", "c")}), 2: frozenset({link("c", "d")})})
    before = {v: set(p) for v, p in model.ports.items()}
    applied = [((v, x, y), add) for v, x, y, add in ops if x != y and model.apply((v, x, y), add)]
    model.undo(applied)
    assert {v: p for v, p in model.ports.items() if p} == {v: p for v, p in before.items() if p}
