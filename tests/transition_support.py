"""Random fabrics, plans and live states for the transition tests, and a loop check of its
own (networkx, same-VLAN links only: what these configs hold), independent of
vlanroute.transition.loops.

A fabric: switches on a random connected graph (ring, torus, random), 1 or 2 cables per
neighbour pair, some pairs of 2 cables aggregated into a LAG at both ends. A plan: one VLAN
per source group, each a random spanning tree of the cables that are up (a LAG or one of
the parallel cables per tree link), host ports with a PVID. Configs are the vendor-neutral
SwitchConfig of a real family (PowerConnect 62xx, lines one by one; Arista EOS, a
transaction), turned into the family's own commands by its delta (what rollback sends), so
every state is the family's parser reading real command lines.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field

import networkx as nx

from vlanroute.drivers import FAMILIES
from vlanroute.drivers.family import Family
from vlanroute.model.bridge import LagPort, PortConfig, SwitchConfig
from vlanroute.model.platforms import PLATFORMS, Platform
from vlanroute.transition.fabric import Fabric, HostAt, Wire, view_of
from vlanroute.transition.planner import Transition
from vlanroute.transition.program import Program, parse_with, program_of, removal_config

PC = PLATFORMS["powerconnect-6248"]
EOS = PLATFORMS["arista-7050sx-64"]


@dataclass
class RandomFabric:
    names: list[str]
    platform: dict[str, Platform]
    wires: list[Wire]
    lag_of: dict[tuple[str, str], int]            # (switch, port) -> LAG id
    hosts: list[HostAt]
    graph: nx.MultiGraph                          # switch graph, one edge per wire (key = wire index)
    down: set[int] = field(default_factory=set)   # wire indexes of cables down

    def family(self, switch: str) -> Family:
        return FAMILIES[self.platform[switch].family]

    def fabric(self) -> Fabric:
        return Fabric(tuple(self.wires), tuple(self.hosts))

    def cable_ports(self, switch: str) -> set[str]:
        return {p for w in self.wires for s, p in w.ends() if s == switch}


def random_fabric(rng: random.Random, kind: str, eos_share: float = 0.3) -> RandomFabric:
    if kind == "ring":
        g = nx.cycle_graph(rng.randint(3, 6))
    elif kind == "torus":
        g = nx.grid_2d_graph(3, rng.randint(2, 3), periodic=True)
    else:
        n = rng.randint(4, 7)
        g = nx.random_labeled_tree(n, seed=rng.randint(0, 10**6))
        for _ in range(rng.randint(1, 3)):
            a, b = rng.sample(list(g.nodes), 2)
            g.add_edge(a, b)
    nodes = sorted(g.nodes, key=str)
    names = [f"sw{i + 1}" for i in range(len(nodes))]
    rename = dict(zip(nodes, names))
    platform = {n: (EOS if rng.random() < eos_share else PC) for n in names}
    next_port = {n: 0 for n in names}

    def port(s: str) -> str:
        next_port[s] += 1
        ports = platform[s].ports
        return ports[len(ports) - 4 - next_port[s]]       # cable ends from the top of the panel down

    wires: list[Wire] = []
    lag_of: dict[tuple[str, str], int] = {}
    lag_count = {n: 0 for n in names}
    graph = nx.MultiGraph()
    graph.add_nodes_from(names)
    for u, v in sorted(g.edges, key=str):
        a, b = sorted((rename[u], rename[v]))
        cables = rng.choice((1, 1, 2))
        lag = cables == 2 and rng.random() < 0.5
        if lag:
            lag_count[a] += 1
            lag_count[b] += 1
        for _ in range(cables):
            w = Wire(a, port(a), b, port(b))
            if lag:
                lag_of[(a, w.a_port)] = lag_count[a]
                lag_of[(b, w.b_port)] = lag_count[b]
            graph.add_edge(a, b, key=len(wires))
            wires.append(w)
    hosts = []
    for n in names:
        for i in range(rng.randint(1, 2)):
            hosts.append(HostAt(f"{n}-h{i + 1}", n, platform[n].ports[i]))
    return RandomFabric(names, platform, wires, lag_of, hosts, graph)


def factory(rf: RandomFabric, switch: str) -> SwitchConfig:
    fam = rf.family(switch)
    return fam.parse_running("", switch=switch, platform=rf.platform[switch], source="factory")


@dataclass
class RandomPlan:
    trees: dict[int, set[int]]                    # VLAN -> wire indexes (one per tree link)
    pvid: dict[str, int]                          # host -> VLAN


def random_plan(rf: RandomFabric, rng: random.Random, avoid: set[int] = frozenset()) -> RandomPlan:  # type: ignore[assignment]
    up = nx.MultiGraph()
    up.add_nodes_from(rf.names)
    for a, b, k in rf.graph.edges(keys=True):
        if k not in avoid:
            up.add_edge(a, b, key=k)
    simple = nx.Graph(up)
    if not nx.is_connected(simple):
        simple = nx.Graph(rf.graph)
        up = rf.graph
    vlans = list(range(101, 101 + rng.randint(1, 3)))
    trees: dict[int, set[int]] = {}
    for v in vlans:
        weights = {e: rng.random() for e in simple.edges}
        nx.set_edge_attributes(simple, weights, "w")
        tree = nx.minimum_spanning_tree(simple, weight="w")
        chosen: set[int] = set()
        for a, b in tree.edges:
            keys = sorted(up[a][b])
            lagged = [k for k in keys if (rf.wires[k].a, rf.wires[k].a_port) in rf.lag_of]
            chosen.add(lagged[0] if lagged else rng.choice(keys))
        trees[v] = chosen
    pvid = {h.name: rng.choice(vlans) for h in rf.hosts}
    return RandomPlan(trees, pvid)


def plan_config(rf: RandomFabric, plan: RandomPlan, switch: str) -> SwitchConfig:
    """The switch's config under `plan`: routing VLANs tagged on the tree links, spanning
    tree off on every cable end, host ports untagged in every VLAN with their PVID."""
    cfg = factory(rf, switch)
    vlans = sorted(plan.trees)
    cfg.vlans = {1, *vlans}
    carried: dict[str, set[int]] = {}
    for v, keys in plan.trees.items():
        for k in keys:
            w = rf.wires[k]
            for s, p in w.ends():
                if s == switch:
                    # A LAG carries for all its members: mark every member of it.
                    lag = rf.lag_of.get((s, p))
                    members = [q for (t, q), l in rf.lag_of.items() if t == s and l == lag] if lag else [p]
                    for q in members:
                        carried.setdefault(q, set()).add(v)
    for p in sorted(rf.cable_ports(switch)):
        lag = rf.lag_of.get((switch, p))
        pc = cfg.ports[p]
        if lag is not None:
            pc.lag = lag
            lc = cfg.add_lag(lag, rf.family(switch).lag_label(lag))
            if p not in lc.members:
                lc.members.append(p)
            target = lc
        else:
            target = pc
        _trunk(rf, switch, target, carried.get(p, set()))
    for h in rf.hosts:
        if h.switch == switch:
            pc = cfg.ports[h.port]
            if rf.family(switch).name == "arista-eos":
                pc.mode, pc.pvid = "trunk", plan.pvid[h.name]
                pc.untagged, pc.tagged = {plan.pvid[h.name]}, set(vlans) - {plan.pvid[h.name]}
            else:
                pc.mode, pc.pvid = "general", plan.pvid[h.name]
                pc.untagged, pc.tagged = set(vlans), set()
    return cfg


def _trunk(rf: RandomFabric, switch: str, port: PortConfig, vlans: set[int]) -> None:
    port.stp_enabled = False
    if rf.family(switch).name == "arista-eos":
        port.mode, port.pvid, port.untagged, port.tagged = "trunk", 1, set(), set(vlans)
        if not vlans:
            port.tagged = set()
    else:
        port.mode, port.pvid, port.untagged, port.tagged = "general", 1, set(), set(vlans)


def hand_edit(rf: RandomFabric, cfg: SwitchConfig, rng: random.Random) -> SwitchConfig:
    """A copy with one random inter-switch membership added or removed (a person's edit)."""
    out = copy.deepcopy(cfg)
    ports = sorted(rf.cable_ports(cfg.name))
    p = rng.choice(ports)
    target = out.lags[out.ports[p].lag] if out.ports[p].lag in out.lags else out.ports[p]
    vlans = sorted(out.vlans - {1}) or [1]
    v = rng.choice(vlans)
    if v in target.tagged:
        target.tagged.discard(v)
    else:
        target.tagged.add(v)
        if rf.family(cfg.name).name != "arista-eos" and target.mode == "access":
            target.mode = "general"
    return out


def commands(rf: RandomFabric, switch: str, cur: SwitchConfig, tgt: SwitchConfig) -> list[str]:
    return rf.family(switch).delta_commands(cur, tgt)


def union_config(cur: SwitchConfig, tgt: SwitchConfig) -> SwitchConfig:
    """`tgt` with every VLAN membership `cur` has kept on as well, and spanning tree as in
    `cur`: where a push stands after its additions and before its removals."""
    out = copy.deepcopy(tgt)
    for name, port in out.ports.items():
        was = cur.ports.get(name)
        if was is not None and port.lag is None and was.lag is None:
            port.tagged |= was.tagged - port.untagged
            port.untagged |= was.untagged - port.tagged
            port.stp_enabled = was.stp_enabled
    for lag_id, lag in out.lags.items():
        was_lag = cur.lags.get(lag_id)
        if was_lag is not None:
            lag.tagged |= was_lag.tagged - lag.untagged
            lag.untagged |= was_lag.untagged - lag.tagged
            lag.stp_enabled = was_lag.stp_enabled
    out.vlans |= cur.vlans
    return out


def push_like(rf: RandomFabric, switch: str, cur: SwitchConfig, tgt: SwitchConfig) -> list[str]:
    """Additions first, removals after (the worst case of a push's phases 1 and 3): the
    delta to the union of both, then from the union to the target."""
    mid = union_config(cur, tgt)
    fam = rf.family(switch)
    return fam.delta_commands(cur, mid) + fam.delta_commands(mid, tgt)


def text_of(rf: RandomFabric, switch: str, cfg: SwitchConfig) -> str:
    """A running-config text that reads back as `cfg`: the commands from the factory state."""
    return "\n".join(commands(rf, switch, factory(rf, switch), cfg))


def program(rf: RandomFabric, switch: str, running_text: str, cmds: list[str]) -> Program:
    fam = rf.family(switch)
    return program_of(switch, cmds, parse_with(fam, rf.platform[switch], switch), running_text,
                      rf.fabric().ports_of(switch), fam, rf.cable_ports(switch), fam.transaction is not None)


def splitter(rf: RandomFabric, texts: dict[str, str], targets: dict[str, SwitchConfig]):  # type: ignore[no-untyped-def]
    def split(switch: str) -> tuple[Program, Program] | None:
        fam = rf.family(switch)
        parse = parse_with(fam, rf.platform[switch], switch)
        running = parse(texts[switch])
        mid = removal_config(running, targets[switch], sorted(rf.cable_ports(switch)))
        remove = fam.delta_commands(running, mid)
        text2 = texts[switch] + "\n" + "\n".join(remove)
        return program(rf, switch, texts[switch], remove), program(rf, switch, text2, fam.delta_commands(parse(text2), targets[switch]))
    return split


# ------------------------------------------------------------------ the independent check

def loops_of(rf: RandomFabric, cfgs: dict[str, SwitchConfig], accepted: frozenset = frozenset()) -> list[int]:  # type: ignore[type-arg]
    return fabric_loops(rf.names, rf.wires, cfgs, accepted)


def _links(names: list[str], wires: list[Wire], cfgs: dict[str, SwitchConfig], v: int) -> dict[tuple, bool]:  # type: ignore[type-arg]
    """The links active in VLAN v (a LAG at both ends once): link -> protected."""
    out: dict[tuple, bool] = {}  # type: ignore[type-arg]
    for w in wires:
        ca, cb = cfgs[w.a], cfgs[w.b]
        ea, eb = ca.effective(w.a_port), cb.effective(w.b_port)
        if v not in ea.members_of or v not in eb.members_of:
            continue
        link = tuple(sorted([(w.a, str(ca.logical_port(w.a_port))), (w.b, str(cb.logical_port(w.b_port)))]))
        out.setdefault(link, ea.stp_enabled and eb.stp_enabled and ca.stp_global_enabled and cb.stp_global_enabled)
    return out


def _vlans(cfgs: dict[str, SwitchConfig]) -> set[int]:
    return {v for c in cfgs.values() for p in list(c.ports.values()) + list(c.lags.values()) for v in p.members_of}


def fabric_loops(names: list[str], wires: list[Wire], cfgs: dict[str, SwitchConfig],
                 accepted: frozenset = frozenset()) -> list[int]:  # type: ignore[type-arg]
    """VLANs with a loop: a cable is active in VLAN v when both ends (their LAG if members)
    carry v; protected when spanning tree runs at both ends; the unprotected links must be
    a forest over the components of the protected ones (and of `accepted` (v, link): the
    loops of the start, which a step may not add to)."""
    bad = []
    for v in sorted(_vlans(cfgs)):
        protected = nx.utils.UnionFind(names)
        loose: list[tuple[str, str]] = []
        for link, prot in _links(names, wires, cfgs, v).items():
            a, b = link[0][0], link[1][0]
            if prot or (v, link) in accepted:
                protected.union(a, b)
            else:
                loose.append((a, b))
        g = nx.MultiGraph()
        for a, b in loose:
            g.add_edge(protected[a], protected[b])
        if g.number_of_edges() and not nx.is_forest(g):     # a self-loop or a cycle
            bad.append(v)
    return bad


def start_loop_links(names: list[str], wires: list[Wire], cfgs: dict[str, SwitchConfig]) -> frozenset:  # type: ignore[type-arg]
    """(v, link) of every unprotected link on a loop of VLAN v: its ends stay joined without it."""
    out = set()
    for v in sorted(_vlans(cfgs)):
        links = _links(names, wires, cfgs, v)
        for link, prot in links.items():
            if prot:
                continue
            g = nx.MultiGraph()
            g.add_nodes_from(names)
            g.add_edges_from((l[0][0], l[1][0]) for l in links if l != link)
            if nx.has_path(g, link[0][0], link[1][0]):
                out.add((v, link))
    return frozenset(out)


def replay(rf: RandomFabric, start: dict[str, SwitchConfig], texts: dict[str, str],
           transition: Transition) -> tuple[dict[str, SwitchConfig], int]:
    """Apply the transition's steps one by one, every line of a line-by-line family one by
    one (every prefix, not only the planner's checkpoints), with the independent check after
    each; AssertionError at the first state with a loop. Returns the end configs and the
    number of states checked."""
    cfgs = dict(start)
    texts = dict(texts)
    checked = 0
    accepted = start_loop_links(rf.names, rf.wires, cfgs)     # loops that were there: not made worse
    for i, step in enumerate(transition.steps, start=1):
        s = step.switch
        fam = rf.family(s)
        parse = parse_with(fam, rf.platform[s], s)
        cmds = list(step.program.commands)
        prefixes = [len(cmds)] if fam.transaction is not None else range(1, len(cmds) + 1)
        for k in prefixes:
            cfgs[s] = parse(texts[s] + "\n" + "\n".join(cmds[:k]))
            checked += 1
            found = loops_of(rf, cfgs, accepted)
            assert not found, f"step {i} ({step.label()}), after line {k} {cmds[k - 1]!r}: loop in VLAN {found}"
        texts[s] = texts[s] + "\n" + "\n".join(cmds)
    assert not loops_of(rf, cfgs), "the end holds a loop"
    return cfgs, checked


def same(rf: RandomFabric, a: SwitchConfig, b: SwitchConfig) -> bool:
    fam = rf.family(a.name)
    return [l.text for l in fam.canonical_lines(a)] == [l.text for l in fam.canonical_lines(b)]


def views(rf: RandomFabric, cfgs: dict[str, SwitchConfig]) -> dict[str, dict]:  # type: ignore[type-arg]
    fab = rf.fabric()
    return {s: view_of(c, fab.ports_of(s)) for s, c in cfgs.items()}


__all__ = ["fabric_loops", "LagPort", "RandomFabric", "RandomPlan", "commands", "push_like", "union_config", "factory", "hand_edit", "loops_of",
           "plan_config", "program", "random_fabric", "random_plan", "replay", "same", "splitter", "text_of",
           "views"]
