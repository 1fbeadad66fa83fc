"""`vlanroute algorithms`: the routing engines that routing.algorithm can name, and what each promises."""

from __future__ import annotations

from typing import get_args

import click

from vlanroute.commands.tables import table_console
from vlanroute.exitcodes import ExitCode
from rich.table import Table

from vlanroute.commands.output import emit, json_option, quiet_option
from vlanroute.model.inventory import TopologyKind
from vlanroute.routing.registry import ENGINES


def topologies(refused: list[str]) -> str:
    """'all', or 'all but ...' naming the refused topology kinds."""
    return "all" if not refused else "all but " + ", ".join(refused)


def engines_json() -> list[dict[str, object]]:
    # Through the model algorithms.json is generated from (vlanroute/bundle/schemagen.py).
    from vlanroute.schemas.documents import AlgorithmsDocument, EngineInfo

    kinds = get_args(TopologyKind)
    doc = AlgorithmsDocument(engines=[
        EngineInfo(name=e.name, minimal=e.minimal, deadlock_free=e.deadlock_free,
                   refused_topologies=[k for k in kinds if k in e.refused], summary=e.summary)
        for e in ENGINES.values()])
    return [e.model_dump() for e in doc.engines]


@click.command("algorithms")
@json_option
@quiet_option
def command(as_json: bool, quiet: bool) -> int:
    """List the routing engines (routing.algorithm) with their properties."""
    if as_json:
        emit("algorithms", {"engines": engines_json()})
        return ExitCode.OK
    if quiet:
        return ExitCode.OK
    table = Table(title="routing engines (routing.algorithm)")
    for title in ("name", "minimal", "deadlock-free", "topologies", "summary"):
        table.add_column(title)
    kinds = get_args(TopologyKind)
    for engine in ENGINES.values():
        refused = [k for k in kinds if k in engine.refused]
        table.add_row(engine.name, "yes" if engine.minimal else "no", "yes" if engine.deadlock_free else "no",
                      topologies(refused), engine.summary)
    console = table_console(pipe_width=120)
    console.print(table)
    console.print("minimal: every route is a shortest path.\n"
                  "deadlock-free: acyclic channel dependencies on every topology it accepts, so 802.3x PAUSE cannot\n"
                  "  deadlock; every plan also reports its own routes' verdict (metrics.deadlock_free).\n"
                  "default (no routing.algorithm): every engine plans, the least max link load wins; with 802.3x\n"
                  "  flow control the best deadlock-free plan wins unless it carries more than 1.25x that load.\n"
                  "acyclic: deadlock-free on any graph (Nue-like, no virtual lanes): load-balanced trees grown for all\n"
                  "  sources at once, a turn refused only if it would close a dependency cycle, and grown in orders that\n"
                  "  admit the budget plan's heaviest turns first; then re-routed many times with the channel order fixed\n"
                  "  (negotiated congestion) and single branches moved off the hottest links; on custom fabrics of 20 to\n"
                  "  64 switches above 1.1x the optimum the channel order itself is changed where its LP's prices say;\n"
                  "  tori of up to 64 switches above 1.3x are searched again under two fixed shuffles of the switch\n"
                  "  names, which break their symmetry. 1.07x to 1.5x the optimum on leaf-spines and dragonflies,\n"
                  "  1.00x-1.46x on random 3-regular graphs of 24 switches, 1.06x-1.55x on those of 48, 1.17x-1.41x on\n"
                  "  6x6 and 8x8 tori with 3 to 6 cables gone, 1.53x on a random 4-regular graph of 64, 1.00x-1.38x on\n"
                  "  intact tori of up to 64 switches (1.36x on the 8x8; docs/routing-bounds.md); the default tries it\n"
                  "  up to 64 switches.\n"
                  "budget: searched trees, at most max_vlans of them; where the budget allows a VLAN per source switch\n"
                  "  (up to 64 switches), single branches are then moved off the hottest links: 1.00x-1.06x the optimum\n"
                  "  on dragonflies, random regular graphs and tori with cables gone, and on leaf-spines the best that one\n"
                  "  tree per source allows (1.07x-1.14x; docs/routing-bounds.md).")
    return ExitCode.OK
