"""What the emulation builds and what it must observe, computed from OUTDIR alone.

Pure functions of plan.json and cabling.csv (no kernel, no root), so they are tested
directly: the namespaces and veth pairs to create, each host's MAC and plain address,
the bridge port every switch must learn every host MAC on in every VLAN, and how many
frames each cable must carry for a given all-to-all traffic pattern.
"""

from __future__ import annotations

import ipaddress
import pickle
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

# Only light modules here: the emulation in the VM imports this module, and under TCG
# pydantic, the plan document's models and the switch families took about 12 s of its 18 s
# of imports (measured). `load` imports them on the host; the VM gets the loaded spec
# (`save_specs`, `preload`).
from vlanroute.bundle.cables import Cable
from vlanroute.bundle.learning import DEFAULT_INTERFACE_PREFIX, LearnedAt
from vlanroute.errors import UserError
from vlanroute.model.bridge import LagPort

# Plain (application) addresses of the emulated hosts: RFC 2544 benchmarking space, which
# no learning pool should use and which never leaves the namespaces anyway.
PLAIN_NET = ipaddress.ip_network("198.18.0.0/15")


# Frames per switch port: (switch, neighbour) -> sent on the uplink, host -> sent to it on
# its port, host -> received from it (EmulationSpec.expected_tx).
Counts = tuple[dict[tuple[str, str], int], dict[str, int], dict[str, int]]


@dataclass(frozen=True)
class EmuHost:
    name: str
    switch: str
    port: str
    vlan: int
    interface: str
    mac: str
    address: str            # plain address, no prefix length
    attachment: str = "untagged"   # its switch's host attachment (vlanroute.model.bridge)


@dataclass(frozen=True)
class Uplink:
    """The way from one switch to one neighbour: a single port or a LAG of cables."""
    switch: str
    neighbor: str
    members: tuple[str, ...]        # the physical ports (cables) on this side
    lag: int | None
    lag_name: str | None = None     # the LAG's device as the bridge shows it (bond1)

    def bridge_ports(self) -> frozenset[str]:
        """Names the bridge may show as the port: the bond, or a cable when there is no bond."""
        if self.lag_name is None:
            return frozenset(self.members)
        return frozenset({self.lag_name, self.members[0]})


@dataclass
class EmulationSpec:
    """What the emulation builds and expects, read from a rendered OUTDIR (plan.json,
    cabling): namespaces per switch and host, cables, each VLAN's tree. Not the planner's
    `Plan` (plan/build.py), which is built from an inventory."""

    name: str
    outdir: Path
    switches: list[str]
    hosts: dict[str, EmuHost]
    cables: list[Cable]
    vlan_ids: list[int]
    tree: dict[int, dict[str, set[str]]]        # VLAN -> switch -> tree neighbours
    uplinks: dict[tuple[str, str], Uplink]      # (switch, neighbour) -> uplink
    plain_prefix: int
    interface_prefix: str                       # the learning sub-interfaces' (vr<VLAN>)
    learned: tuple[LearnedAt, ...]              # bundle.learning.learning_ports, every host
    plan_macs: dict[str, str | None]            # each host's MAC as plan.json gives it
    # (vlan, src, dst) -> path: 50,400 host pairs of the seed cluster share 4 x 8 x 8 paths.
    _paths: dict[tuple[int, str, str], list[str]] = field(default_factory=dict, repr=False, compare=False)

    # -- routes -------------------------------------------------------------------------
    def path(self, vlan: int, src: str, dst: str) -> list[str]:
        """Switches on the unique tree path of `vlan` from src to dst (both included)."""
        key = (vlan, src, dst)
        if key not in self._paths:
            self._paths[key] = self._tree_path(vlan, src, dst)
        return self._paths[key]

    def _tree_path(self, vlan: int, src: str, dst: str) -> list[str]:
        if src == dst:
            return [src]
        adj = self.tree[vlan]
        prev: dict[str, str] = {src: src}
        todo = [src]
        while todo:
            s = todo.pop()
            for n in adj.get(s, ()):
                if n not in prev:
                    prev[n] = s
                    todo.append(n)
        if dst not in prev:
            raise UserError(f"plan.json: VLAN {vlan} does not connect {src} and {dst}",
                            file=str(self.outdir / "plan.json"),
                            fix="re-render OUTDIR with `vlanroute render`")
        hops = [dst]
        while hops[-1] != src:
            hops.append(prev[hops[-1]])
        return hops[::-1]

    def expected_fdb(self) -> dict[tuple[str, int, str], frozenset[str]]:
        """(switch, VLAN, host MAC) -> bridge port names where the MAC must be learned
        (bundle.learning says which port; a LAG may show as its bond or its first cable)."""
        by_lag = {(u.switch, u.lag): u for u in self.uplinks.values() if u.lag is not None}
        want: dict[tuple[str, int, str], frozenset[str]] = {}
        for e in self.learned:
            mac = self.hosts[e.host].mac
            if isinstance(e.port, LagPort):
                want[(e.switch, e.vlan, mac)] = by_lag[(e.switch, e.port.id)].bridge_ports()
            else:
                want[(e.switch, e.vlan, mac)] = frozenset({e.port})
        return want

    def expected_tx(self, pairs: list[tuple[str, str]], frames_per_pair: int) -> Counts:
        """Frames each uplink sends, each host port sends and receives, for unicast `pairs`.

        A frame from a to b travels in VLAN(a) (the PVID of a's port) along that VLAN's tree
        from a's switch to b's switch, then leaves b's host port.
        """
        uplink_tx: dict[tuple[str, str], int] = {key: 0 for key in self.uplinks}
        host_tx: dict[str, int] = {h: 0 for h in self.hosts}   # switch -> host
        host_rx: dict[str, int] = {h: 0 for h in self.hosts}   # host -> switch
        # Pairs with the same (VLAN, source switch, destination switch) share a path: each
        # path is walked once per such group (a few hundred), not once per pair (50,400 on
        # the seed cluster, in Python under QEMU TCG).
        routes: Counter[tuple[int, str, str]] = Counter()
        hosts = self.hosts
        for a, b in pairs:
            ha, hb = hosts[a], hosts[b]
            routes[(ha.vlan, ha.switch, hb.switch)] += 1
            host_rx[a] += frames_per_pair
            host_tx[b] += frames_per_pair
        for (vlan, src, dst), n in routes.items():
            hops = self.path(vlan, src, dst)
            for s, nb in zip(hops, hops[1:]):
                uplink_tx[(s, nb)] += n * frames_per_pair
        return uplink_tx, host_tx, host_rx


def load(outdir: Path) -> EmulationSpec:
    """Read and cross-check OUTDIR; every problem is a UserError naming the file. A spec
    `preload`ed for OUTDIR (the VM's) is returned as it is."""
    outdir = Path(outdir)
    if outdir.resolve() in _PRELOADED:
        return _PRELOADED[outdir.resolve()]
    from vlanroute.bundle.learning import learning_ports
    from vlanroute.bundle.platforms import resolve_platforms
    from vlanroute.bundle.reader import host_macs, read_cabling, read_plan
    from vlanroute.drivers import FAMILIES, family_of
    from vlanroute.model.platforms import PLATFORMS
    doc = read_plan(outdir)
    plan_file = str(outdir / "plan.json")
    switches = sorted(doc.switches)
    families = {s: family_of(p) for s, p in resolve_platforms(doc, source=plan_file).by_switch.items()}
    wrong = [s for s in switches if not families[s].capabilities.emulate]
    if wrong:
        runnable = sorted(f.name for f in FAMILIES.values() if f.capabilities.emulate)
        platforms = sorted(n for n, p in PLATFORMS.items() if p.family in runnable)
        raise UserError(f"switches {', '.join(wrong)} are not on the {' or '.join(platforms)} platform: "
                        f"only {' or '.join(runnable)} scripts can run in the emulation", file=plan_file,
                        fix=f"render with `--set platform={platforms[0]}`")
    for s in switches:
        if not (outdir / "switches" / f"{s}.cfg").is_file():
            raise UserError(f"no switches/{s}.cfg", file=str(outdir), fix="re-render OUTDIR")
    for f in ("vlanroute-host", "hosts.tsv", "vlans.tsv"):     # the host program runs on every host
        if doc.hosts and not (outdir / "hosts" / f).is_file():
            raise UserError(f"no hosts/{f}", file=str(outdir), fix="re-render OUTDIR")
    if len(doc.hosts) < 2:
        raise UserError("the emulation needs at least two hosts to send traffic", file=plan_file)

    cables = read_cabling(outdir, switches)
    in_plan = sorted((c.a, c.a_port, c.b, c.b_port) for c in doc.cabling)
    if sorted((c.a, c.a_port, c.b, c.b_port) for c in cables) != in_plan:
        raise UserError("cabling.csv does not list the same cables as plan.json",
                        file=str(outdir / "cabling.csv"), fix="re-render OUTDIR; do not edit one alone")

    tree: dict[int, dict[str, set[str]]] = {}
    for v in doc.vlans:
        adj: dict[str, set[str]] = {s: set() for s in v.switches}
        for a, b in v.links:
            adj.setdefault(a, set()).add(b)
            adj.setdefault(b, set()).add(a)
        tree[v.id] = adj

    members: dict[tuple[str, str], list[str]] = defaultdict(list)
    lag_of: dict[tuple[str, str], int | None] = {}
    for c in cables:
        for s, p, n, lag in ((c.a, c.a_port, c.b, c.a_lag), (c.b, c.b_port, c.a, c.b_lag)):
            members[(s, n)].append(p)
            lag_of[(s, n)] = lag
    uplinks = {}
    for (s, n), ports in members.items():
        port_doc = doc.switches[s].ports
        order = sorted(ports, key=lambda p: (len(p), p))
        if lag_of[(s, n)] is None and len(order) > 1:
            raise UserError(f"{s} has {len(order)} cables to {n} but no LAG", file=plan_file)
        for p in order:
            if p not in port_doc:
                raise UserError(f"cable port {s} {p} is not in the plan's ports", file=plan_file)
        lag_id = lag_of[(s, n)]
        if lag_id is not None:
            lag_doc = doc.switches[s].lag(lag_id)
            if lag_doc is None:
                raise UserError(f"{s} LAG {lag_id} of cabling.csv is not in the plan", file=plan_file)
            order = [p for p in lag_doc.members if p in ports]
        uplinks[(s, n)] = Uplink(s, n, tuple(order), lag_id,
                                 None if lag_id is None else families[s].lag_label(lag_id))
    for vlan, adj in tree.items():
        for s, ns in adj.items():
            for n in ns:
                if (s, n) not in uplinks:
                    raise UserError(f"VLAN {vlan} uses link {s}-{n}, which has no cable",
                                    file=plan_file)

    learning = [ipaddress.ip_network(v.learning_subnet) for v in doc.vlans if v.learning_subnet]
    if any(net.overlaps(PLAIN_NET) for net in learning):
        raise UserError(f"a learning subnet overlaps {PLAIN_NET}, which the emulation uses for "
                        "the hosts' plain addresses", file=plan_file,
                        fix="choose another settings.learning.pool")
    macs = host_macs(doc)
    hosts: dict[str, EmuHost] = {}
    for i, name in enumerate(sorted(doc.hosts)):
        h = doc.hosts[name]
        hosts[name] = EmuHost(
            name=name, switch=h.switch, port=h.port, vlan=h.vlan, interface=h.interface or "eth0",
            mac=macs[name], address=str(PLAIN_NET.network_address + i + 1),
            attachment=doc.switches[h.switch].host_attachment)
    ports_seen: set[tuple[str, str]] = set()
    for emu in hosts.values():
        key = (emu.switch, emu.port)
        if key in ports_seen:
            raise UserError(f"two hosts on {emu.switch} {emu.port}", file=plan_file)
        ports_seen.add(key)
    return EmulationSpec(
        name=doc.name or outdir.name, outdir=outdir, switches=switches, hosts=hosts,
        cables=cables, vlan_ids=sorted(tree), tree=tree, uplinks=uplinks,
        plain_prefix=PLAIN_NET.prefixlen,
        interface_prefix=doc.settings.learning.interface_prefix or DEFAULT_INTERFACE_PREFIX,
        learned=tuple(learning_ports(doc, hosts)), plan_macs={n: h.mac for n, h in doc.hosts.items()})


# OUTDIR (resolved) -> its spec, loaded on the host before the VM booted (`preload`).
_PRELOADED: dict[Path, EmulationSpec] = {}


def save_specs(outdirs: list[Path], file: Path) -> None:
    """`load` each OUTDIR here and write the specs to FILE, for `preload` in the VM."""
    specs = {d.resolve(): load(d) for d in outdirs}
    file.write_bytes(pickle.dumps(specs, protocol=pickle.HIGHEST_PROTOCOL))


def preload(file: Path) -> None:
    """Make `load` return the specs `save_specs` wrote to FILE. Only for a FILE this
    program wrote itself (the VM's private work directory): unpickling runs code."""
    fix = "drop --in-vm-specs: `vlanroute emulate --kernel vm` passes it to its VM itself"
    try:
        specs = pickle.loads(file.read_bytes())
    except OSError as exc:
        raise UserError(f"cannot read the emulation specs: {exc.strerror or exc}", file=str(file), fix=fix) from None
    except Exception:  # noqa: BLE001 - a damaged pickle raises almost anything; all mean the same here
        specs = None
    if not isinstance(specs, dict) or not all(isinstance(s, EmulationSpec) for s in specs.values()):
        raise UserError("not a file of emulation specs", file=str(file), fix=fix)
    _PRELOADED.update(specs)
