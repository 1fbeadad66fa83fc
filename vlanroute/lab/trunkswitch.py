"""What the emulated access/trunk switches (Arista EOS: eos.py, Dell OS10: os10.py) share: the
state they keep, the fault knobs and mode dispatch of a session, the commands both CLIs
take alike, and the loading of a running config. Each family module states only what
differs: prompts, command words, limits and reply texts, with the sources for them.

This mirrors vlanroute.drivers.trunk.family (the two families' drivers) but imports nothing
from it: the emulator must not share code with the parsers it tests.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, field
from typing import Any, ClassVar

from vlanroute.lab.cli import CommandRejected as Rejected
from vlanroute.lab.cli import Reply
from vlanroute.lab.state import LldpEntry, MacEntry
from vlanroute.vlanlist import parse_vlan_list
from vlanroute.safeio.reading import shown_line

__all__ = ["CliSpec", "Rejected", "Reply", "TrunkInterpreter", "TrunkPort", "TrunkState",
           "TrunkSwitchData", "load_lines"]


# The interface commands both families take alike: the port setting each one makes.
_SHARED_IF: dict[str, tuple[str, object]] = {
    "no switchport": ("mode", "routed"), "no channel-group": ("channel_group", None),
    "shutdown": ("shutdown", True), "no shutdown": ("shutdown", False)}


@dataclass
class TrunkPort:
    """The settings of a port or port-channel both families keep alike."""
    mode: str = "access"                    # access | trunk | routed
    channel_group: int | None = None
    channel_mode: str = "on"
    shutdown: bool = False
    extra: list[str] = field(default_factory=list)   # interface lines kept as given


@dataclass
class TrunkState:
    """A running (or candidate, or session) config; a family adds its own global settings."""
    port_type: ClassVar[type] = TrunkPort

    ports: dict[str, Any]
    lags: dict[int, Any] = field(default_factory=dict)
    vlans: dict[int, list[str]] = field(default_factory=lambda: {1: []})   # VLAN -> its sub-lines
    aging: int | None = None                # None: the default, printed nowhere
    lag_hash: list[str] = field(default_factory=list)
    head: list[list[str]] = field(default_factory=list)    # kept global lines and blocks
    tail: list[list[str]] = field(default_factory=list)    # kept interface blocks (Vlan, Loopback ...)
    mac_table: list[MacEntry] = field(default_factory=list)

    @classmethod
    def factory_default(cls, ports: tuple[str, ...]) -> Any:
        return cls(ports={p: cls.port_type() for p in ports})

    def clone(self) -> Any:
        return copy.deepcopy(self)


@dataclass
class TrunkSwitchData:
    """What every session of one emulated switch shares; a family adds its pending configs."""
    state: Any
    saved: list[str]
    lldp: list[LldpEntry] = field(default_factory=list)   # the neighbours the cables show


@dataclass(frozen=True)
class CliSpec:
    """The words and limits of a family's CLI the shared code needs."""
    invalid: str                            # the reply to a command the switch does not know
    indent: str                             # the indent of the lines of a printed block
    lag_arg: str                            # `interface X` opening a port-channel: X, its id group 1
    lag_max: int
    port_arg: str                           # `interface X` opening a port: X, its number group 1
    port_prefix: str                        # the port's name is this and the number
    aging_min: int                          # the least `mac address-table aging-time`
    block: re.Pattern[str]                  # global lines opening a block kept whole
    kept_global: re.Pattern[str]            # global lines kept as given


@dataclass
class TrunkInterpreter:
    """One SSH session's CLI; `switch` is shared by all sessions of the switch.

    A family sets `spec` and writes `state`, `prompt`, `running_config`, `_anywhere` (the
    words every configuration mode takes), `_priv`, `_config`, `_mode_vlan`, `_if_family`
    and `_new_lag`."""

    spec: ClassVar[CliSpec]

    hostname: str
    switch: Any
    model: str = ""
    reject: re.Pattern[str] | None = None
    reject_reply: str | None = None
    lacks: re.Pattern[str] | None = None
    mode: str = "priv"                      # priv | config | if | vlan | block (| heredoc: EOS)
    ignore: re.Pattern[str] | None = None   # fault knob: commands accepted without effect
    stp_blocking: re.Pattern[str] | None = None   # fault knob: ports the spanning-tree state shows blocked
    targets: list[str] = field(default_factory=list)   # the open ports: a port's name or "Po1"
    block: list[str] | None = None
    seeding: bool = False
    paging: bool = False
    awaiting_key = False

    def answer_key(self, key: str) -> Reply:
        return Reply()

    def help(self, typed: str) -> str:
        return self.spec.invalid + "\n"

    def execute(self, line: str) -> Reply:
        words = line.split()
        if not words:
            return Reply()
        try:
            if self.reject is not None and self.reject.search(line) and self.mode != "priv":
                raise Rejected(self.reject_reply or self.spec.invalid)
            if self.lacks is not None and self.lacks.match(line.strip()):
                raise Rejected(self.spec.invalid)
            if self.ignore is not None and self.ignore.fullmatch(line.strip()) and self.mode != "priv":
                return Reply()
            return getattr(self, f"_mode_{self.mode}")(words, line)
        except Rejected as exc:
            return Reply(str(exc) + "\n")

    # -- the hooks a family writes ----------------------------------------------------------
    def _anywhere(self, words: list[str]) -> Reply | None:
        raise NotImplementedError

    def _priv(self, words: list[str]) -> Reply:
        raise NotImplementedError

    def _config(self, words: list[str], text: str, line: str) -> Reply | None:
        raise NotImplementedError

    def _if_family(self, target: str, p: Any, text: str) -> None:
        raise NotImplementedError

    def _new_lag(self) -> Any:
        raise NotImplementedError

    # -- privileged EXEC ----------------------------------------------------------------------
    def _mode_priv(self, words: list[str], line: str) -> Reply:
        if words[0] in ("exit", "quit", "logout"):
            return Reply(close=True)
        if words in (["enable"], ["end"]):
            return Reply()
        if words in (["configure"], ["configure", "terminal"]):
            self.mode = "config"
            return Reply()
        return self._priv(words)

    # -- configuration modes ------------------------------------------------------------------
    def _mode_config(self, words: list[str], line: str) -> Reply:
        if (reply := self._anywhere(words)) is not None:
            return reply
        st = self.state
        text = " ".join(words)
        if (reply := self._config(words, text, line)) is not None:
            return reply
        if words[0] == "interface" and len(words) >= 2:
            return self._interface(" ".join(words[1:]))
        if m := re.fullmatch(f"no interface {self.spec.lag_arg}", text):
            lag_id = int(m.group(1))
            st.lags.pop(lag_id, None)
            for p in st.ports.values():
                if p.channel_group == lag_id:
                    p.channel_group = None
            return Reply()
        if words[:3] == ["mac", "address-table", "aging-time"] and len(words) == 4:
            st.aging = self._int(words[3], self.spec.aging_min, 1_000_000)
            return Reply()
        if self.spec.block.fullmatch(text):
            self.block, self.mode = [text], "block"
            (st.tail if text.startswith("interface") else st.head).append(self.block)
            return Reply()
        if self.spec.kept_global.fullmatch(text):
            st.head.append([text])
            return Reply()
        raise Rejected(self.spec.invalid)

    def _mode_block(self, words: list[str], line: str) -> Reply:
        if (reply := self._anywhere(words)) is not None:
            return reply
        if words == ["exit"] or (self.seeding and line[:1] not in (" ", "\t")):
            self.mode, self.block = "config", None
            return Reply() if words == ["exit"] else self._mode_config(words, line)
        assert self.block is not None
        self.block.append(line.rstrip() if line[:1] == " " else self.spec.indent + line.strip())
        return Reply()

    def _interface(self, arg: str) -> Reply:
        st = self.state
        if m := re.fullmatch(self.spec.lag_arg, arg):
            lag_id = self._int(m.group(1), 1, self.spec.lag_max)
            st.lags.setdefault(lag_id, self._new_lag())
            self.targets, self.mode = [f"Po{lag_id}"], "if"
            return Reply()
        if (m := re.fullmatch(self.spec.port_arg, arg)) and f"{self.spec.port_prefix}{m.group(1)}" in st.ports:
            self.targets, self.mode = [f"{self.spec.port_prefix}{m.group(1)}"], "if"
            return Reply()
        if self.spec.block.fullmatch(f"interface {arg}"):
            self.block, self.mode = [f"interface {arg}"], "block"
            st.tail.append(self.block)
            return Reply()
        raise Rejected(self._bad_interface(arg))

    def _bad_interface(self, arg: str) -> str:
        return self.spec.invalid

    def _port(self, target: str) -> Any:
        return self.state.lags[int(target[2:])] if target.startswith("Po") else self.state.ports[target]

    def _leaves_if(self, words: list[str], text: str, line: str) -> bool:
        """Whether a line in interface mode is the parent mode's (it leaves the interface)."""
        return words[0] == "interface" or (self.seeding and line[:1] not in (" ", "\t"))

    def _mode_if(self, words: list[str], line: str) -> Reply:
        if (reply := self._anywhere(words)) is not None:
            return reply
        if words == ["exit"]:
            self.mode, self.targets = "config", []
            return Reply()
        text = " ".join(words)
        if self._leaves_if(words, text, line):
            self.mode, self.targets = "config", []
            return self._mode_config(words, line)
        for target in self.targets:
            self._if_command(target, self._port(target), text)
        return Reply()

    def _if_command(self, target: str, p: Any, text: str) -> None:
        """The interface commands both families take alike, then the family's own."""
        if text in _SHARED_IF:
            setattr(p, *_SHARED_IF[text])
        elif text == "switchport":
            if p.mode == "routed":
                p.mode = "access"
        else:
            self._if_family(target, p, text)

    # -- arguments ------------------------------------------------------------------------------
    def _int(self, text: str, lo: int, hi: int) -> int:
        if not text.isdigit() or not lo <= int(text) <= hi:
            raise Rejected(self.spec.invalid)
        return int(text)

    def _vlans(self, text: str) -> list[int]:
        try:
            ids = parse_vlan_list(text)
        except ValueError:
            raise Rejected(self.spec.invalid) from None
        return sorted(ids)

    @property
    def state(self) -> Any:
        raise NotImplementedError


def bridge_ports(state: TrunkState, lldp: list[LldpEntry], lag_name: str) -> list[tuple[str, Any, bool]]:
    """The bridge ports of a config as the spanning-tree tables name them, each with its
    link: every port that is not a LAG member (up when a cable of the lab is plugged in, its
    LLDP neighbour heard), then every LAG (`lag_name` formats its id; up when a member is)."""
    up = {e.port for e in lldp}
    out: list[tuple[str, Any, bool]] = [(n, p, n in up) for n, p in state.ports.items() if p.channel_group is None]
    for lag_id, lag in sorted(state.lags.items()):
        members = [n for n, p in state.ports.items() if p.channel_group == lag_id]
        out.append((lag_name.format(lag_id), lag, any(n in up for n in members)))
    return out


def load_lines(cli: TrunkInterpreter, text: str, *, source: str, switch_name: str,
               skip: tuple[str, ...] = ()) -> None:
    """Execute a running config's lines in configuration mode, as the switch loads it
    (`!` lines are comments and close an open block; lines in `skip` are passed over).
    ValueError names the first refused line."""
    cli.mode = "config"
    for lineno, raw in enumerate(text.splitlines(), start=1):
        stripped = raw.strip()
        if cli.mode == "heredoc":            # EOS: a banner's text, up to `EOF`
            cli.execute(raw)
            continue
        if not stripped or stripped.startswith("!") or stripped in skip:
            if raw[:1] == "!" and cli.mode in ("if", "vlan", "block"):
                cli.mode, cli.targets, cli.block = "config", [], None
            continue
        reply = cli.execute(raw)
        if reply.output.startswith("%"):
            raise ValueError(f"{source}: line {lineno}: the emulated {switch_name} switch refuses "
                             f"{shown_line(stripped)}: {reply.output.strip()}")
        if cli.mode == "priv":
            cli.mode = "config"
