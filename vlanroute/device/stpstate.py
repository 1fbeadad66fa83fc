"""After a push step, before the save: is every inter-switch port that vlanroute relies on
forwarding in every VLAN it carries? (issue 41, item 10; docs/push.md, "Per switch" step 8)

VLAN routing switches spanning tree off between switches, so each VLAN's tree is the
plan's and nothing else; that a port then forwards is what the whole fabric counts on, and
for Arista's `spanning-tree bpdufilter enable` no source says it does. So the switch is
asked, read-only, once the read-back has matched:

1. The ports checked are the inter-switch ports and LAGs of the plan (LAG members through
   their LAG) that carry VLANs in the config the step leaves, with spanning tree off on
   them (the port's setting, or off on the whole switch). A port still under spanning tree
   is left alone: the transition counts it as protected, spanning tree may block it
   (docs/push.md, "Transitions").
2. The family's spanning-tree table (`Family.stp_state_commands` / `parse_stp_state`;
   docs/platforms/<family>.md) gives each (port, VLAN) a state: forwarding; blocked
   (discarding, blocking, learning ..., named as printed); or `off`, the table saying that
   spanning tree does not run on the port (or, where the family's table leaves such ports
   out, the port missing from it). Spanning tree cannot tell whether an `off` port
   forwards; a bridge port outside spanning tree forwards while its link is up (the FASTPATH
   manuals: "STP is currently disabled on the port. The port forwards traffic while
   learning MAC addresses"; docs/platforms/powerconnect-62xx.md), so its link is read from
   the interface status table (drivers/linkstate.py): up is forwarding, down is not. A LAG
   is up when one of its members is.
3. Whatever vlanroute cannot read (a refused command, a reply in another layout, a port
   the table does not list where the family lists every port, a link state missing) is
   reported, never taken as forwarding.
4. A port that has just left spanning tree, or come into a VLAN, may pass through
   learning for up to twice the forward delay (802.1D: 15 s each, after up to 20 s of max
   age): while something is not forwarding, the state is read again every PAUSE_S seconds,
   for at most SETTLE_S seconds; what is still not forwarding then is the answer.

Push treats a blocked port (or one it cannot read) as a failed step: the switch is rolled
back to where the step began, before anything is saved, and the message names each port,
VLAN and state. A port with spanning tree off whose link is down is not the config's doing:
rolling the step back would not bring the cable back (and would leave the fabric between
two states, as a rollback to the plan while a repaired cable is still out showed), so the
step stands and its result carries a note naming the port (`down_note`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import time
from typing import TYPE_CHECKING

from vlanroute.device.order import PortRoles
from vlanroute.device.session import CommandRejected
from vlanroute.drivers.family import StpPortState, StpTable
from vlanroute.drivers.linkstate import link_state_command, parse_link_state
from vlanroute.model.bridge import LagPort, PortRef, SwitchConfig
from vlanroute.vlanlist import format_vlan_list

if TYPE_CHECKING:
    from vlanroute.device.targets import Target

# 802.1D's worst case from a port's change to forwarding: max age (20 s) and twice the
# forward delay (2 x 15 s). Tests set it to 0 (a knob of the emulated switches blocks a port
# for good).
SETTLE_S = 50.0
PAUSE_S = 2.0


@dataclass(frozen=True)
class NotForwarding:
    """One port or LAG not forwarding in some of the VLANs it carries, and why."""

    port: PortRef
    label: str                       # as the switch names it: `1/g47`, `ch1`, `Po1`, `Ethernet1`
    vlans: tuple[int, ...]
    state: str                       # as printed (`BLK`, `discarding`), or `link down`, `not read: ...`
    link_down: bool = False          # spanning tree off and the link down: the cable, not the config

    def __str__(self) -> str:
        many = "VLANs" if len(self.vlans) > 1 else "VLAN"
        return f"{self.label} in {many} {format_vlan_list(list(self.vlans))}: {self.state}"


def checked_ports(target: Target, cfg: SwitchConfig) -> dict[PortRef, list[int]]:
    """The inter-switch ports and LAGs of the plan with spanning tree off in `cfg` (the
    config a step leaves), and the VLANs each carries; LAG members are checked as their LAG."""
    roles = PortRoles.from_plan(target.switch)
    out: dict[PortRef, list[int]] = {}
    for ref, port in cfg.bridge_ports().items():
        if ref not in roles.inter_switch or (cfg.stp_global_enabled and port.stp_enabled):
            continue
        vlans = sorted(port.members_of & cfg.vlans)
        if vlans:
            out[ref] = vlans
    return out


def read_commands(target: Target, cfg: SwitchConfig) -> list[str]:
    """Every command the check sends once (read-only), in order; [] if no port is checked.
    This is what `push --dry-run --show-commands` lists after the read-back."""
    ports = checked_ports(target, cfg)
    if not ports:
        return []
    vlans = sorted({v for vs in ports.values() for v in vs})
    link = link_state_command(target.family)
    return target.family.stp_state_commands(vlans) + ([link] if link else [])


def not_forwarding(target: Target, run: Callable[[str], str], cfg: SwitchConfig) -> list[NotForwarding]:
    """Read the state once (`run` sends one read-only command and returns its reply,
    CommandRejected if the switch refuses it): every checked port and LAG not forwarding in
    a VLAN it carries. ConnectionLost propagates."""
    family = target.family
    ports = checked_ports(target, cfg)
    if not ports:
        return []
    vlans = sorted({v for vs in ports.values() for v in vs})
    commands = family.stp_state_commands(vlans)
    table = _read_table(target, run, commands, vlans)
    links, link_note = _read_links(target, run)
    found: dict[tuple[PortRef, str, bool], list[int]] = {}
    for ref, carried in ports.items():
        for vlan in carried:
            state = _state_of(target, table, commands, ref, vlan)
            if state.verdict == "forwarding":
                continue
            if state.verdict == "off":
                up = _link_up(ref, cfg, links)
                if up:
                    continue
                why = "link down" if up is False else f"link state not read ({link_note or 'the port is not listed'})"
                text = f"spanning tree off ({state.shown}), {why}" if state.shown else f"spanning tree off, {why}"
                down = up is False
            else:
                text, down = state.shown, False
            found.setdefault((ref, text, down), []).append(vlan)
    return [NotForwarding(ref, family.port_label(ref), tuple(vs), text, down)
            for (ref, text, down), vs in found.items()]


def check(target: Target, run: Callable[[str], str], cfg: SwitchConfig, *,
          sleep: Callable[[float], None] = time.sleep,
          clock: Callable[[], float] = time.monotonic) -> list[NotForwarding]:
    """`not_forwarding`, read again while something is blocked (not a down link), for
    SETTLE_S seconds at most (ports still converging): what is left then. A down cable is not
    waited for: no config brings it back."""
    deadline = clock() + SETTLE_S
    while True:
        found = not_forwarding(target, run, cfg)
        if not blocked(found) or clock() + PAUSE_S > deadline:
            return found
        sleep(PAUSE_S)


def blocked(found: list[NotForwarding]) -> list[NotForwarding]:
    """What fails the step: every port not forwarding for a reason other than its link being
    down with spanning tree off (blocked, learning, or not read)."""
    return [f for f in found if not f.link_down]


def down_note(found: list[NotForwarding]) -> str:
    """The note a step carries for inter-switch ports whose link is down ('' if none): the
    config is right and stays (a step rolled back would not bring the cable back, and the
    transition already counts a down cable as active); `vlanroute repair` moves the VLANs off."""
    down = [f for f in found if f.link_down]
    if not down:
        return ""
    shown = "; ".join(map(str, down[:5])) + (f"; and {len(down) - 5} more" if len(down) > 5 else "")
    return (f"; note: link down on inter-switch ports that carry VLANs: {shown} (trees cut there until the "
            "cable is back; `vlanroute repair OUTDIR --failed-pair A:B` moves the VLANs off)")


def problem(found: list[NotForwarding], waited: float | None = None) -> str:
    """The failed step's message: every port, VLAN and state (the first five ports)."""
    wait = SETTLE_S if waited is None else waited
    shown = "; ".join(map(str, found[:5])) + (f"; and {len(found) - 5} more" if len(found) > 5 else "")
    after = f" after {wait:g} s" if wait else ""
    return (f"spanning tree: inter-switch ports not forwarding in VLANs they carry{after}: {shown} "
            "(the running config is as predicted, but a VLAN's tree would be cut there)")


# -- reading ---------------------------------------------------------------------------------
def _read_table(target: Target, run: Callable[[str], str], commands: list[str], vlans: list[int]) -> StpTable:
    if not commands:
        return StpTable({}, False, f"no spanning-tree state reader for {target.family.title}")
    replies: list[str] = []
    for command in commands:
        try:
            replies.append(run(command))
        except CommandRejected as exc:
            return StpTable({}, False, str(exc))
    try:
        return target.family.parse_stp_state(replies, vlans)
    except Exception as exc:  # noqa: BLE001 - a reader's bug must neither read as forwarding nor escape
        return StpTable({}, False, f"the reply could not be read ({type(exc).__name__}: {exc})")


def _read_links(target: Target, run: Callable[[str], str]) -> tuple[dict[str, bool], str]:
    command = link_state_command(target.family)
    if command is None:
        return {}, f"no link state reader for {target.family.title}"
    try:
        links = parse_link_state(target.family, run(command))
    except CommandRejected as exc:
        return {}, str(exc)
    return links, "" if links else f"`{command}` listed no port"


def _state_of(target: Target, table: StpTable, commands: list[str], ref: PortRef, vlan: int) -> StpPortState:
    if not table.readable:
        return StpPortState("blocked", f"state not read: {table.why}")
    state = table.states.get((ref, vlan))
    if state is not None:
        return state
    if target.family.stp_off_unlisted:
        return StpPortState("off", "not listed")
    return StpPortState("blocked", f"not listed by `{_command_for(target, commands, vlan)}`: state not read")


def _command_for(target: Target, commands: list[str], vlan: int) -> str:
    """The command whose reply should have listed the port in `vlan`."""
    per_vlan = target.family.stp_state_commands([vlan])
    return per_vlan[0] if len(per_vlan) == 1 and per_vlan[0] in commands else commands[0]


def _link_up(ref: PortRef, cfg: SwitchConfig, links: dict[str, bool]) -> bool | None:
    """A port's link; a LAG's is up when a member's is (None: no member listed)."""
    if isinstance(ref, LagPort):
        members = [links[p] for p, port in cfg.ports.items() if port.lag == ref.id and p in links]
        return any(members) if members else None
    return links.get(ref)
