"""The VM runner boots the stock kernel and gives a real 802.1Q data plane."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from vlanroute.emulate import vm

pytestmark = pytest.mark.vm

if vm.missing_tools():
    # On CI the packages of .ci/packages.txt are installed, so a missing tool is a failure there.
    if os.environ.get("CI"):
        raise RuntimeError("emulation tools missing on CI: " + ", ".join(vm.missing_tools()))
    pytest.skip("emulation tools missing: " + ", ".join(vm.missing_tools()), allow_module_level=True)

# Two hosts in their own namespaces, one switch namespace with a VLAN-filtering bridge.
# Host a sends untagged (PVID 101 at the switch); host b is reached over an 802.1Q
# sub-interface in VLAN 101. The ping only works if the bridge tags and untags correctly.
DATA_PLANE = r"""
set -e
modprobe bridge; modprobe 8021q; modprobe veth
ip netns add sw; ip netns add ha; ip netns add hb
ip link add a0 netns ha type veth peer name pa netns sw
ip link add b0 netns hb type veth peer name pb netns sw
ip -n sw link add br0 type bridge vlan_filtering 1 stp_state 0
ip -n sw link set pa master br0; ip -n sw link set pb master br0
bridge -n sw vlan del dev pa vid 1; bridge -n sw vlan del dev pb vid 1
bridge -n sw vlan add dev pa vid 101 pvid untagged
bridge -n sw vlan add dev pb vid 101
for l in pa pb br0; do ip -n sw link set $l up; done
ip -n ha addr add 10.9.0.1/24 dev a0; ip -n ha link set a0 up
ip -n hb link add link b0 name b0.101 type vlan id 101
ip -n hb addr add 10.9.0.2/24 dev b0.101; ip -n hb link set b0 up; ip -n hb link set b0.101 up
ip netns exec ha ping -c 2 -W 2 10.9.0.2 > /dev/null
bridge -n sw fdb show br br0 | grep -q 'dev pb vlan 101' && echo LEARNED
ip netns exec hb python3 -c 'import vlanroute, sys; print("PY", sys.version_info[:2])'
touch made-in-guest
exit 3
"""


def test_vm_runs_vlan_bridge_and_returns_status(tmp_path: Path) -> None:
    result = vm.run_in_vm(DATA_PLANE, tmp_path, vm.VmConfig(timeout_s=240))
    assert result.returncode == 3, result.output     # the command's own status, not QEMU's
    assert "LEARNED" in result.output, result.output
    assert "PY (3, 11)" in result.output, result.output
    # The work directory is shared read-write: the guest's file appears on the host.
    assert (tmp_path / "made-in-guest").exists()


def test_vm_timeout_kills_the_guest(tmp_path: Path) -> None:
    with pytest.raises(vm.VmTimeout):
        vm.run_in_vm("sleep 600", tmp_path, vm.VmConfig(timeout_s=10))
