"""The switch family interface: one object per CLI family, one registry (vlanroute.drivers).

A *platform* (vlanroute.model.platforms) is a switch model: its ports and hardware limits.
A *family* is the configuration language a set of platforms share: the template that
writes it, the parser that reads it back into the vendor-neutral 802.1Q model
(vlanroute.model.bridge), and, if vlanroute can drive the switch over SSH, the config
lifecycle that NAPALM drivers share (read the running config, compare it with the target
on parsed models, send the difference in a loop-safe order, read back, roll back) and the
learned-MAC table reader of `vlanroute audit`. Render, verify, push, audit and emulate
reach a family only through `family_of(platform)`.

This module depends on the model only, so the plan stage may read a family's capabilities.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Literal


from vlanroute.model.bridge import LagPort, PortRef, SwitchConfig
from vlanroute.model.platforms import Platform


@dataclass(frozen=True)
class Capabilities:
    """What a family's switches can do, as far as vlanroute relies on it."""

    # VLAN routing puts every host port in ONE PVID and makes it an untagged member of EVERY
    # routing VLAN (Dell "general", AEOS "hybrid", Linux bridge flags). A CLI whose only
    # multi-VLAN port is a trunk with one untagged native VLAN cannot do it.
    host_untagged_in_many_vlans: bool
    eee: bool                                  # an Energy Efficient Ethernet (802.3az) setting
    lag_hash_modes: Mapping[str, str] = field(default_factory=dict)  # settings.lag_hash -> keyword
    # settings.lag_hash values the family refuses, each with the fact why (plan refuses them).
    lag_hash_refused: Mapping[str, str] = field(default_factory=dict)
    push: bool = False                         # `vlanroute push` can apply and roll back configs
    preview: bool = False                      # `vlanroute push --dry-run` can show the changes
    audit: bool = False                        # `vlanroute audit` can read the learned-MAC table
    emulate: bool = False                      # `vlanroute emulate` can run its configs (Linux)

    def can_preview(self) -> bool:
        return self.push or self.preview


# A capability no public source confirms for a family, which an inventory may confirm for
# its own platform (`platforms.<name>.confirm`): the plan then relies on it.
HOST_UNTAGGED = "host-untagged-in-many-vlans"


@dataclass(frozen=True)
class FirmwareDefaults:
    """What a switch of the family does when its config says nothing, and so prints nothing
    in `show running-config`. None: unknown (then push treats an explicit line as printed).
    The 802.1Q factory state (VLAN 1 untagged, PVID 1, access mode, spanning tree on, all
    frames admitted) is the bridge model's own default; the aging default is the platform's."""

    flow_control: bool | None = None       # IEEE 802.3x flow control, switch-wide
    lag_hash: str | None = None            # the family's hash keyword of a LAG without one
    sources: Mapping[str, str] = field(default_factory=dict)   # setting -> verdict: source


@dataclass(frozen=True)
class Unprinted:
    """A rendered line that a model of the family may take as its default, and so print no
    line for in `show running-config`, and what its absence from push's read-back means
    (docs/platforms/<family>.md, issue 41). `show_all`: a read-only command that prints
    defaults too; absent from the read-back, the line must be there (the model's default),
    or it is not in effect and the read-back differs. None: no such check is known, and the
    absence is taken as the model's default, said in the result: for a line that cannot
    open a loop or cut a VLAN."""

    line: str                        # regex of the canonical line (CanonicalLine.text)
    show_all: str | None
    why: str                         # the evidence, for the result's note


@dataclass(frozen=True)
class CliDialog:
    """How an SSH session talks to the family's CLI (vlanroute.device.session)."""

    netmiko_device_type: str
    save_command: str
    save_confirm: str | None                   # regex of the question the save command asks
    save_answer: str | None                    # the single key that answers it
    error_patterns: tuple[str, ...]            # regexes of replies that mean "command rejected"
    session_setup: tuple[str, ...] = ()        # sent once after login, replies not checked
    # The pager's prompt (printed without a line end) and the key that shows the next page.
    pager_patterns: tuple[str, ...] = (r"--More--[^\n]*",)
    pager_key: str = " "
    save_done: str = r"Configuration Saved!"   # the save reply that means it was written
    save_not_done: str = r"Not Saved"          # the save reply that means it was not


@dataclass(frozen=True)
class Transaction:
    """A CLI's own all-or-nothing change (NAPALM's load / compare / commit / discard): push
    types the rendered commands into it, reads the switch's own diff, then commits; on any
    failure before the commit it discards, and the running config never changed.
    `{name}` in a command is replaced by a name unique to the push."""

    begin: tuple[str, ...]                     # from privileged mode into the transaction
    diff: str | None                           # the switch's diff of the pending changes
    commit: tuple[str, ...]                    # apply, and back to privileged mode
    abort: tuple[str, ...]                     # discard, and back to privileged mode
    # A restore point taken before `begin`, and how to go back to it after a commit
    # (EOS: a checkpoint and `configure replace`); empty: rollback by inverse commands.
    checkpoint: tuple[str, ...] = ()
    restore: tuple[str, ...] = ()
    cleanup: tuple[str, ...] = ()              # after success or restore (delete the checkpoint)
    # Regex of inverse-command lines committed in a transaction of their own, after the rest
    # (OS10: VLAN deletions, docs/platforms/dell-os10.md); None: one transaction.
    apart: str | None = None
    # Leading and trailing lines of a rendered file that the transaction replaces.
    enter: str = "configure"
    leave: str = "end"


@dataclass(frozen=True)
class Probe:
    """Context help (`?`) asked before a push for a command no source confirms on this
    family, in the mode push will send it in: what is typed is erased, nothing executed
    (vlanroute.device.preflight)."""

    command: str                     # the unconfirmed command, as in messages
    sent: str                        # regex of a pushed line needing it; group `value` (optional)
                                     # is the argument the help must offer
    words: str                       # typed before ` ?`, e.g. "hashing-mode"; "": the pushed
                                     # line up to the value
    mode: str | None = None          # regex of the line that enters the mode it is sent in
                                     # ("configure": global configuration); None: any


@dataclass(frozen=True)
class SwitchFacts:
    """What a switch says it is, read before anything is changed (NAPALM's get_facts)."""

    model: str | None = None                   # as the switch prints it: "PowerConnect 6248"
    firmware: str | None = None                # "3.3.7.3"
    ports: tuple[str, ...] | None = None       # every port the switch lists, its own names
    sources: Mapping[str, str] = field(default_factory=dict)   # fact -> where it was read


# Runs one read-only show command on the switch and returns its reply.
ShowCommand = Callable[[str], str]


@dataclass(frozen=True)
class LldpNeighbor:
    """One row of a switch's LLDP neighbour table (IEEE 802.1AB): what the device at the
    other end of `local_port`'s cable says about itself. A switch sends its interface name
    as Port ID; a host's lldpd sends a MAC unless told `portidsubtype ifname`."""

    local_port: str                  # this switch's port, as the switch names it
    chassis_id: str = ""             # usually a MAC (upper case with colons on Dell OS6)
    port_id: str = ""                # the far end's port: interface name or MAC
    system_name: str = ""            # the far end's host name; may end in "..." (cut)

    @property
    def truncated(self) -> bool:
        return self.system_name.endswith("...")


@dataclass(frozen=True)
class StpPortState:
    """What a switch's spanning-tree table says of one bridge port in one VLAN
    (`Family.parse_stp_state`): `forwarding`; `blocked` (any other state the table names:
    discarding, blocking, learning ...); `off` (the table says spanning tree does not run on
    the port, so it cannot say whether the port forwards: push then reads the port's link).
    `shown` is the state as the switch printed it, for messages."""

    verdict: Literal["forwarding", "blocked", "off"]
    shown: str


@dataclass(frozen=True)
class StpTable:
    """`Family.parse_stp_state`'s answer. `states`: (port or LAG, VLAN) -> its state, for the
    rows the replies hold. `readable` False: a reply is not in the layout the reader knows
    (then nothing in it is taken as forwarding); `why` says what was wrong."""

    states: Mapping[tuple[PortRef, int], StpPortState]
    readable: bool = True
    why: str = ""


class LineRole(Enum):
    """What one pushed command line does, in the terms of the loop-safe order
    (vlanroute.device.order decides the phase from this and the ports' roles)."""

    NEUTRAL = "neutral"              # mode changes, settings that cannot open a loop
    ENTER_PORTS = "enter-ports"      # enters the sub-mode of `targets`
    LEAVE = "leave"                  # leaves a sub-mode
    END = "end"                      # leaves configuration mode (the last line of a file)
    VLAN_TABLE = "vlan-table"        # creates VLANs, or is part of doing so
    PORT_SETTING = "port-setting"    # membership, PVID, LAG... of the ports entered
    PORT_VLAN_REMOVAL = "port-vlan-removal"   # takes VLANs off the ports entered
    PORT_STP_OFF = "port-stp-off"    # spanning tree off on the ports entered
    GLOBAL_STP_OFF = "global-stp-off"


@dataclass(frozen=True)
class PushLine:
    role: LineRole
    targets: tuple[PortRef, ...] = ()          # ENTER_PORTS: the ports and LAGs entered


@dataclass(frozen=True)
class CanonicalLine:
    """One non-default setting as the switch would print it; `port` is None for a global one."""

    port: PortRef | None
    text: str


class UnsupportedLine(Exception):
    """A command line the family's push classifier does not know (push refuses the file)."""


def syntax_key(item: str) -> str:
    """The name of an unconfirmed-syntax item (`Family.unconfirmed`), as an inventory's
    `site.acknowledged_syntax` names it: the text before its first " (", which explains
    it (`hashing-mode 6 (LAG hash ...)` -> `hashing-mode 6`). The whole item gives the same."""
    return item.split(" (", 1)[0].strip()


class Family:
    """Base class of a switch family. Subclasses set the class attributes and implement
    `parse` and `lag_label`; a family whose capabilities allow push or audit implements
    the methods of that part (the defaults refuse, which is a bug if ever reached)."""

    name: str                                  # the key in FAMILIES and Platform.family
    title: str                                 # in messages, e.g. "PowerConnect 62xx"
    capabilities: Capabilities
    # Rendered commands that no public source confirms for this family: render warns for
    # every family in use that has any (docs/platforms.md has the evidence).
    unconfirmed: tuple[str, ...] = ()
    # The same, for commands a plan uses only where host ports are untagged members of
    # several VLANs (host_attachment untagged): no warning for a trunk-attached fabric.
    unconfirmed_untagged_hosts: tuple[str, ...] = ()
    # Capabilities an inventory may confirm for its platform, each with the open question.
    confirmable: Mapping[str, str] = {}
    defaults: FirmwareDefaults = FirmwareDefaults()
    cli: CliDialog | None = None               # None: not managed over SSH
    template_dir: Path | None = None           # None: the package's templates/
    # Unconfirmed commands that push asks the switch about (context help) before a change.
    probes: tuple[Probe, ...] = ()
    # The CLI's own transaction, if push uses one (None: commands take effect one by one).
    transaction: Transaction | None = None
    # Flow control is set per port (PortConfig.flow_control, in the canonical lines of each
    # port), so the switch-wide summary says nothing push must compare.
    flow_per_port: bool = False
    # Rendered lines a model may print nothing for (its default): how push's read-back
    # after a commit judges their absence (vlanroute.device.readback).
    unprinted: tuple[Unprinted, ...] = ()

    @property
    def template(self) -> str:
        """The Jinja2 template that renders one switch's config (templates/README.md)."""
        return f"switch/{self.name}.j2"

    def host_untagged_in_many_vlans(self, platform: Platform) -> bool:
        """Can a host port of `platform` be an untagged member of several VLANs? The family's
        capability, or the inventory's confirmation for its own platform."""
        return self.capabilities.host_untagged_in_many_vlans or HOST_UNTAGGED in platform.confirmed

    # -- reading configs -------------------------------------------------------------------
    def parse(self, text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
        """Config text (rendered, or `show running-config`) -> the vendor-neutral model;
        a line that is not understood is a UserError naming the file and line."""
        raise NotImplementedError

    def parse_running(self, text: str, *, switch: str, platform: Platform,
                      source: str = "") -> SwitchConfig:
        """A switch's `show running-config`: what vlanroute manages goes into the model,
        every other line into `SwitchConfig.context`, classified (none / forwarding, VLANs);
        only a malformed managed line is an error. Default: as strict as `parse`."""
        return self.parse(text, switch=switch, platform=platform, source=source)

    def advice(self, vlans_by_switch: Mapping[str, int]) -> list[str]:
        """Warnings for render about what the vendor advises against for switches of this
        family holding that many VLANs once configured (VLAN 1 included), each with its
        source on docs/platforms/<family>.md. Default: none."""
        return []

    # -- names -----------------------------------------------------------------------------
    def lag_label(self, lag_id: int) -> str:
        """How the switch itself names LAG `lag_id` in its output (and so in messages)."""
        raise NotImplementedError

    def port_label(self, port: PortRef) -> str:
        return self.lag_label(port.id) if isinstance(port, LagPort) else port

    # -- push: the config lifecycle ----------------------------------------------------------
    def config_commands(self, text: str) -> list[str]:
        """The lines of a rendered config file that are sent, in order (no comments)."""
        raise NotImplementedError(f"{self.name}: push is not supported")

    def canonical_lines(self, cfg: SwitchConfig) -> list[CanonicalLine]:
        """Every non-default setting in a fixed order: the basis of push's diff and of the
        check after a push and after a rollback."""
        raise NotImplementedError(f"{self.name}: push is not supported")

    def port_fixups(self, cur: SwitchConfig, tgt: SwitchConfig, ports: set[PortRef]) -> list[str]:
        """Membership commands that take the named ports/LAGs of `cur` to `tgt` (no spanning
        tree, no VLAN table): the removals a rendered file cannot know about."""
        raise NotImplementedError(f"{self.name}: push is not supported")

    def delta_commands(self, cur: SwitchConfig, tgt: SwitchConfig) -> list[str]:
        """Every command, in loop-safe order, that turns `cur` into `tgt` (rollback)."""
        raise NotImplementedError(f"{self.name}: push is not supported")

    def target_config(self, cfg: SwitchConfig) -> str | None:
        """The config as the switch prints it once applied, for line-by-line tools such as
        Ansible's os6_config (render writes it to ansible/<switch>.cfg); None: not offered."""
        return None

    def classify_push_lines(self, lines: list[str]) -> list[PushLine]:
        """What each line does (one entry per line); UnsupportedLine for an unknown
        interface form, so that push never guesses which ports a line touches."""
        raise NotImplementedError(f"{self.name}: push is not supported")

    def interface_command(self, port: PortRef) -> str:
        """The command that enters the sub-mode of one port or LAG."""
        raise NotImplementedError(f"{self.name}: push is not supported")

    # -- pre-flight (read-only) ----------------------------------------------------------
    def facts(self, running_config: str, show: ShowCommand) -> SwitchFacts:
        """Model, firmware and port list, from the running config already read and from
        read-only show commands (`show`); a fact the switch does not give stays None."""
        raise NotImplementedError(f"{self.name}: pre-flight is not supported")

    # -- cabling (LLDP) ---------------------------------------------------------------------
    # The read-only command that lists every LLDP neighbour (`vlanroute cabling check`,
    # `vlanroute discover`); None: the family has no known one.
    lldp_command: str | None = None

    def lldp_detail_command(self, port: str) -> str | None:
        """The command that shows one port's neighbour in full (the summary may cut the
        system name); None: not known."""
        return None

    def parse_lldp(self, text: str) -> list[LldpNeighbor]:
        """`lldp_command`'s output -> one entry per neighbour (a port may have several)."""
        raise NotImplementedError(f"{self.name}: no LLDP neighbour table reader")

    def parse_lldp_detail(self, text: str) -> str | None:
        """The full system name in `lldp_detail_command`'s output, None if absent."""
        return None

    def lldp_port_name(self, text: str) -> str:
        """A Port ID a neighbour of this family sends (or a table prints) -> the port's name
        in the plan, so that `Et1` and `Ethernet1` are one port. Default: as given (the Dell
        62xx / OS6 tables print the names the plan uses)."""
        return text

    # -- spanning-tree state after a push (vlanroute.device.stpstate) -------------------------
    # A port vlanroute switched spanning tree off on may be left out of the family's table
    # (OS10 `show spanning-tree active` lists the "RSTP-active interfaces" only): True, such
    # a port missing from it counts as `off` (its link decides); False, as not readable.
    stp_off_unlisted: bool = False

    def stp_state_commands(self, vlans: list[int]) -> list[str]:
        """The read-only commands that show the spanning-tree state of every port in `vlans`
        (docs/platforms/<family>.md, "Spanning-tree state"); []: none known."""
        return []

    def parse_stp_state(self, replies: list[str], vlans: list[int]) -> StpTable:
        """The replies to `stp_state_commands(vlans)`, in order -> the state of each (port,
        VLAN) they show, ports and LAGs in the plan's names (LagPort for a LAG)."""
        raise NotImplementedError(f"{self.name}: no spanning-tree state reader")

    # -- audit -----------------------------------------------------------------------------
    address_table_command: str | None = None

    def parse_address_table(self, text: str) -> dict[tuple[int, str], PortRef]:
        """(VLAN, MAC aa:bb:cc:dd:ee:ff) -> bridge port, from `address_table_command`'s output."""
        raise NotImplementedError(f"{self.name}: audit is not supported")
