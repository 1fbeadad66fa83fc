"""`vlanroute emulate` of trunk-attached fabrics (docs/method.md, host attachment): host ports
are trunks whose native VLAN is the host's own, the other VLANs arrive tagged on the hosts'
sub-interfaces, and every host kernel starts with strict reverse-path filtering
(rp_filter = 1). The host program makes the sub-interfaces loose; without that, traffic
between hosts of different VLANs fails, which the last test shows. Each test boots the
emulation VM (this kernel has no bridge VLAN filtering), about a minute each."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from emulate_support import render
from vlanroute.cli import main
from vlanroute.emulate import vm

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.vm

if vm.missing_tools():
    if os.environ.get("CI"):
        raise RuntimeError("emulation tools missing on CI: " + ", ".join(vm.missing_tools())
                           + " (see .ci/packages.txt)")
    pytest.skip("emulation tools missing: " + ", ".join(vm.missing_tools()), allow_module_level=True)

TRUNK = ("platform=linux-bridge", "switches={}", "settings.host_attachment=trunk")
PASSING = ["switch scripts", "host program (learning frames)",
           "no storm after the learning broadcasts and VLAN-1 probes", "MAC learning (bridge fdb)",
           "delivery on the plain interface", "frames crossed exactly the planned cables",
           "TCP exchange on the plain interface", "no storm after the traffic"]


def _emulate(outdir: Path, tmp: Path, capsys: pytest.CaptureFixture[str], *options: str, kernel: str = "vm"
             ) -> tuple[int, dict[str, dict[str, object]], str]:
    report = tmp / "report.json"
    status = main(["emulate", "--kernel", kernel, "--timeout", "900", "--json-report", str(report),
                   *options, str(outdir)])
    out = capsys.readouterr()
    data = json.loads(report.read_text()) if report.exists() else {}
    checks = {str(c["name"]): c for c in data.get("checks", [])}       # type: ignore[union-attr]
    return status, checks, out.out + out.err


def test_trunk_seed_torus_passes_every_check_from_strict_rp_filter(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """Also the host program under the system's tools: /bin/sh (dash) and iputils' `ping -b`
    for the learning broadcasts (the other emulate tests use busybox), with `--kernel auto`,
    which picks this host's kernel when it can and the VM otherwise."""
    out = render(ROOT / "inventories" / "seed-torus.yaml", tmp_path / "torus", *TRUNK,
                 "hosts.count=null", "hosts.per_switch=2")
    doc = json.loads((out / "plan.json").read_text())
    assert {s["host_attachment"] for s in doc["switches"].values()} == {"trunk"}
    status, checks, text = _emulate(out, tmp_path, capsys, "--host-tools", "system", "--host-frame", "ping",
                                    kernel="auto")
    assert status == 0, text
    assert list(checks) == PASSING and all(c["ok"] for c in checks.values()), text
    assert re.search(r"kernel: (this host|a VM)", text)
    learned = str(checks["host program (learning frames)"]["detail"])
    assert learned.startswith("16/16 hosts ran hosts/vlanroute-host under /bin/sh (frames ping, iputils: 16)"), learned
    assert "16/16 trunk hosts: sub-interfaces rp_filter 2, arp_ignore 0, arp_filter 0 (all/default started " \
           "at rp_filter 1)" in learned
    assert str(checks["delivery on the plain interface"]["detail"]).startswith("240/240 ordered pairs")
    assert str(checks["TCP exchange on the plain interface"]["detail"]).startswith("240/240 ordered pairs (all)")
    assert "8 switches, 16 hosts, 24 cables (24 in LAGs), 4 VLANs" in text


def test_without_the_host_programs_sysctls_strict_rp_filter_drops_the_other_vlans(
        tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The need, demonstrated: the same trunk fabric, but the sub-interfaces put back to the
    distribution's rp_filter 1 after the host program. Hosts of one VLAN still reach each
    other (their frames arrive untagged on eth0); every pair across VLANs fails, UDP and
    TCP (the ARP request arriving on a sub-interface is dropped too)."""
    out = render(ROOT / "inventories" / "seed-ring.yaml", tmp_path / "ring", *TRUNK,
                 "hosts.count=null", "hosts.per_switch=1", "topology.size=4", "topology.links_per_pair=1")
    doc = json.loads((out / "plan.json").read_text())
    vlan = {h: spec["vlan"] for h, spec in doc["hosts"].items()}
    # The cross-VLAN pairs never arrive: a short --check-wait instead of waiting 60 s for them.
    status, checks, text = _emulate(out, tmp_path, capsys, "--host-sysctls", "skip", "--check-wait", "8")
    assert status == 1, text
    assert checks["MAC learning (bridge fdb)"]["ok"], text      # the switches are not the problem
    assert "delivery on the plain interface" in checks and "TCP exchange on the plain interface" in checks, text
    udp, tcp = checks["delivery on the plain interface"], checks["TCP exchange on the plain interface"]
    assert not udp["ok"] and not tcp["ok"], text
    cross = sorted(f"{a} -> {b}" for a in vlan for b in vlan if a != b and vlan[a] != vlan[b])
    assert cross and len(cross) < len(vlan) * (len(vlan) - 1)  # some pairs share a VLAN, some do not
    # The UDP check's pair lines come after what it says about drops and steps.
    pairs = [p for p in udp["problems"] if re.match(r"\S+ -> \S+: ", p)]  # type: ignore[union-attr]
    assert sorted(p.split(":")[0] for p in pairs) == cross
    assert any(p.startswith("pairs not delivered by step") for p in udp["problems"]), text  # type: ignore[union-attr]
    assert sorted(p.split(":")[0] for p in tcp["problems"]) == cross       # type: ignore[union-attr]
