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
    than half its rate limit: each broadcast crosses every link of its tree once and reaches
    every host port of the VLAN, so N frames per second put N on every port. The hosts of
    `dead` switches send nothing (their switch is gone)."""
    from vlanroute.emulate.run import Check
    opt = emu.options
    # At half the options' rate even while the outage bench has raised the ports' limits for
    # its probes: paced to the raised limit (50,000 frames a second) the frames took the
    # emulating CPU from the bridges under TCG, 968 of 1,000 probed pairs lost probes after
    # their failover and 32 kept stale entries (frames dropped in the backlog).
    gap = len(vlans) / (0.5 * opt.rate_fps)          # seconds per host: its frames, at half the limit
    problems: list[str] = []
    sent = 0
    hosts = sorted(h for h, x in emu.plan.hosts.items() if not dead or x.switch not in dead)
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
