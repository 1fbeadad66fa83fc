"""A repaired bundle written as `vlanroute repair` writes it: the repaired plan rendered,
verified and published at once, with `repair.json` and, when VLAN trees changed and the plan
has hosts, `hosts/relearn.sh` (docs/failures.md). `vlanroute watch` writes its repairs the
same way, through this one function; a failed-over bundle (`repair --failover`,
bundle/failedover.py) through `write_failedover`, with no relearn.sh (the hosts already
learn in every backup VLAN)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.failures import Failures
from vlanroute.bundle.failedover import failover_document, retreed_document
from vlanroute.bundle.repaired import REPAIR_FILE, Repaired, repair_document
from vlanroute.render.relearn import RELEARN_FILE, relearn_script
from vlanroute.render.write import RenderOptions, RenderResult, render_to_dir


@dataclass(frozen=True)
class RepairedBundle:
    repair: Repaired
    result: RenderResult
    relearn: Path | None             # NEWDIR/hosts/relearn.sh, when the hosts must re-learn


def write_repaired(outdir: Path, doc: PlanDocument, failures: Failures, newdir: Path, *, extra_changes: int = 0,
                   compare: bool = True, force: bool = False) -> RepairedBundle:
    """Repair OUTDIR's plan `doc` around `failures` (checked against it by the caller) and
    publish the bundle at NEWDIR; PlanError when no repair joins every VLAN's hosts."""
    rep = repair_document(doc, failures, extra_changes, compare=compare)
    record_text = json.dumps(rep.record, indent=1) + "\n"
    extra: tuple[tuple[str, str], ...] = ((REPAIR_FILE, record_text),)
    relearn = bool(rep.record["affected_vlans"] and doc.hosts)     # the hosts re-learn in them
    if relearn:
        extra += ((RELEARN_FILE, relearn_script(rep.doc.name or newdir.name, rep.record["affected_vlans"])),)
    options = RenderOptions(per_host_scripts=(outdir / "hosts" / "per-host").is_dir(), force=force,
                            extra_files=extra)
    result = render_to_dir(rep.doc, newdir, options)
    return RepairedBundle(rep, result, result.outdir / RELEARN_FILE if relearn else None)


def write_failedover(outdir: Path, doc: PlanDocument, failures: Failures, newdir: Path, *,
                     force: bool = False) -> RepairedBundle:
    """Fail OUTDIR's plan `doc` over around `failures` (its dead pairs' VLANs onto their
    backups, bundle/failedover.py) and publish the bundle at NEWDIR; PlanError when the plan
    has no backup VLANs or nothing can fail over."""
    rep = failover_document(doc, failures)
    extra: tuple[tuple[str, str], ...] = ((REPAIR_FILE, json.dumps(rep.record, indent=1) + "\n"),)
    options = RenderOptions(per_host_scripts=(outdir / "hosts" / "per-host").is_dir(), force=force,
                            extra_files=extra)
    result = render_to_dir(rep.doc, newdir, options)
    return RepairedBundle(rep, result, None)


def write_retreed(outdir: Path, doc: PlanDocument, failures: Failures, newdir: Path, *,
                  force: bool = False) -> RepairedBundle:
    """The bundle between a failover and its repair (bundle/failedover.py `retreed_document`):
    the repair's trees, the failover's PVIDs. Its relearn.sh is the repair's: the hosts may
    learn in the changed VLANs as soon as their trees stand, before anyone sends in them."""
    rep = retreed_document(doc, failures, repair_document(doc, failures, compare=False))
    extra: tuple[tuple[str, str], ...] = ((REPAIR_FILE, json.dumps(rep.record, indent=1) + "\n"),)
    relearn = bool(rep.record["affected_vlans"] and doc.hosts)
    if relearn:
        extra += ((RELEARN_FILE, relearn_script(rep.doc.name or newdir.name, rep.record["affected_vlans"])),)
    options = RenderOptions(per_host_scripts=(outdir / "hosts" / "per-host").is_dir(), force=force,
                            extra_files=extra)
    result = render_to_dir(rep.doc, newdir, options)
    return RepairedBundle(rep, result, result.outdir / RELEARN_FILE if relearn else None)
