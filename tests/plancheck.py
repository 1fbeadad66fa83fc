"""An independent checker of the plan JSON, for tests.

It uses only the JSON document and a switch graph the test builds itself (from networkx's
own generators), never vlanroute's planning code, so a bug in the planner cannot hide
behind the same bug in its check.
"""

from __future__ import annotations

from collections import Counter, deque
from typing import Any

import networkx as nx


def tree_path(links: list[list[str]], a: str, b: str) -> list[str] | None:
    adj: dict[str, list[str]] = {}
    for x, y in links:
        adj.setdefault(x, []).append(y)
        adj.setdefault(y, []).append(x)
    prev = {a: a}
    q = deque([a])
    while q:
        u = q.popleft()
        if u == b:
            break
        for v in adj.get(u, ()):
            if v not in prev:
                prev[v] = u
                q.append(v)
    if b not in prev:
        return None
    path = [b]
    while path[-1] != a:
        path.append(prev[path[-1]])
    return path[::-1]


def check_plan(plan: dict[str, Any], graph: nx.Graph, cables_per_pair: dict[frozenset[str], int] | None = None) -> None:
    """Assert every invariant of VLAN routing on a plan. `graph`: switch names and neighbour pairs."""
    vlans = plan["vlans"]
    hosts = plan["hosts"]
    switches = plan["switches"]
    ids = [v["id"] for v in vlans]
    assert len(set(ids)) == len(ids), "VLAN ids unique"
    assert all(2 <= i <= 4094 for i in ids)
    host_switches = {h["switch"] for h in hosts.values()}
    assert set(switches) == set(graph.nodes)

    vlan_of_source = {}
    for v in vlans:
        g = nx.Graph()
        g.add_nodes_from(v["sources"])
        for a, b in v["links"]:
            assert graph.has_edge(a, b), f"VLAN {v['id']} uses {a}-{b}, which is no cable"
            g.add_edge(a, b)
        assert g.number_of_edges() == len(v["links"]), "no duplicate links"
        assert nx.is_tree(g), f"VLAN {v['id']} is not a tree"
        assert host_switches <= set(g.nodes), f"VLAN {v['id']} misses switches with hosts"
        assert set(v["switches"]) == set(g.nodes)
        for s in v["sources"]:
            assert s not in vlan_of_source
            vlan_of_source[s] = v["id"]
    assert set(vlan_of_source) == host_switches, "every switch with hosts is the source of one VLAN"

    # Every ordered pair of host switches: a path exists in the source's VLAN tree.
    by_id = {v["id"]: v for v in vlans}
    for s in host_switches:
        for t in host_switches:
            assert tree_path(by_id[vlan_of_source[s]]["links"], s, t) is not None

    # Port plan.
    using: dict[frozenset[str], set[int]] = {}
    for v in vlans:
        for a, b in v["links"]:
            using.setdefault(frozenset((a, b)), set()).add(v["id"])
    all_ids = sorted(ids)
    ports_seen: set[tuple[str, str]] = set()
    for name, h in hosts.items():
        port = switches[h["switch"]]["ports"][h["port"]]
        assert port["role"] == "host" and port["host"] == name
        assert port["pvid"] == h["vlan"] == vlan_of_source[h["switch"]]
        # format 2: a host port untagged in every routing VLAN and tagged in none is
        # written without its lists (docs/plan-format.md); the planner makes only those
        assert "untagged" not in port and "tagged" not in port, port
        assert (h["switch"], h["port"]) not in ports_seen
        ports_seen.add((h["switch"], h["port"]))
    for sname, sw in switches.items():
        reserved = set(sw["reserved_ports"])
        for pname, port in sw["ports"].items():
            assert pname not in reserved, "a reserved port is never used"
            assert 1 not in port.get("untagged", all_ids) and 1 not in port.get("tagged", []), \
                "VLAN 1 on no managed port"
            if port["role"] != "host":
                want = sorted(using.get(frozenset((sname, port["neighbor"])), set()))
                assert port["tagged"] == want, f"{sname}:{pname} tagged {port['tagged']} != {want}"
                assert port["untagged"] == [] and port["pvid"] is None
        for lag in sw["lags"].values():
            assert len(lag["members"]) > 1
            assert lag["tagged"] == sorted(using.get(frozenset((sname, lag["neighbor"])), set()))
    # Cabling: every port once, cable counts per pair as built.
    count: Counter[frozenset[str]] = Counter()
    for c in plan["cabling"]:
        for s, p, n in ((c["a"], c["a_port"], c["b"]), (c["b"], c["b_port"], c["a"])):
            assert (s, p) not in ports_seen, f"{s}:{p} used twice"
            ports_seen.add((s, p))
            assert switches[s]["ports"][p]["neighbor"] == n
        count[frozenset((c["a"], c["b"]))] += 1
    assert set(count) == {frozenset(e) for e in graph.edges}
    if cables_per_pair is not None:
        assert dict(count) == cables_per_pair

    m = plan["metrics"]
    assert m["vlan_count"] == len(vlans)
    assert m["max_link_load"] >= m["link_load_lower_bound"] - 1e-6
    total = len(hosts)
    in_vlans = Counter(s for v in vlans for s in v["switches"])
    assert m["max_mac_entries"] == max(total * in_vlans[s] for s in switches)


def route_lengths(plan: dict[str, Any]) -> dict[tuple[str, str], int]:
    """Hops of each routed switch pair, read from the VLAN trees."""
    by_source = {s: v for v in plan["vlans"] for s in v["sources"]}
    out = {}
    for s, v in by_source.items():
        for t in by_source:
            path = tree_path(v["links"], s, t)
            assert path is not None
            out[(s, t)] = len(path) - 1
    return out


def plan_loads(plan: dict) -> dict[tuple[str, str], float]:
    """Load per cable and direction, from the plan JSON alone."""
    cables = Counter(frozenset((c["a"], c["b"])) for c in plan["cabling"])
    hosts_at = Counter(h["switch"] for h in plan["hosts"].values())
    senders = Counter((h["switch"], h["vlan"]) for h in plan["hosts"].values())
    links = {v["id"]: v["links"] for v in plan["vlans"]}
    load: dict[tuple[str, str], float] = {}
    for (s, vid), n in senders.items():
        for t, m in hosts_at.items():
            if t == s:
                continue
            path = tree_path(links[vid], s, t)
            assert path is not None
            for a, b in zip(path, path[1:]):
                load[(a, b)] = load.get((a, b), 0.0) + n * m / cables[frozenset((a, b))]
    return load
