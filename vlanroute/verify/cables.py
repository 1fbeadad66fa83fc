"""cabling.csv's host cables and labels against plan.json (verify covers every row it publishes).

The inter-switch rows are checked against plan.json and the configs in
vlanroute.verify.configs; here: each host cable must be the host's planned port and
interface, every host must have its row, and every label must be the one derived from the
cable's ends (bundle.cables), so a hand edit that relabels or moves a cable is caught. A
file of an older render (no kind and label columns) has no host rows and no labels to check.
"""

from __future__ import annotations

from pathlib import Path

from vlanroute.bundle.cables import HOST, planned_cables
from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.reader import read_all_cables


def cable_row_violations(outdir: Path, doc: PlanDocument) -> list[str]:
    rows = read_all_cables(outdir, doc.switches, hosts=doc.hosts)
    if not any(r.label for r in rows):
        return []                              # the 6-column file of an older render
    expected = {frozenset(c.ends()): c for c in planned_cables(doc)}
    out: list[str] = []
    hosts_seen: set[str] = set()
    for r in rows:
        want = expected.get(frozenset(((r.a, r.a_port), (r.b, r.b_port))))
        if r.kind == HOST:
            hosts_seen.add(r.b)
            h = doc.hosts[r.b]
            planned = (h.switch, h.port)
            if (r.a, r.a_port) != planned or want is None:
                out.append(f"cabling.csv line {r.row}: host {r.b} is on {r.a} {r.a_port} {r.b_port}, "
                           f"plan.json has {planned[0]} {planned[1]} {want.b_port if want else h.interface or 'eth0'}")
                continue
        if want is not None and r.label != want.label:
            out.append(f"cabling.csv line {r.row}: cable {r.a} {r.a_port} - {r.b} {r.b_port} is labelled "
                       f"{r.label or '(nothing)'}, its label is {want.label}")
    for name in sorted(set(doc.hosts) - hosts_seen):
        h = doc.hosts[name]
        out.append(f"cabling.csv: the cable of host {name} ({h.switch} {h.port}) is missing")
    return out
