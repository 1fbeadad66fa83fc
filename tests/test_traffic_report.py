"""`vlanroute emulate --traffic`'s table and tbf settings, without a network: the measured
ratio to the spanning tree printed next to the predicted one, and tbf's bucket depth."""

from __future__ import annotations

from vlanroute.emulate import traffic
from vlanroute.emulate.traffic import Measured, TrafficOptions, TrafficReport


def test_the_ratio_to_the_spanning_tree_is_printed_measured_next_to_predicted() -> None:
    report = TrafficReport("out/ring", 2.0, "sfq", notes=["measured in the QEMU VM under KVM, 2 vCPUs"])
    report.rows += [Measured("all-to-all", "VLAN routing", 56, 13.4, 12.0, 1.0, 0.9),
                    Measured("all-to-all", "spanning tree", 56, 12.1, 10.0, 1.0, 0.9)]
    lines = report.text().splitlines()
    assert lines[1] == "measured in the QEMU VM under KVM, 2 vCPUs"
    assert lines[2].endswith("x STP pred x STP meas")
    plan = next(line for line in lines if line.startswith("all-to-all") and "VLAN routing" in line).split()
    # 13.4 / 12.1 and 12.0 / 10.0, worked out by hand
    assert plan[-2:] == ["1.11", "1.20"]
    assert plan[-3] == "0.896"            # 12.0 / 13.4
    stp = next(line for line in lines if "spanning tree" in line and line.startswith("all-to-all")).split()
    assert stp[-2:] == ["-", "-"]


class _Recorder:
    """Stands for an Emulation: records the tc batches shape() would run."""

    def __init__(self) -> None:
        self.batches: dict[str, list[str]] = {}
        self.plan = type("Plan", (), {"switches": {}, "hosts": {}})()

    def parallel_batches(self, _tool: str, batches: dict[str, list[str]]) -> None:
        self.batches.update(batches)

    def sw_ns(self, s: str) -> str:
        return s

    def host_ns(self, h: str) -> str:
        return h

    def switch_ports(self, _s: str) -> list[str]:
        return []


def _burst(rate_mbit: float) -> int:
    emu = _Recorder()
    emu.plan.switches = {"sw1": None}
    emu.switch_ports = lambda _s: ["p1"]  # type: ignore[method-assign]
    traffic.shape(emu, TrafficOptions(rate_mbit=rate_mbit))  # type: ignore[arg-type]
    words = emu.batches["sw1"][0].split()
    return int(words[words.index("burst") + 1])


def test_tbf_bucket_holds_a_second_at_the_rate_and_at_least_16_kib() -> None:
    assert _burst(10) == 1250000         # 10 Mbit/s x 1 s / 8
    assert _burst(1) == 125000
    assert _burst(0.1) == 16384          # 12500 bytes would be below the floor
