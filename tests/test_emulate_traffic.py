"""`vlanroute emulate --traffic`: TCP throughput measured on the emulated data plane
against the TCP model's prediction (proportionally fair rates, emulate/tcpmodel.py), for
the plan and for 802.1D bridges on the same cables (issue 26's Done-when). The seed's 8-switch torus (the 3-cube), one host per switch
and one cable per pair, 1 Mbit/s on every link: all-to-all (56 flows) and a permutation.

It runs on this machine's kernel when that hosts the namespaces, else in the QEMU VM,
under KVM or TCG. Under TCG every frame is forwarded by an emulated CPU sharing the host's
cores: at 1 Mbit/s a link costs it little (docs/emulate.md, "Traffic", has the figures,
measured on the busy 2-core development machine), and the measurement is the kernel's
count of the bytes each receiving socket got (TCP_INFO), not a loop's timing."""

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
pytestmark = [pytest.mark.root, pytest.mark.slow, pytest.mark.vm]

TOLERANCE = 0.15
# The gain is a quotient of two measurements, each within 15 %: the rows alone allow 0.74
# to 1.35 of the model's; 20 % is tighter and still clear of the spread measured (docs).
GAIN_TOLERANCE = 0.20


@pytest.mark.timeout(900)
def test_measured_throughput_agrees_with_the_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root")
    capable, why = host_kernel_capable()
    if not capable and vm.missing_tools(vm.VmConfig()):
        pytest.skip(f"this kernel cannot host the namespaces ({why}) and the VM's tools are missing: "
                    + ", ".join(vm.missing_tools(vm.VmConfig())))
    out = render(ROOT / "inventories" / "seed-torus.yaml", tmp_path / "torus", "hosts.count=null",
                 "hosts.per_switch=1", "platform=linux-bridge", "topology.links_per_pair=1")
    report = tmp_path / "traffic.json"
    status = main(["emulate", "--kernel", "host" if capable else "vm", "--timeout", "780", "--json-report", str(report),
                   "--traffic", "all-to-all,permutation", "--traffic-rate", "1", "--traffic-warmup", "3",
                   "--traffic-seconds", "6", str(out)])
    text = capsys.readouterr().out
    with capsys.disabled():             # the figures, in the test log of every run
        print("\n" + text)
    data = json.loads(report.read_text())
    assert status == 0 and not data["aborted"], text
    # The 3-cube's 12 cables: the kernel's 802.1D blocks the 5 the model blocks.
    assert "the kernel blocked 5 cables, the model 5 (the same ones)" in text
    rows = {(r["pattern"].split(" (")[0], r["fabric"]): r for r in data["rows"]}
    assert set(rows) == {(p, f) for p in ("all-to-all", "permutation") for f in ("VLAN routing", "spanning tree")}
    for (pattern, fabric), r in rows.items():
        # Every row against the TCP model's aggregate (proportionally fair over data frames
        # and their ACKs), within 15 %; the max-min and largest aggregates are printed beside.
        assert abs(r["measured_mbit"] / r["tcp_mbit"] - 1) <= TOLERANCE, (pattern, fabric, text)
        assert r["tcp_ratio"] == pytest.approx(r["measured_mbit"] / r["tcp_mbit"], abs=1e-4)
    # The plan as a multiple of the spanning tree, the TCP model's next to the measured, on
    # each row; the measured gain within 20 % of the model's.
    for pattern in ("all-to-all", "permutation"):
        plan, stp = rows[(pattern, "VLAN routing")], rows[(pattern, "spanning tree")]
        predicted = plan["tcp_mbit"] / stp["tcp_mbit"]
        measured = plan["measured_mbit"] / stp["measured_mbit"]
        line = next(x for x in text.splitlines() if x.startswith(plan["pattern"]) and "VLAN routing" in x)
        assert line.split()[-2:] == [f"{predicted:.2f}", f"{measured:.2f}"], line
        assert abs(measured / predicted - 1) <= GAIN_TOLERANCE, (pattern, predicted, measured, text)
