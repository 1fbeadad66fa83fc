"""A link of the fabric: a neighbour pair of switches, in one form whichever end is named first,
and one direction of it (the only definitions of both: the routing, repair, what-if and
emulation modules import them from here)."""

from __future__ import annotations

Link = tuple[str, str]            # a neighbour pair, (a, b) with a < b
Arc = tuple[str, str]             # a direction of a neighbour pair


def link(a: str, b: str) -> Link:
    """The neighbour pair of a and b, the lesser name first."""
    return (a, b) if a < b else (b, a)
