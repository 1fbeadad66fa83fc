"""VLAN id lists in switch CLI syntax: "101-104,110" <-> a sorted tuple of ints.

Shared by push (rollback commands), audit and the fake switch, so that all of them
read and write exactly one syntax: ids and N-M ranges separated by commas, no spaces.
"""

from __future__ import annotations

from collections.abc import Iterable


class VlanListError(ValueError):
    """Text is not a VLAN list."""


def parse_vlan_list(text: str) -> tuple[int, ...]:
    """'101-103,110' -> (101, 102, 103, 110). Raises VlanListError on bad syntax."""
    if not text or " " in text:
        raise VlanListError(f"bad VLAN list {text!r}")
    ids: set[int] = set()
    for part in text.split(","):
        first, sep, last = part.partition("-")
        if not first.isdigit() or (sep and not last.isdigit()):
            raise VlanListError(f"bad VLAN list {text!r}")
        lo, hi = int(first), int(last) if sep else int(first)
        if lo > hi:
            raise VlanListError(f"bad VLAN range {part!r}")
        ids.update(range(lo, hi + 1))
    return tuple(sorted(ids))


def format_vlan_list(ids: Iterable[int]) -> str:
    """(101, 102, 103, 110) -> '101-103,110'. Consecutive ids collapse to ranges."""
    ordered = sorted(set(ids))
    parts: list[str] = []
    i = 0
    while i < len(ordered):
        j = i
        while j + 1 < len(ordered) and ordered[j + 1] == ordered[j] + 1:
            j += 1
        parts.append(str(ordered[i]) if i == j else f"{ordered[i]}-{ordered[j]}")
        i = j + 1
    return ",".join(parts)
