"""`vlanroute repair OUTDIR --failed-... -o NEWDIR`: the published plan, repaired around
failed cables, neighbour pairs and switches with the fewest link changes (docs/failures.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.table import Table

from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.failures import (
    Failures,
    check,
    parse_failures,
    read_failures_file,
)
from vlanroute.bundle.manifest import require_intact
from vlanroute.bundle.reader import check_outdir, read_plan
from vlanroute.bundle.repaired import Repaired
from vlanroute.commands.output import Say, emit_document, json_option, quiet_option
from vlanroute.commands.sshopts import host_key_policy, ssh_options, target_map
from vlanroute.errors import UserError
from vlanroute.exitcodes import ExitCode
from vlanroute.render.repaired import write_failedover, write_repaired, write_retreed

HOST_TABLES = ("hosts/hosts.tsv", "hosts/vlans.tsv")


def failure_options(f: Any) -> Any:
    """--failed-cable, --failed-pair, --failed-switch and --failures FILE."""
    f = click.option("--failures", "failures_file", type=click.Path(dir_okay=False, path_type=Path),
                     help="A YAML file with a `failures:` section (an inventory may hold it): "
                          "cables [sw:port], pairs [a:b], switches [name].")(f)
    f = click.option("--failed-switch", "failed_switches", multiple=True, metavar="SWITCH",
                     help="A dead switch (repeatable): its hosts are lost, every tree through it is repaired.")(f)
    f = click.option("--failed-pair", "failed_pairs", multiple=True, metavar="A:B",
                     help="Every cable between two neighbour switches is down, e.g. sw1:sw2 (repeatable).")(f)
    f = click.option("--failed-cable", "failed_cables", multiple=True, metavar="SWITCH:PORT",
                     help="One inter-switch cable is down, named by one end, e.g. sw1:1/g47 (repeatable). "
                          "A LAG that keeps a cable is no failed pair: only its capacity drops.")(f)
    return f


def gather_failures(cables: tuple[str, ...], pairs: tuple[str, ...], switches: tuple[str, ...],
                    file: Path | None) -> Failures:
    failures = parse_failures(cables, pairs, switches)
    if file is not None:
        failures = failures.merged(read_failures_file(file))
    return failures


@click.command("repair")
@click.argument("outdir", type=click.Path(file_okay=False, path_type=Path))
@click.option("-o", "--outdir", "newdir", required=True, type=click.Path(file_okay=False, path_type=Path),
              help="The repaired bundle (written, verified and published as `render` does).")
@failure_options
@click.option("--from-cabling-check", is_flag=True,
              help="Also read the failures from the live fabric: the inter-switch cables the LLDP "
                   "cabling check finds missing (needs the switches; the SSH options below).")
@click.option("--from-link-state", is_flag=True,
              help="Also read the failures from the live fabric: the inter-switch ports the switches "
                   "report down (show interface(s) status; needs the switches; the SSH options below).")
@click.option("--extra-changes", type=click.IntRange(0, 10_000), default=0, show_default=True,
              help="Allow up to N more link exchanges (in any tree) that lower the max link load (greedy).")
@click.option("--no-compare", is_flag=True, help="Skip the full re-plan of the degraded fabric (the comparison).")
@click.option("--failover", is_flag=True,
              help="Fail over instead of repairing: the dead pairs' VLANs move onto their backup VLANs "
                   "(routing.protection: links) by the PVID of their source switches' host ports; no "
                   "inter-switch port changes, the hosts need nothing (docs/failures.md).")
@click.option("--after-failover", is_flag=True,
              help="The step between a pushed failover and the repair: the repair's VLAN trees with the "
                   "hosts still failed over (the changed VLANs are idle, so neither this push nor the "
                   "repair's after it cuts a host pair; docs/failures.md).")
@click.option("--force", is_flag=True, help="Replace NEWDIR even if it holds files no render wrote.")
@click.option("--skip-manifest-check", is_flag=True,
              help="Repair a bundle that differs from what render wrote (manifest.json): the edit "
                   "goes into NEWDIR with a fresh manifest.")
@ssh_options
@json_option(doc="docs/failures.md")
@quiet_option
def command(outdir: Path, newdir: Path, failed_cables: tuple[str, ...], failed_pairs: tuple[str, ...],
            failed_switches: tuple[str, ...], failures_file: Path | None, from_cabling_check: bool,
            from_link_state: bool,
            extra_changes: int, no_compare: bool, failover: bool, after_failover: bool, force: bool, skip_manifest_check: bool, switches: tuple[str, ...],
            known_hosts: Path | None, insecure: bool, workers: int, targets_file: Path | None,
            as_json: bool, quiet: bool) -> int:
    """Repair the published plan in OUTDIR around failed cables, pairs or switches and write
    the new bundle to NEWDIR: no host's PVID or table row changes, surviving VLANs are
    untouched, each broken tree is joined again with the fewest links (then the lowest
    max load), and repair.json says what changed and the loop-free push order.
    `vlanroute push NEWDIR` then sends only the changes, in that order."""
    say = Say(as_json, quiet)
    check_outdir(outdir)
    _refuse_overlap(outdir, newdir)
    doc = read_plan(outdir)             # validated (names, types) as every command reads it
    # What repair uses must be what render wrote: NEWDIR gets a fresh manifest, so an edit
    # of plan.json (a switch's address) would come out of here looking published.
    if skip_manifest_check:
        click.secho("WARNING: --skip-manifest-check: OUTDIR's files are NOT checked against its "
                    "manifest; whatever was changed in plan.json goes into NEWDIR", fg="red", bold=True, err=True)
    else:
        require_intact(outdir, "repair", "--skip-manifest-check")
    failures = gather_failures(failed_cables, failed_pairs, failed_switches, failures_file)
    if from_cabling_check:
        found, notes = _live_failures(outdir, doc, switches, known_hosts, insecure, workers, targets_file, quiet)
        failures = failures.merged(found)
        for note in notes:
            say.warn(note)
    if from_link_state:
        found, notes = _link_state_failures(outdir, doc, switches, known_hosts, insecure, workers, targets_file,
                                            quiet)
        failures = failures.merged(found)
        for note in notes:
            say.warn(note)
    if not failures:
        raise UserError("no failure given", field="--failed-cable/--failed-pair/--failed-switch",
                        fix="name what is down, e.g. --failed-pair sw1:sw2, or use --from-cabling-check / --from-link-state")
    check(failures, doc)
    if set(failures.switches) >= set(doc.switches):
        raise UserError(f"every switch of the plan is failed ({len(doc.switches)} of {len(doc.switches)}): "
                        "there is no fabric left to repair", field="--failed-switch",
                        fix="name only the switches that are dead; bring at least one switch back first")
    if failover and after_failover:
        raise UserError("--failover and --after-failover are two different steps", field="--after-failover",
                        fix="write the failover first (--failover), push it, then --after-failover, push, then the repair")
    if failover:
        written = write_failedover(outdir, doc, failures, newdir, force=force)
    elif after_failover:
        written = write_retreed(outdir, doc, failures, newdir, force=force)
    else:
        written = write_repaired(outdir, doc, failures, newdir, extra_changes=extra_changes,
                                 compare=not no_compare, force=force)
    rep, result = written.repair, written.result
    same = _host_tables_same(outdir, newdir, set(rep.hosts_lost))
    for w in rep.warnings:
        say.warn(w)
    if say.human and failover:
        _print_failover(Console(), doc, rep, newdir)
        state = "verified" if result.verified else "NOT verified"
        say.line(f"{newdir}: {result.files} files, {result.bytes} bytes, {state}")
        changes = ("host ports' PVIDs change, and the ports towards the dead switch lose their VLANs"
                   if rep.record["failures"]["switches"] else "only host ports' PVIDs change")
        say.line(f"next: vlanroute push {newdir} --dry-run ({changes}, on the switches above); later the balanced "
                 "repair (`vlanroute repair` without --failover) from the published plan")
    elif say.human:
        _print(Console(), doc, rep, same, newdir)
        state = "verified" if result.verified else "NOT verified"
        say.line(f"{newdir}: {result.files} files, {result.bytes} bytes, {state}")
        say.line(f"next: vlanroute push {newdir} --dry-run (only the switches touched change, in the order above)")
        if after_failover:
            say.line("the hosts stay failed over in this bundle; once it is pushed, the repair itself (`vlanroute "
                     "repair` without --after-failover) moves their PVIDs back")
        if written.relearn is not None:
            say.line(f"then, once pushed: {written.relearn} on every host (its header gives the clush, pdsh and "
                     f"Ansible lines), and vlanroute audit {newdir}; or let `vlanroute watch` do it (docs/watch.md)")
    if as_json:
        from vlanroute.schemas.outputs import RepairDocument
        emit_document(RepairDocument.model_validate({
            "outdir": str(outdir), "newdir": str(newdir), "files": result.files, "verified": result.verified,
            "host_tables_unchanged": same, "warnings": rep.warnings, "repair": rep.record}))
    return ExitCode.OK


def _refuse_overlap(outdir: Path, newdir: Path) -> None:
    """NEWDIR must be apart from OUTDIR: the same directory, one inside the other (also
    through a symbolic link) would change or replace the bundle the fabric runs."""
    old, new = outdir.resolve(), newdir.resolve()
    if new == old:
        why = "is the bundle being repaired"
    elif old in new.parents:
        why = "is inside the bundle being repaired (it would become a file of that bundle)"
    elif new in old.parents:
        why = "holds the bundle being repaired (writing it would replace that bundle)"
    else:
        return
    raise UserError(f"{newdir} {why}", field="-o/--outdir",
                    fix=f"write the repair beside {outdir}, e.g. -o {outdir.name}-repaired in the same folder")


def _live_failures(outdir: Path, doc: PlanDocument, switches: tuple[str, ...], known_hosts: Path | None,
                   insecure: bool, workers: int, targets_file: Path | None, quiet: bool) -> tuple[Failures, list[str]]:
    from vlanroute.device.cablecheck import readable, run_check
    from vlanroute.device.credentials import load_credentials
    from vlanroute.device.failedlinks import from_cabling

    targets, skipped = readable(outdir, doc, switches, target_map(targets_file, quiet=quiet))
    report = run_check(outdir, doc, targets, skipped, load_credentials(),
                       host_key_policy(insecure, known_hosts), workers)
    return from_cabling(report)


def _link_state_failures(outdir: Path, doc: PlanDocument, switches: tuple[str, ...], known_hosts: Path | None,
                         insecure: bool, workers: int, targets_file: Path | None,
                         quiet: bool) -> tuple[Failures, list[str]]:
    from vlanroute.device.credentials import load_credentials
    from vlanroute.device.failedlinks import from_link_state
    from vlanroute.device.linkstate import read_link_states
    from vlanroute.device.targets import check_loopback, select_targets

    names = switches or tuple(sorted(doc.switches))
    targets = select_targets(outdir, doc, names, action="audit", target_map=target_map(targets_file, quiet=quiet)).targets
    check_loopback(targets)
    states, errors = read_link_states(targets, load_credentials(), host_key_policy(insecure, known_hosts), workers)
    found, notes = from_link_state(doc, states)
    # from_link_state names every switch it has no state of; say why where the read failed.
    notes = [n for n in notes if not any(n.startswith(f"switch {sw} ") for sw in errors)]
    notes += [f"switch {sw} could not be read ({why}); if it is dead, add --failed-switch {sw}"
              for sw, why in sorted(errors.items())]
    return found, notes


def _host_tables_same(outdir: Path, newdir: Path, lost: set[str]) -> bool:
    """The host tables of NEWDIR are those of OUTDIR less the rows of lost hosts."""
    for rel in HOST_TABLES:
        old, new = outdir / rel, newdir / rel
        if not old.is_file() and not new.is_file():
            continue
        try:
            rows = [r for r in old.read_text().splitlines(keepends=True) if r.split("\t", 1)[0] not in lost]
            if "".join(rows) != new.read_text():
                return False
        except OSError:
            return False
    return True


def _links(links: list[tuple[str, str]]) -> str:
    return " ".join(f"{a}-{b}" for a, b in links) or "-"


def _print_failover(console: Console, doc: PlanDocument, rep: Repaired, newdir: Path) -> None:
    r = rep.record
    f = r["failures"]
    what = ([f"cable {c}" for c in f["cables"]] + [f"pair {p.replace(':', '-')}" for p in f["pairs"]]
            + [f"switch {s}" for s in f["switches"]])
    console.print(f"[bold]{doc.name}[/bold]: fail over around {', '.join(what)}", highlight=False)
    table = Table(title=f"{len(r['failover'])} VLAN(s) failed over by the PVID of their source switches' host ports")
    table.add_column("VLAN", justify="right")
    table.add_column("onto backup", justify="right")
    table.add_column("source switches")
    table.add_column("host ports", justify="right")
    for m in r["failover"]:
        table.add_row(str(m["vlan"]), str(m["backup"]), " ".join(m["sources"]), str(m["ports"]))
    console.print(table)
    for x in r["not_failed_over"]:
        console.print(f"NOT failed over: VLAN {x['vlan']} ({' '.join(x['sources'])}): {x['why']}", highlight=False)
    console.print(f"max link load {r['max_link_load']:g} (lower bound of the degraded fabric "
                  f"{r['link_load_lower_bound']:g}); deadlock-free under 802.3x PAUSE: "
                  f"{'yes' if r['deadlock_free'] else 'no'}; "
                  + (f"inter-switch ports: only those towards the dead switch ({' '.join(f['switches'])}) lose "
                     "their VLANs" if f["switches"] else "no inter-switch port changes")
                  + "; the hosts re-learn in nothing and need no new files (hosts.tsv's vlan column follows the PVID: "
                  "the host program only shows it)" + (f"; hosts lost: {len(r['hosts_lost'])}" if r["hosts_lost"] else ""),
                  highlight=False)


def _print(console: Console, doc: PlanDocument, rep: Repaired, same: bool, newdir: Path) -> None:
    r = rep.record
    f = r["failures"]
    what = [f"cable {c}" for c in f["cables"]] + [f"pair {p.replace(':', '-')}" for p in f["pairs"]] + \
           [f"switch {s}" for s in f["switches"]]
    console.print(f"[bold]{doc.name}[/bold]: repair around {', '.join(what)}", highlight=False)
    for lc in r["lost_capacity"]:
        console.print(f"pair {lc['pair'].replace(':', '-')} keeps {lc['live']} of {lc['cables']} cables: "
                      "not a failed pair, its load is spread over the cables left", highlight=False)
    untouched = [v.id for v in doc.vlans if v.id not in r["affected_vlans"]]
    table = Table(title=f"{len(r['broken_vlans'])} of {len(doc.vlans)} VLAN trees broken; "
                        f"untouched: {' '.join(map(str, untouched)) or 'none'}")
    table.add_column("VLAN", justify="right")
    table.add_column("why")
    table.add_column("links removed")
    table.add_column("links added")
    for c in r["changes"]:
        table.add_row(str(c["vlan"]), "broken" if c["forced"] else "extra (load)",
                      _links([tuple(l) for l in c["removed"]]), _links([tuple(l) for l in c["added"]]))
    if r["changes"]:
        console.print(table)
    lost = r["hosts_lost"]
    console.print(f"links added: {r['links_added']}" + (f" (of which {r['extra_changes']} extra)" if r["extra_changes"] else "")
                  + f"; switches touched: {len(r['switches_touched'])} of {len(doc.switches)} "
                  f"({' '.join(r['switches_touched']) or 'none'}); hosts lost: {len(lost)}"
                  + (f" (on {', '.join(f['switches'])})" if lost else ""), highlight=False)
    bound = r["link_load_lower_bound"]
    load = r["max_link_load"]
    ratio = f", x{load / bound:.3f}" if bound else ""
    console.print(f"max link load {load:g} (lower bound of the degraded fabric {bound:g}{ratio}); "
                  f"deadlock-free under 802.3x PAUSE: {'yes' if r['deadlock_free'] else 'no'}", highlight=False)
    full = r["full_replan"]
    if full:
        console.print(f"a full re-plan ({full['algorithm']}) instead: {full['vlan_count']} VLANs, max link load "
                      f"{full['max_link_load']:g}, {full['hosts_new_pvid']} hosts with a new PVID, "
                      f"{full['trees_changed']} trees changed", highlight=False)
    console.print(f"VLANs the hosts re-learn in: {' '.join(map(str, r['affected_vlans'])) or 'none'}; "
                  f"host tables {'unchanged (the compute nodes need no new files)' if same else 'CHANGED'}",
                  highlight=False)
    if r["affected_vlans"] and (newdir / "hosts" / "relearn.sh").is_file():
        console.print(f"after the push, the hosts re-learn: run {newdir}/hosts/relearn.sh on every host (the host "
                      "program with --vlans for these VLANs; its header gives the ClusterShell, pdsh and "
                      "Ansible lines), or wait for the refresh job's next run (docs/failures.md, step 5)",
                      highlight=False, markup=False)
    safe = "loop-free" if r["push_order_loop_free"] else "NO loop-free order of whole switches found"
    console.print(f"switch order from the two plans ({safe}; push plans its own from what the switches run): "
                  f"{' '.join(r['push_order']) or 'nothing to push'}", highlight=False)
