"""`vlanroute analyze INVENTORY...`: the metrics of several inventories (or rendered bundles) side by side."""

from __future__ import annotations

import os
from typing import Any

import click
from rich.table import Table

from vlanroute.commands.tables import table_console
from vlanroute.commands.common import link_speed_option, set_option
from vlanroute.commands.output import emit_document, json_option, quiet_option
from vlanroute.commands.sources import plan_or_bundle
from vlanroute.exitcodes import ExitCode
from vlanroute.errors import UserError
from vlanroute.plan.build import Plan

# Each limit next to what the plan uses of it (issue 7): VLANs / budget, max load / its
# lower bound (any routing, and any routing within the VLAN budget), mean stretch, MAC
# entries / capacity.
HEADERS = ["switches", "hosts", "cables", "diameter", "mean hops", "VLANs / budget", "max load", "load / bound",
           "load / budget bound", "stretch", "non-minimal", "MAC / capacity", "deadlock-free"]


def _cells(m: dict[str, Any], budget: int) -> list[str]:
    bound = m["link_load_lower_bound"]
    within = m["link_load_lower_bound_budget"]
    return [str(m["switches"]), str(m["hosts"]), str(m["inter_switch_links"]), str(m["diameter"]),
            f"{m['mean_hops']:g}", f"{m['vlan_count']} / {budget}", f"{m['max_link_load']:g}",
            f"{m['max_link_load'] / bound:.3f}" if bound else "-",
            f"{m['max_link_load'] / within:.3f}" if within else "-", f"{m['mean_stretch']:.3f}",
            str(m["non_minimal_routes"]), f"{m['max_mac_entries']} / {m['mac_capacity']}",
            "yes" if m["deadlock_free"] else "no"]


@click.command("analyze")
@click.argument("inventories", nargs=-1, required=True, type=click.Path())
@click.option("--patterns", default=None, metavar="LIST",
              help="also the throughput of these traffic patterns, one table each (comma-separated: all-to-all, "
                   "permutation, neighbour, bisection, a flows file; 'all' = the four), with ratios to the first "
                   "inventory and to the spanning tree on the same cables")
@click.option("--seeds", default=3, show_default=True, type=click.IntRange(1, 100),
              help="random permutations averaged (seeds 1..N)")
@link_speed_option(1.0, "Gb/s of every host link and cable")
@click.option("--bytes", "exchange_bytes", default=1_000_000, show_default=True, type=click.IntRange(min=1),
              help="bytes each flow moves, for the exchange time")
@click.option("--stp-parallel", "stp_parallel", type=click.Choice(["lag", "block"]), default="lag",
              show_default=True, help="the spanning tree's parallel cables: a static LAG, or blocked but one")
@json_option
@quiet_option
@set_option
def command(inventories: tuple[str, ...], patterns: str | None, seeds: int, link_speed: float, exchange_bytes: int,
            stp_parallel: str, as_json: bool, quiet: bool, sets: tuple[str, ...]) -> int:
    """Compare the plans of several INVENTORIES in one table (--set applies to each). Each
    may also be a rendered bundle (OUTDIR or OUTDIR/plan.json, checked against its manifest
    first: e.g. a repair's, beside the plan it repaired), whose plan is taken as it is."""
    wanted = _patterns(patterns)
    plans: list[tuple[str, Plan]] = []
    table = Table(title="vlanroute analyze" + (f" (--set {' '.join(sets)})" if sets else ""))
    table.add_column("inventory")
    for title in HEADERS:
        table.add_column(title, justify="right")
    failures = 0
    rows: list[dict[str, Any]] = []
    for path in inventories:
        try:
            plan = plan_or_bundle(path, sets, "analyze")
        except UserError as exc:
            failures += 1
            click.echo(f"error: {exc.render()}", err=True)
            table.add_row(path, *(["-"] * (len(HEADERS) - 1)), "no plan")
            rows.append({"inventory": path, "ok": False, "error": exc.render()})
            continue
        metrics = plan.metrics.to_json()
        table.add_row(path, *_cells(metrics, plan.budget.max_vlans))
        rows.append({"inventory": path, "ok": True, "name": plan.name, "max_vlans": plan.budget.max_vlans,
                     "metrics": metrics, "warnings": list(plan.warnings)})
        plans.append((path, plan))
    tables = _throughput(plans, wanted, seeds, link_speed, exchange_bytes, stp_parallel) if wanted else None
    if as_json:
        from vlanroute.schemas.outputs import AnalyzeDocument
        emit_document(AnalyzeDocument.model_validate({"sets": list(sets), "inventories": rows,
                                                       **({"throughput": tables} if tables else {})}))
    elif not quiet:             # an inventory without a plan was named on stderr above
        table_console(pipe_width=240).print(table)
        for t in tables or []:
            table_console(pipe_width=240).print(_throughput_table(t, exchange_bytes))
    return ExitCode.USAGE if failures else ExitCode.OK


def _patterns(value: str | None) -> tuple[str, ...]:
    """--patterns as names (a flows file stays a path); a wrong name is a usage error."""
    if value is None:
        return ()
    from vlanroute.perf.patterns import PATTERNS
    out: list[str] = []
    for item in (w.strip() for w in value.split(",") if w.strip()):
        if item == "all":
            out += PATTERNS
        elif item in PATTERNS or os.path.lexists(item):
            out.append(item)         # a flows file: read (and refused if it is none) in perf.patterns
        else:
            raise click.BadParameter(f"{item!r} is neither a pattern ({', '.join(PATTERNS)}, all) nor a flows file",
                                     param_hint="--patterns")
    return tuple(dict.fromkeys(out))


def _throughput(plans: list[tuple[str, Plan]], patterns: tuple[str, ...], seeds: int, speed: float,
                exchange_bytes: int, stp_parallel: str) -> list[dict[str, Any]]:
    from vlanroute.perf.planfabric import fabrics_of
    from vlanroute.perf.table import Options, pattern_tables
    # each fabric by its plan's name, or by the path given where two share one (an
    # inventory and its repaired bundle)
    names = [p.name for _, p in plans]
    fabrics = [(p.name if names.count(p.name) == 1 else path, fabrics_of(p, speed=speed, stp_lag=stp_parallel == "lag"))
               for path, p in plans]
    return pattern_tables(fabrics, Options(patterns, tuple(range(1, seeds + 1)), float(exchange_bytes)))


def _throughput_table(t: dict[str, Any], exchange_bytes: int) -> Table:
    """A pattern's rows: the effective rate is every flow's bytes over the time the last
    flow needs; 'x first' is relative to the first inventory, 'x STP' to the spanning tree
    on the inventory's own cables."""
    table = Table(title=f"throughput: {t['pattern']}, {exchange_bytes:,} bytes per flow (max-min fair rates)")
    for title in ("fabric", "cables", "flows", "aggregate Gb/s", "slowest Mb/s", "time s", "effective Gb/s",
                  "x first", "x STP", "bottleneck cables"):
        table.add_column(title, justify="left" if title in ("fabric", "bottleneck cables") else "right")
    for r in t["rows"]:
        necks = r["bottlenecks"]
        table.add_row(r["label"], str(r["cables"]), f"{r['flows']:,}", f"{r['aggregate_gbps']:.2f}",
                      f"{r['slowest_mbps']:.2f}", f"{r['exchange_s']:.3f}", f"{r['effective_gbps']:.2f}",
                      f"{r['vs_first']:.2f}" if r["vs_first"] is not None else "-",
                      f"{r['vs_stp']:.2f}" if r["vs_stp"] is not None else "-",
                      (" ".join(necks[:2]) + (f" +{len(necks) - 2}" if len(necks) > 2 else "")) or "host links")
    return table
