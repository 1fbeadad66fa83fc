"""Emulated switches reachable over SSH on loopback (Dell PowerConnect 62xx and OS6: cli.py;
Arista EOS: eos.py; Dell OS10: os10.py, both on the base trunkswitch.py), for tests,
benchmarks and `vlanroute lab up`.

Its SSH server needs asyncssh, which only the `lab` extra installs: no core command
(plan, render, verify, push, audit, emulate, ...) imports this package.
"""

try:
    import asyncssh  # noqa: F401
except ImportError as exc:
    raise ImportError('vlanroute.lab (the emulated switches) needs asyncssh: '
                      'pip install "vlanroute[lab]"', name=exc.name) from exc

from vlanroute.lab.server import FakeSwitch, FakeSwitchFarm, Faults

__all__ = ["FakeSwitch", "FakeSwitchFarm", "Faults"]
