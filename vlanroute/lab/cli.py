"""The command interpreters of the emulated switches (no I/O: text in, text out):
`Interpreter` for a PowerConnect 62xx (FW 3.x), `Os6Interpreter` for a Dell OS6 switch.

Each behaviour a test relies on is taken from public evidence; the bracketed keys are the
sources on docs/platforms/powerconnect-62xx.md and dell-os6.md, and a behaviour marked
"(assumed)" is this emulator's own choice where no source shows the real switch:
- modes and prompts: `sw1>`, `sw1#`, `sw1(config)#`, `sw1(config-vlan)#`,
  `sw1(config-if-1/g1)#`, `sw1(config-if-ch1)#`; OS6 `sw1(config-if-Te1/0/1)#`,
  `sw1(config-if-Po1)#`, `sw1(config-vlan10)#` [FS], [FS10], [NCLI];
- reply texts of refused commands [FS], [NM], [FS10], and the `Warning: The use of large
  numbers of VLANs ...` reply, which is not an error [NM], [FS];
- the save dialog: a question without a line end, one key without Enter and not echoed,
  `Configuration Saved!` or `Configuration Not Saved!` [FS], [NM];
- the pager `--More-- or (q)uit` every 23 lines [FS], [8024F]; `terminal length 0` is
  refused by the 62xx [FS] and turns the pager off on OS6 [FS10], [OS6T];
- defaults print nothing: flow control on, aging 300 s, access mode in VLAN 1 [8024F], [FS];
- production lines it does not model (host name, users, IGMP snooping, routing interfaces,
  SNMP, port security ...) are accepted and printed back as given, in their place [A], [B],
  [C], [8024F], [NPD];
- `show version`, `show system`, `show interfaces status` in each CLI's layout;
- `show lldp remote-device all` / `detail PORT` in the OS6 layout [NPD], [OS6F] (62xx: assumed
  the same), the neighbours coming from a cabling file (vlanroute.lab.wiring);
- `show spanning-tree` in the OS6 layout [OS6STP] (62xx: assumed the same), the states the
  emulator's own (it runs no spanning tree; lab/state.py `spanning_tree`);
- context help: `?` is acted on at once, without Enter; the help is printed and the line
  is shown again without the `?` (as on other Cisco-like CLIs [NKI]; the Dell format of
  the listing is not in any source: assumed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
import re

from vlanroute.drivers.powerconnect.cli import (BLOCK_OPEN, IF_BLOCK_OPEN, CliSyntaxError,
                                                expand_port_range, parse_vlan_ids)
from vlanroute.lab.state import (GLOBALS, INTERFACES, VLANS, PortState, SwitchState, address_table,
                                 lldp_detail, lldp_summary, running_config, spanning_tree)

INVALID = "% Invalid input detected at '^' marker."       # with a caret line before it [FS]
VLAN_WARNING = ("Warning: The use of large numbers of VLANs or interfaces may cause significant\n"
                "delays in applying the configuration.\n")                     # [FS], [NM]
SAVE_QUESTION = ("\nThis operation may take a few minutes.\n"
                 "Management interfaces will not be available during this time.\n\n"
                 "Are you sure you want to save? (y/n) ")                      # [FS], [OS6C]
PAGER = "--More-- or (q)uit"                                                   # [FS], [8024F]
PAGE_LINES = 23                                                                # [FS] show_page

_BLOCK_OPEN = re.compile(BLOCK_OPEN + r"|interface (out-of-band|loopback \d+|tunnel \d+)")
_IF_BLOCK_OPEN = re.compile(IF_BLOCK_OPEN)

# Global lines of real running configs the emulator keeps without modelling them.
_KEPT_GLOBAL = re.compile(
    r"(hostname \S.*"                                   # [A], [C], [8024F]
    r"|username \S+ (password|nopassword)\b.*"          # [A], [C], [8024F]
    r"|enable password \S+( encrypted)?"                # [C]
    r"|ip igmp snooping( .*)?|ip multicast|ip igmp"     # [A]
    r"|ip routing|ip route \S.*"                        # [B], [8024F]
    r"|ip address \S.*|ip default-gateway \S+"          # [A], [8024F], [NPD]
    r"|ip ssh server|ip ssh pubkey-auth"                # [A], [C], [8024F]
    r"|ip domain-name \S.*|ip name-server \S.*"         # [8024F], [NPD]
    r"|iscsi \S.*"                                      # [8024F]
    r"|(no )?logging \S.*|no passwords min-length"      # [C], [NPD]
    r"|application install \S.*|eula-consent \S.*"      # [C]
    r"|(no )?snmp-server \S.*|sntp \S.*|clock \S.*"     # [C], [NPD]
    r"|slot \S.*|system jumbo mtu \d+|no ip http server"  # [C], [NPD]
    r"|aaa \S.*|management access-class \S+|feature \S+"  # [NPD]
    r"|spanning-tree mode \S+"                          # (assumed)
    r")")
# Interface lines kept without modelling them: descriptions, MTU, LLDP, edge ports [FS],
# [NPD]; storm control, port security and 802.1X in the forms the FASTPATH CLI family
# uses (no 62xx capture shows them: assumed); DHCP snooping [NPD]; vPC [NPD].
_KEPT_IF = re.compile(
    r"(description \S.*|mtu \d+|speed \S+|duplex \S+|(no )?negotiation"
    r"|(no )?spanning-tree portfast|(no )?lldp \S.*"
    r"|(no )?storm-control \S.*|(no )?(switchport )?port-security( .*)?"
    r"|(no )?dot1x \S.*|(no )?ip dhcp snooping( .*)?|vpc \d+|(no )?classofservice \S.*)")


class CommandRejected(Exception):
    """The switch answers with an error message; the command changed nothing."""


@dataclass
class Reply:
    output: str = ""
    close: bool = False          # the session ends (exit from user/privileged mode)


@dataclass
class Interpreter:
    """One session's CLI of an emulated PowerConnect 62xx (FW 3.x)."""

    hostname: str
    state: SwitchState
    description: str = "PowerConnect 6248, 3.3.7.3, VxWorks 6.5"   # as [A] prints it
    software: str = "3.3.7.3"
    model: str = "PowerConnect 6248"
    reject: re.Pattern[str] | None = None       # fault knob: reject matching commands
    reject_reply: str | None = None             # ... with this reply (default: invalid input)
    lacks: re.Pattern[str] | None = None        # fault knob: commands this firmware does not have
    on_save: list[str] = field(default_factory=list)   # startup-config texts saved
    ignore_paging_off: bool = False              # fault knob: `terminal length 0` has no effect
    paging: bool = True                          # long output stops at the pager
    mode: str = "user"                           # user | priv | config | vlan | vlanid | if | block | yesno | more
    targets: tuple[str, ...] = ()                # ports (1/g1) and LAGs (ch1) of the interface sub-mode
    more_lines: list[str] = field(default_factory=list)   # output held back by the pager
    more_return: str = "priv"
    if_label: str = ""
    block: list[str] = field(default_factory=list)   # the opaque block being read
    block_depth: int = 0
    block_return: str = "config"
    vlan_id: int = 0                             # OS6 `vlan N` sub-mode
    seeding: bool = False                        # loading a seed config (FakeSwitch.seed)
    stp_blocking: re.Pattern[str] | None = None  # fault knob: ports `show spanning-tree` prints blocked

    os6 = False

    # -- prompts ---------------------------------------------------------------------
    def prompt(self) -> str:
        h = self.hostname
        return {"user": f"{h}>", "priv": f"{h}#", "config": f"{h}(config)#",
                "vlan": f"{h}(config-vlan)#", "vlanid": f"{h}(config-vlan{self.vlan_id})#",
                "if": f"{h}({self.if_label})#",
                "block": f"{h}(config-{(self.block[0].split() or ['x'])[0] if self.block else 'x'})#",
                }.get(self.mode, "")   # yesno / more: the question itself is the prompt

    @property
    def awaiting_key(self) -> bool:
        return self.mode in ("yesno", "more")

    def running_config(self) -> str:
        return running_config(self.state, description=self.description, software=self.software,
                              os6=self.os6)

    # -- entry points ----------------------------------------------------------------
    def answer_key(self, key: str) -> Reply:
        """A single key: the answer to the save question, or the pager's next page / quit
        (the switch does not wait for Enter, and does not echo the key [FS])."""
        if self.mode == "more":
            self.mode = self.more_return
            if key.lower() == "q":
                self.more_lines = []
                return Reply("\n")
            return Reply("\n" + self._page("\n".join(self.more_lines)))
        self.mode = "priv"
        if key == "y":
            self.on_save.append(self.running_config())
            return Reply("\n\nConfiguration Saved!\n")
        return Reply("\n\nConfiguration Not Saved!\n")

    def execute(self, line: str) -> Reply:
        words = line.split()
        if not words:
            return Reply()
        try:
            if self.reject is not None and self.reject.search(line) and self.mode not in ("user", "block"):
                raise CommandRejected(self.reject_reply or INVALID)
            if self.lacks is not None and self.lacks.match(line.strip()) and self.mode not in ("user", "block"):
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
        if words[0] == "terminal":
            return self._terminal(words)
        if words[0] == "show" and len(words) >= 2:
            return self._show(words[1:])
        if words == ["copy", "running-config", "startup-config"]:
            self.mode = "yesno"
            return Reply(SAVE_QUESTION)
        raise CommandRejected(INVALID)

    def _terminal(self, words: list[str]) -> Reply:
        # The 62xx emulator has no `terminal` command [FS]; netman never sends one to a 62xx [NM].
        raise CommandRejected(INVALID)

    def _show(self, args: list[str]) -> Reply:
        if "running-config".startswith(args[0]) and len(args[0]) >= 3 and len(args) == 1:
            return Reply(self._page(self.running_config()))
        if args == ["startup-config"]:
            return Reply(self._page(self.on_save[-1]) if self.on_save else "No startup configuration.\n")
        if args == ["version"]:
            return Reply(self._page(self.show_version()))
        if args == ["system"]:
            return Reply(self._page(self.show_system()))
        if args[:2] == ["interfaces", "status"]:
            return Reply(self._page(self.interfaces_status()))
        if args == self.address_table_words():
            return Reply(self._page(address_table(self.state, os6=self.os6)))
        if args == ["lldp", "remote-device", "all"]:
            return Reply(self._page(lldp_summary(self.state)))
        if args == ["spanning-tree"]:
            return Reply(self._page(spanning_tree(self.state, os6=self.os6, blocking=self.stp_blocking)))
        if args[:3] == ["lldp", "remote-device", "detail"] and len(args) == 4:
            if args[3] not in self.state.ports:
                raise CommandRejected(INVALID)
            return Reply(self._page(lldp_detail(self.state, args[3])))
        raise CommandRejected(INVALID)

    def address_table_words(self) -> list[str]:
        return ["bridge", "address-table"]

    def show_version(self) -> str:
        """62xx FW 3.x: the image table only, no model [FS] (captured values)."""
        return ("\nImage Descriptions\n\n image1 : default image\n image2 :\n\n\n"
                " Images currently available on Flash\n\n"
                "--------------------------------------------------------------------\n"
                " unit      image1      image2     current-active        next-active\n"
                "--------------------------------------------------------------------\n\n"
                f"    1     {self.software:<7}     {self.software:<7}             image1             image1\n\n")

    def show_system(self) -> str:
        """`Machine Type:` / `System Model ID:` lines read by automation code built for the
        PowerConnect family [ASMF], [OXI]; the rest of the layout is assumed."""
        return (f"\nSystem Description: Dell Ethernet Switch\nSystem Name: {self.hostname}\n"
                f"Machine Type: {self.model}\nSystem Model ID: {self.model.split()[-1]}\n\n")

    def interfaces_status(self) -> str:
        """The 62xx layout of a real FW-3.x switch [8024F], as [FS] emulates it."""
        lines = ["", "Port   Type                            Duplex  Speed    Neg  Link  Flow Control",
                 "                                                             State Status",
                 "-----  ------------------------------  ------  -------  ---- ----- ------------"]
        up = self.state.links_up()          # a cable of the lab plugged in (vlanroute.lab.linkdown)
        for name in self.state.ports:
            kind = "10G - Level" if "xg" in name else "Gigabit - Level"
            link = "Up" if name in up else "Down"
            lines.append(f"{name:<6} {kind:<31} {'N/A':<7} {'Unknown':<8} {'Auto':<4} "
                         f"{link:<6} {'Active' if name in up else 'Inactive'}")
        lines += ["", "", "Oob  Type                            Link", "                                     State",
                  "---  ------------------------------  -----", "oob  Out-Of-Band                     Down",
                  "", "", "Ch   Type                            Link", "                                     State",
                  "---  ------------------------------  -----"]
        lags_up = self.state.lags_up()
        lines += [f"ch{n:<2} {'Link Aggregate':<31} {'Up' if n in lags_up else 'Down'}" for n in sorted(self.state.lags)]
        on = self.state.flowcontrol if self.state.flowcontrol is not None else self.state.flow_default
        lines += ["", f"Flow Control:{'Enabled' if on else 'Disabled'}", ""]
        return "\n".join(lines)

    def _mode_config(self, words: list[str], line: str) -> Reply:
        state = self.state
        if words == ["exit"] or words == ["end"]:
            self.mode = "priv"
        elif words[0] == "vlan":
            return self._vlan_global(words)
        elif words[0] == "interface":
            return self._enter_interface(words[1:], line)
        elif words == ["no", "spanning-tree"]:
            state.stp_enabled = False
            state.place(GLOBALS)
        elif words == ["spanning-tree"]:
            state.stp_enabled = True
        elif words[:len(self.aging_words())] == self.aging_words() and len(words) == len(self.aging_words()) + 1:
            state.aging = _int_in(words[-1], 10, 1_000_000)
            state.place(GLOBALS)
        elif words == ["no", *self.aging_words()]:
            state.aging = state.aging_default
        elif words == ["flowcontrol"]:
            state.flowcontrol = True
            state.place(GLOBALS)
        elif words == ["no", "flowcontrol"]:
            state.flowcontrol = False
            state.place(GLOBALS)
        elif _BLOCK_OPEN.fullmatch(" ".join(words)):
            self._open_block(line.rstrip(), "config")
        elif _KEPT_GLOBAL.fullmatch(" ".join(words)):
            state.keep([line.rstrip()])
        else:
            raise CommandRejected(INVALID)
        return Reply()

    def aging_words(self) -> list[str]:
        return ["bridge", "aging-time"]

    def _vlan_global(self, words: list[str]) -> Reply:
        if words == ["vlan", "database"]:
            self.mode = "vlan"
            self.state.place(VLANS)
            return Reply()
        raise CommandRejected(INVALID)

    def _open_block(self, header: str, back: str) -> None:
        self.block, self.block_depth, self.block_return, self.mode = [header], 1, back, "block"

    def _mode_block(self, words: list[str], line: str) -> Reply:
        """Inside a block the emulator does not model (`router bgp`, `line telnet`, a
        VLAN interface ...): every line is kept as given until the block's `exit`."""
        self.block.append(line.rstrip())
        if words == ["exit"]:
            self.block_depth -= 1
        elif _BLOCK_OPEN.fullmatch(" ".join(words)) or _IF_BLOCK_OPEN.fullmatch(" ".join(words)):
            self.block_depth += 1
        if self.block_depth == 0:
            if self.block_return == "if":
                for t in self.targets:
                    self._port(t).extra.extend(self.block)
            else:
                self.state.keep(self.block)
            self.mode, self.block = self.block_return, []
        return Reply()

    def _mode_vlan(self, words: list[str], line: str) -> Reply:
        if words in (["exit"], ["end"]):
            self.mode = "config" if words == ["exit"] else "priv"
            return Reply()
        negate = words[0] == "no"
        args = words[1:] if negate else words
        if len(args) >= 2 and args[0] == "vlan" and args[1] in ("name", "routing", "association",
                                                               "makestatic"):
            self.state.vlandb_extra.append(line.rstrip())      # `vlan routing 103 1` [B]
            return Reply()
        if len(args) != 2 or args[0] != "vlan":
            raise CommandRejected(INVALID)
        ids = _vlans(args[1], 2, 4093)
        if negate:
            missing = [v for v in ids if v not in self.state.vlans]
            if missing:
                return Reply(VLAN_WARNING + f"\n\nThese VLANs do not exist:  {','.join(map(str, missing))}.\n")
            for vid in ids:
                self.state.delete_vlan(vid)
            return Reply(VLAN_WARNING + "\nIf any of the VLANs being deleted are for access ports, "
                         "the ports will be\nunusable until it is assigned a VLAN that exists.\n")
        self.state.vlans.update(ids)
        return Reply(VLAN_WARNING + "\n")

    # -- interfaces ------------------------------------------------------------------
    def _port(self, target: str) -> PortState:
        lag = self._lag_id(target)
        return self.state.lags[lag] if lag is not None else self.state.ports[target]

    def _lag_id(self, target: str) -> int | None:
        m = re.fullmatch(r"(?:ch|Po)(\d+)", target)
        return int(m.group(1)) if m else None

    def _enter_interface(self, args: list[str], line: str) -> Reply:
        state = self.state
        if len(args) == 2 and args[0] == "vlan":
            vid = _int_in(args[1], 1, 4093)
            if vid not in state.vlans:
                return Reply("VLAN ID not found.\n")                  # [FS]
            self._open_block(line.rstrip(), "config")
            return Reply()
        if args in (["out-of-band"],) or (len(args) == 2 and args[0] in ("loopback", "tunnel")):
            self._open_block(line.rstrip(), "config")
            return Reply()
        try:
            targets = self.interface_targets(args)
        except CommandRejected:
            if not (self.seeding and self.foreign_port(args)):
                raise
            # A seed from a switch with ports the platform does not list (another stack
            # unit, a module the descriptor lacks): kept as given.
            self._open_block(line.rstrip(), "config")
            return Reply()
        state.place(INTERFACES)
        self.targets = targets
        self.if_label = self.if_prompt(targets)
        self.mode = "if"
        return Reply()

    def interface_targets(self, args: list[str]) -> tuple[str, ...]:
        state = self.state
        if len(args) == 2 and args[0] == "ethernet" and args[1] in state.ports:
            return (args[1],)
        if len(args) == 2 and args[0] == "port-channel" and args[1].isdigit() \
                and int(args[1]) in state.lags:
            return (f"ch{args[1]}",)
        if len(args) == 3 and args[:2] == ["range", "ethernet"]:
            try:
                ports = expand_port_range(args[2])
            except CliSyntaxError:
                raise CommandRejected(INVALID) from None
            if any(p not in state.ports for p in ports):
                raise CommandRejected(INVALID)
            return ports
        raise CommandRejected(INVALID)

    def if_prompt(self, targets: tuple[str, ...]) -> str:
        return f"config-if-{targets[0]}" if len(targets) == 1 else "config-if"

    def foreign_port(self, args: list[str]) -> bool:
        """A well-formed port name of this CLI (`ethernet 2/g5`, `ethernet 1/xg3`)."""
        return len(args) == 2 and args[0] == "ethernet" and bool(re.fullmatch(r"\d+/x?g\d+", args[1]))

    def _mode_if(self, words: list[str], line: str) -> Reply:
        if words == ["exit"]:
            self.mode, self.targets = "config", ()
            return Reply()
        if words == ["end"]:
            self.mode, self.targets = "priv", ()
            return Reply()
        ports = [self._port(t) for t in self.targets]
        is_lag = self._lag_id(self.targets[0]) is not None
        w = words
        out = ""
        if w[:2] == ["switchport", "mode"] and len(w) == 3 and w[2] in ("general", "access", "trunk"):
            for p in ports:
                if p.mode != w[2]:
                    # A mode change starts the port's VLAN settings afresh [FS].
                    p.mode, p.access_vlan, p.trunk_vlans = w[2], None, None
                    p.pvid, p.untagged, p.tagged, p.tagged_only = 1, {1}, set(), False
        elif w[:3] == ["switchport", "access", "vlan"] and len(w) == 4:
            vid = _int_in(w[3], 1, 4093)
            out = VLAN_WARNING
            if vid not in self.state.vlans:
                return Reply(out + "\nVLAN ID not found.\n")          # [FS]
            for p in ports:
                p.access_vlan = vid
        elif w == ["no", "switchport", "access", "vlan"]:
            for p in ports:
                p.access_vlan = None
            out = VLAN_WARNING
        elif w[:3] == ["switchport", "general", "pvid"] and len(w) == 4:
            vid = _int_in(w[3], 1, 4093)
            if not all(p.general for p in ports):
                return Reply("\nPort is not general port.\n")         # [FS]
            if vid not in self.state.vlans:
                return Reply("Could not configure pvid.\n")          # [FS], [NM], [FS10]
            for p in ports:
                p.pvid = vid
        elif w[:4] == ["switchport", "general", "allowed", "vlan"] and len(w) >= 6:
            return self._allowed(ports, w[4:], "general")
        elif w[:4] == ["switchport", "trunk", "allowed", "vlan"] and len(w) >= 5:
            return self._allowed(ports, w[4:], "trunk")
        elif w == ["switchport", "general", "acceptable-frame-type", "tagged-only"]:
            if not all(p.general for p in ports):
                return Reply("Interface not in General Mode.\n")
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
        elif w == ["shutdown"] or w == ["no", "shutdown"]:
            for p in ports:
                p.shutdown = w == ["shutdown"]
        elif w[0] == "channel-group" and len(w) == 4 and w[2] == "mode" \
                and w[3] in self.channel_modes() and not is_lag:
            lag = _int_in(w[1], 1, len(self.state.lags))
            for p in ports:
                p.channel_group, p.channel_mode = lag, w[3]
        elif w == ["no", "channel-group"] and not is_lag:
            for p in ports:
                p.channel_group = None
        elif w[0] == "hashing-mode" and len(w) == 2 and is_lag:
            mode = _int_in(w[1], 1, self.hash_max())
            for p in ports:
                p.hashing_mode = mode
        elif w == ["no", "hashing-mode"] and is_lag:
            for p in ports:
                p.hashing_mode = None
        elif self.os6 and w in (["green-mode", "eee"], ["no", "green-mode", "eee"]):
            for p in ports:
                p.eee = w[0] != "no"
        elif _IF_BLOCK_OPEN.fullmatch(" ".join(w)):
            self._open_block(line.rstrip(), "if")
        elif _KEPT_IF.fullmatch(" ".join(w)):
            for p in ports:
                p.extra.append(line.strip())
        else:
            raise CommandRejected(INVALID)
        return Reply(out)

    def channel_modes(self) -> tuple[str, ...]:
        return ("on", "auto")            # `mode auto` seen on a 62xx [LACP]; `on` assumed

    def hash_max(self) -> int:
        return 6                         # mode 7 (enhanced) came with FW 4.0 [7000]; 1-6 assumed

    def _allowed(self, ports: list[PortState], args: list[str], mode: str) -> Reply:
        """`switchport general|trunk allowed vlan add|remove LIST [tagged|untagged]` [FS]."""
        if not all(p.mode == mode for p in ports):
            return Reply(f"Interface not in {mode.capitalize()} Mode.\n")   # [FS]
        if mode == "trunk" and len(args) == 1 and args[0] not in ("add", "remove"):
            args = ["set", args[0]]     # OS6 prints and takes the whole list [NPD]
        action = args[0]
        if action not in ("add", "remove", "set") or len(args) < 2 or len(args) > (3 if mode == "general" else 2):
            raise CommandRejected(INVALID)
        try:
            ids = parse_vlan_ids(args[1])
        except CliSyntaxError:
            return Reply("VLAN range - separate non-consecutive IDs with ',' and no spaces.  "
                         "Use '-' for range.\n")                       # [FS]
        if not ids or ids[0] < 1 or ids[-1] > 4093:
            raise CommandRejected(INVALID)
        kind = args[2] if len(args) == 3 else "untagged"
        if kind not in ("untagged", "tagged"):
            raise CommandRejected(INVALID)
        missing = [v for v in ids if v not in self.state.vlans]
        if missing and action != "remove":
            return Reply(VLAN_WARNING + _failure(missing))            # [NM], [FS]
        for p in ports:
            if mode == "trunk":
                have = p.trunk_vlans or set()
                p.trunk_vlans = (set(ids) if action == "set" else
                                 have | set(ids) if action == "add" else have - set(ids))
                continue
            for v in ids:
                if action == "remove":
                    p.untagged.discard(v)
                    p.tagged.discard(v)
                else:
                    (p.tagged if kind == "tagged" else p.untagged).add(v)
                    (p.untagged if kind == "tagged" else p.tagged).discard(v)
        return Reply(VLAN_WARNING + "\n")

    # -- context help ----------------------------------------------------------------
    def help(self, typed: str) -> str:
        """The listing `?` prints after `typed` in the current mode (format assumed: one
        `keyword  description` line each, `<lo-hi>` for a number, `<cr>` for Enter)."""
        if self.lacks is not None and self.lacks.match(typed.strip()):
            return " " * len(self.prompt()) + "^\n" + INVALID + "\n"
        key = tuple("#" if re.fullmatch(r"[0-9][0-9,-]*", w) else w for w in typed.split())
        table = self.help_table()
        entries = table.get((self.mode if self.mode != "if" else
                             ("lag" if self._lag_id(self.targets[0]) is not None else "port"), key))
        if entries is None:
            return " " * len(self.prompt()) + "^\n" + INVALID + "\n"
        return "".join(f"  {word:<26} {text}\n" for word, text in entries)

    def help_table(self) -> dict[tuple[str, tuple[str, ...]], list[tuple[str, str]]]:
        return {
            ("lag", ("hashing-mode",)): [(f"<1-{self.hash_max()}>", "Enter the hashing mode.")],
            ("lag", ("spanning-tree",)): [("disable", "Disable spanning tree on the port."),
                                          ("portfast", "Enable portfast mode.")],
            ("port", ("spanning-tree",)): [("disable", "Disable spanning tree on the port."),
                                           ("portfast", "Enable portfast mode.")],
            ("port", ("channel-group", "#", "mode")): [(m, f"Channel group mode {m}.")
                                                       for m in self.channel_modes()],
            ("config", tuple(self.aging_words())): [("<10-1000000>", "Aging time in seconds.")],
            ("config", ("flowcontrol",)): [("<cr>", "Enable flow control.")],
        }

    # -- output ----------------------------------------------------------------------
    def _page(self, text: str) -> str:
        """Show PAGE_LINES lines, then the pager prompt and wait for a key, unless paging
        was turned off."""
        lines = text.split("\n")
        if not self.paging or len(lines) <= PAGE_LINES:
            self.more_lines = []
            return text
        self.more_lines, self.more_return, self.mode = lines[PAGE_LINES:], self.mode, "more"
        return "\n".join(lines[:PAGE_LINES]) + "\n" + PAGER


class Os6Interpreter(Interpreter):
    """One session's CLI of an emulated Dell OS6 switch (PowerConnect 8100 / N-series)."""

    os6 = True

    def __init__(self, hostname: str, state: SwitchState, **kw: object) -> None:
        kw.setdefault("description", "PowerConnect 8132, 6.3.3.10, Linux 3.7.10")   # (assumed model text)
        kw.setdefault("software", "6.3.3.10")
        kw.setdefault("model", "PowerConnect 8132")
        super().__init__(hostname, state, **kw)  # type: ignore[arg-type]

    def _terminal(self, words: list[str]) -> Reply:
        if words[1:] == ["length", "0"]:                   # [FS10], [OS6T], [NM10]
            self.paging = self.paging and self.ignore_paging_off
            return Reply()
        raise CommandRejected(INVALID)

    def address_table_words(self) -> list[str]:
        return ["mac", "address-table"]

    def aging_words(self) -> list[str]:
        return ["mac", "address-table", "aging-time"]

    def show_version(self) -> str:
        """Dotted fields, then the unit table with versions in the columns [NPD], [OS6F]."""
        model_id = self.model.split()[-1]
        return ("\nMachine Description............... Dell Networking Switch\n"
                f"System Model ID................... {model_id}\n"
                f"Machine Type...................... {self.model}\n"
                "Serial Number..................... CN0000000000000000000\n\n"
                "unit active      backup      current-active next-active\n"
                "---- ----------- ----------- -------------- --------------\n"
                f"1    {self.software:<11} {self.software:<11} {self.software:<14} {self.software}\n\n")

    def show_system(self) -> str:
        return (f"\nSystem Description: Dell Networking Switch\nSystem Name: {self.hostname}\n"
                f"System Model ID: {self.model.split()[-1]}\nMachine Type: {self.model}\n\n")

    def interfaces_status(self) -> str:
        """The OS6 layout [NPD], [OS6F]: mode A/T/G and `(PVID),members` per port."""
        lines = ["", "Port      Description     Duplex Speed   Neg  Link   Flow  M  VLAN",
                 "                                              State  Ctrl",
                 "--------- --------------- ------ ------- ---- ------ ----- -- -------------------"]
        up = self.state.links_up()
        for name, p in self.state.ports.items():
            m = {"access": "A", "trunk": "T", "general": "G"}[p.mode]
            vlan = str(p.access_vlan or 1) if p.mode == "access" else f"({p.pvid})"
            lines.append(f"{name:<9} {'':<15} {'Full':<6} {'10000':<7} {'Off':<4} {'Up' if name in up else 'Down':<6} "
                         f"{'Off':<5} {m}  {vlan}")
        lines += ["", "Oob  Type                            Link", "                                     State",
                  "---  ------------------------------  -----", "oob  Out-Of-Band                     Up",
                  "", "", "Port    Description                    Link    M  VLAN",
                  "Channel                                State", "------- ------------------------------ ------- -- -------------------"]
        lags_up = self.state.lags_up()
        lines += [f"Po{n:<5} {'Port-channel' + str(n):<30} {'Up' if n in lags_up else 'Down':<7} A  1"
                  for n in sorted(self.state.lags)]
        return "\n".join(lines) + "\n"

    def _vlan_global(self, words: list[str]) -> Reply:
        """`vlan N` creates VLAN N and enters its mode; `no vlan N` deletes it [OS6V], [FS10]."""
        negate = words[0] == "no"
        args = words[1:] if negate else words
        if len(args) != 2:
            raise CommandRejected(INVALID)
        try:
            ids = parse_vlan_ids(args[1])
        except CliSyntaxError:
            raise CommandRejected(INVALID) from None
        bad = [v for v in ids if not 1 <= v <= 4093]
        if bad:
            return Reply(f"VLAN {bad[0]}      ERROR: VLAN ID is out of range\n")      # [FS10]
        self.state.place(VLANS)
        if negate:
            for vid in ids:
                self.state.delete_vlan(vid)
            return Reply()
        self.state.vlans.update(ids)
        if len(ids) == 1:
            self.mode, self.vlan_id = "vlanid", ids[0]
        else:
            self.mode, self.vlan_id = "vlanid", 0
        return Reply()

    def _mode_vlanid(self, words: list[str], line: str) -> Reply:
        if words in (["exit"], ["end"]):
            self.mode = "config" if words == ["exit"] else "priv"
            return Reply()
        if words[0] == "name" and len(words) >= 2 and self.vlan_id:
            self.state.vlan_names[self.vlan_id] = [line.strip()]       # [NPD]
            return Reply()
        raise CommandRejected(INVALID)

    def interface_targets(self, args: list[str]) -> tuple[str, ...]:
        state = self.state
        if len(args) == 1 and args[0] in state.ports:
            return (args[0],)
        if len(args) == 2 and args[0] == "port-channel" and args[1].isdigit() \
                and int(args[1]) in state.lags:
            return (f"Po{args[1]}",)
        raise CommandRejected("An invalid interface has been used for this function")  # [FS10]

    def if_prompt(self, targets: tuple[str, ...]) -> str:
        return f"config-if-{targets[0]}"

    def foreign_port(self, args: list[str]) -> bool:
        return len(args) == 1 and bool(re.fullmatch(r"(Te|Gi|Fo|Tw)\d+/\d+/\d+", args[0]))

    def channel_modes(self) -> tuple[str, ...]:
        return ("on", "active", "passive")                 # [OS6A]

    def hash_max(self) -> int:
        return 7                                           # [OS6A], [N3200]

    def help_table(self) -> dict[tuple[str, tuple[str, ...]], list[tuple[str, str]]]:
        table = super().help_table()
        table.update({
            ("port", ("green-mode",)): [("eee", "Enable Energy Efficient Ethernet.")],
            ("lag", ("green-mode",)): [("eee", "Enable Energy Efficient Ethernet.")],
            ("port", ("switchport", "general", "allowed", "vlan", "add", "#")):
                [("tagged", "Tagged frames."), ("untagged", "Untagged frames."), ("<cr>", "")],
            ("lag", ("switchport", "general", "allowed", "vlan", "add", "#")):
                [("tagged", "Tagged frames."), ("untagged", "Untagged frames."), ("<cr>", "")],
            ("port", ("no", "switchport", "general", "acceptable-frame-type")):
                [("tagged-only", "Admit tagged frames only.")],
        })
        return table


def _failure(missing: list[int]) -> str:
    """The reply to adding VLANs that do not exist [NM], [FS]."""
    return ("\n          Failure Information\n---------------------------------------\n"
            f"   VLANs failed to be configured : {len(missing)}\n"
            "---------------------------------------\n   VLAN             Error\n"
            "---------------------------------------\n"
            + "".join(f"VLAN      {v: >4} ERROR: This VLAN does not exist.\n" for v in missing))


def _is_configure(words: list[str]) -> bool:
    return (len(words[0]) >= 4 and "configure".startswith(words[0])
            and words[1:] in ([], ["terminal"]))


def _int_in(text: str, lo: int, hi: int) -> int:
    if not text.isdigit():
        raise CommandRejected(INVALID)
    if not lo <= int(text) <= hi:
        raise CommandRejected(f"Value is out of range. The valid range is {lo} to {hi}.")   # [FS], [NM10]
    return int(text)


def _vlans(text: str, lo: int, hi: int) -> tuple[int, ...]:
    try:
        ids = parse_vlan_ids(text)
    except CliSyntaxError:
        raise CommandRejected("VLAN range - separate non-consecutive IDs with ',' and no "
                              "spaces.  Use '-' for range.") from None              # [FS]
    if not ids or ids[0] < lo or ids[-1] > hi:
        raise CommandRejected(f"Invalid input. Please specify an integer in the range {lo} to {hi}.")
    return ids


def _marker(prompt: str, message: str) -> str:
    """A caret line under the input before the message [FS]; we point at the start."""
    if message == INVALID or message.startswith(("Value is out of range", "Invalid input.")):
        return " " * len(prompt) + "^\n" + message + "\n"
    return message + "\n"
