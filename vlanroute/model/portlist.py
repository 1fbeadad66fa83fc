"""Port lists written as patterns, e.g. `1/g1-1/g48,1/xg1-1/xg4`.

A pattern is a comma-separated list (or a YAML list) of port names and ranges `FIRST-LAST`.
The two ends of a range are written in full and differ only in their trailing number
(`1/g1-1/g48`, `Te1/0/1-Te1/0/24`, `p1-p512`), the way the PowerConnect CLI writes an
interface range (`interface range ethernet 1/g1-1/g48`). Every name must match the strict
port pattern (vlanroute/names.py), and a name with a `-` cannot be listed (it would read
as a range). The order of the pattern is the panel order.

Stack units: on a stackable switch the unit number is the first number of a port name,
after its letters (`2/g5` is unit 2's `g5`, `Te2/0/5` unit 2's `Te…/0/5`); a stack of N
units has unit 1's ports once per unit, unit after unit.

Not netutils.interface: its range_compress sorts the ports and shortens the last end
(`1/g1-3`), and its range_expansion does not read the full-ends form.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from vlanroute.names import PORT_PATTERN

MAX_PORTS = 4096                 # per platform, all units together
_PORT = re.compile(PORT_PATTERN)
_NUMBERED = re.compile(r"^(.*?)(\d+)$")          # prefix (shortest) + trailing number
_UNIT = re.compile(r"^([A-Za-z]*)(\d+)/(.+)$")   # letters, unit number, the rest


class PortListError(ValueError):
    """A pattern that is not a valid port list; the message says what to write instead."""


def parse_port_list(spec: str | Sequence[str], *, limit: int = MAX_PORTS) -> tuple[str, ...]:
    """The port names of a pattern, in its order; PortListError names the bad part."""
    items: list[str] = []
    if isinstance(spec, str):
        items = spec.split(",")
    elif isinstance(spec, Sequence) and all(isinstance(s, str) for s in spec):
        for s in spec:
            items.extend(s.split(","))
    else:
        raise PortListError("give ports as a string such as '1/g1-1/g48,1/xg1-1/xg4' or a list of "
                            "names and ranges")
    out: list[str] = []
    for raw in items:
        item = raw.strip()
        if not item:
            raise PortListError(f"empty entry in {_show(spec)!r} (two commas, or a comma at an end)")
        names = _expand(item, limit - len(out))
        out.extend(names)
    seen: set[str] = set()
    for name in out:
        if name in seen:
            raise PortListError(f"port {name} is listed twice in {_show(spec)!r}")
        seen.add(name)
    if not out:
        raise PortListError("the port list is empty")
    return tuple(out)


def _expand(item: str, room: int) -> list[str]:
    if "-" not in item:
        if not _PORT.fullmatch(item):
            raise PortListError(f"{item!r} is not a port name (letters, digits, '/', ':', '.', "
                                "starting with a letter or digit, at most 32 characters)")
        if room < 1:
            raise PortListError(f"more than {MAX_PORTS} ports")
        return [item]
    first, sep, last = item.partition("-")
    if "-" in last:
        raise PortListError(f"{item!r}: a range is FIRST-LAST with one '-', e.g. 1/g1-1/g48")
    m1, m2 = _NUMBERED.match(first), _NUMBERED.match(last)
    if not m1 or not m2 or not _PORT.fullmatch(first) or not _PORT.fullmatch(last):
        raise PortListError(f"{item!r} is not a port range: write both ends in full, "
                            "e.g. 1/g1-1/g48 or Te1/0/1-Te1/0/24")
    if m1.group(1) != m2.group(1) and last.isdigit():
        raise PortListError(f"{item!r}: write both ends of a range in full "
                            f"({first}-{m1.group(1)}{last})")
    if m1.group(1) != m2.group(1):
        raise PortListError(f"{item!r}: both ends of a range must differ only in their last "
                            f"number (write {first}-{m1.group(1)}N)")
    for digits in (m1.group(2), m2.group(2)):
        if len(digits) > 1 and digits.startswith("0"):
            raise PortListError(f"{item!r}: write numbers without leading zeros")
    lo, hi = int(m1.group(2)), int(m2.group(2))
    if lo > hi:
        raise PortListError(f"{item!r}: the first number is larger than the last "
                            f"(write {m1.group(1)}{hi}-{m1.group(1)}{lo})")
    if hi - lo + 1 > room:
        raise PortListError(f"{item!r}: more than {MAX_PORTS} ports")
    return [f"{m1.group(1)}{i}" for i in range(lo, hi + 1)]


def _show(spec: str | Sequence[str]) -> str:
    return spec if isinstance(spec, str) else ",".join(spec)


def format_port_list(ports: Iterable[str]) -> str:
    """The shortest pattern of `ports` in their order: runs of consecutive numbers with one
    prefix become FIRST-LAST. `parse_port_list(format_port_list(p)) == tuple(p)`."""
    parts: list[str] = []
    run: list[tuple[str, int]] = []

    def flush() -> None:
        if run:
            (prefix, lo), (_, hi) = run[0], run[-1]
            parts.append(f"{prefix}{lo}" if lo == hi else f"{prefix}{lo}-{prefix}{hi}")
            run.clear()

    for name in ports:
        if "-" in name:
            raise PortListError(f"port {name!r} cannot be written in a port list (it has a '-')")
        m = _NUMBERED.match(name)
        if m is None or (len(m.group(2)) > 1 and m.group(2).startswith("0")):
            flush()
            parts.append(name)
            continue
        prefix, number = m.group(1), int(m.group(2))
        if run and (run[-1][0] != prefix or run[-1][1] + 1 != number):
            flush()
        run.append((prefix, number))
    flush()
    return ",".join(parts)


def unit_of(port: str) -> int | None:
    """The stack unit of a port name (`2/g5` -> 2, `Te3/0/1` -> 3); None if it names none."""
    m = _UNIT.match(port)
    return int(m.group(2)) if m else None


def stack_units(ports: Sequence[str], units: int) -> tuple[str, ...]:
    """Unit 1's ports once per unit 1..units, unit after unit (`1/g1` -> `1/g1`, `2/g1`, ...).
    Every port must be one of unit 1."""
    for p in ports:
        if unit_of(p) != 1:
            raise PortListError(f"port {p} is not a port of stack unit 1: with units, list unit 1's "
                                "ports only (they are repeated for every unit)")
    out: list[str] = []
    for u in range(1, units + 1):
        for p in ports:
            m = _UNIT.match(p)
            assert m is not None
            out.append(f"{m.group(1)}{u}/{m.group(3)}")
    return tuple(out)
