"""What the lab's switches learn: every plan host's MAC, in every routing VLAN, where the
data plane would learn it, so that `vlanroute audit` can be rehearsed against a lab.

The hosts of a running lab (`vlanroute lab up`) send their learning frames as the host
program does (docs/method.md, "MAC learning"): one broadcast tagged with each routing VLAN,
from the host's port. Where those frames go follows from the switches' running configs as
they are now and from the lab's cables that are plugged in (vlanroute.lab.linkdown): each
config is read back with the switch family's own parser (`Family.parse_running`, as push
reads a switch back) into 802.1Q bridge ports, and every frame is followed by verify's
frame simulator (vlanroute.verify.simulate.BridgeNetwork: ingress rules, flooding, learning
on the ingress port, a LAG as one bridge port). So before a push nothing is learned in a
routing VLAN (no switch has it), after the push every entry is where the plan says, a
cable taken down takes what was learned over it away and leaves a VLAN cut where its tree
is cut, and after a repair is pushed the entries follow the repaired trees.

This is the lab's assumption, not a switch's behaviour: the hosts keep sending (the refresh
job; `relearn.sh` after a repair), and the table shown is what one pass of every host gives
on the current configs and cables. A real switch keeps an entry until it ages out or its
port goes down, so right after a repair it may still point a host the old way until the
hosts re-learn (docs/failures.md); the lab shows the state after they did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vlanroute.bundle.cables import HOST
from vlanroute.bundle.reader import Cable
from vlanroute.drivers import family_of
from vlanroute.errors import UserError
from vlanroute.lab.state import MacEntry
from vlanroute.model.bridge import PortConfig, SwitchConfig
from vlanroute.verify.simulate import BROADCAST, BridgeNetwork, BridgePort


def _bridge_port(pc: PortConfig) -> BridgePort:
    return BridgePort(pvid=pc.pvid, untagged=frozenset(pc.untagged - pc.forbidden),
                      tagged=frozenset(pc.tagged - pc.forbidden - pc.untagged),
                      admit_untagged=pc.acceptable != "tagged-only",
                      admit_tagged=pc.acceptable != "untagged-only",
                      ingress_filtering=pc.ingress_filtering,
                      forwarding=pc.enabled and (not pc.is_lag or bool(pc.members)))


def learned_tables(switches: Mapping[str, Any], cables: Sequence[Cable], macs: Mapping[str, str],
                   vlans: Sequence[int]) -> dict[str, list[MacEntry]]:
    """switch -> the dynamic entries its address table shows after every host of `cables`
    (host rows) sent one learning frame per VLAN of `vlans`. `switches`: name -> FakeSwitch
    (vlanroute.lab.server); `cables`: the plugged ones; `macs`: host -> MAC."""
    configs: dict[str, SwitchConfig] = {}
    labels = {}
    net = BridgeNetwork()
    for name, sw in switches.items():
        family = family_of(sw.platform)
        try:
            cfg = family.parse_running(sw.running_config(), switch=name, platform=sw.platform,
                                       source=f"lab switch {name}")
        except UserError:
            continue                     # a config its own parser refuses forwards nothing here
        configs[name] = cfg
        labels[name] = family.port_label
        net.add_bridge(name, cfg.vlans, {family.port_label(ref): _bridge_port(pc)
                                         for ref, pc in cfg.bridge_ports().items()})

    def port(switch: str, name: str) -> str | None:
        cfg = configs.get(switch)
        if cfg is None or name not in cfg.ports:
            return None
        return str(labels[switch](cfg.logical_port(name)))

    for c in cables:
        a = port(c.a, c.a_port)
        if a is None:
            continue
        if c.kind == HOST:
            if c.b in macs:
                net.add_host(c.b, macs[c.b], c.a, a)
            continue
        b = port(c.b, c.b_port)
        if b is not None:
            net.connect(c.a, a, c.b, b)
    wanted = set(vlans)
    for host in net.hosts:
        for vid in sorted(wanted):
            net.send(host, BROADCAST, vid)
    out: dict[str, list[MacEntry]] = {name: [] for name in switches}
    for (bridge, vid), table in net.tables.items():
        if vid in wanted:
            out[bridge] += [MacEntry(vid, mac, where) for mac, where in table.items()]
    return out
