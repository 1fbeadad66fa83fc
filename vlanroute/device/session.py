"""One netmiko CLI session to a switch: connect, run a command, detect rejection, save.

Commands are sent one at a time and each reply is read up to the next prompt, so a
rejected command is caught before the next one is sent (netmiko's send_config_set would
send the whole batch first). What differs between CLIs (netmiko device type, the strings
that mean "rejected", the save dialog) comes from the family's CliDialog
(vlanroute.drivers.family): the 62xx save command's `(y/n)` question is answered with one
key; netmiko's default save_config would wait for a prompt that never comes there.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import re
import time

import paramiko
from netmiko import ConnectHandler
from netmiko.exceptions import (NetmikoAuthenticationException, NetmikoTimeoutException,
                                ReadException, ReadTimeout)

from vlanroute.device.credentials import Credentials
from vlanroute.drivers.family import CliDialog

CONNECT_TIMEOUT_S = 15.0
COMMAND_TIMEOUT_S = 60.0       # `vlan` commands may take long on a real 62xx


class SessionError(Exception):
    """Base: something went wrong talking to the switch."""


class ConnectFailed(SessionError):
    """Could not log in (unreachable, host key, authentication). Nothing was changed."""


class ConnectionLost(SessionError):
    """The session died after login; the switch may be half-configured."""


class CommandRejected(SessionError):
    def __init__(self, command: str, reply: str) -> None:
        self.command, self.reply = command, reply
        super().__init__(f"the switch rejected {command!r}: {reply.strip()}")


@dataclass(frozen=True)
class HostKeyPolicy:
    check: bool = True                   # False only with --insecure-no-host-key-check
    known_hosts: Path | None = None      # extra known_hosts file besides ~/.ssh/known_hosts


_PAGER = re.compile(r"--More--[^\n]*$")
_LOST = (OSError, EOFError, paramiko.SSHException, ReadTimeout, ReadException,
         NetmikoTimeoutException)


class SwitchSession:
    def __init__(self, cli: CliDialog, host: str, port: int, creds: Credentials,
                 host_keys: HostKeyPolicy) -> None:
        self.cli = cli
        self._errors = [re.compile(p, re.MULTILINE) for p in cli.error_patterns]
        params: dict[str, object] = dict(
            device_type=cli.netmiko_device_type, host=host, port=port,
            username=creds.username, password=creds.password or "",
            use_keys=creds.key_file is not None, allow_agent=False,
            key_file=str(creds.key_file) if creds.key_file else None,
            conn_timeout=CONNECT_TIMEOUT_S, auth_timeout=CONNECT_TIMEOUT_S,
            banner_timeout=CONNECT_TIMEOUT_S, ssh_strict=host_keys.check,
            system_host_keys=host_keys.check,
            alt_host_keys=host_keys.known_hosts is not None,
            alt_key_file=str(host_keys.known_hosts or ""), fast_cli=True)
        try:
            self._conn = ConnectHandler(**params)
        except NetmikoAuthenticationException:
            raise ConnectFailed("authentication refused") from None
        except (NetmikoTimeoutException, paramiko.SSHException, OSError, EOFError) as exc:
            # netmiko wraps paramiko's host key errors; recognise them by their text.
            raise ConnectFailed(_connect_problem(str(exc), host, port) or _short(exc)) from None
        base = re.escape(self._conn.base_prompt)
        # Any mode: sw1>, sw1#, sw1(config)#, sw1(config-if-1/g1)#, sw1(config-vlan)#
        self._prompt_re = re.compile(base + r"(?:\([^)\r\n]*\))?[#>]\s*$")
        self.commands_sent = 0
        self._conn.clear_buffer()
        for command in cli.session_setup:
            self.run(command, check=False)

    def _alive(self) -> bool:
        chan = self._conn.remote_conn
        transport = chan.get_transport() if chan is not None else None
        return bool(transport is not None and transport.is_active() and not chan.closed)

    def _read_until(self, pattern: re.Pattern[str], what: str) -> str:
        """Read until `pattern` matches the end of the output. A dead session is noticed at
        once (netmiko would wait for its read timeout); a silent one after the timeout."""
        out = ""
        deadline = time.monotonic() + COMMAND_TIMEOUT_S
        pause = 0.002
        while True:
            try:
                out += self._conn.read_channel()
            except _LOST as exc:
                raise ConnectionLost(f"connection lost after {self.commands_sent} commands "
                                     f"(at {what!r}): {_short(exc)}") from None
            if _PAGER.search(out):
                # Paging should be off (terminal length 0 / datadump), but never hang on it.
                out = _PAGER.sub("", out)
                self._conn.write_channel(" ")
                continue
            # Only a prompt after the echo of what was sent counts: a prompt still in the
            # buffer from before must not end the read early.
            at = out.find(what)
            if at >= 0 and pattern.search(out, at + len(what)):
                return out[at:]
            if not self._alive():
                raise ConnectionLost(f"connection lost after {self.commands_sent} commands "
                                     f"(at {what!r})")
            if time.monotonic() > deadline:
                raise ConnectionLost(f"no prompt within {COMMAND_TIMEOUT_S:.0f} s after "
                                     f"{what!r}; giving up on this session")
            time.sleep(pause)
            pause = min(pause * 2, 0.05)

    def run(self, command: str, *, check: bool = True) -> str:
        """Send one command and return its reply (echo and prompt stripped)."""
        try:
            self._conn.write_channel(command + self._conn.RETURN)
        except _LOST as exc:
            raise ConnectionLost(f"connection lost after {self.commands_sent} commands "
                                 f"(at {command!r}): {_short(exc)}") from None
        raw = self._read_until(self._prompt_re, command)
        self.commands_sent += 1
        out = self._prompt_re.sub("", raw)
        first, _, rest = out.partition("\n")
        out = rest if first.strip() == command.strip() else out
        if check and any(p.search(out) for p in self._errors):
            raise CommandRejected(command, out)
        return out

    def running_config(self) -> str:
        self.run("end", check=False)         # from any sub-mode back to privileged mode
        return self.run("show running-config", check=False)

    def save(self) -> str:
        """Copy running to startup config, answering the CLI's question if it asks."""
        p = self.cli
        self.run("end", check=False)
        if p.save_confirm:
            self._conn.write_channel(p.save_command + self._conn.RETURN)
            out = self._read_until(re.compile(p.save_confirm + r"\s*$"), p.save_command)
            self._conn.write_channel(p.save_answer or "y")     # one key, no Enter
            out += self._read_until(self._prompt_re, p.save_answer or "y")
        else:
            out = self.run(p.save_command, check=False)
        if any(pat.search(out) for pat in self._errors) or "Not Saved" in out:
            raise CommandRejected(p.save_command, out)
        return out

    def close(self) -> None:
        conn = self._conn
        # netmiko's cleanup first probes for config mode, which costs seconds per session;
        # every code path here already left config mode, so just log out and close.
        conn.cleanup = lambda command="exit": conn.write_channel(command + conn.RETURN)  # type: ignore[method-assign]
        try:
            conn.disconnect()
        except Exception:  # noqa: BLE001 - the session may already be dead; nothing to do
            pass


def _connect_problem(text: str, host: str, port: int) -> str | None:
    if "not found in known_hosts" in text:
        return (f"host key of [{host}]:{port} is not in known_hosts; add it (ssh-keyscan, "
                "then compare the fingerprint with the switch console) or pass --known-hosts FILE")
    if "does not match" in text and "Host key" in text:
        return ("HOST KEY MISMATCH: the switch's SSH key differs from known_hosts (replaced "
                "switch, or a man-in-the-middle); check it before connecting again")
    if "Authentication" in text:
        return "authentication refused"
    return None


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"
