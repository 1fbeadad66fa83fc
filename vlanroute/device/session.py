"""One netmiko CLI session to a switch: connect, run a command, detect rejection, save.

Commands are sent one at a time and each reply is read up to the next prompt, so a
rejected command is caught before the next one is sent (netmiko's send_config_set would
send the whole batch first). What differs between CLIs (netmiko device type, the strings
that mean "rejected", the pager, the save dialog) comes from the family's CliDialog
(vlanroute.drivers.family): the 62xx save command's `(y/n)` question is answered with one
key, which the switch does not echo; netmiko's default save_config would wait for a prompt
that never comes there. Long output stops at the family's pager prompt wherever paging
could not be turned off; every read answers it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
import logging
import os
import re
import time
from functools import cache
from typing import TYPE_CHECKING

from vlanroute.device.credentials import Credentials
from vlanroute.drivers.family import CliDialog
from vlanroute.errors import UserError

if TYPE_CHECKING:
    from netmiko import BaseConnection

# paramiko logs a failed handshake from its transport thread, traceback included (a server
# that accepts TCP and never sends an SSH banner); with no handler of its own that reaches
# stderr through logging's last resort. The failure is reported once, as ConnectFailed.
logging.getLogger("paramiko").addHandler(logging.NullHandler())

CONNECT_TIMEOUT_S = 15.0
COMMAND_TIMEOUT_S = 60.0       # `vlan` commands may take long on a real 62xx
SAVE_TIMEOUT_S = 300.0         # "This operation may take a few minutes." [FS]


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


class SaveFailed(SessionError):
    """The save did not confirm. Once the confirming key (or a save command without a
    question) was sent, the startup config may have been written, whatever went wrong."""

    def __init__(self, message: str, *, startup_may_have_changed: bool) -> None:
        self.startup_may_have_changed = startup_may_have_changed
        super().__init__(message)


# Typed after a context-help probe, before Enter: not a command in any mode nor a value
# of any probed command, so whatever the erase left on the line, the switch executes an
# invalid command and nothing else (docs/push.md, pre-flight).
PROBE_GUARD = "vlanroute-probe-guard"


_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class HostKeyPolicy:
    """How push, audit and the other SSH commands open a connection: host keys, and the
    site's own SSH conventions (commands/sshopts.py)."""
    check: bool = True                   # False only with --insecure-no-host-key-check
    known_hosts: Path | None = None      # extra known_hosts file besides ~/.ssh/known_hosts
    # The user's ssh-agent (netmiko's allow_agent); off unless asked for.
    allow_agent: bool = False
    # An OpenSSH config file (netmiko's ssh_config_file, read by paramiko): per Host alias its
    # HostName, Port (when the target's is 22), User (when no user is given), ProxyCommand and
    # a single-hop ProxyJump (netmiko runs `ssh -F FILE -W host:port JUMP`).
    ssh_config_file: Path | None = None
    # netmiko's session log of this connection (what the switch printed; netmiko replaces
    # the password by ******** [NETMIKO session_log.py]); created 0600 before netmiko
    # appends to it. Push sets one per switch under the state directory.
    session_log: Path | None = None

    def __post_init__(self) -> None:
        # paramiko cannot load a known_hosts file that is not there, and every switch would
        # then fail on its own ("not-started" for all of them): say it once, before any
        # connection, naming the option.
        if self.check and self.known_hosts is not None:
            problem = _unreadable_file(self.known_hosts)
            if problem:
                raise UserError(f"the known_hosts file {self.known_hosts} {problem}",
                                field="--known-hosts (VLANROUTE_KNOWN_HOSTS)",
                                fix="give the path of an existing known_hosts file (`vlanroute lab env` "
                                    "prints the lab's), or leave --known-hosts out to use ~/.ssh/known_hosts")


def _unreadable_file(path: Path) -> str | None:
    """Why `path` cannot be read as a file, or None."""
    try:
        if not path.is_file():
            return "does not exist" if not path.exists() else "is not a regular file"
        with open(path, "rb"):
            pass
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    return None


# netmiko and paramiko are imported on first connection, not with this module: they cost
# about half a second, which every `vlanroute plan`, `render` and `verify` would pay
# through vlanroute.api without ever opening a session.
def ConnectHandler(**params: object) -> BaseConnection:  # noqa: N802 - netmiko's name; tests replace it here
    from netmiko import ConnectHandler as connect
    return connect(**params)


@cache
def _lost() -> tuple[type[BaseException], ...]:
    """What a session that died raises, from the socket up to netmiko's reads."""
    import paramiko
    from netmiko.exceptions import NetmikoTimeoutException, ReadException, ReadTimeout
    return (OSError, EOFError, paramiko.SSHException, ReadTimeout, ReadException, NetmikoTimeoutException)


class SwitchSession:
    def __init__(self, cli: CliDialog, host: str, port: int, creds: Credentials,
                 host_keys: HostKeyPolicy) -> None:
        self.cli = cli
        self._errors = [re.compile(p, re.MULTILINE) for p in cli.error_patterns]
        self._pager = re.compile("(?:" + "|".join(cli.pager_patterns) + r")[ \t]*$")
        params: dict[str, object] = dict(
            device_type=cli.netmiko_device_type, host=host, port=port,
            username=creds.username, password=creds.password or "",
            use_keys=creds.key_file is not None, allow_agent=host_keys.allow_agent,
            key_file=str(creds.key_file) if creds.key_file else None,
            conn_timeout=CONNECT_TIMEOUT_S, auth_timeout=CONNECT_TIMEOUT_S,
            banner_timeout=CONNECT_TIMEOUT_S, ssh_strict=host_keys.check,
            system_host_keys=host_keys.check,
            alt_host_keys=host_keys.known_hosts is not None,
            alt_key_file=str(host_keys.known_hosts or ""), fast_cli=True)
        if host_keys.ssh_config_file is not None:
            params["ssh_config_file"] = str(host_keys.ssh_config_file)
        if host_keys.session_log is not None:
            _create_private(host_keys.session_log)
            params.update(session_log=str(host_keys.session_log), session_log_file_mode="append")
        _log.info("connecting to %s:%s as %s (%s)", host, port, creds.username, cli.netmiko_device_type)
        import paramiko
        from netmiko.exceptions import NetmikoAuthenticationException, NetmikoTimeoutException
        try:
            self._conn = ConnectHandler(**params)
        except NetmikoAuthenticationException:
            _log.warning("%s:%s: authentication refused", host, port)
            raise ConnectFailed("authentication refused") from None
        except (NetmikoTimeoutException, paramiko.SSHException, OSError, EOFError) as exc:
            _log.warning("%s:%s: connection failed: %s", host, port, _short(exc))
            # netmiko wraps paramiko's host key errors; recognise them by their text.
            problem = _connect_problem(str(exc), host, port) or _short(exc)
            jump = _jump_host(host_keys.ssh_config_file, host)
            if jump is not None:
                problem = (f"{problem}; the connection goes through {jump} ({host_keys.ssh_config_file}): "
                           f"check that hop by hand with `ssh -F {host_keys.ssh_config_file} -W <switch>:{port} "
                           "<jump host>` (the jump host may refuse the login or be unable to reach the switch)")
            raise ConnectFailed(problem) from None
        base = re.escape(self._conn.base_prompt)
        # Any mode: sw1>, sw1#, sw1(config)#, sw1(config-if-1/g1)#, sw1(config-vlan)#
        self._prompt_core = base + r"(?:\([^)\r\n]*\))?[#>]"
        self._prompt_re = re.compile(self._prompt_core + r"\s*$")
        self.commands_sent = 0
        self._conn.clear_buffer()
        for command in cli.session_setup:
            self.run(command, check=False)

    def _alive(self) -> bool:
        import paramiko
        chan = self._conn.remote_conn
        if not isinstance(chan, paramiko.Channel):     # never telnet here: netmiko's type allows it
            return False
        transport = chan.get_transport()
        return bool(transport is not None and transport.is_active() and not chan.closed)

    def _read_until(self, pattern: re.Pattern[str], what: str, *, anchor: bool = True,
                    timeout: float | None = None) -> str:
        """Read until `pattern` matches the end of the output. A dead session is noticed at
        once (netmiko would wait for its read timeout); a silent one after the timeout.
        `anchor`: only output after the echo of `what` counts."""
        out = ""
        deadline = time.monotonic() + (COMMAND_TIMEOUT_S if timeout is None else timeout)
        pause = 0.002
        pager_at: int | None = None     # where a removed pager prompt stood
        while True:
            try:
                out += self._conn.read_channel()
            except _lost() as exc:
                raise ConnectionLost(f"connection lost after {self.commands_sent} commands "
                                     f"(at {what!r}): {_short(exc)}") from None
            if pager_at is not None:
                out, pager_at = _drop_pager_line_end(out, pager_at)
            if self._pager.search(out):
                # The pager prompt has no line end; the next page follows the key.
                out = self._pager.sub("", out)
                pager_at = len(out)
                self._conn.write_channel(self.cli.pager_key)
                continue
            # Only a prompt after the echo of what was sent counts: a prompt still in the
            # buffer from before must not end the read early.
            at = out.find(what) if anchor else 0
            if at >= 0 and pattern.search(out, at + (len(what) if anchor else 0)):
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
        except _lost() as exc:
            raise ConnectionLost(f"connection lost after {self.commands_sent} commands "
                                 f"(at {command!r}): {_short(exc)}") from None
        raw = self._read_until(self._prompt_re, command)
        self.commands_sent += 1
        out = self._prompt_re.sub("", raw)
        first, _, rest = out.partition("\n")
        out = rest if first.strip() == command.strip() else out
        _log.debug("%s: sent %r, %d reply lines", self.cli.netmiko_device_type, command, out.count("\n"))
        if check and any(p.search(out) for p in self._errors):
            _log.warning("rejected %r: %s", command, out.strip()[:200])
            raise CommandRejected(command, out)
        return out

    def running_config(self) -> str:
        self.run("end", check=False)         # from any sub-mode back to privileged mode
        return self.run("show running-config", check=False)

    def save(self) -> str:
        """Copy running to startup config, answering the CLI's question if it asks.

        The answer is one key without Enter, and the switch does not echo it [FS]: the reply
        is read up to `Configuration Saved!` or the prompt, whatever came before. SaveFailed
        says whether the startup config may have changed: before the key it cannot have;
        from the key on, any failure means it may have."""
        p = self.cli
        self.run("end", check=False)
        if p.save_confirm:
            self._conn.write_channel(p.save_command + self._conn.RETURN)
            question = self._read_until(re.compile(p.save_confirm + r"\s*$"), p.save_command)
            if any(pat.search(question) for pat in self._errors):
                raise SaveFailed(f"the switch rejected {p.save_command!r}: {question.strip()}",
                                 startup_may_have_changed=False)
            try:
                self._conn.write_channel(p.save_answer or "y")     # one key, no Enter
                # No echo to wait for: the next prompt ends the reply, after
                # `Configuration Saved!` or `Configuration Not Saved!`.
                out = self._read_until(self._prompt_re, "", anchor=False, timeout=SAVE_TIMEOUT_S)
            except Exception as exc:  # noqa: BLE001 - after the key every failure is "may have"
                raise SaveFailed(f"no confirmation after the save key: {exc}",
                                 startup_may_have_changed=True) from None
            tail = question + out
        else:
            try:
                tail = self.run(p.save_command, check=False)
            except SessionError as exc:
                raise SaveFailed(str(exc), startup_may_have_changed=True) from None
            out = tail
        if re.search(p.save_not_done, out):
            raise SaveFailed(f"the switch answered {out.strip()!r}", startup_may_have_changed=True)
        if p.save_confirm and not re.search(p.save_done, out):
            raise SaveFailed(f"no {p.save_done!r} in the reply {out.strip()!r}",
                             startup_may_have_changed=True)
        if any(pat.search(out) for pat in self._errors):
            raise SaveFailed(f"the switch answered {out.strip()!r}", startup_may_have_changed=True)
        return tail

    def context_help(self, words: str, timeout: float = 15.0) -> str:
        """The CLI's context help for `words` in the current mode, changing nothing.

        `words ?` is written without Enter: the switch prints the help at once and shows
        the prompt again followed by the typed words, which stay on the line (seen on other
        Cisco-like CLIs; unconfirmed on Dell). They are erased with one backspace each, and
        PROBE_GUARD plus Enter follows: if the erase did not work, the line executed is
        `words PROBE_GUARD`, an invalid command, never `words` itself."""
        typed = f"{words} " if words else ""
        try:
            self._conn.write_channel(typed + "?")
        except _lost() as exc:
            raise ConnectionLost(f"connection lost (at {typed + '?'!r}): {_short(exc)}") from None
        redisplay = re.compile(self._prompt_core + r"(?P<tail>[^\r\n]*)$")
        # The prompt that counts starts a line after the help (the line typed on also ends
        # in the prompt and the words): whether the switch echoes the `?` itself is unknown.
        shown_again = re.compile(r"\n[^\n]*?" + self._prompt_core + r"[^\r\n]*$")
        anchor = typed.rstrip() or "?"
        out = self._read_until(shown_again, anchor, timeout=timeout)
        # The prompt may come before the typed words are shown again: wait a little for them.
        grace = time.monotonic() + 0.5
        while time.monotonic() < grace:
            m = redisplay.search(out)
            if m and m.group("tail") == typed:
                break
            time.sleep(0.02)
            try:
                out += self._conn.read_channel()
            except _lost() as exc:
                raise ConnectionLost(f"connection lost (at {typed + '?'!r}): {_short(exc)}") from None
        m = redisplay.search(out)
        tail = m.group("tail") if m else ""
        body = out[len(anchor):m.start()] if m else out
        body = body.lstrip(" ").removeprefix("?")
        self._conn.write_channel("\b" * len(tail) + PROBE_GUARD + self._conn.RETURN)
        self._read_until(self._prompt_re, PROBE_GUARD, timeout=timeout)
        self.commands_sent += 1
        return body

    def close(self) -> None:
        conn = self._conn
        # netmiko's cleanup first probes for config mode, which costs seconds per session;
        # every code path here already left config mode, so just log out and close.
        conn.cleanup = lambda command="exit": conn.write_channel(command + conn.RETURN)  # type: ignore[method-assign]
        try:
            conn.disconnect()
        except Exception:  # noqa: BLE001 - the session may already be dead; nothing to do
            pass


def _create_private(path: Path) -> None:
    """An empty file only its owner can read (a session log holds the running config, with
    its password hashes), so that netmiko's append keeps the mode."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600))
    os.chmod(path, 0o600)


def _jump_host(config: Path | None, host: str) -> str | None:
    """What the ssh_config puts between us and `host` ("ProxyJump bastion" or "ProxyCommand
    ..."), read as netmiko reads it (paramiko.SSHConfig), or None."""
    if config is None:
        return None
    import paramiko
    try:
        found = paramiko.SSHConfig.from_path(str(config)).lookup(host)
    except (OSError, ValueError, paramiko.SSHException):
        return None
    if "proxycommand" in found:
        return f"ProxyCommand {found['proxycommand']}"
    if "proxyjump" in found:
        return f"ProxyJump {found['proxyjump']}"
    return None


def _connect_problem(text: str, host: str, port: int) -> str | None:
    if "DNS failure" in text or "Name or service not known" in text:   # netmiko's text for a gaierror
        return (f"cannot resolve the host name {host} (DNS): check switches.<name>.mgmt in the inventory, "
                "the resolver of this machine, or give the address")
    if "not found in known_hosts" in text:
        # No "[host]:port": a console taking markup would print a DNS name in brackets as nothing.
        return (f"host key of {host} (port {port}) is not in known_hosts; add it (`ssh-keyscan -p {port} "
                f"{host}`, then compare the fingerprint with the switch console) or pass --known-hosts FILE")
    if "does not match" in text and "Host key" in text:
        return ("HOST KEY MISMATCH: the switch's SSH key differs from known_hosts (replaced "
                "switch, or a man-in-the-middle); check it before connecting again")
    if "Authentication" in text:
        return "authentication refused"
    if "banner" in text or "No existing session" in text or "Error reading SSH protocol" in text:
        # TCP was accepted, but no SSH handshake came within the timeout.
        return (f"{host}:{port} accepted the TCP connection but did not speak SSH within "
                f"{CONNECT_TIMEOUT_S:.0f} s (not an SSH server, or a hung one: check the address, "
                "the port and the switch's SSH service)")
    if "TCP connection to device failed" in text:     # netmiko's text for a refused or lost TCP connect
        return (f"cannot reach {host}:{port} (TCP connection failed: the switch is down, the "
                "address or port is wrong, or a firewall is in the way)")
    return None


def _drop_pager_line_end(out: str, at: int) -> tuple[str, int | None]:
    """Drop what the switch prints after the pager key to leave the prompt's line (a line
    end, or carriage returns, spaces and backspaces over the prompt), so that a config read through
    the pager is the config, without a blank line per page. Returns the output and the
    position still to look at (None once decided)."""
    rest = out[at:]
    if m := re.match(r"[\r \x08]*\n|[\r \x08]*[\r\x08](?=[^\r \x08\n])", rest):
        return out[:at] + rest[m.end():], None
    if rest and not re.fullmatch(r"[\r \x08]*", rest):
        return out, None              # the next page follows at once
    return out, at                    # nothing decisive yet: look again after the next read


def _short(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"
