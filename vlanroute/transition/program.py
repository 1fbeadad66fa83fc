"""One switch's change as the states its cable ends and host ports go through.

A switch that applies lines one by one (PowerConnect 62xx, OS6) passes through a state
after every line: `program_of` parses the running config followed by the first k commands,
for every k after which a cable end can have changed (a line on an inter-switch port or
LAG, a VLAN table or global spanning-tree line; a run of host-port lines is one state), so
that the planner checks each of them. A family with a transaction of its own (Arista EOS,
Dell OS10) changes at the commit: its program has two states, before and after.

`removal_config` gives the first half of a split change: the running config with every
VLAN membership of its cable ends that the target does not keep taken away, and nothing
else changed. Removals alone can never close a loop; the rest of the change follows later.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from vlanroute.model.bridge import LagPort, PortConfig, PortRef, SwitchConfig
from vlanroute.transition.fabric import End, SwitchView, end_of, view_of

if TYPE_CHECKING:       # the emulation plans with Programs it builds itself: no family there
    from vlanroute.drivers.family import Family
    from vlanroute.model.platforms import Platform

Parse = Callable[[str], SwitchConfig]


@dataclass(frozen=True)
class Program:
    """The commands of one step on one switch and the views they pass through:
    `views[i] = (commands sent, view)`, the first before any command, the last after all."""

    switch: str
    commands: tuple[str, ...]
    views: tuple[tuple[int, SwitchView], ...]
    atomic: bool = False          # a transaction: its views are the states after its commits

    @property
    def before(self) -> SwitchView:
        return self.views[0][1]

    @property
    def after(self) -> SwitchView:
        return self.views[-1][1]

    def live(self) -> list[tuple[int, SwitchView]]:
        """The views the switch passes through once the step begins (the first excluded):
        after every checkpoint line, or, in a transaction, after each commit."""
        return list(self.views[1:])


def checkpoints(family: Family, commands: Sequence[str], cable_ports: set[str]) -> list[int]:
    """After how many commands a state must be checked (module docstring). A line the
    family cannot classify makes every line a checkpoint: never guess."""
    from vlanroute.drivers.family import LineRole, UnsupportedLine
    forwarding = (LineRole.VLAN_TABLE, LineRole.PORT_SETTING, LineRole.PORT_VLAN_REMOVAL,
                  LineRole.PORT_STP_OFF, LineRole.GLOBAL_STP_OFF)
    n = len(commands)
    try:
        roles = family.classify_push_lines(list(commands))
    except (UnsupportedLine, NotImplementedError):
        return list(range(1, n + 1))
    out: list[int] = []
    inside: str = ""                 # "inter" | "host" | "other" within a port block
    host_run = False
    for i, meaning in enumerate(roles, start=1):
        role = meaning.role
        if role is LineRole.ENTER_PORTS:
            inter = any(isinstance(t, LagPort) or t in cable_ports for t in meaning.targets)
            inside = "inter" if inter else "host"
            if inter and host_run:
                out.append(i - 1)    # the run of host-port lines before this block ends here
                host_run = False
            continue
        if role in (LineRole.LEAVE, LineRole.END):
            inside = ""
            continue
        if role not in forwarding:
            continue
        if inside == "host":
            host_run = True
            continue
        if host_run:
            out.append(i - 1)
            host_run = False
        out.append(i)
    if n and (not out or out[-1] != n):
        out.append(n)
    return sorted(set(k for k in out if k > 0))


def program_of(switch: str, commands: Sequence[str], parse: Parse, running_text: str, ports: Sequence[str],
               family: Family, cable_ports: set[str], atomic: bool) -> Program:
    """The program of `commands` sent to a switch whose running config is `running_text`;
    `parse` reads a config text (the family's running-config reader)."""
    before = view_of(parse(running_text), ports)
    views: list[tuple[int, SwitchView]] = [(0, before)]
    cmds = tuple(commands)
    marks = [len(cmds)] if atomic else checkpoints(family, cmds, cable_ports)
    tx = family.transaction
    if atomic and tx is not None and tx.apart:
        # Lines committed apart (device/transaction.py) go live after the rest: a state between.
        import re
        rest = [c for c in cmds if not re.fullmatch(tx.apart, c)]
        if len(rest) < len(cmds):
            cfg = parse(running_text + "\n" + "\n".join(rest))
            views.append((len(rest), view_of(cfg, ports)))
    for k in marks:
        if k == 0:
            continue
        cfg = parse(running_text + "\n" + "\n".join(cmds[:k]))
        views.append((k, view_of(cfg, ports)))
    if len(views) == 1:
        views.append((0, before))
    return Program(switch, cmds, tuple(views), atomic)


def _keep(cfg: PortConfig, keep: frozenset[int]) -> None:
    cfg.tagged = {v for v in cfg.tagged if v in keep}
    cfg.untagged = {v for v in cfg.untagged if v in keep}


def removal_config(running: SwitchConfig, target: SwitchConfig, cable_ports: Sequence[str]) -> SwitchConfig:
    """`running` with the VLANs that `target` does not forward taken off every cable end
    (the bridge port: a LAG for its members), nothing else changed."""
    mid = copy.deepcopy(running)
    keep_of: dict[PortRef, set[int]] = {}
    for port in cable_ports:
        if port not in running.ports:
            continue
        logical = running.logical_port(port)
        want: End = end_of(target, port)
        keep_of.setdefault(logical, set()).update(want.egress)
    for logical, keep in keep_of.items():
        if isinstance(logical, LagPort):
            if logical.id in mid.lags:
                _keep(mid.lags[logical.id], frozenset(keep))
        else:
            _keep(mid.ports[logical], frozenset(keep))
    return mid


def parse_with(family: Family, platform: Platform, switch: str) -> Parse:
    """The family's running-config reader for one switch."""
    def parse(text: str) -> SwitchConfig:
        return family.parse_running(text, switch=switch, platform=platform, source=f"{switch} (transition)")
    return parse
