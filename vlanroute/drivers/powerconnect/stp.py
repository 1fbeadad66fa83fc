"""The spanning-tree table of PowerConnect 62xx and Dell OS6 (`show spanning-tree`), as push
reads it after a step (vlanroute.device.stpstate, docs/platforms/<family>.md).

A real OS6 switch prints [OS6STP] a global line (`Spanning tree :Enabled - BPDU Flooding
:Disabled - Portfast BPDU filtering :Disabled - mode :rstp`), the root and bridge blocks,
then `Interfaces` and one row per port:

    Name     State    Prio.Nbr  Cost      Sts  Role  Restricted
    ------   -------- --------- --------- ---- ----- ----------
    Gi1/0/1  Enabled  128.1     20000     FWD  Desg  No

`State` is the port's spanning-tree mode (Enabled / Disabled), `Sts` its state (`FWD`:
forwarding). The table is the common spanning tree's (RSTP, or MST instance 0): its state
holds for every VLAN. Unknown, and read as such:
- the 62xx layout (no 62xx capture was found; FW 3.x shares the OS6 CLI's lineage);
- the other `Sts` words (FASTPATH manuals name the states Disabled, Blocking, Listening,
  Learning, Forwarding [FPSTP]): every word but `FWD` is "blocked", named as printed;
- how a port with `spanning-tree disable` is printed. The FASTPATH manuals define the state
  Disabled as "STP is currently disabled on the port. The port forwards traffic while
  learning MAC addresses" [FPSTP]; so `Sts` `DIS`, a row whose `State` is `Disabled`, and
  every row under `Spanning tree :Disabled` are read as `off`, and push then reads the
  port's link (vlanroute.device.stpstate): up is forwarding, down is not (a port whose link
  is down is Disabled in 802.1D's sense too);
- whether such a port is listed at all: a port missing from the table counts as `off` too
  (Family.stp_off_unlisted).
A reply without the `Name ... Sts` header and without the global line is not readable.
"""

from __future__ import annotations

import re

from vlanroute.drivers.family import StpPortState, StpTable
from vlanroute.drivers.powerconnect.cli import lag_from_show
from vlanroute.model.bridge import PortRef

COMMAND = "show spanning-tree"
_GLOBAL = re.compile(r"^\s*Spanning tree\s*:\s*(Enabled|Disabled)\b", re.IGNORECASE)


def parse_spanning_tree(text: str, vlans: list[int], lag_prefix: str) -> StpTable:
    """`show spanning-tree` -> the state of every listed port, the same in every VLAN of
    `vlans`; a port named `<lag_prefix>N` is LAG N."""
    columns: list[str] | None = None
    global_off = False
    seen_global = False
    rows: dict[PortRef, StpPortState] = {}
    for line in text.splitlines():
        if m := _GLOBAL.match(line):
            seen_global = True
            global_off = m.group(1).lower() == "disabled"
            continue
        words = line.split()
        if words[:1] == ["Name"] and "Sts" in words and "State" in words:
            columns = words
            continue
        if columns is None or len(words) < len(columns) - 1 or set(line.strip()) <= {"-", " "}:
            continue
        row = dict(zip(columns, words))
        if "Sts" not in row:
            continue
        port: PortRef = lag_from_show(row["Name"], lag_prefix) or row["Name"]
        sts, mode = row["Sts"], row["State"]
        if sts.upper() == "FWD":
            rows[port] = StpPortState("forwarding", sts)
        elif global_off or mode.lower() == "disabled" or sts.upper() == "DIS":
            why = "off on the switch" if global_off else "disabled on the port" if mode.lower() == "disabled" \
                else "state Disabled"
            rows[port] = StpPortState("off", f"{sts} (spanning tree {why})")
        else:
            rows[port] = StpPortState("blocked", sts)
    if columns is None and not seen_global:
        first = next((line.strip() for line in text.splitlines() if line.strip()), "(nothing)")
        return StpTable({}, False, f"`{COMMAND}` printed no `Name ... Sts` table ({first[:80]})")
    return StpTable({(port, v): state for port, state in rows.items() for v in vlans})
