"""Every rendered PowerConnect config of every example inventory, parsed back with the
verify engineer's parser (vlanroute.drivers), obeys the rules of issue 3. The expected
memberships are derived here independently from the plan's VLAN trees (plan.vlans[].links),
not from the per-port lists the renderer reads."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from vlanroute.drivers import parse_config
from vlanroute.plan.build import plan_from_file
from vlanroute.render.write import environment, render_switch
from vlanroute.render.context import switch_context

INVENTORIES = sorted((Path(__file__).parents[1] / "inventories").glob("*.yaml"))
PC62XX = {"powerconnect-6248", "powerconnect-6224"}


def _uses_powerconnect(path: Path) -> bool:
    """Cheap pre-filter on the YAML so that the large linux-bridge inventories are not planned."""
    spec = yaml.safe_load(path.read_text())
    names = {spec.get("platform", "powerconnect-6248")}
    names |= {s.get("platform") for s in (spec.get("switches") or {}).values() if isinstance(s, dict)}
    names |= {p.get("base") for p in (spec.get("platforms") or {}).values() if isinstance(p, dict)}
    return bool(names & PC62XX)


CASES = [p for p in INVENTORIES if _uses_powerconnect(p)]


def test_there_are_powerconnect_inventories() -> None:
    assert len(CASES) >= 5, CASES


def _tree_vlans(doc: dict[str, Any]) -> dict[frozenset[str], set[int]]:
    out: dict[frozenset[str], set[int]] = {}
    for v in doc["vlans"]:
        for a, b in v["links"]:
            out.setdefault(frozenset((a, b)), set()).add(v["id"])
    return out


@pytest.mark.parametrize("inventory", CASES, ids=[p.stem for p in CASES])
def test_rendered_powerconnect_configs_obey_the_rules(inventory: Path) -> None:
    plan = plan_from_file(inventory)
    document = plan.to_document()
    doc = document.to_json()          # read here as plain JSON, independently of the renderer
    env = environment()
    routing = {v["id"] for v in doc["vlans"]}
    trees = _tree_vlans(doc)
    aging = doc["settings"]["aging_time"]
    checked = 0
    for name, sp in plan.switches.items():
        platform = sp.platform
        if platform.family != "powerconnect-62xx":
            continue
        text = render_switch(switch_context(document, name, platform), env)
        cfg = parse_config(platform, text, switch=name, source=f"{name}.cfg")
        sw = doc["switches"][name]
        where = f"{inventory.stem}/{name}"
        assert cfg.aging_time == aging == platform.aging_max, where
        assert cfg.flow_control is doc["settings"]["flow_control"], where
        # Host ports: PVID from the plan, untagged in every routing VLAN, nothing else.
        for host, h in doc["hosts"].items():
            if h["switch"] != name:
                continue
            port = cfg.ports[h["port"]]
            assert port.pvid == h["vlan"], (where, host)
            assert port.untagged == routing and not port.tagged, (where, host)
            assert port.acceptable == "all", (where, host)
            checked += 1
        # Inter-switch: exactly the VLANs whose tree uses the neighbour pair, VLAN 1 never, STP off.
        uplinks: dict[str, tuple[str, Any]] = {}
        for lag_id, lag in cfg.lags.items():
            uplinks[f"LAG {lag_id}"] = (sw["lags"][str(lag_id)]["neighbor"], lag)
            assert lag.hash_mode == "6", where
            assert sorted(lag.members) == sorted(sw["lags"][str(lag_id)]["members"]), where
        for port_name, p in sw["ports"].items():
            if p["role"] == "inter-switch":
                uplinks[port_name] = (p["neighbor"], cfg.ports[port_name])
            elif p["role"] == "lag-member":
                assert cfg.ports[port_name].lag == p["lag"], (where, port_name)
        cabled_neighbors = {c["b"] if c["a"] == name else c["a"]
                            for c in doc["cabling"] if name in (c["a"], c["b"])}
        assert {nb for nb, _ in uplinks.values()} == cabled_neighbors, where
        for label, (nb, port) in uplinks.items():
            expected = trees.get(frozenset((name, nb)), set())
            assert port.tagged == expected, (where, label)
            assert not port.untagged and 1 not in port.members_of, (where, label)
            assert not port.stp_enabled, (where, label)
        # Reserved and unused ports stay exactly as the factory left them.
        for port_name, port in cfg.ports.items():
            if port_name not in sw["ports"]:
                assert port.is_default(), (where, port_name)
        assert set(sw["reserved_ports"]).isdisjoint(sw["ports"]), where
        has_hosts = any(p["role"] == "host" for p in sw["ports"].values())
        expected_vlans = routing if has_hosts else set().union(*(p.tagged for _, p in uplinks.values()))
        assert cfg.vlans == {1} | expected_vlans, where      # VLAN 1 is the factory default
    assert checked == len(doc["hosts"]) or any(
        sp.platform.family != "powerconnect-62xx" for sp in plan.switches.values())
