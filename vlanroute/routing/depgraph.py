"""A channel dependency graph kept acyclic while dependencies come and go.

Nodes are channels (integers); an edge c -> d says a route leaves a switch on d after
arriving on c. `try_add` adds an edge only if the graph stays acyclic, keeping a
topological order up to date with the dynamic algorithm of Pearce and Kelly ("A dynamic
topological sort algorithm for directed acyclic graphs", ACM JEA 11, 2006): an edge that
agrees with the order costs nothing; otherwise only the channels between its two ends in
the order are searched and reordered. Edges are counted (several routes may make the same
turn); `remove` drops one use, and the edge when none is left (removing never breaks the
order). Fixed edges are never removed.
"""

from __future__ import annotations


class DependencyGraph:
    def __init__(self, channels: int) -> None:
        self.succ: list[set[int]] = [set() for _ in range(channels)]
        self.pred: list[set[int]] = [set() for _ in range(channels)]
        self.order = list(range(channels))     # a topological order: order[c] < order[d] for c -> d
        self.uses: dict[tuple[int, int], int] = {}
        self.fixed: set[tuple[int, int]] = set()

    def try_add(self, c: int, d: int, fixed: bool = False) -> bool:
        """Add (one use of) c -> d unless that closes a cycle; True if added."""
        edge = (c, d)
        if edge in self.uses:
            self.uses[edge] += 1
            if fixed:
                self.fixed.add(edge)
            return True
        if c == d:
            return False
        lo, hi = self.order[d], self.order[c]
        if lo > hi:
            self._link(edge, fixed)
            return True
        # d is before c: search forward from d within the affected window [lo, hi]; meeting
        # c there means the edge would close a cycle.
        forward = self._forward(d, hi, c)
        if forward is None:
            return False
        backward = self._backward(c, lo)
        slots = sorted(self.order[x] for x in forward + backward)
        moved = sorted(backward, key=self.order.__getitem__) + sorted(forward, key=self.order.__getitem__)
        for x, slot in zip(moved, slots):
            self.order[x] = slot
        self._link(edge, fixed)
        return True

    def remove(self, c: int, d: int) -> None:
        """Drop one use of c -> d (never a fixed edge)."""
        edge = (c, d)
        if edge in self.fixed:
            return
        left = self.uses[edge] - 1
        if left:
            self.uses[edge] = left
            return
        del self.uses[edge]
        self.succ[c].discard(d)
        self.pred[d].discard(c)

    def _link(self, edge: tuple[int, int], fixed: bool) -> None:
        c, d = edge
        self.uses[edge] = 1
        self.succ[c].add(d)
        self.pred[d].add(c)
        if fixed:
            self.fixed.add(edge)

    def _forward(self, start: int, hi: int, stop: int) -> list[int] | None:
        """The channels reachable from start and ordered at most hi; None if stop is one.
        (Inlined bounds, no callback: this search is most of the acyclic engine's time.)"""
        order, succ = self.order, self.succ
        seen = {start}
        stack = [start]
        while stack:
            for y in succ[stack.pop()]:
                if y == stop:
                    return None
                if y not in seen and order[y] <= hi:
                    seen.add(y)
                    stack.append(y)
        return list(seen)

    def _backward(self, start: int, lo: int) -> list[int]:
        """The channels that reach start and are ordered at least lo."""
        order, pred = self.order, self.pred
        seen = {start}
        stack = [start]
        while stack:
            for y in pred[stack.pop()]:
                if y not in seen and order[y] >= lo:
                    seen.add(y)
                    stack.append(y)
        return list(seen)

    def is_acyclic(self) -> bool:
        """Whether the order is topological (a check for tests)."""
        return all(self.order[c] < self.order[d] for c in range(len(self.succ)) for d in self.succ[c])
