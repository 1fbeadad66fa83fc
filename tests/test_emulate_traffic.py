"""`vlanroute emulate --traffic`: TCP throughput measured on the emulated data plane
against the flow model's prediction, for the plan and for 802.1D bridges on the same
cables (issue 26's Done-when). The seed's 8-switch ring, one host per switch and one cable
per pair (a LAG's hash with few flows is not the model's many-flow limit).

It runs on this machine's kernel when that hosts the namespaces, else in the QEMU VM under
KVM. Under TCG every frame is forwarded by an emulated CPU that shares the host's cores:
on the busy 2-core development machine the measurement there came out at 0.36 to 1.01 of
the prediction from run to run (docs/emulate.md, "Traffic"), so a 15 % check would test
the machine's load, and the test skips, saying why."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from emulate_support import render

from vlanroute.cli import main
from vlanroute.emulate import vm
from vlanroute.emulate.run import host_kernel_capable

ROOT = Path(__file__).resolve().parent.parent
pytestmark = [pytest.mark.root, pytest.mark.slow]

TOLERANCE = 0.15


@pytest.mark.timeout(600)
def test_measured_throughput_agrees_with_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")
    capable, why = host_kernel_capable()
    if not capable and vm.choose_accel() != "kvm":
        kvm = ("KVM failed to boot the guest before (" + str(vm._kvm_failed_marker()) + ")"
               if vm.kvm_usable() else f"{vm.KVM_DEVICE} is not usable")
        pytest.skip(f"this kernel cannot host the namespaces ({why}) and {kvm}: "
                    "under TCG the measurement tests the machine's load, not the model")
    if not capable and vm.run_in_vm("true", tmp_path, vm.VmConfig(timeout_s=300)).accel != "kvm":
        pytest.skip(f"this kernel cannot host the namespaces ({why}) and the guest did not boot under KVM "
                    "(run_in_vm fell back to TCG): under TCG the measurement tests the machine's load")
    out = render(ROOT / "inventories" / "seed-ring.yaml", tmp_path / "ring", "hosts.count=null", "hosts.per_switch=1",
                 "platform=linux-bridge", "topology.links_per_pair=1")
    report = tmp_path / "traffic.json"
    status = main(["emulate", "--kernel", "host" if capable else "vm", "--json-report", str(report),
                   "--traffic", "all-to-all,permutation", "--traffic-rate", "10", "--traffic-warmup", "2",
                   "--traffic-seconds", "4", str(out)])
    text = capsys.readouterr().out
    data = json.loads(report.read_text())
    assert status == 0 and not data["aborted"], text
    assert "the kernel blocked 1 cables, the model 1 (the same ones)" in text
    if not capable:
        assert "measured in the QEMU VM under KVM" in text, text
    rows = {(r["pattern"].split(" (")[0], r["fabric"]): r for r in data["rows"]}
    assert set(rows) == {(p, f) for p in ("all-to-all", "permutation") for f in ("VLAN routing", "spanning tree")}
    for (pattern, fabric), r in rows.items():
        assert abs(r["ratio"] - 1) <= TOLERANCE, (pattern, fabric, text)
    assert "x STP meas" in text
