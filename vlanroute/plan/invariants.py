"""Verification of a plan, run every time a plan is built.

These checks recompute what they check from the plan's output (VLAN links, port plan,
cabling) rather than trusting the data structures that built it. A failed invariant is a
bug (VerificationError); the hardware limits, the user's to fix, are plan/limits.py.
"""

from __future__ import annotations

from vlanroute.errors import VerificationError
from vlanroute.model.bridge import host_port_membership
from vlanroute.model.hosts import Host
from vlanroute.plan.ports import Cable, SwitchPlan
from vlanroute.routing.engine import Routes
from vlanroute.routing.trees import adjacency, pruned_parents, reroot
from vlanroute.model.topology import Topology
from vlanroute.plan.vlans import RoutingVlan
from vlanroute.routing.packing import is_forest


def verify_plan(topo: Topology, routes: Routes, vlans: list[RoutingVlan], hosts: list[Host],
                switches: dict[str, SwitchPlan], cables: list[Cable]) -> None:
    """Raise VerificationError listing every invariant of VLAN routing the plan breaks.

    - Each VLAN's links are cables, loop-free and connected, and reach every switch with
      hosts (a backup VLAN of the fast failover too): 802.1Q floods a broadcast or unknown unicast to every member port of its
      VLAN, and with spanning tree off on inter-switch ports a loop would circulate it
      for ever, while a missing switch would leave its hosts unreachable in that VLAN.
    - Every switch with hosts is the source of exactly one VLAN (or, routed below the
      switch, of one VLAN per tree its hosts send on), and in that VLAN's tree each of its
      routes enters every switch from the neighbour the routing chose: a frame in a tree
      can take only the tree's path, so the tree must be the routes.
    - A host port has PVID = its host's VLAN, one its switch is a source of, and each of
      those VLANs gets exactly the hosts the routing sends on its tree (an untagged frame
      is classified into the PVID, so the host's frames follow the routes of its tree);
      it is an untagged member of every routing VLAN and of nothing else (replies come
      back in the sender's VLAN and must leave untagged to a host that knows no tags).
    - An inter-switch port or LAG is a tagged member of exactly the VLANs whose tree
      uses that neighbour pair: a VLAN on a link its tree does not use closes a loop
      in it when both ends are in the tree, and a VLAN missing from a link its tree
      uses cuts the tree. LAG members agree with their LAG.
    - Each cable's ends are the ports the plan gives it, no port carries two cables, and
      no host port is also a cable's end.
    """
    bad: list[str] = []
    host_switches = {h.switch for h in hosts}
    hosts_on: dict[str, int] = {}
    for one in hosts:
        hosts_on[one.switch] = hosts_on.get(one.switch, 0) + 1
    carried: dict[tuple[str, int], int] = {}       # split sources: hosts their routes put in each VLAN
    ids = [v.id for v in vlans]
    if len(set(ids)) != len(ids):
        bad.append(f"VLAN ids are not unique: {ids}")

    source_vlans: dict[str, list[int]] = {}
    # hosts each VLAN must get from each of its sources (a split source: its share)
    expected: dict[tuple[str, int], int] = {}
    split = routes.splits
    cabled = set(topo.arc_cables())
    for v in vlans:
        if not v.links <= cabled:         # one set test; the loop only words what is wrong
            for a, b in v.links:
                if (a, b) not in cabled:
                    bad.append(f"VLAN {v.id}: link {a}-{b} is not a cable of the topology")
        adj = _neighbour_sets(v.links)    # once per VLAN, walked from each of its sources
        nodes = set(adj) or set(v.sources) or set(v.switches)
        # A backup VLAN (routing.protection) has no source: walk it from any of its switches.
        start = v.sources[0] if v.sources else min(nodes, default="")
        reach = set(reroot(adj, start)) | {start}
        connected = reach == nodes
        # A connected graph is loop-free exactly when it has one link fewer than nodes (a
        # tree); only a disconnected one needs the union-find walk over its links.
        tree = connected and len(v.links) == len(nodes) - 1
        if not (tree if connected else is_forest(v.links)):
            bad.append(f"VLAN {v.id}: its links contain a loop")
        if not connected:
            bad.append(f"VLAN {v.id}: its links are not connected")
        missing = host_switches - reach
        if missing:
            bad.append(f"VLAN {v.id}: does not reach switches with hosts {sorted(missing)[:5]}")
        shares = dict(v.shares)
        for s in v.sources:
            of_s = source_vlans.setdefault(s, [])
            if of_s and s not in split:
                bad.append(f"switch {s} is a source of VLANs {of_s[0]} and {v.id}")
            of_s.append(v.id)
            expected[(s, v.id)] = shares.get(s, hosts_on.get(s, 0))
        # Each source's paths in the VLAN tree must be the paths the routing chose: every
        # switch on the way to a switch with hosts is entered from the same neighbour. A
        # split source's hosts in this VLAN send on the tree of its share (counted below).
        for s in v.sources:
            if s in split:
                trees = [t for t, n in split[s] if tree and _routes_in_tree(t, s, host_switches, adj)]
                carried[(s, v.id)] = sum(n for t, n in split[s] if any(t is x for x in trees))
                if not trees:
                    bad.append(f"VLAN {v.id}: none of the trees of {s}'s hosts is its tree")
                continue
            if tree and _routes_in_tree(routes.parents[s], s, host_switches, adj):
                continue
            vpar = reroot(adjacency(v.links), s)     # a broken VLAN: the full check words it
            for x, p in pruned_parents(routes.parents[s], s, host_switches).items():
                if vpar.get(x) != p:
                    bad.append(f"VLAN {v.id}: the routes of {s} reach {x} from {vpar.get(x)} "
                               f"but the routing says from {p}")
    for s in host_switches - set(source_vlans):
        bad.append(f"switch {s} has hosts but no VLAN")
    for s, its in split.items():
        if sum(n for _, n in its) != hosts_on.get(s, 0):
            bad.append(f"switch {s}: its trees carry {sum(n for _, n in its)} hosts, it has {hosts_on.get(s, 0)}")
        for vid in source_vlans.get(s, []):
            if carried.get((s, vid)) != expected[(s, vid)]:
                bad.append(f"VLAN {vid}: {expected[(s, vid)]} hosts of {s} send in it, its routes say "
                           f"{carried.get((s, vid))}")

    by_link: dict[tuple[str, str], set[int]] = {}     # as the VLANs store each link: one orientation
    for v in vlans:
        for link in v.links:
            got = by_link.get(link)
            if got is None:
                by_link[link] = {v.id}
            else:
                got.add(v.id)
    all_ids = frozenset(ids)
    # Host ports mostly share one untagged list (every routing VLAN): its set is made once
    # per distinct list object, not once per port (16,384 ports x 512 VLANs on a 32x32 torus).
    untagged_set: dict[int, tuple[list[int], set[int]]] = {}
    pvids: dict[tuple[str, int], int] = {}        # host ports per (switch, PVID)
    host_of_port = {(h.switch, h.port): h for h in hosts}
    for switch in switches.values():
        for pname, port in switch.ports.items():
            if pname in switch.reserved:
                bad.append(f"{switch.name}:{pname}: reserved port is used as {port.role}")
            if port.role == "host":
                h = host_of_port.get((switch.name, pname))
                if h is None or h.name != port.host:
                    bad.append(f"{switch.name}:{pname}: host port does not match the host list")
                    continue
                mine = source_vlans.get(switch.name, [])
                if port.pvid not in mine or port.pvid != h.vlan:
                    bad.append(f"{switch.name}:{pname}: PVID {port.pvid}, expected "
                               f"{' or '.join(map(str, mine)) or 'a VLAN of its switch'}")
                else:
                    pvids[(switch.name, h.vlan)] = pvids.get((switch.name, h.vlan), 0) + 1
                if h.vlan not in all_ids:          # reported by the PVID check above
                    continue
                member = host_port_membership(switch.host_attachment, h.vlan, all_ids)
                known = untagged_set.get(id(port.untagged))
                if known is None or known[0] is not port.untagged:
                    known = untagged_set[id(port.untagged)] = (port.untagged, set(port.untagged))
                if known[1] != member.untagged or set(port.tagged) != member.tagged:
                    bad.append(f"{switch.name}:{pname}: {switch.host_attachment} host port must be untagged "
                               f"in exactly {sorted(member.untagged)} and tagged in {sorted(member.tagged)}")
            else:
                pair = (switch.name, port.neighbor or "")
                want = sorted(by_link.get(pair, set()) | by_link.get((pair[1], pair[0]), set()))
                if sorted(port.tagged) != want or port.untagged or port.pvid is not None:
                    bad.append(f"{switch.name}:{pname}: tagged {port.tagged}, expected exactly {want}")
                if port.role == "lag-member":
                    lag = switch.lags.get(port.lag or 0)
                    if lag is None or pname not in lag.members or lag.neighbor != port.neighbor or lag.tagged != want:
                        bad.append(f"{switch.name}:{pname}: LAG {port.lag} does not hold it or differs")
    for (s, vid), want_hosts in expected.items():
        if pvids.get((s, vid), 0) != want_hosts:
            bad.append(f"switch {s}: {pvids.get((s, vid), 0)} host ports have PVID {vid}, expected {want_hosts}")
    seen_ports: set[tuple[str, str]] = set()
    for c in cables:
        for s, end, n in ((c.a, c.a_port, c.b), (c.b, c.b_port, c.a)):
            if (s, end) in seen_ports:
                bad.append(f"{s}:{end}: carries two cables")
            seen_ports.add((s, end))
            planned = switches[s].ports.get(end)
            if planned is None or planned.neighbor != n:
                bad.append(f"{s}:{end}: cable to {n} but the port plan says {planned}")
    for (s, host_port) in host_of_port:
        if (s, host_port) in seen_ports:
            bad.append(f"{s}:{host_port}: both a host port and a cable")
    if bad:
        raise VerificationError(bad)


def _routes_in_tree(parent: dict[str, str], src: str, targets: set[str], neighbours: dict[str, set[str]]) -> bool:
    """Does every hop of src's routes to `targets` use a link of the VLAN, a tree given as
    neighbour sets? In a tree the path between two switches is unique, so a route made of
    its links is the tree's own path: every switch on it is entered from the neighbour
    towards src, as the full check (re-rooting the tree at src) would find, in one walk
    up the routes instead of a walk over the whole tree per source."""
    seen = {src}
    for t in targets:
        v = t
        while v not in seen:
            p = parent[v]
            ns = neighbours.get(v)
            if ns is None or p not in ns:
                return False
            seen.add(v)
            v = p
    return True


def _neighbour_sets(links: frozenset[tuple[str, str]]) -> dict[str, set[str]]:
    """Each switch's neighbours over these links (either direction)."""
    out: dict[str, set[str]] = {}
    for a, b in links:
        got = out.get(a)
        if got is None:
            out[a] = {b}
        else:
            got.add(b)
        got = out.get(b)
        if got is None:
            out[b] = {a}
        else:
            got.add(a)
    return out
