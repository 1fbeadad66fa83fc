"""An emulated Dell PowerConnect 62xx reachable over SSH on loopback. For tests and bench only."""

from vlanroute.lab.server import FakeSwitch, FakeSwitchFarm, Faults

__all__ = ["FakeSwitch", "FakeSwitchFarm", "Faults"]
