"""The transition on the emulated data plane (`vlanroute emulate --transition-to`): the seed
torus with 2 hosts per switch on linux bridges, changed from `dor` to its repair around
sw1-sw2 (the cable stays plugged in), back to the plan, then to `turns`; every step as the
planner orders it, with traffic running. The bridge commands and the declared cuts are
checked without a kernel first (fast), then the whole run in the emulation VM (slow)."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest
from emulate_support import render

from vlanroute.cli import main
from vlanroute.emulate import vm
from vlanroute.emulate.spec import load
from vlanroute.emulate.transition import bridge_ports, plan_bridges
from vlanroute.errors import UserError

pytestmark = pytest.mark.slow      # three bundles rendered and verified for the module

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "inventories" / "seed-torus.yaml"
SMALL = ("hosts.count=null", "hosts.per_switch=2", "platform=linux-bridge")


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("transition")
    out = {"dor": render(SEED, tmp / "dor", *SMALL), "turns": render(SEED, tmp / "turns", *SMALL,
                                                                       "routing.algorithm=turns")}
    assert main(["repair", str(out["dor"]), "--failed-pair", "sw1:sw2", "-o", str(tmp / "rep"), "-q"]) == 0
    out["rep"] = tmp / "rep"
    return out


def _carried(spec, cabled) -> dict[tuple[str, str], set[int]]:  # type: ignore[no-untyped-def]
    return {(s, port): st.tagged for s in spec.switches for port, st in bridge_ports(spec, s, cabled).items()}


@pytest.mark.parametrize("a,b", [("dor", "rep"), ("rep", "dor"), ("dor", "turns"), ("turns", "dor")])
def test_bridge_commands_reach_the_target_and_every_state_is_a_forest(bundles, a, b) -> None:  # type: ignore[no-untyped-def]
    cabled = load(bundles["dor"])
    old, new = load(bundles[a]), load(bundles[b])
    bt = plan_bridges(old, new, cabled)
    state = _carried(old, cabled)
    port = {(s, n): up.lag_name or up.members[0] for (s, n), up in cabled.uplinks.items()}
    for step in bt.transition.steps:
        for cmd in bt.commands[(step.switch, step.kind)]:
            key = (step.switch, cmd.port)
            if key in state and any(key == (s, p) for (s, _n), p in port.items()):
                (state[key].add if cmd.verb == "add" else state[key].discard)(cmd.vlan)
            # After every line, an independent check: per VLAN, the links both ends carry.
            for v in cabled.vlan_ids:
                g = nx.MultiGraph()
                g.add_edges_from((s, n) for (s, n), p in port.items()
                                 if s < n and v in state[(s, p)] and v in state[(n, port[(n, s)])])
                assert not g.number_of_edges() or nx.is_forest(g), (step.label(), str(cmd), v)
    assert state == _carried(new, cabled)
    assert all(c.count > 0 for c in bt.transition.cuts)


def test_a_bundle_with_more_cables_than_outdir_is_refused(bundles, capsys) -> None:  # type: ignore[no-untyped-def]
    """The emulation is built from OUTDIR's cables: the return from a repair starts at the
    plan, goes to the repair and back."""
    with pytest.raises(UserError, match="not in OUTDIR's cabling"):
        plan_bridges(load(bundles["rep"]), load(bundles["dor"]), load(bundles["rep"]))
    assert main(["emulate", str(bundles["rep"]), "--kernel", "vm", "--transition-to", str(bundles["dor"])]) == 2
    assert "not in OUTDIR's cabling" in capsys.readouterr().err


@pytest.mark.vm
@pytest.mark.slow
@pytest.mark.timeout(900)
def test_plan_to_repair_back_and_to_turns_with_traffic_running(bundles, tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    if vm.missing_tools():
        pytest.skip("emulation tools missing: " + ", ".join(vm.missing_tools()))
    report = tmp_path / "report.json"
    status = main(["emulate", "--kernel", "vm", "--timeout", "850", "--json-report", str(report),
                   "--transition-to", str(bundles["rep"]), "--transition-to", str(bundles["dor"]),
                   "--transition-to", str(bundles["turns"]), str(bundles["dor"])])
    captured = capsys.readouterr()
    text = captured.out + captured.err
    assert status == 0, text
    data = json.loads(report.read_text())
    assert data["ok"] is True and data["teardown_clean"] is True, text
    names = [c["name"] for c in data["checks"]]
    # Three transitions, each step followed by a storm check, each with traffic running.
    assert sum(1 for n in names if n.endswith("delivery during the transition")) == 3
    storms = [c for c in data["checks"] if c["name"].startswith("no storm after step")]
    assert len(storms) >= 3 * 4 and all(c["ok"] for c in storms)
    for c in data["checks"]:
        if c["name"].endswith("delivery during the transition"):
            assert "0 others lost some" in c["detail"] and "240 pairs probed" in c["detail"], c
    assert text.count("240/240 ordered pairs got exactly 1 UDP datagrams") >= 3       # after each (the log and the report both print it)
