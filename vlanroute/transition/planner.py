"""The order of a transition's steps: every fabric state on the way loop-free.

Input: the fabric (cables, host ports), the state it is in now (every switch's view: the
switches that change, those that do not, and `None` for those that cannot be read), and for
each switch that changes its whole change as a `Program`, plus, on demand, the same change
split in two: the removals first (`removal_config`), the rest later.

1. The start itself must be loop-free; else nothing is planned (NoSafeTransition names the
   loop: a loop the tool did not make is not one it can step around).
2. Whole switches: a depth-first search over the sets of switches done (the state after a
   set does not depend on the order it was done in, so a set that led nowhere is not tried
   again), each step checked in every state it passes through (`Program.live`: after every
   line that can change a cable end, or at the commit). Tried first among the steps that
   are safe: those that take no link out of a tree (they cut no host pair), then the others,
   each in the switches' natural order.
3. Where no order of whole switches exists (or the search's budget ran out), switches are
   split: a pending addition whose removal is done goes first, then a whole switch, else
   the next switch's removals (which can never close a loop) go ahead on their own.
4. Waves: consecutive steps that may run at the same time. A group is allowed when, for
   every cable, every combination of the states its two ends go through during the group
   is considered at once (unprotected when it is in any combination) and that union is
   still loop-free: then no interleaving of the group's lines can close a loop.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from vlanroute.transition.fabric import End, Fabric, FabricView, SwitchView, Wire, merged, universe
from vlanroute.transition.cuts import Cut, cuts_of
from vlanroute.transition.loops import Edge, Loop, LoopChecker, cyclic_edges, find_loops
from vlanroute.transition.program import Program

StepKind = Literal["change", "remove", "add"]
Splitter = Callable[[str], tuple[Program, Program] | None]


@dataclass(frozen=True)
class Step:
    switch: str
    kind: StepKind                 # change: the whole change; remove / add: its two halves
    program: Program

    def label(self) -> str:
        what = {"change": "change", "remove": "removals only", "add": "the rest of the change"}[self.kind]
        return f"{self.switch} ({what}, {len(self.program.commands)} commands)"


@dataclass(frozen=True)
class StepProof:
    """What was checked of one step: every state it passes through, in the VLANs it touches."""

    states: int                               # fabric states checked
    vlans: tuple[int, ...]                    # the VLANs whose links the step changes
    active: Mapping[int, tuple[int, int]]     # VLAN -> (most links active in one state, of them protected)

    def to_json(self) -> dict[str, object]:
        return {"states_checked": self.states, "vlans": list(self.vlans), "forest": True,
                "links": {str(v): {"active_max": a, "protected": p} for v, (a, p) in sorted(self.active.items())}}


@dataclass
class Transition:
    steps: list[Step]
    proofs: list[StepProof]
    waves: list[int]                          # per step: steps of one wave may run at once
    start: FabricView
    end: FabricView
    split: list[str] = field(default_factory=list)        # switches whose change was split
    cuts: list[Cut] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def views_after(self, upto: int) -> dict[str, SwitchView | None]:
        """The fabric after the first `upto` steps."""
        views = dict(self.start)
        for step in self.steps[:upto]:
            views[step.switch] = step.program.after
        return views


class NoSafeTransition(Exception):
    """No sequence of steps was found whose every state is loop-free."""

    def __init__(self, reason: str, loops: Sequence[Loop], fix: str) -> None:
        super().__init__(reason)
        self.reason, self.loops, self.fix = reason, list(loops), fix

    def describe(self) -> str:
        return "; ".join([self.reason, *(loop.describe() for loop in self.loops[:3])])


SEARCH_BUDGET = 20_000                        # step checks in the whole-switch search


@dataclass
class _Planner:
    fabric: Fabric
    start: FabricView
    whole: Mapping[str, Program]
    splitter: Splitter
    order: list[str]                          # the switches' natural order
    checker: LoopChecker
    halves: dict[str, tuple[Program, Program] | None] = field(default_factory=dict)
    checks: int = 0

    # -- one step on one state ------------------------------------------------------------
    def touched(self, base: FabricView, switch: str, view: SwitchView) -> frozenset[int]:
        return self.checker.touched(base, switch, view)

    def unsafe(self, base: FabricView, program: Program) -> list[Loop]:
        """The loops of the first state of `program` on `base` that holds any; [] if none."""
        self.checks += 1
        for _, view in program.live():
            vlans = self.touched(base, program.switch, view)
            if not vlans:
                continue
            found = self.checker.loops(merged(base, {program.switch: view}), vlans)
            if found:
                return found
        return []

    def cuts_links(self, base: FabricView, program: Program) -> bool:
        """Does the step take an active link out of some VLAN (so it may cut host pairs)?"""
        before = {(e.link, e.a, e.b) for e in self.checker.edges_at(base, program.switch)}
        for _, view in program.live():
            now = {(e.link, e.a, e.b) for e in self.checker.edges_at(merged(base, {program.switch: view}),
                                                                    program.switch)}
            if before - now:
                return True
        return False

    def heals_links(self, base: FabricView, program: Program) -> bool:
        """Does the step make a link active in some VLAN (so it may end a cut)?"""
        before = {(e.link, e.a, e.b) for e in self.checker.edges_at(base, program.switch)}
        after = {(e.link, e.a, e.b) for e in self.checker.edges_at(merged(base, {program.switch: program.after}),
                                                                  program.switch)}
        return bool(after - before)

    def rank(self, base: FabricView, program: Program) -> tuple[bool, bool, int]:
        """Steps that cut nothing first; among them those that join links (a cut a step
        before opened closes as early as it can); then the switches' natural order."""
        return (self.cuts_links(base, program), not self.heals_links(base, program),
                self.order.index(program.switch))

    def half(self, switch: str) -> tuple[Program, Program] | None:
        if switch not in self.halves:
            self.halves[switch] = self.splitter(switch)
        return self.halves[switch]

    # -- the search ------------------------------------------------------------------------
    def views(self, done: Mapping[str, SwitchView]) -> dict[str, SwitchView | None]:
        return merged(self.start, done)

    def whole_order(self) -> list[str] | None:
        """Depth-first over sets of switches done (module docstring, 2)."""
        todo = [s for s in self.order if s in self.whole]
        done: dict[str, SwitchView] = {}
        path: list[str] = []
        dead: set[frozenset[str]] = set()

        def search(left: list[str]) -> bool:
            if not left:
                return True
            if frozenset(path) in dead or self.checks > SEARCH_BUDGET:
                return False
            base = self.views(done)
            safe = [s for s in left if not self.unsafe(base, self.whole[s])]
            safe.sort(key=lambda s: self.rank(base, self.whole[s]))
            for s in safe:
                done[s] = self.whole[s].after
                path.append(s)
                if search([x for x in left if x != s]):
                    return True
                path.pop()
                del done[s]
            dead.add(frozenset(path))
            return False

        return list(path) if search(todo) else None

    def split_order(self) -> list[Step]:
        """Greedy, with splits (module docstring, 3)."""
        todo = [s for s in self.order if s in self.whole]
        removed: list[str] = []
        done: dict[str, SwitchView] = {}
        steps: list[Step] = []
        while todo or removed:
            base = self.views(done)
            step = self._next(base, todo, removed)
            if step is None:
                blocked = self.whole[todo[0]] if todo else self._half(removed[0])[1]
                raise NoSafeTransition(
                    "no order of steps keeps every VLAN loop-free, not even with removals first",
                    self.unsafe(base, blocked),
                    "the target itself may close a loop with switches that are not changed (not pushed, "
                    "or unreadable): push them too, or fix the loop named by hand")
            steps.append(step)
            done[step.switch] = step.program.after
            if step.kind == "remove":
                todo.remove(step.switch)
                removed.append(step.switch)
            elif step.kind == "add":
                removed.remove(step.switch)
            else:
                todo.remove(step.switch)
        return steps

    def _half(self, switch: str) -> tuple[Program, Program]:
        h = self.half(switch)
        assert h is not None
        return h

    def _next(self, base: FabricView, todo: list[str], removed: list[str]) -> Step | None:
        for s in removed:
            add = self._half(s)[1]
            if not self.unsafe(base, add):
                return Step(s, "add", add)
        for s in sorted(todo, key=lambda x: self.rank(base, self.whole[x])):
            if not self.unsafe(base, self.whole[s]):
                return Step(s, "change", self.whole[s])
        for s in todo:
            h = self.half(s)
            if h is not None and h[0].before != h[0].after and not self.unsafe(base, h[0]):
                return Step(s, "remove", h[0])
        return None

    # -- the proof and the waves -----------------------------------------------------------
    def proof(self, base: FabricView, step: Step) -> StepProof:
        states = 0
        touched: set[int] = set()
        active: dict[int, tuple[int, int]] = {}
        for _, view in step.program.live():
            vlans = self.touched(base, step.switch, view)
            state = merged(base, {step.switch: view})
            states += 1
            if not vlans:
                continue
            edges = self.checker.edges(state, vlans)
            loops = find_loops(edges, accepted=self.checker.accepted)
            if loops:       # the order was built from these checks: a bug if ever reached
                raise NoSafeTransition("internal error: a planned step fails its proof", loops,
                                       "report this as a bug")
            touched |= vlans
            count: dict[int, list[int]] = {}
            for e in edges:
                c = count.setdefault(e.a[1], [0, 0])
                c[0] += 1
                c[1] += e.protected
            for v, (a, p) in count.items():
                if v in vlans and a >= active.get(v, (-1, 0))[0]:
                    active[v] = (a, p)
        return StepProof(states, tuple(sorted(touched)), active)

    def waves(self, steps: list[Step], workers: int) -> list[int]:
        out: list[int] = []
        wave, members = 0, list[int]()   # members: indexes of the current wave's steps
        done: dict[str, SwitchView] = {}
        base = self.views(done)
        for i, step in enumerate(steps):
            group = [steps[j] for j in members] + [step]
            if (members and len(members) < workers and step.switch not in {steps[j].switch for j in members}
                    and not self.envelope_loops(base, group)):
                members.append(i)
            else:
                if members:
                    wave += 1
                    for j in members:
                        done[steps[j].switch] = steps[j].program.after
                    base = self.views(done)
                members = [i]
            out.append(wave)
        return out

    def envelope_loops(self, base: FabricView, group: Sequence[Step]) -> list[Loop]:
        """Every combination of the group's states at once (module docstring, 4)."""
        options: dict[str, list[SwitchView]] = {}
        vlans: set[int] = set()
        for step in group:
            seen: list[SwitchView] = []
            for _, view in step.program.views:
                if view not in seen:
                    seen.append(view)
                vlans |= self.touched(base, step.switch, view)
            options[step.switch] = seen
        if not vlans:
            return []

        def ends(switch: str, port: str) -> list[End | None]:
            views = options.get(switch)
            if views is None:
                view = base.get(switch)
                return [view.get(port) if view is not None else None]
            out: list[End | None] = []
            for view in views:
                end = view.get(port)
                if end not in out:
                    out.append(end)
            return out

        worst: dict[tuple[object, ...], Edge] = {}
        still: list[Wire] = []
        for w in self.checker.wires:
            if w.a not in options and w.b not in options:
                still.append(w)
                continue
            for ea in ends(w.a, w.a_port):
                for eb in ends(w.b, w.b_port):
                    for e in self.checker.wire_edges(w, ea, eb):
                        key = (e.link, e.a, e.b)
                        if key not in worst or (worst[key].protected and not e.protected):
                            worst[key] = e
        # The cables between switches that do not move stay as in the base state.
        edges = list(worst.values()) + self.checker.sub(tuple(still)).edges(base)
        return find_loops(_joined(edges, vlans), accepted=self.checker.accepted)


def _joined(edges: list[Edge], vlans: set[int]) -> list[Edge]:
    """The edges in `vlans` or in VLANs joined to them by a cable that changes the VLAN."""
    wanted = set(vlans)
    while True:
        grown = {x for e in edges if (e.a[1] in wanted) != (e.b[1] in wanted) for x in (e.a[1], e.b[1])}
        if grown <= wanted:
            break
        wanted |= grown
    return [e for e in edges if e.a[1] in wanted]


def plan(fabric: Fabric, start: FabricView, whole: Mapping[str, Program], splitter: Splitter,
         order: Sequence[str] | None = None, workers: int = 1) -> Transition:
    """The steps from `start` through the switches' `whole` programs (module docstring).
    NoSafeTransition when the start holds a loop or no order keeps every state loop-free."""
    names = list(order) if order is not None else sorted(whole)
    for s in whole:
        if s not in names:
            names.append(s)
    every = [*start.values()] + [v for p in whole.values() for _, v in p.views]
    checker = LoopChecker(fabric.wires, universe(every))
    planner = _Planner(fabric, start, whole, splitter, names, checker)
    now = checker.loops(start, limit=10)
    if now:
        # A loop the fabric holds already (as the running configs read, the worst case for
        # what cannot be read): not one this change makes. No step may add to it; it goes
        # once the steps take its links away. Said loudly: it may be storming right now,
        # unless spanning tree sees it through a switch that floods BPDUs.
        checker.accepted = cyclic_edges(checker.edges(start, frozenset(v for loop in now for v in loop.vlans)))
    moving = {s: p for s, p in whole.items() if p.views[0][1] != p.after or len(p.commands) > 0}
    planner.whole = moving
    ordered = planner.whole_order()
    split: list[str] = []
    if ordered is not None:
        steps = [Step(s, "change", moving[s]) for s in ordered]
    else:
        steps = planner.split_order()
        split = [s.switch for s in steps if s.kind == "remove"]
    proofs: list[StepProof] = []
    done: dict[str, SwitchView] = {}
    for step in steps:
        proofs.append(planner.proof(planner.views(done), step))
        done[step.switch] = step.program.after
    end = planner.views(done)
    strict = checker.sub(checker.wires)
    strict.accepted = frozenset()
    left = strict.loops(end)
    if left:
        raise NoSafeTransition("the loop the fabric holds now would still be there at the end (the switches that "
                               "do not change keep it)", left, "take the VLAN off one of the ports named, by hand, "
                               "or push those switches too")
    waves = planner.waves(steps, max(1, workers))
    tr = Transition(steps, proofs, waves, dict(start), end, split,
                    cuts_of(checker, start, end, fabric.hosts, _moves(checker, start, steps)))
    if now:
        views = dict(start)
        gone = 0
        for i, step in enumerate(steps, start=1):
            views[step.switch] = step.program.after
            if not strict.loops(views, frozenset(v for loop in now for v in loop.vlans)):
                gone = i
                break
        blind = {s for s, v in start.items() if v is None}
        said = "; ".join(loop.describe().replace("would loop", "loops") for loop in now[:3])
        if all(blind & set(loop.switches) for loop in now):
            tr.notes.append("with the switches that could not be read counted as carrying every VLAN, the fabric "
                            f"may hold a loop now: {said}; no step adds to it, and it is gone after step {gone}")
        else:
            tr.notes.append("the fabric holds a loop NOW, before any change (as the running configs read; it may "
                            f"be storming): {said}; no step adds to it, and it is gone after step {gone}")
    return tr


def _moves(checker: LoopChecker, start: FabricView,
           steps: Sequence[Step]) -> list[tuple[str, list[tuple[SwitchView, frozenset[int]]]]]:
    """Per step, its live views and the VLANs each changes from the view before."""
    views = dict(start)
    out = []
    for step in steps:
        seq = []
        for _, view in step.program.live():
            seq.append((view, checker.touched(views, step.switch, view)))
            views[step.switch] = view
        out.append((step.switch, seq))
    return out
