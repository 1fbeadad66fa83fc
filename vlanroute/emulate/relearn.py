"""The failure scenario's re-learning with `--relearn-with frames`: every host sends one
learning frame per repaired VLAN, from one process that enters each host's namespace
(setns) and writes vlanroute's own learning frame (`vlanroute learn --raw`: an 802.1Q-tagged
broadcast of the local experimental EtherType, from the host's MAC, hostside/broadcast.py)
to an AF_PACKET socket on the host's plain interface.

Why: under QEMU TCG the host program costs about 1.7 vCPU-seconds per host (a shell and
its tools started for each), so its re-learning pass on the seed's 225 hosts took about
5 minutes, the longest step of the test suite. The bridges learn a MAC from any frame's
source, so the frames teach them what the host program's announcements do; the MAC-table
check after the repair proves every entry. The healthy run still runs the host program on
every host, and `--relearn-with program` (the default) runs it for the re-learning too,
as `hosts/relearn.sh` does.
"""

from __future__ import annotations

import errno
import time
from typing import TYPE_CHECKING

from vlanroute.emulate import netns
from vlanroute.errors import UserError
from vlanroute.hostside.broadcast import send_raw

if TYPE_CHECKING:
    from vlanroute.emulate.run import Check, Emulation

RELEARN_CHOICES = ("program", "frames")
RETRIES = 10


def relearn_frames(emu: Emulation, vlans: list[int], dead: frozenset[str] = frozenset()) -> Check:
    """One learning frame per host and VLAN, paced so that no switch port's queue sees more
    than half its rate limit (a quarter while the outage bench's probes run): each broadcast
    crosses every link of its tree once and reaches every host port of the VLAN, so N frames
    per second put N on every port. The hosts of
    `dead` switches send nothing (their switch is gone)."""
    from vlanroute.emulate.run import Check
    opt = emu.options
    # The ports' rate now: the options' (emu.rate_kbit 0: none set yet), or the outage
    # bench's, raised while its probes run to twice what they could put on one port: then
    # a quarter of it, the probes keep their half.
    now = emu.rate_kbit or opt.rate_kbit
    share = 0.25 if now > opt.rate_kbit else 0.5
    gap = len(vlans) / (share * now * 1000 / 8 / 100)     # seconds per host: its frames, at that share
    problems: list[str] = []
    sent = 0
    hosts = sorted(h for h, x in emu.plan.hosts.items() if x.switch not in dead)
    for name in hosts:
        start = time.monotonic()
        host = emu.plan.hosts[name]
        for attempt in range(RETRIES + 1):
            try:
                with netns.inside(emu.host_ns(name)):
                    sent += len(send_raw(host.interface, vlans))
                break
            except OSError as exc:
                # A full transmit queue (ENOBUFS) while probes run: wait, as a host's own
                # sender would; the frames go out once the queue drains.
                if exc.errno == errno.ENOBUFS and attempt < RETRIES:
                    time.sleep(0.05 * (attempt + 1))
                    continue
                problems.append(f"{name}: {exc}")
                break
            except UserError as exc:
                problems.append(f"{name}: {exc}")
                break
        rest = gap - (time.monotonic() - start)
        if rest > 0:
            time.sleep(rest)
    emu.learn_drops = emu.rate_limit_drops()       # the MAC-table check names drops on uplinks
    n = len(hosts)
    return Check(f"re-learning in VLANs {','.join(map(str, vlans))} (learning frames from one process)",
                 not problems,
                 f"{n - len(problems)}/{n} hosts sent {sent} tagged learning frames (`vlanroute learn --raw`'s) "
                 f"from their interface, {len(vlans) / gap:.0f} a second", problems)
