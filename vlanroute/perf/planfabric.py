"""A plan's fabrics for the flow model: its VLAN routing, plain Ethernet's spanning tree on
the same cables, and one big switch; and a pattern evaluated on all three."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from vlanroute.perf.evaluate import Result, evaluate
from vlanroute.perf.fabric import DEFAULT_SPEED, Fabric, big_switch, from_trees
from vlanroute.perf.patterns import demands
from vlanroute.perf.stp import stp_fabric
from vlanroute.plan.build import Plan
from vlanroute.routing.trees import tree_parents


@dataclass(frozen=True)
class Fabrics:
    vlan: Fabric
    stp: Fabric
    big: Fabric


def fabrics_of(plan: Plan, *, speed: float = DEFAULT_SPEED, stp_lag: bool = True) -> Fabrics:
    topo = plan.topology
    hosts = [(h.name, h.switch) for h in plan.hosts]
    vlan = from_trees("VLAN routing", topo.switches, hosts, plan.routes.parents, topo.arc_cables(), speed=speed,
                      host_trees=host_trees(plan))
    pairs = {(a, b): d["cables"] for a, b, d in topo.simple().edges(data=True)}
    return Fabrics(vlan, stp_fabric(topo.switches, hosts, pairs, speed=speed, lag=stp_lag), big_switch(hosts, speed=speed))


def host_trees(plan: Plan) -> dict[str, tuple[str, dict[str, str]]]:
    """Routed below the switch: each host of a split switch -> ('switch/VLAN', the tree of
    its VLAN rooted at its switch); hosts of other switches send on their switch's tree."""
    if not plan.routes.splits:
        return {}
    by_id = {v.id: v for v in plan.vlans}
    out: dict[str, tuple[str, dict[str, str]]] = {}
    for h in plan.hosts:
        if h.switch in plan.routes.splits:
            out[h.name] = (f"{h.switch}/{h.vlan}", tree_parents(by_id[h.vlan].links, h.switch))
    return out


def combined(results: Sequence[Result]) -> Result:
    """Several runs of one pattern (permutation seeds) as one: the mean aggregate, the
    slowest flow and longest exchange of any run, the first run's bottlenecks."""
    first = results[0]
    if len(results) == 1:
        return first
    name = first.pattern.split(" (")[0] + f" ({len(results)} seeds)"
    return replace(first, pattern=name, aggregate=sum(r.aggregate for r in results) / len(results),
                   slowest=min(r.slowest for r in results), exchange=max(r.exchange for r in results),
                   host_bound=all(r.host_bound for r in results))


@dataclass(frozen=True)
class Comparison:
    pattern: str
    vlan: Result
    stp: Result
    big: Result


def compare(f: Fabrics, pattern: str, *, seeds: Sequence[int] = (1, 2, 3), exchange_bytes: float = 1e6) -> Comparison:
    out = []
    for fabric in (f.vlan, f.stp, f.big):
        out.append(combined([evaluate(fabric, d, exchange_bytes) for d in demands(fabric, pattern, seeds)]))
    return Comparison(out[0].pattern, out[0], out[1], out[2])
