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

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path

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
    push: bool = False                         # `vlanroute push` can apply and roll back configs
    audit: bool = False                        # `vlanroute audit` can read the learned-MAC table
    emulate: bool = False                      # `vlanroute emulate` can run its configs (Linux)


@dataclass(frozen=True)
class CliDialog:
    """How an SSH session talks to the family's CLI (vlanroute.device.session)."""

    netmiko_device_type: str
    save_command: str
    save_confirm: str | None                   # regex of the question the save command asks
    save_answer: str | None                    # the single key that answers it
    error_patterns: tuple[str, ...]            # regexes of replies that mean "command rejected"
    session_setup: tuple[str, ...] = ()        # sent once after login, replies not checked


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
    cli: CliDialog | None = None               # None: not managed over SSH
    template_dir: Path | None = None           # None: the package's templates/

    @property
    def template(self) -> str:
        """The Jinja2 template that renders one switch's config (templates/README.md)."""
        return f"switch/{self.name}.j2"

    # -- reading configs -------------------------------------------------------------------
    def parse(self, text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
        """Config text (rendered, or `show running-config`) -> the vendor-neutral model;
        a line that is not understood is a UserError naming the file and line."""
        raise NotImplementedError

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

    def classify_push_lines(self, lines: list[str]) -> list[PushLine]:
        """What each line does (one entry per line); UnsupportedLine for an unknown
        interface form, so that push never guesses which ports a line touches."""
        raise NotImplementedError(f"{self.name}: push is not supported")

    def interface_command(self, port: PortRef) -> str:
        """The command that enters the sub-mode of one port or LAG."""
        raise NotImplementedError(f"{self.name}: push is not supported")

    # -- audit -----------------------------------------------------------------------------
    address_table_command: str | None = None

    def parse_address_table(self, text: str) -> dict[tuple[int, str], PortRef]:
        """(VLAN, MAC aa:bb:cc:dd:ee:ff) -> bridge port, from `address_table_command`'s output."""
        raise NotImplementedError(f"{self.name}: audit is not supported")
