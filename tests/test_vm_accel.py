"""The emulation VM runs under KVM where /dev/kvm can boot the guest, else under TCG; a
KVM that hangs the guest is tried once, then remembered (vlanroute/emulate/vm.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from vlanroute.emulate import vm
from vlanroute.errors import UserError


@pytest.fixture(autouse=True)
def private_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.delenv(vm.ACCEL_ENV, raising=False)
    return tmp_path / "cache"


def test_kvm_usable_needs_a_device_it_can_open(tmp_path: Path) -> None:
    assert not vm.kvm_usable(tmp_path / "no-such-device")
    assert vm.kvm_usable(Path("/dev/null"))          # any device opened read-write counts


def test_choice_follows_the_device_and_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert vm.choose_accel(tmp_path / "absent") == "tcg"
    assert vm.choose_accel(Path("/dev/null")) == "kvm"
    monkeypatch.setenv(vm.ACCEL_ENV, "TCG")
    assert vm.choose_accel(Path("/dev/null")) == "tcg"
    monkeypatch.setenv(vm.ACCEL_ENV, "kvm")
    assert vm.choose_accel(tmp_path / "absent") == "kvm"
    monkeypatch.setenv(vm.ACCEL_ENV, "hvf")
    with pytest.raises(UserError, match="VLANROUTE_VM_ACCEL='hvf' is not an accelerator"):
        vm.choose_accel()


def test_a_kvm_that_cannot_boot_the_guest_falls_back_to_tcg_and_is_remembered(
        tmp_path: Path, private_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    tried: list[str] = []

    def once(script: str, workdir: Path, config: vm.VmConfig, on_line: object, accel: str) -> vm.VmResult:
        tried.append(accel)
        if accel == "kvm":
            raise vm._KvmStalled()
        return vm.VmResult(0, "", 1.0, 2.0, accel=accel)

    monkeypatch.setattr(vm, "_run_once", once)
    monkeypatch.setattr(vm, "kvm_usable", lambda device=vm.KVM_DEVICE: True)
    said: list[str] = []
    result = vm.run_in_vm("true", tmp_path, on_line=said.append)
    assert tried == ["kvm", "tcg"] and result.accel == "tcg"
    # The user is told, not only the label of the report.
    assert len(said) == 1 and "did not boot under KVM" in said[0] and "running under TCG" in said[0]
    assert (private_cache / "vlanroute" / "kvm-cannot-boot").is_file()
    assert vm.choose_accel() == "tcg"                # the next run goes straight to TCG
    vm.run_in_vm("true", tmp_path)
    assert tried == ["kvm", "tcg", "tcg"]


def test_an_explicit_accelerator_is_not_second_guessed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def once(script: str, workdir: Path, config: vm.VmConfig, on_line: object, accel: str) -> vm.VmResult:
        raise vm._KvmStalled()

    monkeypatch.setattr(vm, "_run_once", once)
    with pytest.raises(vm._KvmStalled):
        vm.run_in_vm("true", tmp_path, vm.VmConfig(accel="kvm"))



def test_the_vcpu_count_follows_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    # tests/conftest.py runs the suite's VMs with 1 vCPU; a user's default is 2.
    monkeypatch.delenv(vm.CPUS_ENV, raising=False)
    assert vm.VmConfig().cpus == vm.DEFAULT_CPUS == 2
    monkeypatch.setenv(vm.CPUS_ENV, " 1 ")
    assert vm.VmConfig().cpus == 1
    assert vm.VmConfig(cpus=4).cpus == 4                 # an explicit count wins
    for wrong in ("0", "two", "-1", "65"):
        monkeypatch.setenv(vm.CPUS_ENV, wrong)
        with pytest.raises(UserError, match=f"VLANROUTE_VM_CPUS='{wrong}' is not a vCPU count"):
            vm.VmConfig()
