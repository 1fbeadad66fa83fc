"""`verify_outdir`: parse a rendered OUTDIR back and check it by simulating 802.1Q frames.

Independent of the templates: the configs are read with the parsers in vlanroute.drivers
into the vendor-neutral model, joined with cabling.csv, and then
1. the configured state is compared with what plan.json asks for (precise diagnostics);
2. every VLAN created on any switch (VLAN 1 included) must be loop-free;
3. every host sends its learning broadcasts as its host script would (tagged, one per
   VLAN); each must reach every other host at most once, and never loop;
4. every ordered host pair: an untagged unicast, checked against the learning tables the
   broadcasts left (a unicast's own learning is not applied, so results do not depend on
   the order pairs are checked in), is delivered exactly once, without flooding, along
   the unique path of the plan's tree for the source's VLAN, and as the destination's
   host attachment says: untagged, or (trunk) tagged with the source's VLAN unless that is
   the destination's own, and then received on the host's sub-interface for that VLAN;
   checked by equivalence classes of sources and destinations (verify/classes.py), exactly;
5. the learned table size of every switch against its platform's MAC capacity.
"""

from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from collections.abc import Mapping

from vlanroute.bundle.document import HostDoc, PlanDocument
from vlanroute.bundle.platforms import resolve_platforms
from vlanroute.bundle.reader import Cable, host_macs, read_cabling, read_plan, read_text
from vlanroute.verify.cables import cable_row_violations
from vlanroute.drivers import family_of
from vlanroute.drivers.family import Family
from vlanroute.errors import UserError
from vlanroute.hostside import table
from vlanroute.natural import natsorted
from vlanroute.model.bridge import PortConfig, PortRef, SwitchConfig
from vlanroute.model.platforms import Platform
from vlanroute.verify.classes import PlanTrees, check_unicast
from vlanroute.verify.simulate import BridgeNetwork, BridgePort, MemoisedSimulator

MESSAGES_PER_KIND = 25                   # stored per kind; the rest are counted


@dataclass
class VerifyReport:
    ok: bool
    violations: list[str]
    summary: list[str]
    table_sizes: dict[str, tuple[int, int]] = field(default_factory=dict)  # switch -> (learned, capacity)
    counts: dict[str, int] = field(default_factory=dict)                    # kind -> violations


class _Violations:
    """Collects messages by kind; keeps the first few of each kind, counts all."""

    def __init__(self) -> None:
        self.kept: list[str] = []
        self.counts: dict[str, int] = defaultdict(int)

    def add(self, kind: str, message: str) -> None:
        self.counts[kind] += 1
        if self.counts[kind] <= MESSAGES_PER_KIND:
            self.kept.append(message)

    def count(self, kind: str) -> bool:
        """Count one violation of `kind`; True if its message should still be kept.

        Lets hot loops skip formatting messages that would be dropped anyway."""
        self.counts[kind] += 1
        return self.counts[kind] <= MESSAGES_PER_KIND

    def keep(self, message: str) -> None:
        self.kept.append(message)

    def finish(self) -> list[str]:
        out = list(self.kept)
        for kind, n in self.counts.items():
            if n > MESSAGES_PER_KIND:
                out.append(f"... and {n - MESSAGES_PER_KIND} more {kind} violations")
        return out


def _vl(ids: set[int] | list[int]) -> str:
    return ",".join(str(v) for v in sorted(ids)) or "none"


# --- loading -------------------------------------------------------------------------------

def _check_ports_exist(doc: PlanDocument, plats: dict[str, Platform], path: Path) -> None:
    """Every host's port exists on its switch's platform (plan.json names are checked
    already; which ports exist depends on the platform)."""
    for host, hs in doc.hosts.items():
        if not plats[hs.switch].has_port(hs.port):
            raise UserError(f"{hs.switch} ({plats[hs.switch].name}) has no port {hs.port!r}",
                            file=str(path), field=f"hosts.{host}.port",
                            fix="render again; plan.json must be the plan that wrote these configs")


def _host_broadcasts(outdir: Path, hosts: Mapping[str, HostDoc], routing_ids: list[int]) -> dict[str, list[int]]:
    """The VLANs each host sends its learning broadcast in: the host program sends one in every
    VLAN of hosts/vlans.tsv for every host of hosts/hosts.tsv, and none for a host missing from
    the table. An OUTDIR without the tables falls back to the plan's rule: every routing VLAN."""
    if not (outdir / "hosts" / table.HOSTS_FILE).is_file():
        return {h: list(routing_ids) for h in hosts}
    listed = table.read_hosts(outdir / "hosts" / table.HOSTS_FILE)
    vlans = [row.vlan for row in table.read_vlans(outdir / "hosts" / table.VLANS_FILE)]
    return {h: list(vlans) if h in listed else [] for h in hosts}


# --- checks ---------------------------------------------------------------------------------

def _check_against_plan(doc: PlanDocument, configs: dict[str, SwitchConfig], plats: dict[str, Platform],
                        families: dict[str, Family], cables: list[Cable], out: _Violations) -> None:
    """Configured state vs plan.json: names the exact setting that differs."""
    plan_cables = {frozenset(((c.a, c.a_port), (c.b, c.b_port))) for c in doc.cabling}
    file_cables = {frozenset(c.ends()): c for c in cables}
    for key, c in sorted(file_cables.items(), key=lambda kv: kv[1].row):
        if key not in plan_cables:
            planned = [" - ".join(f"{s} {p}" for s, p in sorted(pc)) for pc in plan_cables
                       if any(e in pc for e in key)]
            hint = f"; plan.json has {' and '.join(sorted(planned))}" if planned else ""
            out.add("cabling", f"cabling.csv line {c.row}: cable {c.a} {c.a_port} - {c.b} {c.b_port} "
                               f"is not in the plan{hint}")
    for pc in sorted(plan_cables - set(file_cables), key=lambda s: sorted(s)):
        (s1, p1), (s2, p2) = sorted(pc)
        out.add("cabling", f"cabling.csv: planned cable {s1} {p1} - {s2} {p2} is missing")
    for c in cables:
        for sw, port, lag in ((c.a, c.a_port, c.a_lag), (c.b, c.b_port, c.b_lag)):
            got = configs[sw].ports[port].lag
            if got != lag:
                out.add("cabling", f"cabling.csv line {c.row}: {sw} {port} is "
                                   f"{'in LAG ' + str(got) if got else 'not in a LAG'} in switches/{sw}.cfg, "
                                   f"the file says {'LAG ' + str(lag) if lag else 'no LAG'}")

    settings = doc.settings
    for sw, spec in sorted(doc.switches.items()):
        cfg = configs[sw]
        family = families[sw]
        needed: set[int] = set()
        for port, pp in spec.ports.items():
            needed |= set(pp.untagged) | set(pp.tagged)
            if port not in cfg.ports:
                out.add("config", f"{sw}: plan port {port} does not exist on {cfg.platform}")
                continue
            own = cfg.ports[port]
            eff = cfg.effective(port)
            where = f"{sw} port {port}"
            if pp.role == "host":
                where += f" (host {pp.host})"
                if own.lag is not None:
                    out.add("config", f"{where}: is a member of LAG {own.lag}, plan says a host port")
                _compare_port(where, eff, pp.pvid, set(pp.untagged), set(pp.tagged), out)
                if eff.acceptable != "all":
                    out.add("config", f"{where}: admits {eff.acceptable} frames; the host sends untagged "
                                      "and tagged frames")
            elif pp.role == "lag-member":
                if own.lag != pp.lag:
                    out.add("config", f"{where}: plan says member of LAG {pp.lag} to {pp.neighbor}, "
                                      f"config says {'LAG ' + str(own.lag) if own.lag else 'no LAG'}")
            else:
                where += f" (to {pp.neighbor})"
                if own.lag is not None:
                    out.add("config", f"{where}: is a member of LAG {own.lag}, plan says a single link")
                _compare_port(where, eff, None, set(), set(pp.tagged), out)
                _check_stp(cfg, where, eff, out)
        for lag_id in spec.lag_ids():
            lp = spec.lags[str(lag_id)]
            lag_cfg = cfg.lags.get(lag_id)
            where = f"{sw} {family.lag_label(lag_id)} (LAG {lag_id} to {lp.neighbor})"
            if lag_cfg is None:
                out.add("config", f"{where}: LAG not configured")
                continue
            _compare_port(where, lag_cfg, None, set(), set(lp.tagged), out)
            _check_stp(cfg, where, lag_cfg, out)
            if sorted(lag_cfg.members) != sorted(lp.members):
                out.add("config", f"{where}: members {' '.join(lag_cfg.members) or 'none'}, plan says "
                                  f"{' '.join(lp.members)}")
        want_hash = family.capabilities.lag_hash_modes.get(settings.lag_hash)
        for lag_id in spec.lag_ids():
            lag_cfg = cfg.lags.get(lag_id)
            if lag_cfg is not None and want_hash and lag_cfg.hash_mode != want_hash:
                out.add("config", f"{sw} {family.lag_label(lag_id)}: LAG hash {lag_cfg.hash_mode or 'default'}, "
                                  f"plan says {want_hash} ({settings.lag_hash})")
        planned_ports = set(spec.ports) | {m for lp in spec.lags.values() for m in lp.members}
        for port in sorted(cfg.touched - planned_ports - set(spec.reserved_ports), key=plats[sw].port_index):
            out.add("config", f"{sw} port {port}: not in the plan, but switches/{sw}.cfg configures it")
        if cfg.flow_control is not None and settings.flow_control is not None \
                and cfg.flow_control != settings.flow_control:
            out.add("config", f"{sw}: flow control {'on' if cfg.flow_control else 'off'}, plan says "
                              f"{'on' if settings.flow_control else 'off'}")
        missing = needed - cfg.vlans
        if missing:
            out.add("config", f"{sw}: VLANs {_vl(missing)} are used by ports but not created")
        for port in spec.reserved_ports:
            if port in cfg.touched:
                out.add("config", f"{sw} port {port}: reserved, but switches/{sw}.cfg configures it")
        if settings.aging_time is not None and cfg.aging_time != settings.aging_time:
            out.add("config", f"{sw}: aging time {cfg.aging_time} s, plan says {settings.aging_time} s")


def _compare_port(where: str, cfg: PortConfig, pvid: int | None, untagged: set[int],
                  tagged: set[int], out: _Violations) -> None:
    if pvid is not None and cfg.pvid != pvid:
        out.add("config", f"{where}: PVID {cfg.pvid}, plan says {pvid}")
    got_u, got_t = cfg.untagged - cfg.forbidden, cfg.tagged - cfg.forbidden
    for label, got, want in (("untagged", got_u, untagged), ("tagged", got_t, tagged)):
        if got != want:
            diff = []
            if want - got:
                diff.append(f"missing VLAN {_vl(want - got)}")
            if got - want:
                diff.append(f"extra VLAN {_vl(got - want)}")
            out.add("config", f"{where}: {label} member of VLAN {_vl(got)}, plan says {_vl(want)} "
                              f"({'; '.join(diff)})")
    if not cfg.enabled:
        out.add("config", f"{where}: shut down")


def _check_stp(cfg: SwitchConfig, where: str, port: PortConfig, out: _Violations) -> None:
    if cfg.stp_global_enabled and port.stp_enabled:
        out.add("config", f"{where}: spanning tree runs on this inter-switch port; a single spanning "
                          "tree would block links the VLAN trees need")


def _build_network(doc: PlanDocument, configs: dict[str, SwitchConfig], families: dict[str, Family],
                   cables: list[Cable], macs: dict[str, str],
                   subinterfaces: Mapping[str, frozenset[int]]) -> BridgeNetwork:
    """The simulated network; bridge ports carry the names the switches print (a LAG as
    its family spells it), so that every message reads like the switch."""
    net = BridgeNetwork()

    def label(sw: str, port: str) -> str:
        return families[sw].port_label(configs[sw].logical_port(port))

    # Only ports with something attached are modelled: a frame flooded out of an empty
    # port goes nowhere and none comes in, so leaving them out changes no result (and
    # saves building 512 ports per Linux bridge).
    attached: dict[str, set[PortRef]] = defaultdict(set)
    for c in cables:
        attached[c.a].add(configs[c.a].logical_port(c.a_port))
        attached[c.b].add(configs[c.b].logical_port(c.b_port))
    for hs in doc.hosts.values():
        attached[hs.switch].add(configs[hs.switch].logical_port(hs.port))
    # Ports configured alike share one (frozen) BridgePort: 16,384 host ports of a 32x32
    # torus, each a member of 512 VLANs, are then a handful of objects, not 16,384 sets.
    alike: dict[BridgePort, BridgePort] = {}
    for sw, cfg in configs.items():
        ports = {}
        for ref, pc in cfg.bridge_ports().items():
            if ref not in attached[sw]:
                continue
            bp = BridgePort(
                pvid=pc.pvid, untagged=frozenset(pc.untagged - pc.forbidden),
                tagged=frozenset(pc.tagged - pc.forbidden - pc.untagged),
                admit_untagged=pc.acceptable != "tagged-only",
                admit_tagged=pc.acceptable != "untagged-only",
                ingress_filtering=pc.ingress_filtering,
                # a LAG without members carries nothing; spanning tree is assumed not to
                # block anything (it is checked to be off on inter-switch ports)
                forwarding=pc.enabled and (not pc.is_lag or bool(pc.members)))
            ports[families[sw].port_label(ref)] = alike.setdefault(bp, bp)
        net.add_bridge(sw, cfg.vlans, ports)
    for c in cables:
        net.connect(c.a, label(c.a, c.a_port), c.b, label(c.b, c.b_port))
    for host, hs in sorted(doc.hosts.items()):
        net.add_host(host, macs[host], hs.switch, label(hs.switch, hs.port),
                     subinterfaces.get(host, frozenset()))
    return net


def _check_loops(net: BridgeNetwork, configs: dict[str, SwitchConfig], doc: PlanDocument,
                 out: _Violations) -> int:
    """Every VLAN created anywhere: the links whose both ends forward it form a forest.

    A loop is reported with its cycle, and with the links on it that the plan's tree
    for that VLAN does not have (usually the one extra membership that closed it).
    """
    vlans = sorted(set().union(*(c.vlans for c in configs.values())))
    plan_links = {v.id: {frozenset(pair) for pair in v.links} for v in doc.vlans}
    edges_seen: set[tuple] = set()
    links: list[tuple[str, str, str, str]] = []
    for (b, p), ends in sorted(net.links.items()):
        for kind, far, far_port in dict.fromkeys(ends):
            if kind == "bridge" and (far, far_port, b, p) not in edges_seen:
                edges_seen.add((b, p, far, far_port))
                links.append((b, p, far, far_port))
    # each link under every VLAN both its ends forward: work proportional to memberships
    per_vlan: dict[int, list[tuple[str, str, str, str]]] = defaultdict(list)
    for link in links:
        a, ap, b, bp = link
        pa, pb = net.bridges[a].ports[ap], net.bridges[b].ports[bp]
        if pa.forwarding and pb.forwarding:
            for vid in pa.members & pb.members & net.bridges[a].vlans & net.bridges[b].vlans:
                per_vlan[vid].append(link)
    for vid in vlans:
        parent: dict[str, str] = {}

        def find(x: str) -> str:
            # path halving: each lookup shortens the chain, so a VLAN's 1,023 unions on a
            # 32x32 torus do not walk ever longer chains
            while (up := parent.get(x, x)) != x:
                parent[x] = parent.get(up, up)
                x = parent[x]
            return x

        adj: dict[str, dict[str, str]] = defaultdict(dict)     # bridge -> neighbour -> port
        for a, ap, b, bp in per_vlan.get(vid, ()):
            ra, rb = find(a), find(b)
            if ra == rb:
                cycle = _tree_path(adj, b, a)
                hops = [f"{x} {adj[x][y]} - {y} {adj[y][x]}" for x, y in zip(cycle, cycle[1:])]
                hops.append(f"{a} {ap} - {b} {bp}")
                pairs = [(x, y) for x, y in zip(cycle, cycle[1:])] + [(a, b)]
                planned = plan_links.get(vid, set())
                extra = [h for h, (x, y) in zip(hops, pairs) if frozenset((x, y)) not in planned]
                why = (f"; not in the plan's tree of VLAN {vid}: {', '.join(extra)}" if extra and planned
                       else "")
                out.add("loop", f"VLAN {vid} has a loop: {' / '.join(hops)}{why}")
                continue
            parent[ra] = rb
            adj[a][b] = ap
            adj[b][a] = bp
    return len(vlans)


def _tree_path(adj: dict[str, dict[str, str]], src: str, dst: str) -> list[str]:
    prev: dict[str, str | None] = {src: None}
    queue = deque([src])
    while queue:
        x = queue.popleft()
        if x == dst:
            break
        for y in adj[x]:
            if y not in prev:
                prev[y] = x
                queue.append(y)
    path: list[str] = []
    node: str | None = dst
    while node is not None:
        path.append(node)
        node = prev.get(node)
    return path[::-1] if path[-1] == src else [src, dst]


def _delivery_tag(doc: PlanDocument, src_vlan: int, dst: str) -> int | None:
    """The tag a unicast from VLAN `src_vlan` reaches host `dst` with, per its switch's host
    attachment (vlanroute.model.bridge): untagged, or on a trunk tagged unless native."""
    hd = doc.hosts[dst]
    if doc.switches[hd.switch].host_attachment == "trunk" and src_vlan != hd.vlan:
        return src_vlan
    return None


# --- entry point ----------------------------------------------------------------------------

@dataclass
class Loaded:
    """An OUTDIR read back: the plan, parsed configs, cables and the simulated network."""

    doc: PlanDocument
    platforms: dict[str, Platform]
    families: dict[str, Family]
    configs: dict[str, SwitchConfig]
    cables: list[Cable]
    macs: dict[str, str]
    net: BridgeNetwork
    sends: dict[str, list[int | None]]   # host -> VIDs of its learning broadcasts, in order
    notes: list[str]


def _share_vlan_sets(cfg: SwitchConfig, alike: dict[frozenset[int], frozenset[int]]) -> SwitchConfig:
    """Ports configured alike share their VLAN sets, frozen (verify reads the parsed configs
    and never changes them): 16,384 host ports in 512 VLANs each are then one set, not
    half a GB of them."""
    share = alike.setdefault
    for pc in [*cfg.ports.values(), *cfg.lags.values()]:
        # spelled out rather than by getattr/setattr: 131,072 ports on 256 Linux bridges
        untagged, tagged, forbidden = frozenset(pc.untagged), frozenset(pc.tagged), frozenset(pc.forbidden)
        # frozen on purpose: nothing changes them past parsing (the fields are typed for the parsers)
        pc.untagged = share(untagged, untagged)      # type: ignore[assignment]
        pc.tagged = share(tagged, tagged)            # type: ignore[assignment]
        pc.forbidden = share(forbidden, forbidden)   # type: ignore[assignment]
    return cfg


def load_outdir(outdir: Path | str, platforms: Mapping[str, Platform] | None = None,
                doc: PlanDocument | None = None) -> Loaded:
    """Read and parse everything `verify` needs; user mistakes raise UserError.

    `doc`: the validated document the caller has just written to OUTDIR/plan.json
    (render), used instead of reading and validating the same file a second time."""
    outdir = Path(outdir)
    doc = doc if doc is not None else read_plan(outdir)
    plan_path = outdir / "plan.json"
    resolved = resolve_platforms(doc, source=str(plan_path), extra=platforms)
    plats = resolved.by_switch
    families = {sw: family_of(p) for sw, p in plats.items()}
    _check_ports_exist(doc, plats, plan_path)
    cables = read_cabling(outdir, plats, plats)

    configs: dict[str, SwitchConfig] = {}
    alike: dict[frozenset[int], frozenset[int]] = {}
    for sw in natsorted(doc.switches):
        path = outdir / "switches" / f"{sw}.cfg"
        if not path.is_file():
            raise UserError(f"config of switch {sw} not found", file=str(path),
                            fix="render again; every switch of plan.json needs switches/<name>.cfg")
        configs[sw] = _share_vlan_sets(families[sw].parse(read_text(path), switch=sw, platform=plats[sw],
                                                          source=f"switches/{sw}.cfg"), alike)
    macs = host_macs(doc)
    sends: dict[str, list[int | None]] = {h: list(v) for h, v in _host_broadcasts(outdir, doc.hosts, doc.routing_ids()).items()}
    # the host program makes one VLAN sub-interface per learning VLAN (none when it sends
    # tagged frames from a raw socket instead)
    raw = doc.settings.learning.method == "raw"
    # hosts sending the same VLANs share one set (16,384 hosts x 512 VLANs on a 32x32 torus)
    same_sends: dict[tuple[int | None, ...], frozenset[int]] = {}
    subifs: dict[str, frozenset[int]] = {}
    for h, vids in sends.items():
        key = tuple(vids)
        got = same_sends.get(key)
        if got is None:
            got = same_sends[key] = frozenset() if raw else frozenset(v for v in vids if v is not None)
        subifs[h] = got
    net = _build_network(doc, configs, families, cables, macs, subifs)
    return Loaded(doc, plats, families, configs, cables, macs, net, sends, resolved.notes)


def verify_outdir(outdir: Path | str, platforms: Mapping[str, Platform] | None = None,
                  doc: PlanDocument | None = None) -> VerifyReport:
    """Parse, join and simulate an OUTDIR; see the module docstring for what is checked.

    `platforms` adds platforms the caller knows (render passes its own table); without it a
    derived platform is rebuilt from plan.json's record (vlanroute.bundle.platforms).
    `doc`: the plan document that OUTDIR/plan.json was written from, if the caller has it.
    """
    ld = load_outdir(outdir, platforms, doc)
    doc, plats, configs, cables, macs, net, sends, notes = (
        ld.doc, ld.platforms, ld.configs, ld.cables, ld.macs, ld.net, ld.sends, ld.notes)
    out = _Violations()
    _check_against_plan(doc, configs, plats, ld.families, cables, out)
    for message in cable_row_violations(Path(outdir), doc):
        out.add("cabling", message)
    owners: dict[str, str] = {}
    for host, m in sorted(macs.items()):
        if m in owners:
            out.add("mac", f"hosts {owners[m]} and {host} have the same MAC {m}")
        owners.setdefault(m, host)

    for sw, cfg in sorted(configs.items()):
        for lag_id in sorted(cfg.lags):
            lp = ld.families[sw].lag_label(lag_id)
            peers = {(e[1], e[2]) for e in net.peers(sw, lp)}
            if len(peers) > 1:
                out.add("cabling", f"{sw} {lp}: members are cabled to different far ends "
                                   f"{', '.join(f'{s} {p}' for s, p in sorted(peers))}")
    n_vlans = _check_loops(net, configs, doc, out)
    # The parsed configs are not needed past here: let them go before the simulation
    # builds its own state (the peak is then the larger of the two, not their sum).
    switch_names = sorted(configs)
    ld.configs = {}
    del configs

    fabric = MemoisedSimulator(net)
    hosts = doc.hosts
    results = fabric.learn(sends)
    # Copies are followed until a bridge sees the frame a second time, which is reported
    # as a loop (a storm on a real network). Without one, every bridge forwards the
    # broadcast once and every host port emits it once, so each host receives it at
    # most once; a revisit is therefore exactly what "more than once" looks like here.
    reported: set[int] = set()
    for host in sorted(results):
        hs = hosts[host]
        for rec in results[host]:
            if rec.vid is None:
                out.add("broadcast", f"host {host}: learning broadcast tagged {rec.tag} dropped at "
                                     f"{hs.switch} port {rec.port}: {rec.why}")
                continue
            below = rec.below
            if below is None or id(below) in reported:
                continue
            reported.add(id(below))
            for b, vid, p in below.loops[:1]:
                out.add("broadcast", f"host {host}: learning broadcast tagged {rec.tag} loops in VLAN "
                                     f"{vid}: a copy returns to {b} on port {p} (broadcast storm; "
                                     f"hosts would receive it repeatedly)")
            for b, p, why in below.drops[:1]:
                out.add("broadcast", f"host {host}: learning broadcast tagged {rec.tag}: a copy is "
                                     f"dropped at {b} port {p}: {why}")

    plan_trees = PlanTrees({v.id: v.link_pairs() for v in doc.vlans})
    trunk_hosts = any(s.host_attachment == "trunk" for s in doc.switches.values())
    unicast = check_unicast(net, fabric, {h: hs.vlan for h, hs in hosts.items()}, plan_trees,
                            (lambda vid, dst: _delivery_tag(doc, vid, dst)) if trunk_hosts else None)
    for _, message in unicast.source_problems:
        out.add("unicast", message)
    for block in unicast.failures:
        n = block.count()
        if n == 0:
            continue
        shown = min(n, max(0, MESSAGES_PER_KIND - out.counts["unicast"]))
        for a, b in islice(block.pairs(), shown):
            out.keep(f"{a} -> {b} (VLAN {block.vid}): {block.problem}")
        out.counts["unicast"] += n
    pair_ok = unicast.ok_pairs
    names = sorted(hosts)

    sizes = fabric.table_sizes()
    table_sizes = {sw: (sizes.get(sw, 0), plats[sw].mac_capacity) for sw in natsorted(switch_names)}
    for sw, (n, cap) in table_sizes.items():
        if n > cap:
            out.add("capacity", f"{sw}: learns {n} MAC entries, {plats[sw].name} holds {cap}; "
                                "the rest would be flooded")
    n_hosts = len(names)
    trunk = any(s.host_attachment == "trunk" for s in doc.switches.values())
    worst = max(table_sizes.items(), key=lambda kv: kv[1][0] / max(kv[1][1], 1), default=None)
    summary = [
        f"{len(switch_names)} switches parsed, {len(cables)} cables, {n_vlans} VLANs checked for loops",
        f"{sum(len(v) for v in sends.values())} learning broadcasts from {n_hosts} hosts",
        f"{pair_ok} of {n_hosts * (n_hosts - 1)} ordered host pairs delivered exactly once, "
        + ("untagged, " if not trunk else "untagged or tagged to a sub-interface as attached, ")
        + "without flooding, on the planned path",
    ]
    if worst:
        summary.append(f"largest learned table: {worst[0]} {worst[1][0]} of {worst[1][1]} entries")
    summary.extend(notes)
    violations = out.finish()
    return VerifyReport(ok=not out.counts, violations=violations, summary=summary,
                        table_sizes=table_sizes, counts=dict(out.counts))
