"""`vlanroute whatif INVENTORY`: every single pair and switch failure, repaired in turn, and
what heals by itself (bundle/guarantees.py): the class of every single failure and of a
seeded sample of double failures. INVENTORY may be a bundle render wrote
(commands/sources.py): its plan, not planned again.

A verb of its own rather than `analyze --what-if`: analyze puts several inventories side by
side, one row each; the what-if is one inventory with one row per failure, and its JSON
has another shape (docs/failures.md)."""

from __future__ import annotations

from typing import Any

import click
from rich.console import Console
from rich.table import Table

from vlanroute import api
from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.guarantees import (Doubles, Fabric, Verdict, automatic_text, doubles_text, group_json,
                                         single_text)
from vlanroute.bundle.repaired import REPAIR_FILE
from vlanroute.commands.common import set_option
from vlanroute.commands.output import emit_document, json_option, quiet_option
from vlanroute.commands.sources import bundle_document, bundle_dir
from vlanroute.errors import UserError
from vlanroute.exitcodes import ExitCode
from vlanroute.operate.policy import WatchPolicy
from vlanroute.routing.whatif.failures import FailureRow, what_if

HEADERS = ["failure", "host pairs cut", "hosts lost", "trees to repair", "links added", "max load after",
           "bound", "load / bound", "heals", "outage", "load failed over", "deadlock-free after"]

OUTAGES = {
    "none": "no surviving host pair is cut",
    "failover": "detection, then one PVID push on the source switches (no re-learning)",
    "repair": "detection, then the repair written and pushed, then the hosts re-learn (relearn.sh or the refresh timer)",
    "person": "until a person pushes the heal the watcher proposes",
    "until-return": "the parts stay cut from each other until a cable or switch returns",
}


def _yes(x: bool | None) -> str:
    return "-" if x is None else ("yes" if x else "no")


def _cells(r: FailureRow, v: Verdict) -> list[str]:
    load = "cut off" if r.max_load is None else f"{r.max_load:g}"
    ratio = "-" if r.max_load is None or not r.bound else f"{r.max_load / r.bound:.3f}"
    name = f"pair {r.name.replace(':', '-')}" if r.kind == "pair" else f"switch {r.name}"
    failed_over = "-" if v.max_link_load_failed_over is None else f"{v.max_link_load_failed_over:g}"
    return [name, str(r.pairs_cut), str(r.hosts_lost), str(r.trees), str(r.links_added), load,
            f"{r.bound:.6g}", ratio, v.heal, v.outage, failed_over, _yes(v.deadlock_free)]


def _spread(d: dict[str, float] | None) -> str:
    return "-" if d is None else f"{d['median']:g} / {d['max']:g}"


def _doubles_table(d: Doubles) -> Table:
    table = Table(title=f"double failures: {d.sampled} of {sum(d.population.values())} (seed {d.seed}), "
                        "each healed from the published plan around both")
    for i, title in enumerate(["kind", "sampled (of all)", "heal", "failover+repair", "repair", "split",
                               "outage classes", "by itself", "deadlock-free after",
                               "max load after: median / max", "failed over: median / max"]):
        table.add_column(title, justify="left" if i in (0, 6) else "right")
    for kind, vs in d.by_kind().items():
        g = group_json(vs)
        heals = g["heal"].get("failover+repair", 0) + g["heal"].get("repair", 0)
        outage = ", ".join(f"{k} {n}" for k, n in sorted(g["outage"].items()))
        free = f"{g['deadlock_free_after']}/{g['deadlock_checked']}" if g["deadlock_checked"] else "-"
        table.add_row(kind, f"{len(vs)} ({d.population[kind]})", f"{heals}/{len(vs)}",
                      str(g["heal"].get("failover+repair", 0)), str(g["heal"].get("repair", 0)),
                      str(g["heal"].get("split", 0)), outage or "-", str(g["automatic"]), free,
                      _spread(g["max_link_load"]), _spread(g["max_link_load_failed_over"]))
    return table


def _notes(singles: list[Verdict], doubles: list[Verdict]) -> list[str]:
    """What a row cannot say: the hosts lost, the parts cut off, why deadlock freedom is lost."""
    out = []
    lost = [f"{v.failures.switches[0]} {len(v.hosts_lost)} ({_names(v.hosts_lost)})" for v in singles if v.hosts_lost]
    if lost:
        out.append("a dead switch's own hosts are lost, whatever heals: " + ", ".join(lost))
    for v in singles:
        if v.cut_off:
            parts = "; ".join(" ".join(p) for p in v.cut_off)
            out.append(f"{v.name()} splits the fabric; cut off from the rest: {parts} ({v.cut_off_hosts} hosts)")
        if v.heals and v.deadlock_free is False:
            out.append(f"{v.name()}: not deadlock-free after the repair: {v.deadlock_note}")
        if v.deadlock_free_failed_over is False:
            out.append(f"{v.name()}: not deadlock-free while failed over (the repair that follows restores it "
                       "where the graph allows)")
    unfree = [v for v in doubles if v.heals and v.deadlock_free is False]
    for v in unfree[:3]:
        out.append(f"{v.name()}: not deadlock-free after the repair: {v.deadlock_note}")
    if len(unfree) > 3:
        out.append(f"{len(unfree) - 3} more sampled double failures are not deadlock-free after the repair (--json)")
    return out


def _document(source: str, sets: tuple[str, ...]) -> PlanDocument:
    """The plan document of an inventory, or of a bundle render wrote. A repaired or
    failed-over bundle is refused: the watcher heals a further failure from the plan render
    wrote, around all the failures at once (docs/watch.md), not from the repaired plan, so
    whatif's figures on it would not be those the fabric reaches."""
    outdir = bundle_dir(source)
    if outdir is None:
        return api.plan(source, sets).to_document()
    if (outdir / REPAIR_FILE).exists():      # before the manifest's hashes and plan.json's read
        raise UserError(f"{source} is a repaired bundle: the watcher heals a further failure from the plan "
                        "render wrote, around all the failures at once, not from this repair, so whatif's "
                        "figures on it would not be the fabric's", file=str(outdir / REPAIR_FILE),
                        fix="run whatif on the inventory or on the bundle render wrote: a failure on top of "
                            "this one is among its double failures (--doubles)")
    return bundle_document(outdir, source, "whatif", sets)


def _names(names: list[str]) -> str:
    return ", ".join(names) if len(names) <= 3 else f"{names[0]} ... {names[-1]}"


@click.command("whatif")
@click.argument("inventory", type=click.Path())
@click.option("--top", type=click.IntRange(0, 1_000_000), default=0,
              help="Show only the N failures that cut the most host pairs (0: every failure).")
@click.option("--doubles", type=click.IntRange(0, 100_000), default=200, show_default=True,
              help="Double failures to sample and heal (all of them when there are no more; 0: none).")
@click.option("--seed", type=click.IntRange(0, 2**32 - 1), default=0, show_default=True,
              help="The seed of the double failures' sample.")
@json_option(doc="docs/failures.md")
@quiet_option
@set_option
def command(inventory: str, top: int, doubles: int, seed: int, as_json: bool, quiet: bool,
            sets: tuple[str, ...]) -> int:
    """For every single failure of a neighbour pair (all its cables) and of a switch: the
    host pairs it cuts before any repair, the trees to repair, the links the minimal
    repair (`vlanroute repair`) adds, the max link load after it against a lower bound,
    and how it heals (by fast failover then repair, by repair, or not: the fabric splits),
    whether the watcher heals it by itself under the site's policy, and deadlock freedom
    after it. Then a seeded sample of double failures, each healed as the watcher heals it.
    INVENTORY is an inventory, or a bundle render wrote (OUTDIR or OUTDIR/plan.json,
    checked against its manifest first), whose plan is taken as it is, not planned again."""
    doc = _document(inventory, sets)
    fab = Fabric.of(doc)
    rows = what_if(fab.trees, fab.cables, fab.hosts, fab.switches, fab.deadlock_free, fab.intact_loads(),
                   fab.switch_index())
    singles = []
    for r, failures in zip(rows, fab.singles(), strict=True):
        assert (r.kind, r.name) == ("switch" if failures.switches else "pair", fab.row_name(failures))
        v = fab.classify(failures)
        v.pairs_cut = r.pairs_cut
        singles.append(fab.price(v, (r.max_load, r.deadlock_free, r.deadlock_cycle)))
    sample = Doubles(fab.double_counts(), seed)
    if doubles:
        sample.verdicts = [fab.price(fab.classify(f)) for f in fab.doubles(doubles, seed)]
    policy = fab.policy
    summary = [single_text(k, [v for v in singles if v.kind == k], policy, full=True) for k in ("pair", "switch")]
    if doubles:
        summary.append(doubles_text(sample, full=True))
    summary.append(automatic_text(policy, [*singles, *sample.verdicts]))
    detection = WatchPolicy.of(doc).detection_bound_s()
    order = sorted(range(len(rows)), key=lambda i: -rows[i].pairs_cut)[:top] if top else range(len(rows))
    if as_json:
        guarantees: dict[str, Any] = {
            "policy": policy.to_json(), "detection_bound_s": round(detection, 3), "summary": summary,
            "single": {k: group_json([v for v in singles if v.kind == k]) for k in ("pair", "switch")},
            "doubles": sample.to_json(with_rows=True) if doubles else None}
        payload: dict[str, Any] = {"inventory": inventory, "sets": list(sets), "name": doc.name,
                                   "max_link_load": doc.metrics.get("max_link_load"),
                                   "failures": [{**rows[i].to_json(), **singles[i].to_json()} for i in order],
                                   "guarantees": guarantees}
        from vlanroute.schemas.outputs import WhatifDocument
        emit_document(WhatifDocument.model_validate(payload))
    elif not quiet:
        console = Console(width=200)
        table = Table(title=f"vlanroute whatif {doc.name}: every single failure, repaired with the fewest links "
                            f"(intact max load {doc.metrics.get('max_link_load'):g})")
        for i, title in enumerate(HEADERS):
            table.add_column(title, justify="left" if i in (0, 8, 9) else "right")
        for i in order:
            table.add_row(*_cells(rows[i], singles[i]))
        console.print(table)
        if doubles and sample.sampled:
            console.print(_doubles_table(sample))
        console.print("[bold]what heals by itself[/bold] (docs/failures.md):")
        for line in summary:
            console.print(f"- {line}", highlight=False)
        used = sorted({v.outage for v in [*singles, *sample.verdicts]})
        console.print(f"outage classes (detection within {detection:g} s under this watch policy, reads aside):",
                      highlight=False)
        for name in used:
            console.print(f"- {name}: {OUTAGES[name]}", highlight=False)
        for note in _notes(singles, sample.verdicts):
            console.print(f"note: {note}", highlight=False)
    return ExitCode.OK
