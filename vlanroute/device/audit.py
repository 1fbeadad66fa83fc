"""`vlanroute audit`: is every host's MAC learned, in every VLAN, on the right port?

VLAN routing needs each switch of VLAN v's tree to have learned every host's MAC in v on
the port towards that host (the host's own port on its switch, else the inter-switch port
or LAG leading to the host's switch along v's tree); otherwise frames to the host are
flooded. The refresh job (hosts/*.sh, refresh/) keeps those entries alive; this reads
each switch's learned-MAC table over SSH and lists every (VLAN, host MAC) that is
missing or on the wrong port.
"""

from __future__ import annotations

from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.learning import learning_ports
from vlanroute.device.credentials import Credentials
from vlanroute.device.session import HostKeyPolicy, SessionError, SwitchSession
from vlanroute.device.targets import Target
from vlanroute.drivers.common import normalize_mac
from vlanroute.errors import UserError
from vlanroute.model.bridge import PortRef
from vlanroute.natural import natsorted, natsorted_items


@dataclass(frozen=True)
class Expected:
    switch: str
    vlan: int
    host: str
    mac: str
    port: PortRef


@dataclass(frozen=True)
class Finding:
    expected: Expected
    found_port: PortRef | None          # None: missing


@dataclass
class AuditReport:
    findings: list[Finding] = field(default_factory=list)
    checked: int = 0
    no_mac: list[str] = field(default_factory=list)        # hosts the plan has no MAC for
    errors: dict[str, str] = field(default_factory=dict)   # switch -> why it was not read
    port_labels: dict[str, Callable[[PortRef], str]] = field(default_factory=dict)  # switch -> its family's

    @property
    def ok(self) -> bool:
        return not self.findings and not self.errors

    def to_json(self) -> dict[str, object]:
        """The record of `audit --json` (docs/json.md, vlanroute/schemas/audit.json)."""
        def label(switch: str, port: PortRef) -> str:
            return self.port_labels[switch](port) if switch in self.port_labels else str(port)
        findings = [{"switch": f.expected.switch, "vlan": f.expected.vlan, "host": f.expected.host,
                     "mac": f.expected.mac, "expected_port": label(f.expected.switch, f.expected.port),
                     "found_port": None if f.found_port is None else label(f.expected.switch, f.found_port)}
                    for f in self.findings]
        return {"ok": self.ok, "checked": self.checked, "present": self.checked - len(self.findings),
                "findings": findings, "errors": dict(natsorted_items(self.errors)), "no_mac": self.no_mac}


def expected_entries(doc: PlanDocument) -> tuple[list[Expected], list[str]]:
    """Every (switch, VLAN, host MAC, port) the plan needs learned; hosts without a MAC."""
    no_mac = natsorted(h for h, d in doc.hosts.items() if not d.mac)
    with_mac = [h for h in natsorted(doc.hosts) if doc.hosts[h].mac]
    out: list[Expected] = []
    for e in learning_ports(doc, with_mac):
        h = doc.hosts[e.host]                      # every host learns in every routing VLAN
        assert h.mac is not None
        out.append(Expected(e.switch, e.vlan, e.host, normalize_mac(h.mac), e.port))
    return out, no_mac


def nothing_to_check(doc: PlanDocument, targets: list[Target]) -> str | None:
    """Why an audit of `targets` would check no MAC entry, or None: audit refuses then
    instead of reporting "0 of 0" as a success. A switch without hosts of its own is checked
    for every host whose VLAN tree crosses it."""
    if not doc.hosts:
        return "the plan has no hosts"
    hosts = [h for h, d in doc.hosts.items() if d.mac]
    if not hosts:
        return (f"none of the {len(doc.hosts)} hosts of the plan has a MAC in the inventory, so there is no "
                "MAC entry to look for")
    names = {t.name for t in targets}
    if not any(e.switch in names for e in learning_ports(doc, hosts)):
        return "no host's VLAN tree reaches the selected switches, so they learn no host MAC"
    return None


def require_something_to_check(doc: PlanDocument, targets: list[Target], outdir: object) -> None:
    """nothing_to_check as the UserError audit (CLI and vlanroute.api) stops with, exit 2,
    before any connection."""
    why = nothing_to_check(doc, targets)
    if why:
        raise UserError(f"nothing to audit: {why}", file=f"{outdir}/plan.json",
                        fix="give the hosts' MACs in the inventory (hosts.list[].mac, or a mac column in "
                            "hosts.csv), render OUTDIR again, then audit; to rehearse in the lab, render an "
                            "inventory that gives them, e.g. inventories/custom-lab.yaml")


def findings_by_switch(findings: list[Finding]) -> dict[str, tuple[int, int]]:
    """switch -> (entries missing, entries on the wrong port): the summary audit prints."""
    out: dict[str, tuple[int, int]] = {}
    for f in findings:
        missing, wrong = out.get(f.expected.switch, (0, 0))
        out[f.expected.switch] = (missing + 1, wrong) if f.found_port is None else (missing, wrong + 1)
    return dict(natsorted_items(out))


def run_audit(doc: PlanDocument, targets: list[Target], creds: Credentials,
              host_keys: HostKeyPolicy, workers: int,
              connect: Any = SwitchSession,
              on_done: Callable[[str, bool], None] | None = None) -> AuditReport:
    """`on_done(switch, read)` is called as each switch's table is read (or not): progress."""
    expected, no_mac = expected_entries(doc)
    report = AuditReport(no_mac=no_mac, port_labels={t.name: t.family.port_label for t in targets})
    by_switch: dict[str, list[Expected]] = defaultdict(list)
    for e in expected:
        by_switch[e.switch].append(e)

    def read(target: Target) -> tuple[str, dict[tuple[int, str], PortRef] | str]:
        name, table = _read(target)
        if on_done is not None:
            on_done(name, not isinstance(table, str))
        return name, table

    def _read(target: Target) -> tuple[str, dict[tuple[int, str], PortRef] | str]:
        family = target.family
        command = family.address_table_command if family.capabilities.audit else None
        if command is None:
            return target.name, f"no address-table command known for {family.name}"
        try:
            session = connect(target.cli, target.host, target.port, creds, host_keys)
        except SessionError as exc:
            return target.name, str(exc)
        try:
            session.run("end", check=False)
            return target.name, family.parse_address_table(session.run(command))
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
