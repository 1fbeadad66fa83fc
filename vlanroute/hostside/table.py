"""The host side's two tables: `hosts/hosts.tsv` and `hosts/vlans.tsv` (docs/outdir-layout.md).

One row per host (host, interface, MAC or `-`, own VLAN, host index, host attachment
`untagged` or `trunk` of its switch: vlanroute.model.bridge) and one row per
routing VLAN (VLAN id, learning subnet). The host program `hosts/vlanroute-host` finds
its own row and computes its learning address in VLAN v as the first address of v's
learning subnet + 1 + its host index: the rule of `vlanroute.plan.learning.learning_address`.
So the bundle grows with hosts + VLANs, not hosts x VLANs (16,384 hosts and 512 VLANs
are about 0.5 MB of table).

Tab-separated because POSIX `read` splits on it without any other tool; a field is never
empty (an unknown MAC is `-`), since consecutive tabs count as one separator in sh.
The first line names the plan, and the host program refuses a table of another plan.
This module writes the tables for `render` and reads them for `verify` and `emulate`, so
that all three agree on the format.
"""

from __future__ import annotations

import ipaddress
import re
from dataclasses import dataclass
from pathlib import Path

from vlanroute.errors import UserError
from vlanroute.safeio.reading import BUNDLE_LIMIT, read_text_file

HOSTS_FILE = "hosts.tsv"
VLANS_FILE = "vlans.tsv"
NO_MAC = "-"
HOSTS_COLUMNS = ("host", "interface", "mac", "vlan", "index", "attachment")
ATTACHMENTS = ("untagged", "trunk")
VLANS_COLUMNS = ("vlan", "learning_subnet")

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_.-]{0,62}")
_IFACE = re.compile(r"[A-Za-z][A-Za-z0-9_-]{0,14}")
_MAC = re.compile(r"[0-9a-f]{2}(?::[0-9a-f]{2}){5}")
_DECIMAL = re.compile(r"0|[1-9][0-9]{0,8}")      # no leading zero: the host program's sh would read 08 as octal


@dataclass(frozen=True)
class HostRow:
    host: str
    interface: str
    mac: str | None
    vlan: int           # the host's own VLAN (its port's PVID)
    index: int          # 0-based, inventory order: the learning-address rule's i
    attachment: str = "untagged"   # trunk: the program sets the sub-interfaces' rp_filter/ARP sysctls


@dataclass(frozen=True)
class VlanRow:
    vlan: int
    subnet: ipaddress.IPv4Network


def first_line(plan: str, what: str) -> str:
    """The line that ties a table to its plan; the host program checks it literally."""
    return f"# vlanroute plan {plan}: {what}. Generated; do not edit by hand.\n"


def hosts_tsv(plan: str, rows: list[HostRow]) -> str:
    lines = [first_line(plan, "one row per host for hosts/vlanroute-host"),
             "# " + "\t".join(HOSTS_COLUMNS) + "\n"]
    lines += [f"{r.host}\t{r.interface}\t{r.mac or NO_MAC}\t{r.vlan}\t{r.index}\t{r.attachment}\n" for r in rows]
    return "".join(lines)


def vlans_tsv(plan: str, rows: list[VlanRow]) -> str:
    lines = [first_line(plan, "one row per routing VLAN for hosts/vlanroute-host"),
             "# " + "\t".join(VLANS_COLUMNS) + "\n"]
    lines += [f"{r.vlan}\t{r.subnet}\n" for r in rows]
    return "".join(lines)


def _rows(path: Path, columns: int) -> list[tuple[int, list[str]]]:
    text = read_text_file(path, limit=BUNDLE_LIMIT, what="host table",
                          fix="render again: `vlanroute render` writes hosts/hosts.tsv and hosts/vlans.tsv")
    out = []
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != columns:
            raise UserError(f"{len(fields)} tab-separated fields, expected {columns}", file=str(path),
                            field=f"line {lineno}", fix="render again; do not edit the table by hand")
        out.append((lineno, fields))
    return out


def read_hosts(path: Path) -> dict[str, HostRow]:
    rows: dict[str, HostRow] = {}
    for lineno, (host, iface, mac, vlan, index, attachment) in _rows(path, len(HOSTS_COLUMNS)):
        if not (_NAME.fullmatch(host) and _IFACE.fullmatch(iface) and (mac == NO_MAC or _MAC.fullmatch(mac))
                and _DECIMAL.fullmatch(vlan) and _DECIMAL.fullmatch(index) and attachment in ATTACHMENTS):
            raise UserError("malformed row", file=str(path), field=f"line {lineno}",
                            fix="render again; do not edit the table by hand")
        if host in rows:
            raise UserError(f"host {host} is listed twice", file=str(path), field=f"line {lineno}",
                            fix="render again")
        rows[host] = HostRow(host, iface, None if mac == NO_MAC else mac, int(vlan), int(index), attachment)
    return rows


def read_vlans(path: Path) -> list[VlanRow]:
    rows = []
    for lineno, (vlan, subnet) in _rows(path, len(VLANS_COLUMNS)):
        try:
            net = ipaddress.IPv4Network(subnet)
        except ValueError:
            net = None
        if not _DECIMAL.fullmatch(vlan) or not 1 <= int(vlan) <= 4094 or net is None:
            raise UserError("malformed row", file=str(path), field=f"line {lineno}",
                            fix="render again; do not edit the table by hand")
        rows.append(VlanRow(int(vlan), net))
    return rows
