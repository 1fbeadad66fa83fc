"""bench/opensm_peer.py, OpenSM beside vlanroute: the pure part (bench/opensm_fabric.py) on
fabrics small enough to check by hand, and one run of the real OpenSM on ibsim.

Fast: the ibsim topology of a three-switch fabric with parallel cables, written out by
hand; a torus's ports one per dimension and direction, as OpenSM's dor wants them; an LFT
dump (OpenSM's format and ibroute's) read back into paths, loads and channel dependencies
computed by hand; a forwarding loop and a hole caught; a ring whose routes deadlock on one
lane and not once a dateline moves them to a second VL.

Slow (needs Debian's opensm and ibsim-utils, skipped otherwise): OpenSM routes a small
torus and a leaf-spine; its tables, read back from the simulated switches with ibroute,
equal its dump; no engine beats the LP optimum; the engines that promise deadlock freedom
keep it (updn and Nue on one lane, LASH on its lanes), checked by our own graph.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import networkx as nx
import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import opensm_fabric as F  # noqa: E402
import opensm_peer as P  # noqa: E402

from vlanroute.model.topology import Topology  # noqa: E402
from vlanroute.routing.choose import deadlock_free  # noqa: E402
from vlanroute.routing.engine import Options  # noqa: E402
from vlanroute.routing.optimum import optimum_bound  # noqa: E402
from vlanroute.routing.registry import ENGINES  # noqa: E402
from vlanroute.routing.trees import arc_loads  # noqa: E402

# a = b (two cables), b - c (one); hosts: two on a, none on b, one on c
TINY = F.ib_fabric(["a", "b", "c"], [("a", "b"), ("b", "c"), ("a", "b")], {"a": 2, "b": 0, "c": 1})


def test_the_topology_file_of_a_tiny_fabric() -> None:
    assert F.topology_text(TINY).split("\n")[2:] == [
        "switchguid=0x200000000", 'Switch 4 "a"', '[1] "b"[1]', '[2] "b"[2]', '[3] "a-h1"[1]', '[4] "a-h2"[1]', "",
        "switchguid=0x200000001", 'Switch 3 "b"', '[1] "a"[1]', '[2] "a"[2]', '[3] "c"[1]', "",
        "switchguid=0x200000002", 'Switch 2 "c"', '[1] "b"[3]', '[2] "c-h1"[1]', "",
        "caguid=0x100000000", 'Hca 1 "a-h1"', '[1] "a"[3]', "",
        "caguid=0x100000004", 'Hca 1 "a-h2"', '[1] "a"[4]', "",
        "caguid=0x100000008", 'Hca 1 "c-h1"', '[1] "c"[2]', ""]
    assert TINY.hca_port_guids() == {0x100000001: "a-h1", 0x100000005: "a-h2", 0x100000009: "c-h1"}


def test_a_torus_has_one_port_per_dimension_and_direction_everywhere() -> None:
    topo = Topology.from_generator("torus", [3, 4])
    fab = F.ib_fabric(topo.switches, list(topo.graph.edges()), {s: 1 for s in topo.switches}, topo.coords, topo.dims)
    dims = (3, 4)
    for (s, p), (t, q) in fab.links.items():
        cs, ct = topo.coords[s], topo.coords[t]
        assert cs is not None and ct is not None
        d = next(i for i in range(2) if cs[i] != ct[i])
        step = 0 if (ct[d] - cs[d]) % dims[d] == 1 else 1
        assert p == 1 + 2 * d + step                  # +x 1, -x 2, +y 3, -y 4
        assert q == 1 + 2 * d + (1 - step)            # the far end is the opposite direction
    assert all(fab.ports[s] == 5 for s in topo.switches)


# OpenSM's dump for TINY, LIDs a 1, b 2, c 3, a-h1 4, a-h2 5, c-h1 6 (the switch lines
# name the switches' own LIDs). a sends c-h1's packets over its first cable to b; c sends
# a-h1's through b's first cable and a-h2's through the second.
DUMP = """\
Unicast lids [0-6] of switch Lid 1 guid 0x0000000200000000 ('a'):
0x0001 000 # Switch portguid 0x0000000200000000: 'a'
0x0002 001 # Switch portguid 0x0000000200000001: 'b'
0x0003 002 # Switch portguid 0x0000000200000002: 'c'
0x0004 003 # Channel Adapter portguid 0x0000000100000001: 'a-h1'
0x0005 004 # Channel Adapter portguid 0x0000000100000005: 'a-h2'
0x0006 001 # Channel Adapter portguid 0x0000000100000009: 'c-h1'
6 lids dumped
Unicast lids [0-6] of switch Lid 2 guid 0x0000000200000001 ('b'):
0x0001 001 # Switch portguid 0x0000000200000000: 'a'
0x0002 000 # Switch portguid 0x0000000200000001: 'b'
0x0003 003 # Switch portguid 0x0000000200000002: 'c'
0x0004 001 # Channel Adapter portguid 0x0000000100000001: 'a-h1'
0x0005 002 # Channel Adapter portguid 0x0000000100000005: 'a-h2'
0x0006 003 # Channel Adapter portguid 0x0000000100000009: 'c-h1'
6 lids dumped
Unicast lids [0-6] of switch Lid 3 guid 0x0000000200000002 ('c'):
0x0001 001 # Switch portguid 0x0000000200000000: 'a'
0x0002 001 # Switch portguid 0x0000000200000001: 'b'
0x0003 000 # Switch portguid 0x0000000200000002: 'c'
0x0004 001 # Channel Adapter portguid 0x0000000100000001: 'a-h1'
0x0005 001 # Channel Adapter portguid 0x0000000100000005: 'a-h2'
0x0006 002 # Channel Adapter portguid 0x0000000100000009: 'c-h1'
6 lids dumped
"""


def test_the_dump_gives_every_host_pair_its_path() -> None:
    lfts = F.parse_lfts(DUMP)
    assert F.host_lids(TINY, lfts) == {"a-h1": 4, "a-h2": 5, "c-h1": 6}
    assert F.host_paths(TINY, lfts) == {
        ("a", "a-h1"): (), ("a", "a-h2"): (), ("a", "c-h1"): (("a", 1), ("b", 3)),
        ("c", "a-h1"): (("c", 1), ("b", 1)), ("c", "a-h2"): (("c", 1), ("b", 2)), ("c", "c-h1"): ()}


def test_loads_count_one_unit_per_ordered_host_pair_per_cable() -> None:
    paths = F.host_paths(TINY, F.parse_lfts(DUMP))
    # a-h1 and a-h2 send to c-h1 over a's first cable and b-c: 2 each; c-h1 sends one unit
    # to each of a's hosts, over c-b (2) and then b's first and second cable (1 each)
    assert F.cable_loads(TINY, paths) == {("a", 1): 2.0, ("b", 3): 2.0, ("c", 1): 2.0, ("b", 1): 1.0, ("b", 2): 1.0}


# The shortest engine's 3x4 torus routes are deadlock-free since its tie-breaks of issue 40
# (routing below the switch); the custom fabric's are not: both verdicts are still met.
@pytest.mark.parametrize(("kind", "engine", "free"), [("torus", "shortest", True), ("torus", "updown", True),
                                                      ("custom", "shortest", False), ("custom", "updown", True)])
def test_the_load_model_and_the_dependency_graph_are_vlanroutes(kind: str, engine: str, free: bool) -> None:
    """A vlanroute plan's routes, fed through the bench's path-level functions, give the
    loads of routing/trees.py (one cable per pair: no LAG to divide by) and the deadlock
    verdict of routing/choose.py (`free`: what it says here, so both verdicts are met)."""
    if kind == "torus":
        topo = Topology.from_generator("torus", [3, 4])
        hosts = {s: (i * 5) % 4 for i, s in enumerate(topo.switches)}   # 0 to 3 hosts, some switches bare
    else:
        topo = Topology.from_links([f"s{i}" for i in range(7)],
                                   [("s0", "s1"), ("s1", "s2"), ("s2", "s3"), ("s3", "s0"), ("s0", "s4"),
                                    ("s4", "s5"), ("s5", "s6"), ("s6", "s2"), ("s1", "s5")])
        hosts = {s: 1 + i % 3 for i, s in enumerate(topo.switches)}
    eng = ENGINES[engine]
    parents = eng.route(topo, hosts, eng.params(topo, Options())).parents
    fab = F.ib_fabric(topo.switches, list(topo.graph.edges()), hosts)
    port = {(a, b): p for (a, p), (b, _) in fab.links.items()}
    paths = {}
    for src in topo.switches:
        if hosts[src]:
            for hca, dst, _ in fab.hcas:
                walk = [dst]
                while walk[-1] != src:
                    walk.append(parents[src][walk[-1]])
                walk.reverse()
                paths[(src, hca)] = tuple((u, port[(u, v)]) for u, v in zip(walk, walk[1:]))
    ours = {(a, fab.links[(a, p)][0]): x for (a, p), x in F.cable_loads(fab, paths).items()}
    theirs = {arc: x for arc, x in arc_loads(parents, hosts, topo.arc_cables()).items() if x}
    assert ours == theirs
    assert F.is_acyclic(F.dependencies(fab, paths)) == deadlock_free(parents, hosts) == free


def test_ibroute_prints_the_same_tables() -> None:
    """ibroute's lines: hexadecimal LID range, ':' for '#' (infiniband-diags 44)."""
    text = DUMP.replace("Unicast lids [0-6]", "Unicast lids [0x0-0x6]").replace(" # ", " : (")
    text = text.replace("('a'):", "(a):").replace("('b'):", "(b):").replace("('c'):", "(c):")
    assert F.parse_lfts(text) == F.parse_lfts(DUMP)


def test_the_dump_is_checked_against_the_switches_but_for_ibroutes_missing_top_lid() -> None:
    dump = F.parse_lfts(DUMP)
    held = F.parse_lfts("".join(line + "\n" for line in DUMP.splitlines() if not line.startswith("0x0006")))
    assert P.dump_disagrees(dump, held) == ""                    # LID 6 is LinearFdbTop: ibroute leaves it out
    moved = F.parse_lfts(DUMP.replace("0x0005 002 #", "0x0005 001 #"))
    assert P.dump_disagrees(dump, moved) == "switch 0x200000001 LID 5: port 1 on the switch, 2 in the dump"
    no_c = F.parse_lfts(DUMP.split("Unicast lids [0-6] of switch Lid 3")[0])
    assert P.dump_disagrees(dump, no_c) == "switch 0x200000002 not read"


def test_a_loop_and_a_hole_are_errors() -> None:
    looped = DUMP.replace("0x0006 003 # Channel Adapter portguid 0x0000000100000009: 'c-h1'\n6 lids dumped\n"
                          "Unicast lids [0-6] of switch Lid 3",
                          "0x0006 001 # Channel Adapter portguid 0x0000000100000009: 'c-h1'\n6 lids dumped\n"
                          "Unicast lids [0-6] of switch Lid 3")
    with pytest.raises(F.RouteError, match="loop"):
        F.host_paths(TINY, F.parse_lfts(looped))
    holed = DUMP.replace("0x0004 001 # Channel Adapter portguid 0x0000000100000001: 'a-h1'\n0x0005 002", "0x0005 002")
    with pytest.raises(F.RouteError, match="switch b has no route to a-h1"):
        F.host_paths(TINY, F.parse_lfts(holed))
    misdelivered = DUMP.replace("0x0005 004 # Channel Adapter portguid 0x0000000100000005: 'a-h2'",
                                "0x0005 003 # Channel Adapter portguid 0x0000000100000005: 'a-h2'")
    with pytest.raises(F.RouteError, match="to port 3, which is host a-h1"):
        F.host_paths(TINY, F.parse_lfts(misdelivered))


# A ring x -> y -> z -> x, one host each, every route clockwise: x's host reaches z's over y.
RING = F.ib_fabric(["x", "y", "z"], [("x", "y"), ("y", "z"), ("z", "x")], {"x": 1, "y": 1, "z": 1})


def _clockwise() -> dict[tuple[str, str], tuple[F.Hop, ...]]:
    nxt = {"x": "y", "y": "z", "z": "x"}
    port = {s: next(p for (a, p), (b, _) in RING.links.items() if a == s and b == nxt[s]) for s in nxt}
    paths: dict[tuple[str, str], tuple[F.Hop, ...]] = {}
    for src in nxt:
        for dst in nxt:
            hops, here = [], src
            while here != dst:
                hops.append((here, port[here]))
                here = nxt[here]
            paths[(src, f"{dst}-h1")] = tuple(hops)
    return paths


def test_a_clockwise_ring_deadlocks_on_one_lane_and_not_with_a_dateline() -> None:
    paths = _clockwise()
    assert not F.is_acyclic(F.dependencies(RING, paths))      # x->y waits y->z waits z->x waits x->y
    # Dateline between z and x: a packet that crosses it (leaves z towards x) moves to VL 1
    # for the rest of its way. SL 1 marks the pairs that will cross; z's SL-to-VL table
    # sends SL 1 out to x on VL 1, and every switch keeps VL 1 for SL 1 beyond.
    crosses = {("y", "x"), ("z", "x"), ("z", "y")}
    sls = {(f"{a}-h1", f"{b}-h1"): int((a, b) in crosses) for a in "xyz" for b in "xyz" if a != b}
    sl2vl: dict[int, dict[tuple[int, int], tuple[int, ...]]] = {RING.switch_guid(s): {} for s in "xyz"}
    z_to_x = next(p for (a, p), (b, _) in RING.links.items() if a == "z" and b == "x")
    for s in "xyz":
        for i in range(4):
            for o in range(4):
                late = s == "x"                         # x forwards packets that already crossed
                one = 1 if (s == "z" and o == z_to_x) or late else 0
                sl2vl[RING.switch_guid(s)][(i, o)] = tuple([0, one] + [0] * 14)
    edges = F.dependencies(RING, paths, sls, sl2vl)
    assert F.is_acyclic(edges)
    assert ((("z", z_to_x, 1)), ("x", next(p for (a, p), (b, _) in RING.links.items() if a == "x" and b == "y"), 1)) \
        in edges
    assert F.lanes_used(RING, paths, sls, sl2vl) == (2, 2)


def test_sl2vl_dump() -> None:
    text = ("Switch 0x0000000200000000, base LID 1, \"a\"\n#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 13 14 15\n"
            "#--------------------------------------------------------\n"
            "0   1   : 0  1  2  3  4  5  6  7  0  1  2  3  4  5  6  7 \n"
            "3   1   : 1  0  2  3  4  5  6  7  0  1  2  3  4  5  6  7 \n"
            "#--------------------------------------------------------\n\n"
            "Channel Adapter 0x0000000100000001, base LID 4, \"a-h1\"\n#in out : 0  1  2  3  4  5  6  7  8  9  10 11 12 "
            "13 14 15\n0   0   : 0  1  2  3  4  5  6  7  0  1  2  3  4  5  6  7 \n")
    got = F.parse_sl2vl(text)
    assert list(got) == [0x200000000]
    assert got[0x200000000][(3, 1)][:2] == (1, 0) and got[0x200000000][(0, 1)] == (0, 1, 2, 3, 4, 5, 6, 7) * 2


def test_without_opensm_the_bench_says_what_to_install(monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(P.shutil, "which", lambda name, path=None: None)
    assert P.main(["--fabric", "leaf-spine"]) == 2
    assert "apt-get install opensm ibsim-utils" in capsys.readouterr().err


needs_opensm = pytest.mark.skipif(bool(P.missing_tools()),
                                  reason="needs Debian's opensm and ibsim-utils: apt-get install opensm ibsim-utils")


@needs_opensm
@pytest.mark.slow
@pytest.mark.parametrize("fabric", ["torus", "leaf-spine"])
def test_opensm_on_ibsim(fabric: str, tmp_path: Path) -> None:
    if fabric == "torus":
        topo = Topology.from_generator("torus", [3, 3], links_per_pair=2)
        hosts = {s: 2 for s in topo.switches}
        engines = ["minhop", "updn", "lash", "torus-2QoS", "nue"]
    else:
        topo = Topology.from_links([f"l{i}" for i in range(4)] + ["s0", "s1"],
                                   [(f"l{i}", f"s{j}") for i in range(4) for j in range(2)])
        hosts = {s: 4 if s.startswith("l") else 0 for s in topo.switches}
        engines = ["minhop", "updn", "ftree", "dfsssp", "nue"]
    grid = topo.kind == "torus"
    fab = F.ib_fabric(topo.switches, list(topo.graph.edges()), hosts, topo.coords if grid else None,
                      topo.dims if grid else None)
    optimum = optimum_bound(topo, hosts).value
    conf = P.torus_conf(fab, topo.kind, topo.dims, topo.coords, hosts) if grid and topo.dims else None
    rows = P.opensm_rows(fab, optimum, tmp_path, conf, P.roots_of(topo.simple(), topo.switches, hosts),
                         [e for e in P.OSM_ENGINES if e.label in engines], timeout=60, read_back=True)
    by = {r.router.removeprefix("OpenSM "): r for r in rows}
    assert set(by) == set(engines)
    for r in rows:
        assert r.ratio is not None, r                     # routed, tables equal to the switches', every pair delivered
        assert r.ratio >= 1 - 1e-9                        # nothing beats the LP
        assert r.route_ms is not None and r.cpu_s is not None
    for name in ("updn", "nue") + (("ftree",) if fabric == "leaf-spine" else ()):
        assert by[name].df_one, name                      # deadlock-free on one lane, as OpenSM promises
    for name in ("lash", "dfsssp", "torus-2QoS"):
        if name in by:
            assert by[name].df_lanes and by[name].lanes.endswith("VL"), by[name]
    if fabric == "leaf-spine":
        # 4 hosts a leaf, 2 per spine: an uplink carries 4 sources x the 6 destinations behind
        # its spine, 24, a downlink 12 sources x 2 destinations, 24; the LP: 4 x 12 / 2 = 24
        assert by["ftree"].ratio == pytest.approx(1.0)
    # The real program ran, found where Debian puts it (/usr/sbin, often not on a user's PATH).
    assert Path(P.tool("opensm")).is_absolute()


def _fat_tree_k4() -> tuple[list[tuple[str, str]], set[str], int]:
    """A three-level fat tree of 4-port switches: 4 pods of 2 edge and 2 aggregation switches, 4 cores."""
    edges = [(f"e{p}{i}", f"a{p}{j}") for p in range(4) for i in range(2) for j in range(2)]
    edges += [(f"a{p}{j}", f"c{j}{c}") for p in range(4) for j in range(2) for c in range(2)]
    return edges, {f"e{p}{i}" for p in range(4) for i in range(2)}, 2


def _hypercube_4() -> tuple[list[tuple[str, str]], set[str], int]:
    g = nx.hypercube_graph(4)
    name = {v: "q" + "".join(map(str, v)) for v in g}
    return [(name[a], name[b]) for a, b in g.edges], set(name.values()), 2


def _petersen() -> tuple[list[tuple[str, str]], set[str], int]:
    g = nx.petersen_graph()
    return [(f"p{a}", f"p{b}") for a, b in g.edges], {f"p{a}" for a in g}, 3


def _spine_hosts() -> tuple[list[tuple[str, str]], set[str], dict[str, int]]:
    """A leaf-spine of 8 leaves of 4 hosts and 4 spines with a host each (a storage node on
    every spine). OpenSM's updn and nue reach 1.081x the optimum deadlock-free on one lane,
    routing per destination; one up*/down* tree per switch reached 1.143x at best, and the
    default chose 1.112x until up*/down* went below the switch (routing/updown_hosts.py)."""
    edges = [(f"l{i}", f"s{j}") for i in range(8) for j in range(4)]
    hosts = {**{f"l{i}": 4 for i in range(8)}, **{f"s{j}": 1 for j in range(4)}}
    return edges, set(hosts), hosts


def _ring_dual_homed() -> tuple[list[tuple[str, str]], set[str], int]:
    """A ring of 6 bare switches, a switch of 4 hosts on every two neighbours of it. OpenSM's
    ftree reaches the optimum there on one lane, not deadlock-free; its deadlock-free
    one-lane engines 1.2x."""
    edges = [(f"r{i}", f"r{(i + 1) % 6}") for i in range(6)]
    edges += [(f"x{i}", f"r{i}") for i in range(6)] + [(f"x{i}", f"r{(i + 1) % 6}") for i in range(6)]
    return edges, {f"x{i}" for i in range(6)}, 4


def _fat_tree_k6() -> tuple[list[tuple[str, str]], set[str], int]:
    """A three-level fat tree of 6-port switches: 6 pods of 3 edge and 3 aggregation switches, 9 cores."""
    edges = [(f"e{p}{i}", f"a{p}{j}") for p in range(6) for i in range(3) for j in range(3)]
    edges += [(f"a{p}{j}", f"c{j}{c}") for p in range(6) for j in range(3) for c in range(3)]
    return edges, {f"e{p}{i}" for p in range(6) for i in range(3)}, 3


def _leaf_spine_doubled() -> tuple[list[tuple[str, str]], set[str], int]:
    """A leaf-spine of 20 leaves and 4 spines, two cables between every leaf and spine."""
    edges = [(f"l{i}", f"s{j}") for i in range(20) for j in range(4) for _ in range(2)]
    return edges, {f"l{i}" for i in range(20)}, 8


def _petersen_half() -> tuple[list[tuple[str, str]], set[str], int]:
    """The Petersen graph with hosts on its outer five switches only."""
    g = nx.petersen_graph()
    return [(f"p{a}", f"p{b}") for a, b in g.edges], {f"p{a}" for a in range(5)}, 4


def _frucht() -> tuple[list[tuple[str, str]], set[str], int]:
    """The Frucht graph: cubic, 12 switches, no symmetry at all."""
    g = nx.frucht_graph()
    return [(f"f{a}", f"f{b}") for a, b in g.edges], {f"f{a}" for a in g}, 4


def _torus_3x5() -> tuple[list[tuple[str, str]], set[str], int]:
    """A 3x5 torus given as a custom fabric (no stored plan, no dimension order)."""
    g = nx.convert_node_labels_to_integers(nx.grid_2d_graph(3, 5, periodic=True), ordering="sorted")
    return [(f"t{a}", f"t{b}") for a, b in g.edges], {f"t{a}" for a in g}, 3


# Fabrics no other test or bench row of the project routes (issue 40: "fabrics the project has
# not seen"); the last five from a sweep of 46 new fabrics (docs/routing-bounds.md, 2026-12-01)
UNSEEN = {"fat tree k=4": _fat_tree_k4, "hypercube 4": _hypercube_4, "Petersen graph": _petersen,
          "leaf-spine with hosts on the spines": _spine_hosts, "ring, dual-homed": _ring_dual_homed,
          "fat tree k=6": _fat_tree_k6, "leaf-spine 20x4, two cables a pair": _leaf_spine_doubled,
          "Petersen graph, hosts on half": _petersen_half, "Frucht graph": _frucht,
          "torus 3x5, as a custom fabric": _torus_3x5}
ONE_LANE = ["minhop", "updn", "dnup", "ftree", "sssp", "nue"]


@needs_opensm
@pytest.mark.slow
@pytest.mark.parametrize("fabric", sorted(UNSEEN))
def test_the_default_plan_is_never_worse_than_opensm_s_best_one_lane_engine(fabric: str, tmp_path: Path) -> None:
    import yaml

    from vlanroute.plan.build import plan_from_file
    edges, hosted, per = UNSEEN[fabric]()
    names = sorted({x for e in edges for x in e})
    topo = Topology.from_links(names, edges)
    hosts = {s: (per[s] if isinstance(per, dict) else per) if s in hosted else 0 for s in names}
    inventory = tmp_path / "fabric.yaml"
    cables = Counter(edges)               # parallel cables: one link with a count
    links = [{"a": a, "b": b, **({"count": n} if n > 1 else {})} for (a, b), n in cables.items()]
    inventory.write_text(yaml.safe_dump({
        "name": "unseen", "platform": "linux-bridge",
        "topology": {"kind": "custom", "switches": names, "links": links},
        "hosts": {"per_switch": hosts}, "settings": {"learning": {"pool": "10.0.0.0/8"}}}))
    optimum = optimum_bound(topo, hosts).value
    fab = F.ib_fabric(topo.switches, list(topo.graph.edges()), hosts)
    rows = P.opensm_rows(fab, optimum, tmp_path, None, P.roots_of(topo.simple(), topo.switches, hosts),
                         [e for e in P.OSM_ENGINES if e.label in ONE_LANE], timeout=60)
    routed = [r for r in rows if r.ratio is not None and r.lanes == "1"]
    assert len(routed) >= 4, rows                         # ftree routes fat trees only; the rest route anything
    best = min(r.ratio for r in routed if r.ratio is not None)
    best_df = min((r.ratio for r in routed if r.df_one and r.ratio is not None), default=None)
    # Like for like. Without flow control there is no deadlock to avoid: the default's plan
    # against every one-lane engine. With it (the default), where the plan is deadlock-free,
    # against OpenSM's deadlock-free ones; where it is not (the best deadlock-free plan
    # carried more than 1.25x), against every one-lane engine again.
    free = plan_from_file(inventory, ["settings.flow_control=false"]).metrics.load_over_optimum
    assert free is not None and free >= 1 - 1e-9
    assert free <= best + 1e-9, (free, [(r.router, r.ratio) for r in routed])
    if best <= 1 + 1e-9:
        assert free == pytest.approx(1.0)                 # at the optimum wherever OpenSM reaches it
    plan = plan_from_file(inventory, [])
    ours = plan.metrics.load_over_optimum
    assert ours is not None
    if plan.metrics.deadlock_free:
        assert best_df is None or ours <= best_df + 1e-9, (ours, best_df)
        if best <= 1 + 1e-9 and best_df is not None and best_df <= 1 + 1e-9:
            assert ours == pytest.approx(1.0)
    else:
        assert ours <= best + 1e-9
    # Deadlock-free where an OpenSM engine is on one lane and within the default's 1.25x.
    if best_df is not None and best_df <= 1.25 * free:
        assert plan.metrics.deadlock_free and ours <= best_df + 1e-9
