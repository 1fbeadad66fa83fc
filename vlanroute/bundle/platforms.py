"""The platform of every switch of a plan document: resolved here and nowhere else.

In order: the built-in descriptors (model.platforms.PLATFORMS); a platform the inventory
derived from a built-in one, rebuilt exactly from plan.json's `platforms` record (base and
limits); for a plan.json written before that record existed, the built-in platform of the
switch's family stretched to the ports the plan names, with the MAC capacity the plan was
checked against, and a note saying so.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace

from vlanroute.bundle.document import REFIX, PlanDocument, PlatformRecord
from vlanroute.errors import UserError
from vlanroute.model.platforms import PLATFORMS, Platform, PlatformLimitError, platform_from_json
from vlanroute.model.portlist import PortListError


@dataclass(frozen=True)
class PlanPlatforms:
    by_switch: dict[str, Platform]
    notes: list[str]                 # platforms guessed from their family (old plan.json)

    def used(self) -> dict[str, Platform]:
        """Every platform in use, by name."""
        return {p.name: p for p in self.by_switch.values()}


def platform_from_record(name: str, record: PlatformRecord) -> Platform | None:
    """A derived platform rebuilt from its plan.json record; None if it is not a derived one."""
    return platform_from_json(name, record.model_dump())


def resolve_platforms(doc: PlanDocument, *, source: str = "plan.json",
                      extra: Mapping[str, Platform] | None = None,
                      guess: bool = True) -> PlanPlatforms:
    """Each switch's Platform. `extra`: platforms known to the caller (render's own table).
    `guess=False` refuses a platform that is neither built in nor recorded."""
    by_switch: dict[str, Platform] = {}
    notes: list[str] = []
    rebuilt: dict[str, Platform | None] = {}
    capacity = doc.metrics.get("mac_capacity")
    for sw, spec in doc.switches.items():
        name = spec.platform
        if extra and name in extra:
            by_switch[sw] = extra[name]
            continue
        if name in PLATFORMS:
            by_switch[sw] = PLATFORMS[name]
            continue
        if name not in rebuilt:
            record = doc.platforms.get(name)
            try:
                rebuilt[name] = platform_from_record(name, record) if record is not None else None
            except (PortListError, PlatformLimitError) as exc:   # ports or VLAN ids its base cannot have
                raise UserError(str(exc), file=source, field=f"platforms.{name}", fix=REFIX) from None
        if rebuilt[name] is not None:
            by_switch[sw] = rebuilt[name]  # type: ignore[assignment]
            continue
        where = f"switches.{sw}.platform"
        if not guess:
            raise UserError(f"unknown platform {name!r}", file=source, field=where,
                            fix="use a built-in platform (" + ", ".join(sorted(PLATFORMS))
                                + ") or one the plan records under platforms")
        record = doc.platforms.get(name)
        family = spec.family or (record.family if record is not None else None)
        ports = set(spec.ports) | set(spec.reserved_ports)
        by_switch[sw] = _by_family(name, family, ports, capacity, notes, source, where)
    return PlanPlatforms(by_switch, notes)


def _by_family(name: str, family: str | None, plan_ports: set[str], plan_capacity: object,
               notes: list[str], source: str, where: str) -> Platform:
    """An inventory-derived platform that plan.json records only by name and family: the
    built-in of that family, stretched to the ports the plan names, with the MAC capacity
    the plan was checked against (metrics.mac_capacity)."""
    base = next((p for p in PLATFORMS.values() if p.family == family), None)
    if base is None:
        raise UserError(f"unknown platform {name!r} of unknown family {family!r}", file=source,
                        field=where, fix="render again with this version of vlanroute")
    prefix = re.match(r"^(.*?)(\d+)$", base.ports[0])
    assert prefix is not None
    highest = max([len(base.pool)] + [int(m.group(1)) for p in plan_ports
                                      if (m := re.fullmatch(re.escape(prefix.group(1)) + r"(\d+)", p))])
    stretched = tuple(f"{prefix.group(1)}{i}" for i in range(1, highest + 1))
    # The base's other ports (a 6248's 10G module ports, stack units) as well.
    taken = set(stretched)
    others = tuple(p for p in base.ports if p not in taken and not base.in_pool(p))
    capacity = plan_capacity if isinstance(plan_capacity, int) and plan_capacity > 0 else base.mac_capacity
    note = (f"platform {name} is not built in: checked as {base.name} with {highest} ports and "
            f"a MAC capacity of {capacity} (plan.json metrics)")
    if note not in notes:
        notes.append(note)
    return replace(base, name=name, ports=stretched + others,
                   auto_ports=stretched if others else None, mac_capacity=capacity)
