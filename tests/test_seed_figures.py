"""The figures of seed 001 (section 4) come out of the example inventories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlanroute.cli import main

INV = Path(__file__).resolve().parent.parent / "inventories"


def plan_json(capsys: pytest.CaptureFixture[str], name: str, *sets: str) -> dict:
    args = ["plan", str(INV / name), "--json"]
    for s in sets:
        args += ["--set", s]
    assert main(args) == 0
    return json.loads(capsys.readouterr().out)


def test_torus_4x2_with_dor_needs_4_vlans(capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, "seed-torus.yaml")
    assert plan["metrics"]["vlan_count"] == 4
    assert plan["metrics"]["hosts"] == 225 and plan["metrics"]["switches"] == 8
    # The 4x2 torus is the 3-cube: 12 neighbour pairs, 2 cables each by default.
    assert plan["metrics"]["inter_switch_links"] == 24
    assert plan["metrics"]["diameter"] == 3


def test_tree_with_6_cables_has_42(capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, "seed-tree.yaml", "topology.links_per_pair=6")
    assert plan["metrics"]["inter_switch_links"] == 42
    assert plan["metrics"]["vlan_count"] == 1
    assert [v["id"] for v in plan["vlans"]] == [101]
    # six cables to a neighbour are one LAG of six members
    assert all(len(l["members"]) == 6 for sw in plan["switches"].values() for l in sw["lags"].values())


def test_complete_with_1_cable_has_28(capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, "seed-complete.yaml", "topology.links_per_pair=1")
    assert plan["metrics"]["inter_switch_links"] == 28
    assert plan["metrics"]["diameter"] == 1
    assert all(sw["lags"] == {} for sw in plan["switches"].values())


def test_complete_with_6_cables_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["plan", str(INV / "seed-complete.yaml"), "--set", "topology.links_per_pair=6"])
    err = capsys.readouterr().err
    assert rc != 0
    # sw1 carries 29 hosts + 7 x 6 cables = 71 ports on a 48-port switch
    assert "sw1" in err and "71" in err and "48" in err and "Traceback" not in err


def test_hosts_spread_225_over_8(capsys: pytest.CaptureFixture[str]) -> None:
    plan = plan_json(capsys, "seed-ring.yaml")
    per = {}
    for h in plan["hosts"].values():
        per[h["switch"]] = per.get(h["switch"], 0) + 1
    assert per == {"sw1": 29, **{f"sw{i}": 28 for i in range(2, 9)}}


def test_mesh_dor_uses_rows(capsys: pytest.CaptureFixture[str]) -> None:
    # Otsuka et al.: N^(M-1) VLANs for a balanced mesh; the 4x2 mesh with x first: 2.
    assert plan_json(capsys, "seed-mesh.yaml")["metrics"]["vlan_count"] == 2


@pytest.mark.parametrize("name", ["seed-tree.yaml", "seed-ring.yaml", "seed-mesh.yaml", "seed-torus.yaml",
                                  "seed-complete.yaml", "custom-lab.yaml"])
def test_every_example_plans_and_is_deterministic(capsys: pytest.CaptureFixture[str], name: str) -> None:
    a = plan_json(capsys, name)
    b = plan_json(capsys, name)
    assert a == b
    assert a["format"] == "vlanroute-plan/2"


def test_analyze_compares_side_by_side(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(INV / "seed-tree.yaml"), str(INV / "seed-complete.yaml"),
                 "--set", "topology.links_per_pair=1"]) == 0
    out = capsys.readouterr().out
    assert "seed-tree.yaml" in out and "seed-complete.yaml" in out and "28" in out


def test_plan_summary_does_not_build_the_json(capsys: pytest.CaptureFixture[str],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    # `vlanroute plan` without --json prints a summary; the JSON document (every host,
    # port and tree of a large plan) is only built for --json and render.
    from vlanroute.plan.build import Plan

    def refuse(self: Plan) -> None:
        raise AssertionError("the summary built the plan document")
    monkeypatch.setattr(Plan, "to_document", refuse)
    assert main(["plan", str(INV / "seed-torus.yaml")]) == 0
    assert "routing: dor" in capsys.readouterr().out
