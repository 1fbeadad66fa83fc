"""Read every switch's LLDP neighbour table over SSH (read-only: show commands only).

Used by `vlanroute cabling check`, `vlanroute discover` and push's cabling gate. Each
family says which command lists the neighbours and how to read its rows
(Family.lldp_command / parse_lldp). A system name the summary cut short (`...`) is read in
full from the port's detail command, where the family has one.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from typing import Any

from vlanroute.device.credentials import Credentials
from vlanroute.device.session import HostKeyPolicy, SessionError, SwitchSession
from vlanroute.drivers.family import CliDialog, Family, LldpNeighbor


@dataclass(frozen=True)
class LldpSource:
    """One switch to read: where it is and which family speaks for it."""

    name: str
    host: str
    port: int
    family: Family
    cli: CliDialog


@dataclass(frozen=True)
class LldpTable:
    switch: str
    neighbors: tuple[LldpNeighbor, ...] = ()
    error: str | None = None            # why the table could not be read


def has_lldp_reader(family: Family) -> bool:
    """A command and a row parser (Family.parse_lldp) for the family's neighbour table."""
    return family.lldp_command is not None and type(family).parse_lldp is not Family.parse_lldp


def read_one(source: LldpSource, creds: Credentials, host_keys: HostKeyPolicy,
             connect: Any = SwitchSession) -> LldpTable:
    family = source.family
    if not has_lldp_reader(family):
        return LldpTable(source.name, error=f"no LLDP neighbour table reader for {family.title} yet")
    try:
        session = connect(source.cli, source.host, source.port, creds, host_keys)
    except SessionError as exc:
        return LldpTable(source.name, error=escape_controls(str(exc)))
    try:
        session.run("end", check=False)
        rows = family.parse_lldp(session.run(family.lldp_command))
        full: list[LldpNeighbor] = []
        for row in rows:
            command = family.lldp_detail_command(row.local_port) if row.truncated else None
            if command is not None:
                name = family.parse_lldp_detail(session.run(command))
                if name:
                    row = replace(row, system_name=name)
            full.append(shown_neighbor(row))
        return LldpTable(source.name, tuple(full))
    except SessionError as exc:
        return LldpTable(source.name, error=escape_controls(str(exc)))
    finally:
        session.close()


def escape_controls(text: str) -> str:
    """`text` with every character that is not printable written as an escape (\x1b, \u2028):
    an LLDP system name or port id is whatever the far end sends, and a terminal would obey
    the escape sequences in it (move the cursor, rewrite the line above, change the title)."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else (f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")
                   for c in text)


def shown_neighbor(row: LldpNeighbor) -> LldpNeighbor:
    """The row with its far-end fields escaped (escape_controls), as every command shows it."""
    return replace(row, chassis_id=escape_controls(row.chassis_id), port_id=escape_controls(row.port_id),
                   system_name=escape_controls(row.system_name), local_port=escape_controls(row.local_port))


def read_tables(sources: list[LldpSource], creds: Credentials, host_keys: HostKeyPolicy,
                workers: int, connect: Any = SwitchSession) -> dict[str, LldpTable]:
    """switch -> its LLDP table (or why it was not read), every switch in parallel."""
    if not sources:
        return {}
    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(sources)))) as pool:
        tables = list(pool.map(lambda s: read_one(s, creds, host_keys, connect), sources))
    return {t.switch: t for t in tables}
