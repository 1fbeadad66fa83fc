"""Run the cabling check of an OUTDIR against live switches (`vlanroute cabling check`, and
push before it changes anything): choose the switches, read their LLDP tables, compare.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.platforms import resolve_platforms
from vlanroute.bundle.reader import read_all_cables
from vlanroute.bundle.failures import Failures
from vlanroute.device.cabling import CablingReport, End, Returned, check_cabling
from vlanroute.device.credentials import Credentials
from vlanroute.device.lldp import LldpSource, LldpTable, has_lldp_reader, read_tables
from vlanroute.device.repairpush import repaired_failures
from vlanroute.device.session import HostKeyPolicy, SwitchSession
from vlanroute.device.targets import Target, TargetMap, check_loopback, select_targets
from vlanroute.drivers import family_of
from vlanroute.natural import natsorted
from vlanroute.model.links import link


def readable(outdir: Path, doc: PlanDocument, names: tuple[str, ...],
             target_map: TargetMap | None) -> tuple[list[Target], dict[str, str]]:
    """The switches whose LLDP table vlanroute can read over SSH, and why each other one
    cannot be read."""
    platforms = resolve_platforms(doc, source=str(outdir / "plan.json")).by_switch
    chosen = names or tuple(natsorted(doc.switches))
    skipped: dict[str, str] = {}
    ok: list[str] = []
    for name in chosen:
        family = family_of(platforms[name]) if name in platforms else None
        if family is None:
            ok.append(name)                 # select_targets names the unknown switch
        elif family.cli is None:
            skipped[name] = f"{family.title} is not managed over SSH"
        elif not has_lldp_reader(family):
            skipped[name] = f"no LLDP neighbour table reader for {family.title} yet"
        else:
            ok.append(name)
    targets = select_targets(outdir, doc, tuple(ok), action="audit", target_map=target_map).targets if ok else []
    return targets, skipped


def run_check(outdir: Path, doc: PlanDocument, targets: list[Target], skipped: dict[str, str],
              creds: Credentials, host_keys: HostKeyPolicy, workers: int,
              connect: Any = SwitchSession) -> CablingReport:
    """Read the targets' LLDP tables and compare them with OUTDIR/cabling.csv."""
    check_loopback(targets)
    cables = read_all_cables(outdir, doc.switches, hosts=doc.hosts)
    sources = [LldpSource(t.name, t.host, t.port, t.family, t.cli) for t in targets]
    tables = read_tables(sources, creds, host_keys, workers, connect)
    tables.update({name: LldpTable(name, error=why) for name, why in skipped.items()})
    platforms = resolve_platforms(doc, source=str(outdir / "plan.json")).by_switch
    port_names = {name: family_of(p).lldp_port_name for name, p in platforms.items()}
    failures = repaired_failures(outdir)
    # A repaired bundle: the switches it lost are still named (a returning one is no
    # unknown device), and a cable its failures took out is recognised when it is back.
    switches = set(doc.switches) | set(failures.switches if failures else ())
    return check_cabling(cables, tables, switches, {h: d.mac for h, d in doc.hosts.items()}, port_names,
                         returned=_returned_by(failures) if failures else None)


def _returned_by(failures: Failures) -> Returned:
    dead, pairs, ends = set(failures.switches), set(failures.pairs), set(failures.cables)

    def why(u: End, v: End) -> str | None:
        if u[0] != "port" or v[0] != "port":
            return None
        a, b = (u[1], u[2]), (v[1], v[2])
        if link(a[0], b[0]) in pairs:
            return f"repair.json: failed pair {min(a[0], b[0])}-{max(a[0], b[0])}"
        hit = next((e for e in (a, b) if e in ends), None)
        if hit is not None:
            return f"repair.json: failed cable {hit[0]}:{hit[1]}"
        down = next((s for s in (a[0], b[0]) if s in dead), None)
        if down is not None:
            return f"repair.json: failed switch {down}"
        return None
    return why
