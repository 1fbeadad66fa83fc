"""The order of switches that pushes a repair (or any change of VLAN trees) so that no VLAN
ever holds a loop, after every switch's additions as well as after its removals.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from vlanroute.model.links import Link, link


Member = tuple[int, str, str]          # (VLAN, switch, neighbour): the switch's port to the neighbour carries it


def membership_changes(old: Mapping[int, frozenset[Link]], new: Mapping[int, frozenset[Link]]
                       ) -> dict[str, tuple[list[Member], list[Member]]]:
    """Per switch: the (VLAN, switch, neighbour) memberships it gains and loses."""
    out: dict[str, tuple[list[Member], list[Member]]] = {}
    for vid in sorted(old):
        for links, which in ((new[vid] - old[vid], 0), (old[vid] - new[vid], 1)):
            for a, b in sorted(links):
                for x, y in ((a, b), (b, a)):
                    out.setdefault(x, ([], []))[which].append((vid, x, y))
    return out


def forest(links: Iterable[Link]) -> bool:
    """No loop: union-find over the links."""
    root: dict[str, str] = {}

    def find(x: str) -> str:
        while root.get(x, x) != x:
            root[x] = root.get(root[x], root[x])
            x = root[x]
        return x
    for a, b in links:
        ra, rb = find(a), find(b)
        if ra == rb:
            return False
        root[ra] = rb
    return True


class MembershipModel:
    """Which ports carry which VLAN while a push goes on: a link is active in a VLAN when
    the ports at both its ends carry it, whether the cable is up or not (a dead cable may
    be plugged back at any moment, and a dead switch keeps its config). Kept per VLAN:
    a step asks only for the VLANs it changes (on the 32x32 torus a scan of every VLAN's
    members per question took 13 of a repair's 16 s)."""

    def __init__(self, old: Mapping[int, frozenset[Link]]) -> None:
        self.ports: dict[int, set[tuple[str, str]]] = {}
        for vid, links in old.items():
            ports = self.ports.setdefault(vid, set())
            for a, b in links:
                ports.add((a, b))
                ports.add((b, a))

    def has(self, member: Member) -> bool:
        return (member[1], member[2]) in self.ports.get(member[0], ())

    def active(self, vid: int) -> set[Link]:
        ports = self.ports.get(vid, set())
        return {link(x, y) for x, y in ports if (y, x) in ports}

    def apply(self, member: Member, add: bool) -> bool:
        """Add or remove one VLAN on one port; whether that changed anything."""
        vid, x, y = member
        ports = self.ports.setdefault(vid, set())
        if ((x, y) in ports) == add:
            return False
        (ports.add if add else ports.discard)((x, y))
        return True

    def undo(self, applied: list[tuple[Member, bool]]) -> None:
        """Back to the state before `applied` (the changes `apply` made), latest first."""
        for member, add in reversed(applied):
            self.apply(member, not add)

    def loop_free(self, vids: Iterable[int]) -> bool:
        return all(forest(self.active(v)) for v in vids)


def push_order(old: Mapping[int, frozenset[Link]], new: Mapping[int, frozenset[Link]],
               switches: list[str], budget: int = 20_000) -> tuple[list[str], bool]:
    """The switches to push, one at a time, so that no VLAN ever holds a loop; each
    switch applies its additions before its removals, as a push does (device/order.py:
    memberships in phase 1, removals in phase 3), the worst case.

    The state after a set of switches is pushed does not depend on their order, so this
    is a depth-first search over sets (a set that led nowhere is not tried again), trying
    first the switches whose additions make no link active yet (their partner is not
    pushed: always safe) and that remove something, then the natural order. A push that
    stops at a failed switch and rolls it back leaves the state before that switch: one
    this order went through. (order, True), or (natural order, False) when no order
    exists or `budget` steps did not find one."""
    changes = membership_changes(old, new)
    todo = [s for s in switches if s in changes]
    position = {s: i for i, s in enumerate(switches)}
    model = MembershipModel(old)
    dead_ends: set[frozenset[str]] = set()
    order: list[str] = []
    steps = [0]

    def activates(x: str) -> bool:
        return any(model.has((v, y, x)) for v, _, y in changes[x][0])

    def search(left: list[str]) -> bool:
        if not left:
            return True
        if frozenset(order) in dead_ends or steps[0] > budget:
            return False
        for x in sorted(left, key=lambda s: (activates(s), not changes[s][1], position[s])):
            steps[0] += 1
            gained, lost = changes[x]
            vids = {m[0] for m in gained + lost}
            applied = [(m, True) for m in gained if model.apply(m, True)]
            if model.loop_free(vids):
                applied += [(m, False) for m in lost if model.apply(m, False)]
                order.append(x)
                if search([s for s in left if s != x]):
                    return True
                order.pop()
            model.undo(applied)
        dead_ends.add(frozenset(order))
        return False

    if search(todo):
        return order, True
    return todo, False
