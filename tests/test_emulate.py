"""`vlanroute emulate` on the kernel's real bridge: a custom fabric, and broken rings that
must be caught (a broadcast storm, hosts that never send the learning frames). The seed
torus runs in tests/test_failure_emulate.py (16 hosts, busybox ping frames; 225 hosts) and
tests/test_emulate_trunk.py (the system's sh and iputils ping). On this machine (and CI) the
host kernel has no bridge VLAN filtering, so each test boots the emulation VM (~1 min each).
"""

from __future__ import annotations

import json
import os
import re
import time
from pathlib import Path

import pytest

from emulate_support import render
from vlanroute.bundle.manifest import write_manifest
from vlanroute.emulate import vm
from vlanroute.cli import main
from vlanroute.emulate.run import Options, lean_python

ROOT = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.vm

if vm.missing_tools():
    if os.environ.get("CI"):
        raise RuntimeError("emulation tools missing on CI: " + ", ".join(vm.missing_tools())
                           + " (see .ci/packages.txt)")
    pytest.skip("emulation tools missing: " + ", ".join(vm.missing_tools()), allow_module_level=True)

HOUSE = """\
# Five switches in a "house": a square with a roof, a doubled core link on fixed ports,
# hosts with their own MACs (one on a NIC with a long name), a reserved port, shortest-path
# routing, a custom aging time.
name: house-lab
platform: linux-bridge
topology:
  kind: custom
  switches: [core1, core2, leaf1, leaf2, leaf3]
  links:
    - {a: core1, b: core2, count: 2, ports: [[p47, p47], [p48, p48]]}
    - {a: core1, b: leaf1}
    - {a: core1, b: leaf2}
    - {a: core2, b: leaf2}
    - {a: core2, b: leaf3}
    - {a: leaf1, b: leaf3}
hosts:
  list:
    - {name: gpu01, switch: leaf1, mac: "00:1e:c9:00:00:01", interface: enp129s0f1np1}
    - {name: gpu02, switch: leaf1, mac: "00:1e:c9:00:00:02"}
    - {name: gpu03, switch: leaf2, port: p10, mac: "00:1e:c9:00:00:03"}
    - {name: gpu04, switch: leaf3, mac: "00:1e:c9:00:00:04"}
    - {name: login1, switch: core1, mac: "00:1e:c9:00:00:05"}
routing:
  algorithm: shortest
switches:
  core1: {reserved_ports: [p1]}
settings:
  aging_time: 86400
"""


def small_ring(tmp_path: Path) -> Path:
    return render(ROOT / "inventories" / "seed-ring.yaml", tmp_path / "ring",
                  "hosts.count=null", "hosts.per_switch=1", "platform=linux-bridge",
                  "topology.size=4", "topology.links_per_pair=1", "switches={}")


def emulate(outdir: Path, report: Path, capsys: pytest.CaptureFixture[str],
            kernel: str = "vm", *options: str, timeout: int = 600) -> tuple[int, dict[str, object], str]:
    status = main(["emulate", "--kernel", kernel, "--timeout", str(timeout), "--json-report", str(report),
                   *options, str(outdir)])
    out = capsys.readouterr()
    data = json.loads(report.read_text()) if report.exists() else {}
    return status, data, out.out + out.err


def assert_all_checks_pass(status: int, data: dict[str, object], text: str) -> None:
    assert status == 0, text
    assert data["ok"] is True and data["teardown_clean"] is True, text
    names = [c["name"] for c in data["checks"]]  # type: ignore[index, union-attr]
    for wanted in ("switch scripts", "host program", "no storm after the learning", "MAC learning",
                   "delivery", "frames crossed exactly", "no storm after the traffic"):
        assert any(n.startswith(wanted) for n in names), (wanted, names)
    assert "RESULT: PASS" in text


def test_custom_house(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inventory = tmp_path / "house.yaml"
    inventory.write_text(HOUSE)
    out = render(inventory, tmp_path / "house")
    assert "ageing_time 8640000" in (out / "switches" / "core1.cfg").read_text()
    assert "gpu01\tenp129s0f1np1\t00:1e:c9:00:00:01\t" in (out / "hosts" / "hosts.tsv").read_text()
    # The default learning frame with iproute2: ARP announcements, in the same `ip -batch`.
    status, data, text = emulate(out, tmp_path / "report.json", capsys)
    assert_all_checks_pass(status, data, text)
    assert "5 switches, 5 hosts, 7 cables (2 in LAGs)" in text
    # The MAC-learning check covers gpu01 too: learned in every VLAN through sub-interfaces
    # vr* on its 13-character NIC name.
    assert "5/5 hosts ran hosts/vlanroute-host under busybox sh (frames arp: 5)" in text


def test_vlan1_left_on_ring_links_is_caught_as_a_bounded_storm(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = small_ring(tmp_path)
    doc = json.loads((out / "plan.json").read_text())
    # The mistake a template bug would make on every switch: VLAN 1 stays on the ring links.
    for sw, spec in doc["switches"].items():
        cfg = out / "switches" / f"{sw}.cfg"
        text = cfg.read_text()
        isl = [p for p, ps in spec["ports"].items() if ps["role"] == "inter-switch"]
        assert len(isl) == 2
        for p in isl:
            assert f"vlan del dev {p} vid 1\n" in text
            text = text.replace(f"vlan del dev {p} vid 1\n", "")
        cfg.write_text(text)
    write_manifest(out)          # a bundle rendered that way, not one changed behind render's back
    start = time.monotonic()
    status, data, text = emulate(out, tmp_path / "report.json", capsys)
    elapsed = time.monotonic() - start
    assert status == 1, text
    storm = next(c for c in data["checks"] if c["name"].startswith("no storm"))  # type: ignore[union-attr]
    assert storm["ok"] is False and "broadcast storm" in storm["problems"][0], text
    # Detected by the first storm check (its phase reports all its checks); the traffic
    # checks were not run on a storming network.
    names = [c["name"] for c in data["checks"]]  # type: ignore[index, union-attr]
    assert storm["name"] == names[2] and not any(n.startswith(("delivery", "TCP")) for n in names), names
    assert "later checks skipped" in str(data["aborted"])
    # Bounded in frames: every switch port is rate-limited, so at most about rate x time
    # per port (12 ports, ~250 frames/s each, a 1.5 s window, plus one burst each).
    options = Options()
    ports = 4 * 3
    bound = ports * (options.rate_fps * 2 * options.storm_window_s + options.burst_bytes / 60)
    assert options.storm_bound < int(data["storm_frames"]) <= bound, data["storm_frames"]  # type: ignore[arg-type]
    # Bounded in time: stopped right after detection (the checks phase is one storm window).
    assert float(data["phases"]["checks"]) < 60, data["phases"]  # type: ignore[index]
    assert elapsed < 600
    # And cleaned up: every namespace removed.
    assert data["teardown_clean"] is True and "none left" in str(data["teardown"])


def test_sigterm_during_learning_tears_everything_down(tmp_path: Path) -> None:
    out = small_ring(tmp_path)
    python, env = lean_python()
    # --kernel auto: the guest kernel must be what auto looks for, so it runs right there.
    run = " ".join([*python, "-m", "vlanroute.commands.emulate", "--kernel", "auto", str(out)])
    # Inside the VM: leave a namespace as a SIGKILLed earlier run would, start the emulation
    # on the guest kernel, stop it with SIGTERM while the host scripts run, then count what
    # is left.
    script = f"""
ip netns add vr999999-left-by-a-killed-run
{run} > emu.log 2>&1 &
pid=$!
i=0
until grep -q '^\\[learn\\] \\.\\.\\.' emu.log; do sleep 0.2; i=$((i+1)); [ $i -lt 1500 ] || break; done
kill -TERM $pid
wait $pid
echo "status=$?"
echo "namespaces=$(ip netns list | wc -l)"
echo "veths=$(ip -o link show type veth | wc -l)"
echo "scripts=$(ps -eo args | grep -c '[h]osts/vlanroute-host')"
cat emu.log
"""
    result = vm.run_in_vm(script, tmp_path, vm.VmConfig(timeout_s=600, extra_env=env))
    text = result.output
    assert "status=1" in text, text
    assert "aborted: interrupted (SIGTERM)" in text, text
    assert "namespaces=0" in text and "veths=0" in text and "scripts=0" in text, text
    assert "8 namespaces removed, none left" in text, text
    # The namespace of a run killed earlier (its pid is gone) was removed at the start.
    assert "removing 1 namespaces left by a killed earlier run" in text, text
    # The guest kernel is what `--kernel auto` looks for: the run chose it (no second
    # Python process to ask: each costs about 10 s of imports under TCG).
    assert "kernel: this host (host kernel: bridge VLAN filtering, 802.1Q and tbf available)" in text, text


def test_switch_script_without_bonding_uses_one_cable_per_lag(tmp_path: Path) -> None:
    out = render(ROOT / "inventories" / "seed-ring.yaml", tmp_path / "ring",
                 "hosts.count=null", "hosts.per_switch=1", "platform=linux-bridge",
                 "topology.size=3", "topology.links_per_pair=2", "switches={}")
    doc = json.loads((out / "plan.json").read_text())
    sw1 = doc["switches"]["sw1"]
    lag_id, lag = sorted(sw1["lags"].items())[0]
    first, second = lag["members"]
    ports = " ".join(sw1["ports"])
    # A modprobe that always fails and no bonding module loaded: the script's fallback.
    script = f"""
set -e
modprobe -a bridge veth
mkdir -p fakebin; printf '#!/bin/sh\\nexit 1\\n' > fakebin/modprobe; chmod +x fakebin/modprobe
ip netns add s
for p in {ports}; do ip -n s link add $p type veth peer name x$p; done
ip netns exec s env PATH="$PWD/fakebin:$PATH" sh {out}/switches/sw1.cfg
echo "bonding=$(test -d /sys/module/bonding && echo loaded || echo absent)"
echo "in-bridge=$(ip -n s -o link show master br0 | awk -F': ' '{{print $2}}' | sed 's/@.*//' | sort | xargs)"
bridge -n s -j vlan show > vlans.json
"""
    result = vm.run_in_vm(script, tmp_path, vm.VmConfig(timeout_s=300))
    assert result.returncode == 0, result.output
    assert "no bonding in this kernel: using one cable per LAG" in result.output
    assert "bonding=absent" in result.output
    bridged = re.search(r"in-bridge=(.*)", result.output).group(1).split()  # type: ignore[union-attr]
    assert first in bridged and second not in bridged, result.output
    vlans = {e["ifname"]: sorted(v["vlan"] for v in e["vlans"])
             for e in json.loads((tmp_path / "vlans.json").read_text())}
    assert vlans[first] == sorted(lag["tagged"])        # VLAN 1 gone, tree VLANs tagged


def test_hosts_that_never_send_the_learning_broadcasts_are_caught(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = small_ring(tmp_path)
    # Sub-interfaces are made, but the broadcasts are never sent: nothing teaches the
    # switches of the other VLANs where the hosts are.
    program = out / "hosts" / "vlanroute-host"
    text = program.read_text()
    assert '        [ "$learn" = no ] || { only_vlans; learn; }' in text
    program.write_text(text.replace('        [ "$learn" = no ] || { only_vlans; learn; }', '        :'))
    write_manifest(out)          # a bundle rendered that way, not one changed behind render's back
    status, data, text = emulate(out, tmp_path / "report.json", capsys)
    assert status == 1, text
    fdb = next(c for c in data["checks"] if c["name"].startswith("MAC learning"))  # type: ignore[union-attr]
    assert fdb["ok"] is False and "not learned" in fdb["problems"][0], text
    # Not one (switch, VLAN, MAC) entry: with IPv6 off nothing else leaks the MACs.
    assert str(fdb["detail"]).startswith("0/"), fdb
    assert data["teardown_clean"] is True


def test_raw_learning_method_without_sub_interfaces(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # --learning-method raw: no VLAN sub-interfaces on the hosts; the host program calls
    # `vlanroute learn --raw`, which writes 802.1Q-tagged frames itself. The host ports must
    # accept them all the same.
    out = render(ROOT / "inventories" / "seed-ring.yaml", tmp_path / "ring",
                 "hosts.count=null", "hosts.per_switch=1", "platform=linux-bridge",
                 "topology.size=4", "topology.links_per_pair=1", "switches={}", learning_method="raw")
    assert "\nMETHOD=raw\n" in (out / "hosts" / "vlanroute-host").read_text()
    status, data, text = emulate(out, tmp_path / "report.json", capsys)
    assert_all_checks_pass(status, data, text)
