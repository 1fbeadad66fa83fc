"""VLAN id lists in switch CLI syntax: "101-104,110" <-> a sorted tuple of ints.

Shared by push (rollback commands), audit and the fake switch, so that all of them
read and write exactly one syntax: ids and N-M ranges separated by commas, no spaces.

Not netutils.vlan: its writer gives the same text (tests/test_netutils_crosscheck.py checks
it) but refuses ids outside 1-4094, which messages name, and its reader takes malformed
lists ("1-", "101 - 103") that a switch's config must not pass silently.
"""

from __future__ import annotations

from collections.abc import Iterable


MAX_VID = 4095      # IEEE 802.1Q's VID is 12 bits; 0 and 4095 are reserved but a list may name them


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
        if hi > MAX_VID:
            # not a VLAN id at all (12 bits), and a range to 10**9 would fill memory
            raise VlanListError(f"bad VLAN list {text!r}: {hi} is beyond {MAX_VID}, the largest 12-bit VLAN id")
        ids.update(range(lo, hi + 1))
    return tuple(sorted(ids))


def vlan_runs(ids: Iterable[int]) -> list[tuple[int, int]]:
    """(101, 102, 103, 110) -> [(101, 103), (110, 110)]: the runs of consecutive ids, in order."""
    o = sorted(set(ids))
    if not o:
        return []
    if o[-1] - o[0] == len(o) - 1:
        return [(o[0], o[-1])]                 # one run: a host port's routing VLANs, usually
    starts = [0] + [i for i in range(1, len(o)) if o[i] != o[i - 1] + 1]
    ends = starts[1:] + [len(o)]
    return [(o[a], o[b - 1]) for a, b in zip(starts, ends)]


def format_vlan_list(ids: Iterable[int]) -> str:
    """(101, 102, 103, 110) -> '101-103,110'. Consecutive ids collapse to ranges."""
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in vlan_runs(ids))


def bridge_vids(ids: Iterable[int], exclude: int | None = None) -> list[str]:
    """The `vid` arguments of iproute2's `bridge vlan add|del` covering `ids` (less
    `exclude`): one per run, "A-B" for a run, "A" alone for a single id, since
    bridge/vlan.c refuses a range whose end is not above its start ("Invalid VLAN range")
    and takes one id or one range per command, no lists."""
    return [str(a) if a == b else f"{a}-{b}" for a, b in vlan_runs(v for v in ids if v != exclude)]
