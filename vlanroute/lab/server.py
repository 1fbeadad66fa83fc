"""SSH servers on 127.0.0.x that behave like Dell PowerConnect 62xx and OS6, Arista EOS and
Dell OS10 switches (tests, benchmarks and `vlanroute lab up`).

One background thread runs an asyncio loop with any number of asyncssh servers. Each
switch does ordinary SSH password (or public key) authentication, as the 62xx does,
which is why the client uses netmiko's `dell_os6` type. The shell echoes what it is sent,
answers the `(y/n)` save question with a single key it does not echo [FS], acts on `?` at
once and erases a character on backspace (vlanroute.lab.cli). A switch's ports come from
its Platform descriptor, and it may start from a given running config (`seed`).

Fault knobs (FakeSwitch.faults): refuse authentication, drop the connection right after
the Nth configuration command (one-shot, so a reconnect for rollback works), reject the
commands matching a regex with the switch's own error reply or a given one.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field, replace
import ipaddress
from pathlib import Path
import re
import threading
import time
from typing import TYPE_CHECKING, Any
from collections.abc import Callable, Iterable, Mapping

import asyncssh

from vlanroute.lab.cli import Interpreter, Os6Interpreter
from vlanroute.lab import eos, os10
from vlanroute.lab.state import MacEntry, SwitchState
from vlanroute.model.platforms import POWERCONNECT_6248, Platform
from vlanroute.safeio.reading import shown_line
from vlanroute.safeio.private import write_private

if TYPE_CHECKING:
    from vlanroute.bundle.reader import Cable

# The ports of the platform descriptor (GbE and 10G module ports); a stack passes its own.
PC6248_PORTS = POWERCONNECT_6248.ports
CONFIG_MODES = ("config", "vlan", "vlanid", "if", "block")
# The families the lab emulates: family name -> interpreter class.
EMULATED: dict[str, Any] = {"powerconnect-62xx": Interpreter, "dell-os6": Os6Interpreter,
                            "arista-eos": eos.EosInterpreter, "dell-os10": os10.Os10Interpreter}


class SeedError(ValueError):
    """A line of a seed running config that the emulated switch refuses."""


@dataclass
class Faults:
    refuse_auth: bool = False
    drop_after: int | None = None    # abort after this many config-mode commands (one-shot)
    reject: str | None = None        # regex: matching commands are refused ...
    reject_reply: str | None = None  # ... with this reply (default: "% Invalid input ...")
    pager_stuck: bool = False        # OS6: `terminal length 0` does not stop paging
    lacks: str | None = None         # regex: commands this firmware does not have (refused, no help)
    save_lost: bool = False          # the save is written, then the connection drops (one-shot)
    delay_s: float = 0.0             # a slow switch: seconds before each configuration reply
                                     # (blocks the whole farm's event loop: for tests only)
    ignore: str | None = None        # EOS, OS10: regex of commands accepted without effect
    unprinted: str | None = None     # EOS: regex of lines in effect but printed only by `show running-config all`
    # regex of port names (as the switch prints them: `1/g47`, `ch1`, `Te1/0/5`, `Po1`,
    # `Ethernet1`, `Port-Channel1`, `ethernet1/1/1`, `port-channel1`) that the spanning-tree
    # table shows blocked in every VLAN, whatever the config says
    stp_blocking: str | None = None


def _model(platform: Platform) -> str:
    """The model name the switch prints, from the platform's description: "PowerConnect 6248"."""
    words = platform.description.split(" (")[0].split()
    return " ".join(w for w in words if w != "Dell") or platform.name


@dataclass
class FakeSwitch:
    name: str
    host: str
    username: str
    password: str | None
    authorized_keys: list[str] = field(default_factory=list)    # OpenSSH public key lines
    faults: Faults = field(default_factory=Faults)
    platform: Platform = POWERCONNECT_6248
    state: SwitchState = field(init=False)
    port: int = 0                                   # set when the server listens
    host_key_line: str = ""                         # "ssh-ed25519 AAAA..."
    saved: list[str] = field(default_factory=list)  # startup-config texts, oldest first
    received: list[str] = field(default_factory=list)  # every command line and key, all sessions
    keys: list[str] = field(default_factory=list)      # the save's answer keys, typed without Enter
    logins: int = 0
    config_commands: int = 0        # accepted configuration commands (not mode changes)
    # Called after every line the switch executes, in the farm's event loop (so no other
    # switch changes meanwhile): tests watch the whole fabric's state line by line with it.
    watch: Callable[[FakeSwitch, str], None] | None = None
    # Called before the address table is shown: the farm's host learning (learn_hosts), if on.
    learn: Any = None
    seeded: list[MacEntry] = field(default_factory=list)    # seed_mac's entries

    def __post_init__(self) -> None:
        if self.platform.family not in EMULATED:
            raise ValueError(f"no emulated switch for the {self.platform.family} family "
                             f"(only {', '.join(sorted(EMULATED))})")
        self.state = self.factory_state()
        # Arista EOS and Dell OS10: their own models, shared by all sessions (running config,
        # pending configure sessions or the transaction's candidate, checkpoints, lock).
        self.eos: Any = None
        # Their LLDP table is the list vlanroute.lab.wiring fills in place (self.state.lldp).
        if self.platform.family == "arista-eos":
            self.eos = eos.EosSwitchData(eos.EosState.factory_default(self.platform.ports), self.saved,
                                         lldp=self.state.lldp)
        elif self.platform.family == "dell-os10":
            self.eos = os10.Os10SwitchData(os10.Os10State.factory_default(self.platform.ports), self.saved,
                                           lldp=self.state.lldp)

    @property
    def os6(self) -> bool:
        return self.platform.family == "dell-os6"

    def factory_state(self) -> SwitchState:
        return SwitchState.factory_default(
            self.platform.ports, self.platform.max_lags, aging_default=self.platform.aging_default,
            flow_default=None if self.os6 else True)

    def interpreter(self, **kw: object) -> Any:
        cls = EMULATED[self.platform.family]
        model = _model(self.platform)
        if self.faults.stp_blocking:
            kw["stp_blocking"] = re.compile(self.faults.stp_blocking)
        if self.eos is not None:
            kw.pop("ignore_paging_off", None)
            if self.faults.ignore:
                kw["ignore"] = re.compile(self.faults.ignore)
            if self.faults.unprinted and self.platform.family == "arista-eos":
                kw["unprinted"] = re.compile(self.faults.unprinted)
            return cls(self.name, self.eos, model=model.split()[-1], **kw)
        if self.os6:
            return cls(self.name, self.state, model=model, on_save=self.saved,
                       description=f"{model}, 6.3.3.10, Linux 3.7.10", **kw)  # type: ignore[arg-type]
        return cls(self.name, self.state, model=model, on_save=self.saved,  # type: ignore[arg-type]
                   description=f"{model}, 3.3.7.3, VxWorks 6.5", **kw)

    def running_config(self) -> str:
        return self.interpreter().running_config()

    def seed(self, text: str, source: str = "seed") -> None:
        """Start from a running config: its lines are executed as the switch loads a config
        file (`!` lines are comments), so it must be one this switch accepts; the blocks of
        ports the platform does not list (another stack unit) are kept as given. SeedError names the first line
        it refuses."""
        if self.eos is not None:
            loader = eos.load if self.platform.family == "arista-eos" else os10.load
            try:
                self.eos.state = loader(text, self.platform.ports, self.name,
                                        _model(self.platform).split()[-1], source=source)
            except ValueError as exc:
                raise SeedError(str(exc)) from None
            return
        lldp = self.state.lldp                # the cables stay where they are
        self.state = self.factory_state()
        self.state.lldp = lldp
        self.state.layout = []
        cli = self.interpreter()
        cli.mode, cli.paging, cli.seeding = "priv", False, True
        for lineno, raw in enumerate(text.splitlines(), start=1):
            line = raw.rstrip()
            if not line.strip() or line.lstrip().startswith("!"):
                continue
            if cli.mode == "priv" and line.strip() in ("exit", "end"):
                continue                      # the closing `exit` of a running config
            reply = cli.execute(line)
            if cli.mode == "priv" and line.strip() not in ("configure", "exit", "end"):
                raise SeedError(f"{source}: line {lineno}: {shown_line(line)} is not a configuration "
                                "line (outside `configure`)")
            if _refused(reply.output):
                raise SeedError(f"{source}: line {lineno}: the emulated {self.platform.name} refuses "
                                f"{shown_line(line)}: {reply.output.strip().splitlines()[-1]}")
        for placeholder in ("<vlans>", "<globals>", "<interfaces>"):
            self.state.place(placeholder)

    def known_hosts_line(self) -> str:
        return f"[{self.host}]:{self.port} {self.host_key_line}"

    def seed_mac(self, vlan: int, mac: str, port: str) -> None:
        table = self.eos.state.mac_table if self.eos is not None else self.state.mac_table
        entry = MacEntry(vlan, mac.lower(), port)
        table.append(entry)
        self.seeded.append(entry)

    def set_learned(self, entries: list[MacEntry]) -> None:
        """The address table: the entries seeded by hand (seed_mac, kept as they are), then
        what the hosts' frames taught it (vlanroute.lab.learning) for every other VLAN and MAC."""
        table = self.eos.state.mac_table if self.eos is not None else self.state.mac_table
        seeded = {(e.vlan, e.mac) for e in self.seeded}
        table[:] = self.seeded + [e for e in entries if (e.vlan, e.mac) not in seeded]


def _refused(output: str) -> bool:
    return any(text in output for text in (
        "Invalid input", "not found", "does not exist", "do not exist", "Could not", "not in ",
        "is not general", "invalid interface", "out of range", "VLAN range -"))


class _Session(asyncssh.SSHServerSession):  # type: ignore[misc]
    def __init__(self, switch: FakeSwitch, conn: asyncssh.SSHServerConnection) -> None:
        self._sw = switch
        self._conn = conn
        reject = re.compile(switch.faults.reject) if switch.faults.reject else None
        lacks = re.compile(switch.faults.lacks) if switch.faults.lacks else None
        self._cli = switch.interpreter(reject=reject, reject_reply=switch.faults.reject_reply,
                                       ignore_paging_off=switch.faults.pager_stuck, lacks=lacks)
        self._line = ""
        self._last_cr = False
        self._chan: Any = None
        self._pending: list[str] = []

    def connection_made(self, chan: Any) -> None:
        self._chan = chan

    def pty_requested(self, term_type: str, term_size: Any, term_modes: Any) -> bool:
        return True

    def shell_requested(self) -> bool:
        return True

    def session_started(self) -> None:
        self._write("\n\n" + self._cli.prompt())
        self._flush()

    def data_received(self, data: str, datatype: Any) -> None:
        # Echo is collected and written once per packet: one SSH message per keystroke
        # would make the emulator, not the client, the bottleneck of every benchmark.
        self._pending = []
        for ch in data:
            if self._chan is None:
                return
            if self._cli.awaiting_key and ch not in "\r\n":
                # One key, no Enter, and no echo of it [FS]. The save's answer is recorded in
                # send order and as a key (a pager's key is not: it only shows more output).
                saving = self._cli.mode == "yesno"
                if saving:
                    self._sw.received.append(ch)
                    self._sw.keys.append(ch)
                reply = self._cli.answer_key(ch)
                if saving and self._sw.faults.save_lost:
                    self._sw.faults.save_lost = False     # one-shot
                    self._conn.abort()                    # saved, but the answer never comes
                    self._chan = None
                    return
                self._write(reply.output + self._cli.prompt())
                continue
            if ch == "?":
                # Help at once; the line stays, shown again without the `?` [NKI] (assumed on Dell).
                self._write("?\n" + self._cli.help(self._line) + "\n" + self._cli.prompt() + self._line)
                continue
            if ch in "\r\n":
                if ch == "\n" and self._last_cr:      # CR LF is one Enter
                    self._last_cr = False
                    continue
                self._last_cr = ch == "\r"
                line, self._line = self._line, ""
                self._write("\r\n")
                self._run(line)
            elif ch in "\x08\x7f":
                if self._line:
                    self._line = self._line[:-1]
                    self._write("\b \b")            # erase on the terminal (assumed)
            elif ch.isprintable():
                self._last_cr = False
                self._line += ch
                self._write(ch)
        self._flush()

    def _run(self, line: str) -> None:
        was_config = self._cli.mode in CONFIG_MODES
        if line.strip():
            self._sw.received.append(line.strip())
        if self._sw.learn is not None and "address-table" in line and line.split()[:1] == ["show"]:
            self._sw.learn()            # what the hosts' learning frames left, on the fabric as it is now
        reply = self._cli.execute(line)
        if self._sw.watch is not None and line.strip():
            self._sw.watch(self._sw, line.strip())
        if reply.close:
            self._chan.exit(0)
            self._chan = None
            return
        words = line.split()
        if was_config and words and not _refused(reply.output) \
                and words[0] not in ("interface", "exit", "end") and words != ["vlan", "database"]:
            # A configuration command that changed something (not a mode change, not refused).
            self._sw.config_commands += 1
            if self._sw.faults.delay_s:
                time.sleep(self._sw.faults.delay_s)
            limit = self._sw.faults.drop_after
            if limit is not None and self._sw.config_commands >= limit:
                self._sw.faults.drop_after = None      # one-shot: a reconnect works
                self._conn.abort()                     # like a cable pulled: no reply, no FIN
                self._chan = None
                return
        self._write(reply.output + self._cli.prompt())

    def _write(self, text: str) -> None:
        self._pending.append(text)

    def _flush(self) -> None:
        text, self._pending = "".join(self._pending), []
        if self._chan is not None and text:
            self._chan.write(text.replace("\r\n", "\n").replace("\n", "\r\n"))

    def connection_lost(self, exc: Exception | None) -> None:
        closing = getattr(self._cli, "on_close", None)
        if closing is not None:
            closing()

    def eof_received(self) -> bool:
        return False

    def break_received(self, msec: int) -> bool:
        return False


class _Server(asyncssh.SSHServer):  # type: ignore[misc]
    def __init__(self, switch: FakeSwitch) -> None:
        self._sw = switch
        self._conn: asyncssh.SSHServerConnection | None = None

    def connection_made(self, conn: asyncssh.SSHServerConnection) -> None:
        self._conn = conn

    def begin_auth(self, username: str) -> bool:
        if self._sw.authorized_keys and self._conn is not None and username == self._sw.username:
            self._conn.set_authorized_keys(
                asyncssh.import_authorized_keys("\n".join(self._sw.authorized_keys) + "\n"))
        return True

    def password_auth_supported(self) -> bool:
        return self._sw.password is not None

    def kbdint_auth_supported(self) -> bool:
        return False

    def validate_password(self, username: str, password: str) -> bool:
        ok = (not self._sw.faults.refuse_auth and username == self._sw.username
              and password == self._sw.password)
        self._sw.logins += ok
        return ok

    def public_key_auth_supported(self) -> bool:
        return bool(self._sw.authorized_keys) and not self._sw.faults.refuse_auth

    def session_requested(self) -> _Session:
        assert self._conn is not None
        return _Session(self._sw, self._conn)


class FakeSwitchFarm:
    """Runs fake switches in one background event loop. Use as a context manager."""

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True,
                                        name="fakeswitch-loop")
        self._thread.start()
        self._servers: list[Any] = []
        self.switches: dict[str, FakeSwitch] = {}
        # Host learning (learn_hosts): the cables plugged in, the hosts' MACs, the VLANs.
        self._learning_lock = threading.Lock()
        self._plugged: list[Cable] = []
        self._macs: dict[str, str] = {}
        self._learn_vlans: tuple[int, ...] = ()
        self._learned_key: object = None

    def add(self, name: str, *, host: str = "127.0.0.1", username: str = "admin",
            password: str | None = "secret", authorized_keys: list[str] | None = None,
            faults: Faults | None = None, platform: Platform = POWERCONNECT_6248,
            seed: str | None = None, port: int = 0,
            ports: tuple[str, ...] | None = None) -> FakeSwitch:
        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError(f"fake switches listen on loopback only, not {host}")
        switch = FakeSwitch(name=name, host=host, username=username, password=password,
                            authorized_keys=list(authorized_keys or []),
                            faults=faults or Faults(),
                            # e.g. a stack: the plan's platform's ports
                            platform=platform if ports is None else replace(platform, ports=ports,
                                                                            auto_ports=None))
        if seed is not None:
            switch.seed(seed, source=f"seed of {name}")
        switch.port = port
        future = asyncio.run_coroutine_threadsafe(self._start(switch), self._loop)
        future.result(timeout=30)
        self.switches[name] = switch
        return switch

    async def _start(self, switch: FakeSwitch) -> None:
        key = asyncssh.generate_private_key("ssh-ed25519")
        server = await asyncssh.create_server(
            lambda: _Server(switch), switch.host, switch.port, server_host_keys=[key],
            line_editor=False, keepalive_interval=0)
        switch.port = server.sockets[0].getsockname()[1]
        switch.host_key_line = key.export_public_key("openssh").decode().strip()
        self._servers.append(server)

    def wire(self, cables: Iterable[Cable], host_macs: Mapping[str, str]) -> None:
        """Serve LLDP neighbour tables as if `cables` (bundle.reader.Cable rows of a cabling
        file) were plugged in (vlanroute.lab.wiring); called again, it replaces them."""
        from vlanroute.lab.wiring import wire
        cables = list(cables)
        with self._learning_lock:
            self._plugged, self._macs = cables, dict(host_macs)
        wire(self.switches, cables, host_macs)

    def learn_hosts(self, vlans: Iterable[int]) -> None:
        """From now on every switch's address table shows what the hosts of the wired cables
        learn in `vlans` over the switches' configs and cables as they are when it is shown
        (vlanroute.lab.learning); `vlanroute lab up` turns it on, tests seed tables instead."""
        self._learn_vlans = tuple(sorted(set(vlans)))
        for sw in self.switches.values():
            sw.learn = self.refresh_learned

    def refresh_learned(self) -> None:
        """Recompute the learned entries of every switch if a config or a cable changed."""
        from vlanroute.lab.learning import learned_tables
        with self._learning_lock:
            key = (tuple((n, sw.running_config()) for n, sw in self.switches.items()),
                   tuple(c.row for c in self._plugged), self._learn_vlans)
            if key == self._learned_key:
                return
            tables = learned_tables(self.switches, self._plugged, self._macs, self._learn_vlans)
            for name, sw in self.switches.items():
                sw.set_learned(tables.get(name, []))
            self._learned_key = key

    def write_known_hosts(self, path: Path) -> Path:
        write_private(path, "".join(sw.known_hosts_line() + "\n" for sw in self.switches.values()), "known_hosts")
        return path

    def close(self) -> None:
        async def _stop() -> None:
            for server in self._servers:
                server.close()
                await server.wait_closed()
        asyncio.run_coroutine_threadsafe(_stop(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def __enter__(self) -> FakeSwitchFarm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
