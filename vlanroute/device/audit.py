"""`vlanroute audit`: is every host's MAC learned, in every VLAN, on the right port?

VLAN routing needs each switch of VLAN v's tree to have learned every host's MAC in v on
the port towards that host (the host's own port on its switch, else the inter-switch port
or LAG leading to the host's switch along v's tree); otherwise frames to the host are
flooded. The refresh job (hosts/*.sh, refresh/) keeps those entries alive; this reads
each switch's learned-MAC table over SSH and lists every (VLAN, host MAC) that is
missing or on the wrong port.
"""

from __future__ import annotations

from collections import defaultdict, deque
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
import re
from typing import Any

from vlanroute.device.credentials import Credentials
from vlanroute.device.session import HostKeyPolicy, SessionError, SwitchSession
from vlanroute.device.targets import Target

# The command that prints learned MACs, per platform family.
# powerconnect-62xx: C (fake-switches emulation, ntc-templates dell_powerconnect);
# dell-os6: P (N-series output seen in field scripts).
ADDRESS_TABLE_COMMAND = {
    "powerconnect-62xx": "show bridge address-table",
    "dell-os6": "show mac address-table",
}
_TYPES = {"dynamic", "static", "management", "self", "learned", "permanent"}
_ROW = re.compile(r"^\s*(\d+)\s+([0-9A-Fa-f]{2}(?:[:-][0-9A-Fa-f]{2}){5}|"
                  r"[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4}\.[0-9A-Fa-f]{4})\s+(\S+)\s+(\S+)\s*$")


@dataclass(frozen=True)
class Expected:
    switch: str
    vlan: int
    host: str
    mac: str
    port: str


@dataclass(frozen=True)
class Finding:
    expected: Expected
    found_port: str | None          # None: missing

    @property
    def problem(self) -> str:
        return "missing" if self.found_port is None else f"on {self.found_port}"


@dataclass
class AuditReport:
    findings: list[Finding] = field(default_factory=list)
    checked: int = 0
    no_mac: list[str] = field(default_factory=list)        # hosts the plan has no MAC for
    errors: dict[str, str] = field(default_factory=dict)   # switch -> why it was not read


def normalize_mac(text: str) -> str:
    digits = re.sub(r"[^0-9a-fA-F]", "", text).lower()
    return ":".join(digits[i:i + 2] for i in range(0, 12, 2))


def parse_address_table(text: str) -> dict[tuple[int, str], str]:
    """(VLAN, mac) -> port, from the table in either column order (Port/Type or Type/Port)."""
    table: dict[tuple[int, str], str] = {}
    for line in text.splitlines():
        m = _ROW.match(line)
        if not m:
            continue
        a, b = m.group(3), m.group(4)
        port = b if a.lower() in _TYPES else a
        table[(int(m.group(1)), normalize_mac(m.group(2)))] = port
    return table


def _port_towards(switch_doc: dict[str, Any], neighbor: str) -> str:
    for name, port in sorted(switch_doc["ports"].items()):
        if port["role"] != "host" and port.get("neighbor") == neighbor:
            return f"ch{port['lag']}" if port.get("lag") is not None else name
    raise KeyError(neighbor)


def expected_entries(plan: dict[str, Any]) -> tuple[list[Expected], list[str]]:
    """Every (switch, VLAN, host MAC, port) the plan needs learned; hosts without a MAC."""
    out: list[Expected] = []
    no_mac = sorted(h for h, d in plan["hosts"].items() if not d.get("mac"))
    for vlan in plan["vlans"]:
        vid = vlan["id"]
        adj: dict[str, list[str]] = defaultdict(list)
        for a, b in vlan["links"]:
            adj[a].append(b)
            adj[b].append(a)
        for host, hd in sorted(plan["hosts"].items()):
            if not hd.get("mac"):
                continue
            wanted = hd.get("learning_addresses")
            if wanted and str(vid) not in wanted:
                continue
            home = hd["switch"]
            # Walk the VLAN's tree outwards from the host's switch: each switch reaches the
            # host through the neighbour it was discovered from.
            towards: dict[str, str | None] = {home: None}
            queue = deque([home])
            while queue:
                s = queue.popleft()
                for n in adj[s]:
                    if n not in towards:
                        towards[n] = s
                        queue.append(n)
            for s in vlan["switches"]:
                if s not in towards:
                    continue
                nxt = towards[s]
                port = hd["port"] if nxt is None else _port_towards(plan["switches"][s], nxt)
                out.append(Expected(s, vid, host, normalize_mac(hd["mac"]), port))
    return out, no_mac


def run_audit(plan: dict[str, Any], targets: list[Target], creds: Credentials,
              host_keys: HostKeyPolicy, workers: int,
              connect: Any = SwitchSession) -> AuditReport:
    expected, no_mac = expected_entries(plan)
    report = AuditReport(no_mac=no_mac)
    by_switch: dict[str, list[Expected]] = defaultdict(list)
    for e in expected:
        by_switch[e.switch].append(e)

    def read(target: Target) -> tuple[str, dict[tuple[int, str], str] | str]:
        command = ADDRESS_TABLE_COMMAND.get(target.platform.family)
        if command is None:
            return target.name, f"no address-table command known for {target.platform.family}"
        try:
            session = connect(target.platform, target.host, target.port, creds, host_keys)
        except SessionError as exc:
            return target.name, str(exc)
        try:
            session.run("end", check=False)
            return target.name, parse_address_table(session.run(command))
        except SessionError as exc:
            return target.name, str(exc)
        finally:
            session.close()

    with ThreadPoolExecutor(max_workers=max(1, min(workers, len(targets) or 1))) as pool:
        tables = dict(pool.map(read, targets))
    for target in targets:
        table = tables[target.name]
        if isinstance(table, str):
            report.errors[target.name] = table
            continue
        for e in by_switch.get(target.name, []):
            report.checked += 1
            found = table.get((e.vlan, e.mac))
            if found != e.port:
                report.findings.append(Finding(e, found))
    return report
