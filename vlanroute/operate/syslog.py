"""Link-down syslog messages as an early hint: a matching message starts a poll round at once.

A hint is never evidence on its own: the round that follows reads the link states over SSH,
and the debounce (operate/debounce.py) decides as always. A message that matches nothing,
or comes from anywhere, costs at most one extra round; hints start a round at most once per
second. The formats, from public captures (docs/watch.md cites them):

- Arista EOS: `Ebra: %LINEPROTO-5-UPDOWN: Line protocol on Interface Ethernet28, changed
  state to down` (napalm-logs, INTERFACE_DOWN message example from a vEOS);
- Dell OS10: `Dell EMC (OS10) %IFM_OSTATE_DN: Interface operational state is down
  :ethernet1/1/12` (and `%IFM_OSTATE_UP`), RFC 5424 framed, from an S4112F-ON console
  capture (OS 10.5.0.2);
- PowerConnect 62xx / Dell OS6: no Dell capture found. The Broadcom FASTPATH trap manager
  line `TRAPMGR[...]: traputil.c(636) 1923 %% Link Down: 0/15` was seen on another FASTPATH
  switch, and the 62xx and OS6 firmware descend from FASTPATH: matched as an **assumption**.
"""

from __future__ import annotations

import re
import socket
import threading
from collections.abc import Callable
from dataclasses import dataclass

MAX_MESSAGE = 4096

# (family, pattern): `port` and `state` groups; state words mean down unless up.
PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("arista-eos", re.compile(r"%LINEPROTO-5-UPDOWN: Line protocol on Interface (?P<port>[^\s,(]+)"
                              r"(?: \([^)]*\))?, changed state to (?P<state>\w+)")),
    ("dell-os10", re.compile(r"%IFM_OSTATE_(?P<state>DN|UP): Interface operational state is \w+\s*:\s*(?P<port>\S+)")),
    ("fastpath", re.compile(r"%% Link (?P<state>Down|Up): (?P<port>\S+)")),      # assumed for 62xx / OS6
)
_HOST_5424 = re.compile(r"^<\d{1,3}>1 \S+ (?P<host>\S+) ")
_HOST_3164 = re.compile(r"^<\d{1,3}>(?:[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d) (?P<host>\S+) ")


@dataclass(frozen=True)
class Hint:
    family: str
    port: str
    up: bool
    host: str | None               # the HOSTNAME field, when the message has one
    sender: str                    # the source address


def parse(text: str, sender: str = "") -> Hint | None:
    """The link change a syslog message announces, or None."""
    for family, pattern in PATTERNS:
        m = pattern.search(text)
        if m:
            host = _HOST_5424.match(text) or _HOST_3164.match(text)
            up = m.group("state").lower() == "up"
            return Hint(family, m.group("port"), up, host.group("host") if host else None, sender)
    return None


class SyslogListener:
    """UDP syslog (RFC 5426) on `address`; `on_hint` for every message that parses."""

    def __init__(self, host: str, port: int, on_hint: Callable[[Hint], None]) -> None:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.sock = socket.socket(family, socket.SOCK_DGRAM)
        self.sock.bind((host, port))
        self.sock.settimeout(0.5)
        self.address = self.sock.getsockname()
        self.on_hint = on_hint
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="watch-syslog", daemon=True)

    @classmethod
    def at(cls, listen: str, on_hint: Callable[[Hint], None]) -> SyslogListener:
        """`ADDRESS:PORT`, `[v6]:PORT` or `PORT` (model/operation.listen_address)."""
        host, _, port = listen.rpartition(":") if ":" in listen else ("127.0.0.1", "", listen)
        return cls(host.removeprefix("[").removesuffix("]"), int(port), on_hint)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2)
        self.sock.close()

    def _loop(self) -> None:
        while not self._stop.is_set():
            try:
                data, sender = self.sock.recvfrom(MAX_MESSAGE)
            except TimeoutError:
                continue
            except OSError:
                return
            hint = parse(data.decode("utf-8", errors="replace"), str(sender[0]))
            if hint is not None:
                self.on_hint(hint)
