"""The hardware limits a plan must fit: the VLAN table, the VLAN ids, the MAC table.

Every routing VLAN costs against three limits of every switch it is configured on:
- the VLAN table: a switch holds a fixed number of VLANs, and the default VLAN 1 stays in
  it (the plan takes the ports it manages out of VLAN 1, it does not delete the VLAN), so
  a table of N VLANs leaves N - 1 for routing;
- the VLAN ids: 802.1Q ids run from 1 to 4094 (0 and 4095 are reserved), a platform may
  reserve more at the top (the PowerConnect 62xx stops at 4093), and the plan numbers its
  VLANs on from `routing.first_vlan` (or takes `routing.vlan_ids`);
- the MAC table: a switch learns addresses per VLAN (independent VLAN learning, as on the
  PowerConnect/OS6 switches), and the learning broadcasts make every host known in every
  VLAN on every switch of that VLAN, so a switch that is in every VLAN holds
  hosts x VLANs entries: hosts x VLANs <= MAC capacity. An address that does not fit is
  not learned, and frames to it are flooded.

`vlan_budget` takes the tightest of these (and `routing.max_vlans`) before routing, so that
a routing that needs more is refused with the limit that binds, or routed within it
(routing.algorithm: budget); `check_limits` checks the finished plan against every
switch's platform.
"""

from __future__ import annotations

from dataclasses import dataclass

from vlanroute.errors import PlanError
from vlanroute.model.inventory import LoadedInventory
from vlanroute.model.platforms import Platform
from vlanroute.plan.ports import SwitchPlan
from vlanroute.plan.vlans import RoutingVlan


@dataclass(frozen=True)
class Budget:
    max_vlans: int
    binding: str      # which limit binds, in words
    field: str        # the inventory field that sets it
    fix: str          # what to change to get more


def vlan_budget(inv: LoadedInventory, platforms: dict[str, Platform], total_hosts: int) -> Budget:
    """The tightest VLAN limit of the inventory, and which one it is.

    VLAN 1 counts against the VLAN table (so a table of N holds N - 1 routing VLANs); the
    ids end at 4094 or the platform's highest id; every VLAN costs one MAC entry per host
    on a switch that is in every VLAN (hosts x VLANs <= MAC capacity).
    """
    spec = inv.spec.routing
    used = sorted({p.name: p for p in platforms.values()}.values(), key=lambda p: p.name)
    limits: list[Budget] = []
    if spec.max_vlans is not None:
        limits.append(Budget(spec.max_vlans, f"routing.max_vlans is {spec.max_vlans}", "routing.max_vlans",
                             "raise routing.max_vlans"))

    def example(p: Platform) -> str:
        return next(s for s, q in platforms.items() if q.name == p.name)

    small = min(used, key=lambda p: (p.max_vlans, p.name))
    limits.append(Budget(small.max_vlans - 1, f"switch '{example(small)}', a {small.name}, holds {small.max_vlans} "
                         "VLANs, VLAN 1 included", "platform", "use a platform with a larger VLAN table"))
    if spec.vlan_ids is not None:
        limits.append(Budget(len(spec.vlan_ids), f"routing.vlan_ids lists {len(spec.vlan_ids)} ids",
                             "routing.vlan_ids", "list more ids"))
    else:
        top = min([4094] + [p.vid_max for p in used])
        limits.append(Budget(top - spec.first_vlan + 1,
                             f"the ids from routing.first_vlan {spec.first_vlan} end at {top} (802.1Q: 4094, "
                             f"{min(used, key=lambda p: p.vid_max).name}: {min(p.vid_max for p in used)})",
                             "routing.first_vlan", "use a lower routing.first_vlan"))
    if total_hosts:
        mac = min(used, key=lambda p: (p.mac_capacity, p.name))
        limits.append(Budget(mac.mac_capacity // total_hosts,
                             f"switch '{example(mac)}', a {mac.name}, learns {mac.mac_capacity} MAC entries and "
                             f"every VLAN costs one per host ({total_hosts} hosts)", "hosts",
                             "use fewer hosts or a platform with a larger MAC table"))
    best = min(limits, key=lambda b: b.max_vlans)
    if best.max_vlans < 1:
        raise PlanError(f"not even one VLAN fits: {best.binding}", file=inv.file, field=best.field, fix=best.fix)
    return best


def over_budget(inv: LoadedInventory, needed: int, budget: Budget, algorithm: str) -> PlanError:
    """The error for a routing that needs more VLANs than the budget: names the limit and
    offers the budget engine, which routes within it at the price of longer routes."""
    return PlanError(
        f"routing.algorithm {algorithm} needs {needed} VLANs but only {budget.max_vlans} fit: {budget.binding}",
        file=inv.file, field=budget.field,
        fix=f"set routing.algorithm: budget to route within {budget.max_vlans} VLANs (some routes longer than "
            f"minimal), or {budget.fix}")


def check_limits(file: str, vlans: list[RoutingVlan], switches: dict[str, SwitchPlan], mac_entries: dict[str, int],
                 host_total: int) -> None:
    """Check the finished plan against every switch's platform.

    A switch holds the routing VLANs plus VLAN 1 (the default VLAN stays configured); each
    VLAN id must be one the platform accepts; a switch learns every host once per VLAN it
    is in (`mac_entries`, from the metrics), which must fit its MAC table.
    """
    n = len(vlans)
    for switch in switches.values():
        plat = switch.platform
        if n + 1 > plat.max_vlans:
            raise PlanError(f"the routing needs {n} VLANs (plus VLAN 1) but a {plat.name} supports {plat.max_vlans} "
                            f"(switch '{switch.name}')", file=file, field="routing",
                            fix="choose a routing that needs fewer VLANs (routing.algorithm) or a platform with more")
        for v in vlans:
            if not plat.vid_min <= v.id <= plat.vid_max:
                raise PlanError(f"VLAN id {v.id} is outside {plat.vid_min}..{plat.vid_max} of {plat.name}",
                                file=file, field="routing.first_vlan", fix=f"use ids from {plat.vid_min} to {plat.vid_max}")
        if mac_entries[switch.name] > plat.mac_capacity:
            raise PlanError(
                f"switch '{switch.name}' would learn {mac_entries[switch.name]} MAC entries ({host_total} hosts x "
                f"{mac_entries[switch.name] // max(host_total, 1)} VLANs) but a {plat.name} holds {plat.mac_capacity}",
                file=file, field="routing", fix="use fewer hosts, a routing with fewer VLANs, or a platform with a larger MAC table")
