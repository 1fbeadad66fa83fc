"""`vlanroute emulate --traffic`: TCP throughput measured on the emulated data plane
against the flow model's prediction, for the plan and for 802.1D bridges on the same
cables (issue 26's Done-when). The seed's 8-switch ring, one host per switch and one cable
per pair (a LAG's hash with few flows is not the model's many-flow limit), shaped to a
rate the TCG VM sustains on a busy 2-core machine."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from emulate_support import render

from vlanroute.cli import main
from vlanroute.emulate import vm

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.vm, pytest.mark.slow]

if vm.missing_tools():
    pytest.skip("emulation tools missing: " + ", ".join(vm.missing_tools()), allow_module_level=True)

TOLERANCE = 0.15


@pytest.mark.timeout(1200)
def test_measured_throughput_agrees_with_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = render(ROOT / "inventories" / "seed-ring.yaml", tmp_path / "ring", "hosts.count=null", "hosts.per_switch=1",
                 "platform=linux-bridge", "topology.links_per_pair=1")
    report = tmp_path / "traffic.json"
    status = main(["emulate", "--kernel", "vm", "--timeout", "1100", "--json-report", str(report),
                   "--traffic", "all-to-all,permutation", "--traffic-rate", "1", "--traffic-warmup", "3",
                   "--traffic-seconds", "6", str(out)])
    text = capsys.readouterr().out
    data = json.loads(report.read_text())
    assert status == 0 and not data["aborted"], text
    assert "the kernel blocked 1 cables, the model 1 (the same ones)" in text
    rows = {(r["pattern"].split(" (")[0], r["fabric"]): r for r in data["rows"]}
    assert set(rows) == {(p, f) for p in ("all-to-all", "permutation") for f in ("VLAN routing", "spanning tree")}
    for (pattern, fabric), r in rows.items():
        assert abs(r["ratio"] - 1) <= TOLERANCE, (pattern, fabric, text)
    assert "x STP meas" in text
