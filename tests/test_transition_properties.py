"""Property tests of the loop-free transition (vlanroute.transition): random fabrics
(rings, tori, random graphs; parallel cables and LAGs; PowerConnect 62xx applying lines one
by one and Arista EOS committing transactions), two random plans A and B, random live
states (A, A half-pushed from the factory state, A with hand edits, B's trees around cables
that are down, a switch that cannot be read). The computed sequence is applied step by step
and line by line, every state checked by an independent loop check (tests/transition_support.py):
no VLAN ever holds a loop, and the end is B on every switch the sequence changes."""

from __future__ import annotations

import random

from hypothesis import HealthCheck, given, settings, strategies as st

from transition_support import (fabric_loops, factory, hand_edit, loops_of, plan_config, program, push_like, random_fabric,
                                random_plan, replay, same, splitter, text_of, views)
from vlanroute.transition.planner import NoSafeTransition, plan


def _start(rf, rng, plan_a, how, targets):  # type: ignore[no-untyped-def]
    """The live configs: A everywhere, or some switches still in the factory state or half
    way there (a prefix of their commands), or half way from A to B (an earlier push that
    stopped: its additions made, its removals not), or A with a person's edits."""
    a = {s: plan_config(rf, plan_a, s) for s in rf.names}
    if how == "A":
        return a
    out = {}
    for s in rf.names:
        if how == "crashed" and rng.random() < 0.6:
            fam = rf.family(s)
            cmds = push_like(rf, s, a[s], targets[s])
            k = rng.randint(0, len(cmds)) if fam.transaction is None else rng.choice((0, len(cmds)))
            out[s] = fam.parse_running(text_of(rf, s, a[s]) + "\n" + "\n".join(cmds[:k]), switch=s,
                                       platform=rf.platform[s], source="crashed")
        elif how == "half" and rng.random() < 0.5:
            fam = rf.family(s)
            cmds = fam.delta_commands(factory(rf, s), a[s])
            k = rng.randint(0, len(cmds)) if fam.transaction is None else rng.choice((0, len(cmds)))
            out[s] = fam.parse_running("\n".join(cmds[:k]), switch=s, platform=rf.platform[s], source="half")
        elif how == "edited" and rng.random() < 0.4:
            out[s] = hand_edit(rf, a[s], rng)
        else:
            out[s] = a[s]
    return out


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**9), kind=st.sampled_from(["ring", "torus", "random"]),
       how=st.sampled_from(["A", "half", "crashed", "edited", "factory"]), down=st.booleans(), blind=st.booleans(),
       order=st.sampled_from(["delta", "push"]))
def test_every_state_of_a_planned_transition_is_loop_free_and_it_ends_in_b(seed, kind, how, down, blind, order):
    """`order`: each switch's commands as rollback sends them (per port), or as a push does
    (every addition before any removal, the worst case)."""
    rng = random.Random(seed)
    rf = random_fabric(rng, kind)
    plan_a = random_plan(rf, rng)
    if down:                                       # B routes around a cable that is down
        rf.down = {rng.randrange(len(rf.wires))}
    plan_b = random_plan(rf, rng, avoid=rf.down)
    targets = {s: plan_config(rf, plan_b, s) for s in rf.names}
    live = {s: factory(rf, s) for s in rf.names} if how == "factory" else _start(rf, rng, plan_a, how, targets)
    texts = {s: text_of(rf, s, live[s]) for s in rf.names}
    unknown = rng.choice(rf.names) if blind else None      # a switch the planner cannot read: it stays
    make = push_like if order == "push" else (lambda rf, s, cur, tgt: rf.family(s).delta_commands(cur, tgt))
    whole = {s: program(rf, s, texts[s], make(rf, s, live[s], targets[s])) for s in rf.names if s != unknown}
    start = views(rf, live)
    if unknown:
        start[unknown] = None
    try:
        tr = plan(rf.fabric(), start, whole, splitter(rf, texts, targets), rf.names, workers=3)
    except NoSafeTransition as exc:
        # Only a switch left as it is (unreadable, worst case) may keep a loop or make B
        # unreachable without one.
        assert unknown is not None, exc.describe()
        return
    if loops_of(rf, live):
        # Said loudly, and never made worse (replay). A loop only through the switch it
        # cannot read, the planner can only call possible ("may hold a loop now").
        seen = [s for s in rf.names if s != unknown]
        certain = fabric_loops(seen, [w for w in rf.wires if unknown not in (w.a, w.b)], live)
        assert any("loop NOW" in n or (not certain and "may hold a loop now" in n) for n in tr.notes)
    end, checked = replay(rf, live, texts, tr)
    assert checked >= len(tr.steps)
    for s in rf.names:
        if s != unknown:
            assert same(rf, end[s], targets[s]), s
    # Every switch changes at most twice (split into removals and the rest), once otherwise.
    counts = {s: sum(1 for x in tr.steps if x.switch == s) for s in rf.names}
    assert all(c <= 2 for c in counts.values())
    assert all(counts[s] == 2 for s in tr.split)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10**9), kind=st.sampled_from(["ring", "torus", "random"]))
def test_steps_of_one_wave_are_safe_in_any_interleaving(seed, kind):
    """A wave's steps may run at once: their lines interleaved at random, every state is
    still loop-free."""
    rng = random.Random(seed)
    rf = random_fabric(rng, kind, eos_share=0.0)
    plan_a, plan_b = random_plan(rf, rng), random_plan(rf, rng)
    live = {s: plan_config(rf, plan_a, s) for s in rf.names}
    targets = {s: plan_config(rf, plan_b, s) for s in rf.names}
    texts = {s: text_of(rf, s, live[s]) for s in rf.names}
    whole = {s: program(rf, s, texts[s], push_like(rf, s, live[s], targets[s])) for s in rf.names}
    tr = plan(rf.fabric(), views(rf, live), whole, splitter(rf, texts, targets), rf.names, workers=4)
    cfgs = dict(live)
    for wave in sorted(set(tr.waves)):
        steps = [s for s, w in zip(tr.steps, tr.waves) if w == wave]
        pending = {s.switch: list(s.program.commands) for s in steps}
        sent = {s.switch: 0 for s in steps}
        while pending:
            sw = rng.choice(sorted(pending))
            sent[sw] += 1
            fam = rf.family(sw)
            cfgs[sw] = fam.parse_running(texts[sw] + "\n" + "\n".join(pending[sw][:sent[sw]]), switch=sw,
                                         platform=rf.platform[sw], source="wave")
            assert not loops_of(rf, cfgs), f"wave {wave}: {sw} after {sent[sw]} lines"
            if sent[sw] == len(pending[sw]):
                texts[sw] += "\n" + "\n".join(pending.pop(sw))
    for s in rf.names:
        assert same(rf, cfgs[s], targets[s])


# -- the planner alone, on random memberships (not only trees): the split path --------------

def _views_loop_free(wires, views) -> bool:  # type: ignore[no-untyped-def]
    """Independent: per VLAN, the cables both ends carry tagged form a forest (no STP here)."""
    import networkx as nx
    vlans = {v for view in views.values() for end in view.values() for v in end.tagged}
    for v in vlans:
        g = nx.MultiGraph()
        for w in wires:
            if v in views[w.a][w.a_port].tagged and v in views[w.b][w.b_port].tagged:
                g.add_edge(w.a, w.b)
        if g.number_of_edges() and not nx.is_forest(g):
            return False
    return True


def _synthetic(seed: int):  # type: ignore[no-untyped-def]
    from vlanroute.transition.fabric import End, Fabric, Wire
    from vlanroute.transition.program import Program
    rng = random.Random(seed)
    n = rng.randint(3, 5)
    names = [f"s{i}" for i in range(n)]
    wires = [Wire(names[i], f"p{i}a", names[(i + 1) % n], f"p{i}b") for i in range(n)]
    if rng.random() < 0.5:
        wires.append(Wire(names[0], "x0", names[1], "x1"))
    vids = (101, 102)

    def state() -> dict:  # type: ignore[type-arg]
        return {(i, side): frozenset(v for v in vids if rng.random() < 0.5) for i in range(len(wires)) for side in (0, 1)}

    def view(st, s):  # type: ignore[no-untyped-def]
        out = {}
        for i, w in enumerate(wires):
            for side, (sw, port) in enumerate(w.ends()):
                if sw == s:
                    out[port] = End(port=port, tagged=st[(i, side)], untagged=frozenset(), pvid=1)
        return out

    a, b = state(), state()
    union = {k: a[k] | b[k] for k in a}
    mid = {k: a[k] & b[k] for k in a}
    then = {k: mid[k] | b[k] for k in a}
    whole = {s: Program(s, ("c",), ((0, view(a, s)), (1, view(union, s)), (2, view(b, s)))) for s in names}
    halves = {s: (Program(s, ("r",), ((0, view(a, s)), (1, view(mid, s)))),
                  Program(s, ("a",), ((0, view(mid, s)), (1, view(then, s)), (2, view(b, s))))) for s in names}
    start = {s: view(a, s) for s in names}
    end = {s: view(b, s) for s in names}
    return Fabric(tuple(wires)), start, end, whole, halves, names


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10**6))
def test_any_planned_sequence_of_whole_or_split_steps_is_loop_free(seed):
    """Random memberships at both ends of every cable of a ring (plus a parallel cable), each
    switch's change passing through the union of before and after (additions first): if the
    start and the target are loop-free, the plan reaches the target and every state of every
    step, split or whole, is loop-free by an independent check."""
    fabric, start, end, whole, halves, names = _synthetic(seed)
    if not _views_loop_free(fabric.wires, start) or not _views_loop_free(fabric.wires, end):
        return
    tr = plan(fabric, start, whole, lambda s: halves[s], names)
    views = dict(start)
    for step in tr.steps:
        for _, view in step.program.live():
            views[step.switch] = view
            assert _views_loop_free(fabric.wires, views), step.label()
    assert views == end


def test_a_change_no_order_of_whole_switches_allows_is_split():
    """Seed 8 of the synthetic fabrics: every whole change of s1 closes a loop at some point
    of its additions, so its removals go first on their own; the rest comes after s0 and s2."""
    fabric, start, end, whole, halves, names = _synthetic(8)
    tr = plan(fabric, start, whole, lambda s: halves[s], names)
    assert tr.split, [s.label() for s in tr.steps]
    kinds = [(s.switch, s.kind) for s in tr.steps]
    for s in tr.split:
        assert kinds.index((s, "remove")) < kinds.index((s, "add"))
