"""The plan's own checker (plan/invariants.py) must catch a plan whose VLAN trees and
routes disagree: built right, then broken by hand, one invariant at a time."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from vlanroute.errors import VerificationError
from vlanroute.plan.build import Plan, plan_from_file
from vlanroute.plan.invariants import verify_plan
from vlanroute.routing.trees import path

ROOT = Path(__file__).resolve().parent.parent


def torus_plan() -> Plan:
    return plan_from_file(ROOT / "inventories" / "seed-torus.yaml")


def check(plan: Plan) -> None:
    verify_plan(plan.topology, plan.routes, plan.vlans, plan.hosts, plan.switches, plan.cabling)


def test_a_built_plan_passes() -> None:
    check(torus_plan())


def test_a_route_off_its_vlan_tree_is_caught() -> None:
    plan = torus_plan()
    vlan = plan.vlans[0]
    src = vlan.sources[0]
    tree = {frozenset(link) for link in vlan.links}
    # re-parent one switch onto a cabled neighbour whose link the VLAN's tree does not use
    # (and whose own route does not pass through that switch: the routes stay a tree)
    par = dict(plan.routes.parents[src])
    x, p = next((x, q) for x in par for q in plan.topology.simple().neighbors(x)
                if frozenset((x, q)) not in tree and x not in path(par, src, q))
    par[x] = p
    plan.routes = dataclasses.replace(plan.routes, parents={**plan.routes.parents, src: par})
    with pytest.raises(VerificationError, match=f"VLAN {vlan.id}: the routes of {src} reach {x} from "
                                                f"[^ ]+ but the routing says from {p}"):
        check(plan)


def test_a_loop_in_a_vlan_is_caught() -> None:
    plan = torus_plan()
    vlan = plan.vlans[0]
    spare = next((a, b) for a, b in plan.topology.simple().edges
                 if (a, b) not in vlan.links and (b, a) not in vlan.links)
    vlan.links = vlan.links | {spare}
    with pytest.raises(VerificationError, match=f"VLAN {vlan.id}: its links contain a loop"):
        check(plan)


def test_a_cut_vlan_is_caught() -> None:
    plan = torus_plan()
    vlan = plan.vlans[0]
    vlan.links = frozenset(sorted(vlan.links)[1:])
    with pytest.raises(VerificationError, match=f"VLAN {vlan.id}: its links are not connected"):
        check(plan)


def test_a_vlan_link_that_is_no_cable_is_caught() -> None:
    plan = torus_plan()
    vlan = plan.vlans[0]
    g = plan.topology.simple()
    a, b = next((a, b) for a in g for b in g if a != b and not g.has_edge(a, b))
    vlan.links = vlan.links | {(a, b)}
    with pytest.raises(VerificationError, match=f"VLAN {vlan.id}: link {a}-{b} is not a cable of the topology"):
        check(plan)
