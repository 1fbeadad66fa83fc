"""The PowerConnect 62xx command interpreter of the fake switch (no I/O: text in, text out).

Modes and prompts as on the real switch: `sw1>` (user), `sw1#` (privileged),
`sw1(config)#`, `sw1(config-vlan)#` (vlan database), `sw1(config-if-1/g1)#`,
`sw1(config-if-ch1)#`, `sw1(config-if)#` (interface range). Commands it does not know
get the switch's own error reply, so a client's error detection is tested for real.
"""

from __future__ import annotations

from dataclasses import dataclass, field
import re

from vlanroute.drivers.powerconnect.cli import CliSyntaxError, expand_port_range, parse_vlan_ids
from vlanroute.lab.state import SwitchState

INVALID = "% Invalid input detected at '^' marker."
INCOMPLETE = "% Incomplete command"
SAVE_QUESTION = ("This operation may take a few minutes.\n"
                 "Management interfaces will not be available during this time.\n\n"
                 "Are you sure you want to save? (y/n) ")


class CommandRejected(Exception):
    """The switch answers with an error message; the command changed nothing."""


@dataclass
class Reply:
    output: str = ""
    close: bool = False          # the session ends (exit from user/privileged mode)


@dataclass
class Interpreter:
    hostname: str
    state: SwitchState
    description: str = "PowerConnect 6248, 3.3.7.3, VxWorks 6.5"
    reject: re.Pattern[str] | None = None       # fault knob: reject matching commands
    on_save: "list[str]" = field(default_factory=list)   # startup-config texts saved
    ignore_paging_off: bool = False              # fault knob: `terminal ...` has no effect
    paging: bool = True                          # long output stops at --More--
    mode: str = "user"                           # user | priv | config | vlan | if | yesno | more
    targets: tuple[str, ...] = ()                # ports/LAGs of the interface sub-mode
    more_lines: list[str] = field(default_factory=list)   # output held back by the pager
    more_return: str = "priv"
    if_label: str = ""

    # -- prompts ---------------------------------------------------------------------
    def prompt(self) -> str:
        if self.mode == "user":
            return f"{self.hostname}>"
        if self.mode == "priv":
            return f"{self.hostname}#"
        if self.mode == "config":
            return f"{self.hostname}(config)#"
        if self.mode == "vlan":
            return f"{self.hostname}(config-vlan)#"
        if self.mode == "if":
            return f"{self.hostname}({self.if_label})#"
        return ""   # yesno / more: the question itself is the prompt

    @property
    def awaiting_key(self) -> bool:
        return self.mode in ("yesno", "more")

    # -- entry points ----------------------------------------------------------------
    def answer_key(self, key: str) -> Reply:
        """A single key: the answer to the save question, or the pager's next page / quit
        (the switch does not wait for Enter)."""
        if self.mode == "more":
            self.mode = self.more_return
            if key.lower() == "q":
                self.more_lines = []
                return Reply("\n")
            return Reply("\n" + self._page("\n".join(self.more_lines)))
        self.mode = "priv"
        if key.lower() == "y":
            self.on_save.append(self.state.running_config(self.description))
            return Reply("\nConfiguration Saved!\n")
        return Reply("\nConfiguration Not Saved!\n")

    def execute(self, line: str) -> Reply:
        words = line.split()
        if not words:
            return Reply()
        try:
            if self.reject is not None and self.reject.search(line) and self.mode != "user":
                raise CommandRejected(INVALID)
            handler = getattr(self, f"_mode_{self.mode}")
            return handler(words, line)
        except CommandRejected as exc:
            return Reply(_marker(self.prompt(), str(exc)))

    # -- modes -----------------------------------------------------------------------
    def _mode_user(self, words: list[str], line: str) -> Reply:
        if words == ["enable"]:
            self.mode = "priv"
            return Reply()
        if words[0] in ("exit", "quit", "logout"):
            return Reply(close=True)
        raise CommandRejected(INVALID)

    def _mode_priv(self, words: list[str], line: str) -> Reply:
        if words[0] in ("exit", "quit", "logout"):
            return Reply(close=True)
        if words[0] == "disable":
            self.mode = "user"
            return Reply()
        if _is_configure(words):
            self.mode = "config"
            return Reply()
        if words == ["enable"] or words[:1] == ["end"]:
            return Reply()
        if words[0] == "terminal" and words[1:] in (["length", "0"], ["datadump"]):
            self.paging = self.paging and self.ignore_paging_off
            return Reply()
        if words[0] == "show" and len(words) >= 2:
            if "running-config".startswith(words[1]) and len(words[1]) >= 3:
                return Reply(self._page(self.state.running_config(self.description)))
            if words[1:] == ["startup-config"]:
                return Reply(self.on_save[-1] if self.on_save else "No startup configuration.\n")
            if words[1:3] == ["bridge", "address-table"]:
                from vlanroute.lab.state import address_table
                return Reply(address_table(self.state))
        if words == ["copy", "running-config", "startup-config"]:
            self.mode = "yesno"
            return Reply(SAVE_QUESTION)
        raise CommandRejected(INVALID)

    def _mode_config(self, words: list[str], line: str) -> Reply:
        st = self.state
        if words == ["exit"] or words == ["end"]:
            self.mode = "priv"
        elif words == ["vlan", "database"]:
            self.mode = "vlan"
        elif words[0] == "interface":
            self._enter_interface(words[1:])
        elif words == ["no", "spanning-tree"]:
            st.stp_enabled = False
        elif words == ["spanning-tree"]:
            st.stp_enabled = True
        elif words[:2] == ["bridge", "aging-time"] and len(words) == 3:
            st.aging = _int_in(words[2], 10, 1_000_000)
        elif words == ["no", "bridge", "aging-time"]:
            st.aging = 300
        elif words == ["flowcontrol"]:
            st.flowcontrol = True
        elif words == ["no", "flowcontrol"]:
            st.flowcontrol = False
        else:
            raise CommandRejected(INVALID)
        return Reply()

    def _mode_vlan(self, words: list[str], line: str) -> Reply:
        if words in (["exit"], ["end"]):
            self.mode = "config" if words == ["exit"] else "priv"
            return Reply()
        negate = words[0] == "no"
        args = words[1:] if negate else words
        if len(args) != 2 or args[0] != "vlan":
            raise CommandRejected(INVALID)
        ids = _vlans(args[1], 2, 4093)
        if negate:
            for vid in ids:
                self.state.delete_vlan(vid)
            return Reply()
        self.state.vlans.update(ids)
        return Reply("Warning: The use of large numbers of VLANs or interfaces may cause "
                     "significant delays in applying the configuration.\n")

    def _enter_interface(self, args: list[str]) -> None:
        st = self.state
        if len(args) == 2 and args[0] == "ethernet" and args[1] in st.ports:
            self.targets, self.if_label = (args[1],), f"config-if-{args[1]}"
        elif len(args) == 2 and args[0] == "port-channel" and args[1].isdigit() \
                and int(args[1]) in st.lags:
            self.targets, self.if_label = (f"ch{args[1]}",), f"config-if-ch{args[1]}"
        elif len(args) == 3 and args[:2] == ["range", "ethernet"]:
            try:
                ports = expand_port_range(args[2])
            except CliSyntaxError:
                raise CommandRejected(INVALID) from None
            if any(p not in st.ports for p in ports):
                raise CommandRejected(INVALID)
            self.targets, self.if_label = ports, "config-if"
        else:
            raise CommandRejected(INVALID)
        self.mode = "if"

    def _mode_if(self, words: list[str], line: str) -> Reply:
        if words == ["exit"]:
            self.mode, self.targets = "config", ()
            return Reply()
        if words == ["end"]:
            self.mode, self.targets = "priv", ()
            return Reply()
        ports = [self.state.lags[int(t[2:])] if t.startswith("ch") else self.state.ports[t]
                 for t in self.targets]
        is_lag = self.targets[0].startswith("ch")
        w = words
        if w[:2] == ["switchport", "mode"] and len(w) == 3 and w[2] in ("general", "access"):
            for p in ports:
                if w[2] == "access" and p.general:
                    # Leaving general mode: the port forwards in its access VLAN (1) only.
                    p.pvid, p.untagged, p.tagged, p.tagged_only = 1, {1}, set(), False
                p.general = w[2] == "general"
        elif w[:3] == ["switchport", "general", "pvid"] and len(w) == 4:
            vid = _int_in(w[3], 1, 4093)
            self._need_general(ports)
            if vid not in self.state.vlans:
                raise CommandRejected("VLAN ID not found.")
            for p in ports:
                p.pvid = vid
        elif w[:4] == ["switchport", "general", "allowed", "vlan"] and len(w) >= 6:
            self._allowed(ports, w[4:])
        elif w == ["switchport", "general", "acceptable-frame-type", "tagged-only"]:
            self._need_general(ports)
            for p in ports:
                p.tagged_only = True
        elif w == ["no", "switchport", "general", "acceptable-frame-type", "tagged-only"]:
            for p in ports:
                p.tagged_only = False
        elif w == ["spanning-tree", "disable"]:
            for p in ports:
                p.stp_disabled = True
        elif w == ["no", "spanning-tree", "disable"]:
            for p in ports:
                p.stp_disabled = False
        elif w[0] == "channel-group" and len(w) == 4 and w[2] == "mode" \
                and w[3] in ("on", "auto") and not is_lag:
            lag = _int_in(w[1], 1, 48)
            if lag not in self.state.lags:
                raise CommandRejected(INVALID)
            for p in ports:
                p.channel_group = lag
        elif w == ["no", "channel-group"] and not is_lag:
            for p in ports:
                p.channel_group = None
        elif w[0] == "hashing-mode" and len(w) == 2 and is_lag:
            mode = _int_in(w[1], 1, 7)
            for p in ports:
                p.hashing_mode = mode
        elif w == ["no", "hashing-mode"] and is_lag:
            for p in ports:
                p.hashing_mode = None
        else:
            raise CommandRejected(INVALID)
        return Reply()

    def _page(self, text: str) -> str:
        """Show 24 lines, then `--More-- or (q)uit` and wait for a key, as the 62xx does
        unless paging was turned off."""
        lines = text.split("\n")
        if not self.paging or len(lines) <= 24:
            self.more_lines = []
            return text
        self.more_lines, self.more_return, self.mode = lines[24:], self.mode, "more"
        return "\n".join(lines[:24]) + "\n--More-- or (q)uit"

    def _need_general(self, ports: list) -> None:
        if not all(p.general for p in ports):
            raise CommandRejected("Port is not general port.")

    def _allowed(self, ports: list, args: list[str]) -> None:
        action, ids = args[0], _vlans(args[1], 1, 4093)
        self._need_general(ports)
        if action == "add" and len(args) in (2, 3):
            kind = args[2] if len(args) == 3 else "untagged"
            if kind not in ("untagged", "tagged"):
                raise CommandRejected(INVALID)
            if any(v not in self.state.vlans for v in ids):
                raise CommandRejected("VLAN ID not found.")
            for p in ports:
                for v in ids:
                    (p.tagged if kind == "tagged" else p.untagged).add(v)
                    (p.untagged if kind == "tagged" else p.tagged).discard(v)
        elif action == "remove" and len(args) == 2:
            for p in ports:
                p.untagged.difference_update(ids)
                p.tagged.difference_update(ids)
        else:
            raise CommandRejected(INVALID)


def _is_configure(words: list[str]) -> bool:
    return (len(words[0]) >= 4 and "configure".startswith(words[0])
            and words[1:] in ([], ["terminal"]))


def _int_in(text: str, lo: int, hi: int) -> int:
    if not text.isdigit() or not lo <= int(text) <= hi:
        raise CommandRejected(INVALID)
    return int(text)


def _vlans(text: str, lo: int, hi: int) -> tuple[int, ...]:
    try:
        ids = parse_vlan_ids(text)
    except CliSyntaxError:
        raise CommandRejected(INVALID) from None
    if not ids or ids[0] < lo or ids[-1] > hi:
        raise CommandRejected(INVALID)
    return ids


def _marker(prompt: str, message: str) -> str:
    """The real switch points a caret under the offending word; we point at the start."""
    if message == INVALID:
        return " " * len(prompt) + "^\n" + message + "\n"
    return message + "\n"
