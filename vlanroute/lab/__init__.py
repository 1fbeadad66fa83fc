"""An emulated Dell PowerConnect 62xx reachable over SSH on loopback. For tests and bench only.

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
