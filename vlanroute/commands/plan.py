"""`vlanroute plan INVENTORY [--json]`: build and verify the plan, print a summary or the JSON."""

from __future__ import annotations

import click
from rich.console import Console
from rich.table import Table

from vlanroute.commands.common import set_option
from vlanroute.commands.output import Say, json_option, quiet_option
from vlanroute.commands.progress import phases, wanted
from vlanroute.exitcodes import ExitCode
from vlanroute import api
from vlanroute.plan.build import Plan
from vlanroute.routing.registry import ENGINES


@click.command("plan", epilog="The routing engine is the inventory's routing.algorithm: "
               + ", ".join(ENGINES) + ". `vlanroute algorithms` lists them with their properties.")
@click.argument("inventory", type=click.Path(dir_okay=False))
@json_option
@quiet_option
@click.option("--strict", is_flag=True,
              help="Treat warnings (deadlock risk under 802.3x PAUSE, ignored settings) as failures: exit 1.")
@set_option
def command(inventory: str, as_json: bool, quiet: bool, strict: bool, sets: tuple[str, ...]) -> int:
    """Plan the VLAN routing of INVENTORY and verify it.

    --json prints the plan document itself (plan.json, docs/plan-format.md)."""
    say = Say(as_json, quiet)
    err = Console(stderr=True)
    with phases(f"planning {inventory}", wanted(err, as_json, quiet), err):
        plan = api.plan(inventory, sets)
    if as_json:
        click.echo(plan.to_document().to_json_text(), nl=False)
    elif say.human:
        print_summary(plan, Console())      # warnings in the summary, as they always were
    if quiet and not as_json:      # under --json they are the document's `warnings`
        for w in plan.warnings:
            say.warn(w)
    if strict and plan.warnings:
        click.echo(f"error: --strict: {len(plan.warnings)} warning(s)", err=True)
        return ExitCode.FAILED_CHECK
    return ExitCode.OK


def _ranges(names: list[str], limit: int = 8) -> str:
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f", ... ({len(names)} in all)"


def attachment_lines(plan: Plan) -> list[str]:
    """Which host attachment the plan chose on which switches, and why (docs/method.md)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for name, sp in plan.switches.items():
        groups.setdefault((sp.host_attachment, sp.attachment_reason), []).append(name)
    out = []
    for (attachment, why), names in groups.items():
        where = "every switch" if len(groups) == 1 else _ranges(names)
        out.append(f"host attachment: {attachment} on {where} ({why})")
    return out


def _backup_label(protects: dict[int, frozenset[tuple[str, str]]]) -> str:
    """A backup VLAN's column: the routing VLANs it stands in for and for which dead pairs."""
    return "backup: " + "; ".join(f"{vid} without {' '.join(f'{a}-{b}' for a, b in sorted(lks))}"
                                  for vid, lks in sorted(protects.items()))


def _share_note(sources: list[str], shares: dict[str, int]) -> str:
    """How many hosts of each source send in a VLAN, where not all of them do."""
    if not shares:
        return ""
    counts = set(shares.values())
    if len(shares) == len(sources) and len(counts) == 1:
        n = counts.pop()
        return f" ({n} host{'s' if n > 1 else ''} of each)"
    return " (" + ", ".join(f"{s}: {n}" for s, n in shares.items()) + " hosts; the others all)"


def spread_line(plan: Plan) -> str:
    """What routing below the switch costs and gives, or "" if the plan has none."""
    split = plan.routes.splits
    if not split:
        return ""
    m = plan.metrics
    text = (f"routing below the switch: the hosts of {len(split)} switches send in several VLANs (per-port "
            f"PVIDs); this plan: {m.vlan_count} VLANs, at most {m.max_mac_entries} MAC entries per switch")
    if plan.routes.unspread is not None:
        load, vlans = plan.routes.unspread
        ratio = f", x{load / m.link_load_optimum:.3f}" if m.link_load_optimum else ""
        text += (f"; with one tree per switch: max link load {load:g}{ratio}, {vlans} VLANs, "
                 f"at most {vlans * m.hosts} MAC entries")
    return text


def healing_line(plan: Plan, doubles: int = 200, seed: int = 0) -> str:
    """What heals by itself (bundle/guarantees.py): every single failure's class and the
    share of a seeded sample of double failures that heal, from the live fabric's
    connectivity, the backups and the watch policy alone (a few milliseconds on the seed
    fabrics); the repairs themselves, their loads and deadlock freedom are `whatif`'s."""
    from vlanroute.bundle.guarantees import Doubles, Fabric, plan_line
    fab = Fabric.of_plan(plan)
    singles = [fab.classify(f) for f in fab.singles()]
    sample = Doubles(fab.double_counts(), seed, [fab.classify(f) for f in fab.doubles(doubles, seed)])
    return plan_line(fab, singles, sample) + " (`vlanroute whatif`: the loads and deadlock freedom after each)"


def print_summary(plan: Plan, console: Console, warnings: bool = True) -> None:
    m = plan.metrics
    r = plan.routing_record()
    console.print(f"[bold]{plan.name}[/bold]: {plan.topology.kind} of {m.switches} switches, {m.hosts} hosts, "
                  f"{m.inter_switch_links} inter-switch cables")
    detail = ", ".join(f"{k}={v}" for k, v in r.items() if k not in ("algorithm", "dimension_order_setting", "chosen"))
    console.print(f"routing: {r['algorithm']}" + (f" ({detail})" if detail else ""))
    if plan.choice is not None:
        console.print(f"chosen (no routing.algorithm): {plan.choice}", highlight=False)
    for line in attachment_lines(plan):
        console.print(line, highlight=False)
    backups = sum(1 for v in plan.vlans if v.protects)
    title = f"{m.vlan_count} routing VLANs" + (f" ({backups} of them backups)" if backups else "")
    table = Table(title=title, show_lines=False)
    table.add_column("VLAN", justify="right")
    table.add_column("sources (PVID of their hosts)")
    table.add_column("switches", justify="right")
    small = len(plan.topology.switches) <= 16
    table.add_column("links" if small else "links (count)", justify="left" if small else "right")
    for v in plan.vlans:
        links = sorted(v.links, key=lambda l: (plan.topology.index(l[0]), plan.topology.index(l[1])))
        text = " ".join(f"{a}-{b}" for a, b in links) if small else str(len(links))
        who = _ranges(v.sources) + _share_note(v.sources, v.shares) if v.sources else _backup_label(v.protects)
        table.add_row(str(v.id), who, str(len(v.switches)), text)
    if len(plan.vlans) > 40:
        console.print(f"{m.vlan_count} routing VLANs: {plan.vlans[0].id}..{plan.vlans[-1].id} (table omitted; use --json)")
    else:
        console.print(table)
    label = "the optimum" if m.link_load_optimum_kind == "optimum" else f"the {m.link_load_optimum_kind} bound"
    console.print(f"diameter {m.diameter}, mean hops {m.mean_hops:.3f}, max link load {m.max_link_load:g}, "
                  f"x{m.load_over_optimum:.3f} of {label} ({m.link_load_optimum:.6g})")
    within = m.max_link_load / m.link_load_lower_bound_budget if m.link_load_lower_bound_budget else 1.0
    console.print(f"any routing within {r['max_vlans']} VLANs has a max link load of at least "
                  f"{m.link_load_lower_bound_budget:.6g} (this plan: x{within:.3f})")
    console.print(f"MAC entries: at most {m.max_mac_entries} per switch (capacity {m.mac_capacity}); "
                  f"deadlock-free under 802.3x PAUSE: {'yes' if m.deadlock_free else 'no'}")
    if m.protection is not None:
        p = m.protection
        gaps = (f"; {p.links_unprotected} tree links are bridges of the fabric (for the switches they join) and cannot be protected"
                if p.links_unprotected else "")
        ratio = p.max_link_load_failed_over / m.max_link_load if m.max_link_load else 1.0
        console.print(f"fast failover: {p.backup_vlans} backup VLANs (in the VLAN and MAC counts above) cover "
                      f"{p.links_protected} tree links{gaps}; a dead pair or switch fails over by a PVID change on "
                      f"its VLANs' source switches; max link load of a dead pair while failed over {p.max_link_load_failed_over:.6g} "
                      f"(x{ratio:.3f} of this plan's)")
    else:
        console.print("fast failover: none (routing.protection: links plans backup VLANs; docs/failures.md)")
    line = spread_line(plan)
    if line:
        console.print(line, highlight=False)
    console.print(healing_line(plan), highlight=False)
    console.print("plan verified: every VLAN is a loop-free tree over all switches with hosts, "
                  "every route is the one chosen, every port and limit checked")
    if warnings:
        for w in plan.warnings:
            console.print(f"[yellow]warning:[/yellow] {w}")
