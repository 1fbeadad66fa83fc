"""Results kept for the same fabric and traffic, so the engines of one plan do not repeat
each other's work: the optimum LP (routing/optimum.py), which the plan, its metrics, the
default's engines and the acyclic engine's order refinement all ask for, and the budget
engine's tree search, which the acyclic engine's guided orders take as their guide.

A fabric is keyed by its content (switch names, cables per directed pair, coordinates and
kind) and the hosts per switch, never by object identity, so equal inputs give the same
answer and the plans stay deterministic. Each store keeps its last KEEP entries: a
long-lived process (the test suite, a what-if over many failures) does not grow.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping
from typing import Generic, TypeVar

from vlanroute.model.topology import Topology

KEEP = 16
V = TypeVar("V")


def fabric_key(topo: Topology, host_count: Mapping[str, int]) -> tuple[Hashable, ...]:
    """The content of a fabric and its traffic, as a dictionary key."""
    return (topo.kind, topo.dims, tuple(topo.switches), tuple(sorted(topo.arc_cables().items())),
            tuple(sorted((s, c) for s, c in topo.coords.items() if c is not None)),
            tuple(sorted((s, n) for s, n in host_count.items() if n)))


class Store(Generic[V]):
    """The last KEEP results of one computation, by key."""

    def __init__(self) -> None:
        self._got: dict[Hashable, V] = {}

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        if key in self._got:
            return self._got[key]
        value = make()
        self.put(key, value)
        return value

    def peek(self, key: Hashable) -> V | None:
        """The result kept for `key`, or None."""
        return self._got.get(key)

    def put(self, key: Hashable, value: V) -> None:
        """Keep `value` for `key` (for a caller that decides itself whether a kept result fits)."""
        self._got.pop(key, None)
        if len(self._got) >= KEEP:
            self._got.pop(next(iter(self._got)))
        self._got[key] = value

    def clear(self) -> None:
        self._got.clear()


class SizedStore(Generic[V]):
    """Results by key, the least recently used dropped once they hold more than `limit`
    bytes (as `size` counts them): for many small results of one long search, where a count
    of entries would bound the memory only for one size of fabric."""

    def __init__(self, limit: int, size: Callable[[V], int]) -> None:
        self.limit = limit
        self._size = size
        self._got: dict[Hashable, tuple[V, int]] = {}
        self.bytes = 0

    def get(self, key: Hashable, make: Callable[[], V]) -> V:
        if key in self._got:
            value, n = self._got.pop(key)
            self._got[key] = (value, n)        # now the most recently used
            return value
        value = make()
        n = self._size(value)
        if n <= self.limit:
            self._got[key] = (value, n)
            self.bytes += n
            while self.bytes > self.limit:
                oldest = next(iter(self._got))
                self.bytes -= self._got.pop(oldest)[1]
        return value

    def clear(self) -> None:
        self._got.clear()
        self.bytes = 0
