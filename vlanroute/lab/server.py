"""SSH servers on 127.0.0.x that behave like PowerConnect 62xx switches (tests and bench only).

One background thread runs an asyncio loop with any number of asyncssh servers. Each
switch does ordinary SSH password (or public key) authentication, as the 62xx does,
which is why the client uses netmiko's `dell_os6` type. The shell echoes what it is sent
and answers the `(y/n)` save question with a single key, like the switch.

Fault knobs (FakeSwitch.faults): refuse authentication, drop the connection right after
the Nth configuration command (one-shot, so a reconnect for rollback works), reject the
commands matching a regex with the switch's own error reply.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
import ipaddress
from pathlib import Path
import re
import threading
from typing import Any

import asyncssh

from vlanroute.lab.cli import Interpreter
from vlanroute.lab.state import MacEntry, SwitchState
from vlanroute.model.platforms import POWERCONNECT_6248

# The ports of the platform descriptor (GbE and 10G module ports); a stack passes its own.
PC6248_PORTS = POWERCONNECT_6248.ports
CONFIG_MODES = ("config", "vlan", "if")


@dataclass
class Faults:
    refuse_auth: bool = False
    drop_after: int | None = None    # abort after this many config-mode commands (one-shot)
    reject: str | None = None        # regex: matching commands get "% Invalid input"
    pager_stuck: bool = False        # `terminal length 0` / `datadump` do not stop paging


@dataclass
class FakeSwitch:
    name: str
    host: str
    username: str
    password: str | None
    authorized_keys: list[str] = field(default_factory=list)    # OpenSSH public key lines
    faults: Faults = field(default_factory=Faults)
    state: SwitchState = field(
        default_factory=lambda: SwitchState.factory_default(PC6248_PORTS, 48))
    port: int = 0                                   # set when the server listens
    host_key_line: str = ""                         # "ssh-ed25519 AAAA..."
    saved: list[str] = field(default_factory=list)  # startup-config texts, oldest first
    received: list[str] = field(default_factory=list)  # every command line, all sessions
    logins: int = 0
    config_commands: int = 0

    def known_hosts_line(self) -> str:
        return f"[{self.host}]:{self.port} {self.host_key_line}"

    def seed_mac(self, vlan: int, mac: str, port: str) -> None:
        self.state.mac_table.append(MacEntry(vlan, mac.lower(), port))


class _Session(asyncssh.SSHServerSession):  # type: ignore[misc]
    def __init__(self, switch: FakeSwitch, conn: asyncssh.SSHServerConnection) -> None:
        self._sw = switch
        self._conn = conn
        reject = re.compile(switch.faults.reject) if switch.faults.reject else None
        self._cli = Interpreter(switch.name, switch.state, reject=reject, on_save=switch.saved,
                                ignore_paging_off=switch.faults.pager_stuck)
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
        self._pending: list[str] = []
        for ch in data:
            if self._chan is None:
                return
            if self._cli.awaiting_key and ch not in "\r\n":
                self._write(ch)
                self._write(self._cli.answer_key(ch).output + self._cli.prompt())
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
                self._line = self._line[:-1]
            elif ch.isprintable():
                self._last_cr = False
                self._line += ch
                self._write(ch)
        self._flush()

    def _run(self, line: str) -> None:
        was_config = self._cli.mode in CONFIG_MODES
        if line.strip():
            self._sw.received.append(line.strip())
        reply = self._cli.execute(line)
        if reply.close:
            self._chan.exit(0)
            self._chan = None
            return
        if was_config and line.strip():
            self._sw.config_commands += 1
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

    def add(self, name: str, *, host: str = "127.0.0.1", username: str = "admin",
            password: str | None = "secret", authorized_keys: list[str] | None = None,
            faults: Faults | None = None, ports: tuple[str, ...] | None = None) -> FakeSwitch:
        if not ipaddress.ip_address(host).is_loopback:
            raise ValueError(f"fake switches listen on loopback only, not {host}")
        switch = FakeSwitch(name=name, host=host, username=username, password=password,
                            authorized_keys=list(authorized_keys or []),
                            faults=faults or Faults())
        if ports is not None:                       # e.g. a stack: the plan's platform's ports
            switch.state = SwitchState.factory_default(ports, POWERCONNECT_6248.max_lags)
        future = asyncio.run_coroutine_threadsafe(self._start(switch), self._loop)
        future.result(timeout=30)
        self.switches[name] = switch
        return switch

    async def _start(self, switch: FakeSwitch) -> None:
        key = asyncssh.generate_private_key("ssh-ed25519")
        server = await asyncssh.create_server(
            lambda: _Server(switch), switch.host, 0, server_host_keys=[key],
            line_editor=False, keepalive_interval=0)
        switch.port = server.sockets[0].getsockname()[1]
        switch.host_key_line = key.export_public_key("openssh").decode().strip()
        self._servers.append(server)

    def write_known_hosts(self, path: Path) -> Path:
        path.write_text("".join(sw.known_hosts_line() + "\n" for sw in self.switches.values()))
        return path

    def close(self) -> None:
        async def _stop() -> None:
            for server in self._servers:
                server.close()
                await server.wait_closed()
        asyncio.run_coroutine_threadsafe(_stop(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def __enter__(self) -> "FakeSwitchFarm":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
