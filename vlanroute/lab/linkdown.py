"""Cables taken down in a running lab (`vlanroute lab cable-down` / `cable-up`).

A cable that is down is unplugged as far as the switches can tell: neither end hears the
other over LLDP any more, and both ports report their link down in `show interfaces status`
(the family equivalents: vlanroute.lab.cli, eos, os10). A port's link is up exactly when a
cable of the lab's cabling file is plugged into it and not down (vlanroute.lab.wiring).

The state directory holds the request, `cables-down.json` (the cable ends that are down,
written whole by the command), and the daemon's acknowledgement `cables-down.applied`
(the same text, once its switches show it), so the command returns only when the
switches have changed.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from vlanroute.bundle.reader import Cable
from vlanroute.errors import UserError
from vlanroute.safeio.reading import load_json

DOWN_FILE = "cables-down.json"
APPLIED_FILE = "cables-down.applied"

End = tuple[str, str]        # (switch, port)


def parse_end(text: str) -> End:
    """`sw1:1/g47` -> ("sw1", "1/g47"); a switch name has no colon, a port may."""
    switch, sep, port = text.partition(":")
    if not sep or not switch or not port:
        raise UserError(f"'{text}' is not a cable end", field="CABLE",
                        fix="write SWITCH:PORT, e.g. sw1:1/g47 (one end of the cable)")
    return switch, port


def cables_of(cables: Iterable[Cable], ends: Iterable[End], pairs: Iterable[tuple[str, str]]) -> list[Cable]:
    """The inter-switch cables named by one of their ends, or by their neighbour pair."""
    cables = [c for c in cables if c.kind != "host"]
    chosen: list[Cable] = []
    for end in ends:
        found = [c for c in cables if end in c.ends()]
        if not found:
            raise UserError(f"no inter-switch cable of the lab ends at {end[0]} {end[1]}", field="CABLE",
                            fix="name a port of cabling.csv that joins two switches")
        chosen += found
    for a, b in pairs:
        found = [c for c in cables if {c.a, c.b} == {a, b}]
        if not found:
            raise UserError(f"no cable of the lab joins {a} and {b}", field="--pair",
                            fix="name two neighbours of cabling.csv")
        chosen += found
    return list({c.row: c for c in chosen}.values())


def dump(ends: Iterable[End]) -> str:
    return json.dumps({"down": [list(e) for e in sorted(set(ends))]}, indent=1) + "\n"


def load(text: str | None, where: str = DOWN_FILE) -> set[End]:
    """The cable ends `dump` wrote; a file that is not that (edited, truncated, another
    file) is a UserError naming it, with the way back: remove it, every cable is up again."""
    if not text:
        return set()
    try:
        data = load_json(text, where)
    except (ValueError, UserError):             # not JSON, or nested too deep
        data = None
    down = data.get("down") if isinstance(data, dict) else None
    if not isinstance(down, list) or not all(
            isinstance(e, list) and len(e) == 2 and all(isinstance(x, str) and x for x in e) for e in down):
        raise UserError('damaged: not the {"down": [[switch, port], ...]} that `vlanroute lab cable-down` writes',
                        file=where, fix=f"remove {where} (every cable of the lab is then up), then take the "
                                        "cables down again with `vlanroute lab cable-down`")
    return {(s, p) for s, p in down}


def plugged(cables: Iterable[Cable], down: set[End]) -> list[Cable]:
    """The cables whose both ends are up: what the switches' LLDP tables and link states show."""
    return [c for c in cables if not (set(c.ends()) & down)]
