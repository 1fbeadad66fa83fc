"""Port link state from each family's interface status table, as vlanroute reads it to
find failed cables (`vlanroute repair --from-link-state`, device/linkstate.py).

- PowerConnect 62xx / Dell OS6, `show interfaces status`: a `Link State` column of `Up` /
  `Down` (62xx rows `1/xg1  10G - Level  Full  10000  Auto  Up  Active`, OS6 rows
  `Te1/0/1  desc  Full  10000  Off  Up  Off  T  (1),2-5`) [Dell PowerConnect 62xx CLI
  Reference Guide, `show interfaces status`; Dell EMC N-Series (OS6) CLI Reference Guide].
- Arista EOS, `show interfaces status`: a `Status` column, `connected` when the link is up,
  `notconnect` (or `disabled`, `errdisabled`) when not [EOS User Manual, "show interfaces
  status"; ntc-templates arista_eos_show_interfaces_status].
- Dell OS10, `show interface status`: a `Status` column of `up` / `down`, ports printed
  `Eth 1/1/1` [Dell SmartFabric OS10 User Guide, `show interface status`].

The tables are fixed-width and a description may hold spaces, so the state is the word
that starts under the header's `Link` / `Status` column, not the n-th word of the row.
Rows that are no port of the family (port channels, `oob`, `Po1`) are left out: a LAG is
failed when its member cables are.
"""

from __future__ import annotations

import re

from vlanroute.drivers.family import Family

# family name -> (the command, the header word of the state column, the words meaning up)
LINK_STATE: dict[str, tuple[str, str, frozenset[str]]] = {
    "powerconnect-62xx": ("show interfaces status", "Link", frozenset({"up"})),
    "dell-os6": ("show interfaces status", "Link", frozenset({"up"})),
    "arista-eos": ("show interfaces status", "Status", frozenset({"connected"})),
    "dell-os10": ("show interface status", "Status", frozenset({"up"})),
}

_PORT = {
    "powerconnect-62xx": re.compile(r"\d+/(?:g|xg)\d+"),
    "dell-os6": re.compile(r"(?:Gi|Te|Tw|Fo)\d+/\d+/\d+"),
    "arista-eos": re.compile(r"Et\d+(?:/\d+)*"),
    "dell-os10": re.compile(r"Eth \d+/\d+/\d+(?::\d+)?"),
}


def link_state_command(family: Family) -> str | None:
    entry = LINK_STATE.get(family.name)
    return entry[0] if entry else None


def parse_link_state(family: Family, text: str) -> dict[str, bool]:
    """Port (as the plan names it) -> link up, from `link_state_command`'s output."""
    command, column, up_words = LINK_STATE[family.name]
    port_re = _PORT[family.name]
    out: dict[str, bool] = {}
    offset: int | None = None
    for line in text.splitlines():
        words = line.split()
        if words[:1] == ["Port"] and column in words:
            offset = re.search(rf"(?<!\S){column}(?!\S)", line).start()  # type: ignore[union-attr]
            continue
        if offset is None or len(line) <= offset:
            continue
        m = port_re.match(line)
        if m is None:
            continue
        state = line[offset:].split()
        if not state or line[offset - 1:offset].strip():
            continue                        # the column is not where the header put it
        out[_plan_port(family, m.group(0))] = state[0].lower() in up_words
    return out


def _plan_port(family: Family, shown: str) -> str:
    if family.name == "dell-os10":
        shown = "ethernet" + shown.removeprefix("Eth ")
    return family.lldp_port_name(shown)
