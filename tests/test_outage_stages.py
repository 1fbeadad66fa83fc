"""The outage bench's failures beyond one dead pair (vlanroute/emulate/outagerun.py,
emulate/failoverheal.py, bench/outage.py `--fail`): a dead switch, and a failure that
follows another once it is healed. No kernel here: the probed pairs against the bundles'
own paths and networkx's spanning-tree paths, the heal's contexts replayed on the bridge
model of emulate/transition.py, the rtnetlink messages against the kernel's structs
(linux/netlink.h, linux/rtnetlink.h, linux/if_bridge.h). The VM test in
tests/test_outage_emulate.py runs them on real bridges."""

from __future__ import annotations

import struct
from pathlib import Path
from types import SimpleNamespace

import networkx as nx
import pytest
from emulate_support import render

from vlanroute.cli import main
from vlanroute.emulate import rtnl
from vlanroute.emulate.failoverheal import stage_context, what_died
from vlanroute.emulate.failplan import Failure
from vlanroute.emulate.outagerun import ProbeSettings, prepare, tree_path, tree_switch_pairs
from vlanroute.emulate.spec import load
from vlanroute.emulate.transition import BridgeCommand, _apply, bridge_ports
from vlanroute.errors import UserError

ROOT = Path(__file__).resolve().parent.parent
SEED = ROOT / "inventories" / "seed-torus.yaml"


@pytest.fixture(scope="module")
def bundles(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """The seed torus with 2 hosts per switch and backup VLANs; its repair around sw1-sw2;
    the repair of that repair around a dead sw3; the plan's own repair around sw3; the same
    torus without backups and its repair around sw3."""
    tmp = tmp_path_factory.mktemp("stages")
    sets = ("hosts.count=null", "hosts.per_switch=2", "platform=linux-bridge")
    out = render(SEED, tmp / "plan", *sets, "routing.protection=links")
    plain = render(SEED, tmp / "plain", *sets)
    runs = {"pair": [str(out), "--failed-pair", "sw1:sw2"], "then-switch": [str(tmp / "pair"), "--failed-switch", "sw3"],
            "switch": [str(out), "--failed-switch", "sw3"], "plain-switch": [str(plain), "--failed-switch", "sw3"],
            "then-pair": [str(tmp / "switch"), "--failed-pair", "sw1:sw2"]}
    for name, args in runs.items():
        assert main(["repair", *args, "-o", str(tmp / name), "-q"]) == 0
    return {"plan": out, "plain": plain, **{name: tmp / name for name in runs}}


def test_tree_path_and_the_pairs_through_a_switch_against_networkx() -> None:
    g = nx.grid_2d_graph(3, 3, periodic=True)
    g = nx.relabel_nodes(g, {v: f"s{i}" for i, v in enumerate(sorted(g))})
    tree = nx.bfs_tree(g, "s0")
    parent = {v: u for u, v in tree.edges}
    und = tree.to_undirected()
    for a in g:
        for b in g:
            assert tree_path(parent, a, b) == nx.shortest_path(und, a, b)
    hosts = {f"h{i}{k}": SimpleNamespace(switch=s) for i, s in enumerate(sorted(g)) for k in range(2)}
    spec = SimpleNamespace(switches=sorted(g), hosts=hosts)
    for w in g:
        got = tree_switch_pairs(spec, parent, w)  # type: ignore[arg-type]
        want = {(x, y) for x, hx in hosts.items() for y, hy in hosts.items()
                if x != y and w in nx.shortest_path(und, hx.switch, hy.switch)}
        assert got == want
        # Its own hosts' pairs are in; a leaf of the tree carries no one else's.
        assert all((x, y) in got for x, hx in hosts.items() for y in hosts if hx.switch == w and x != y)
        if und.degree(w) == 1:
            assert all(w in (hosts[x].switch, hosts[y].switch) for x, y in got)


def test_a_dead_switch_probes_no_host_of_it_and_its_tree_leaves_it_out(bundles: dict[str, Path]) -> None:
    spec = load(bundles["plan"])
    setup = prepare(spec, [Failure(switch="sw3")], ["vlanroute", "rstp"], ProbeSettings(), max_pairs=10_000)
    (stage,) = setup.stages
    dead_hosts = {h for h, x in spec.hosts.items() if x.switch == "sw3"}
    assert stage.pairs and not {h for p in stage.pairs for h in p} & dead_hosts
    assert all((b, a) in stage.pairs for a, b in stage.pairs)
    # Every pair whose plan path crossed sw3 (hosts of sw3 aside) is probed.
    crossed = {(a, b) for a, ha in spec.hosts.items() for b, hb in spec.hosts.items()
               if a != b and not {a, b} & dead_hosts and "sw3" in spec.path(ha.vlan, ha.switch, hb.switch)}
    assert crossed and crossed <= set(stage.pairs)
    # The model's tree after it: no pair of sw3, and what it blocks is a cycle's worth of
    # the live fabric (cables minus tree links, as pairs: LAGs are one port).
    assert not any("sw3" in p for p in stage.model_blocked_after)
    live = nx.Graph([(a, b) for a, b in spec.uplinks if "sw3" not in (a, b)])
    assert len(stage.model_blocked_after) == live.number_of_edges() - (live.number_of_nodes() - 1)


def test_a_second_failure_is_probed_on_the_repaired_plan(bundles: dict[str, Path]) -> None:
    spec, repaired = load(bundles["plan"]), load(bundles["pair"])
    first, then = Failure(pair=("sw1", "sw2")), Failure(switch="sw3")
    setup = prepare(spec, [first, then], ["vlanroute", "rstp"], ProbeSettings(), max_pairs=10_000,
                    running=[spec, repaired])
    one, two = setup.stages
    dead_hosts = {h for h, x in spec.hosts.items() if x.switch == "sw3"}
    on_repaired = {(a, b) for a, b in then.cut_pairs(repaired) if not {a, b} & dead_hosts}
    assert on_repaired and on_repaired <= set(two.pairs)
    # The tree after both: neither sw1-sw2 nor sw3 in it.
    assert not any(p == ("sw1", "sw2") or "sw3" in p for p in two.model_blocked_after)
    assert ("sw1", "sw2") not in one.model_blocked_after
    with pytest.raises(ValueError, match="running bundle"):
        prepare(spec, [first, then], ["rstp"], ProbeSettings())


def _replay(old_dir: Path, new_dir: Path, cabled_dir: Path, lines: list[list[str]],
            moves: list[list[object]] | None = None) -> None:
    """The failover's PVID moves, then the lines, on emulate/transition.py's bridge model of
    OLD give NEW's ports exactly (the dead switch's aside)."""
    old, new, cabled = load(old_dir), load(new_dir), load(cabled_dir)
    ports = {s: bridge_ports(old, s, cabled) for s in new.switches}
    lines = [[str(sw), "vlan", "add", "dev", str(p), "vid", str(v), "pvid", "untagged"]
             for sw, p, v in moves or []] + lines
    for switch, *argv in lines:
        assert argv[:3] == ["vlan", argv[1], "dev"] and argv[4] == "vid"
        _apply(ports[switch], BridgeCommand(argv[1], argv[3], int(argv[5]), " ".join(argv[6:])))
    for s in new.switches:
        want = bridge_ports(new, s, cabled)
        assert {p: (x.tagged, x.untagged, x.pvid) for p, x in ports[s].items()} == \
               {p: (x.tagged, x.untagged, x.pvid) for p, x in want.items()}, s


def test_a_dead_switch_fails_over_then_the_repair_s_lines_reach_the_repair(bundles: dict[str, Path]) -> None:
    ctx = stage_context(bundles["plan"], Failure(switch="sw3"), bundles["switch"], bundles["plan"])
    assert ctx["delta"] is None and ctx["repair"]["dead"] == ["sw3"]
    moves = ctx["table"]["sw3"]
    assert moves and not any(s == "sw3" for s, *_ in moves)
    lines = ctx["repair"]["trees"] + ctx["repair"]["back"]
    assert not any(s == "sw3" for s, *_ in lines)
    # The PVIDs back are host ports' adds only: the trees are whole before any moves back.
    assert all(argv[1] == "add" and argv[-1] == "untagged" for _s, *argv in ctx["repair"]["back"])
    _replay(bundles["plan"], bundles["switch"], bundles["plan"], lines, moves)


def test_without_backups_a_dead_switch_is_healed_by_the_repair_s_lines(bundles: dict[str, Path]) -> None:
    ctx = stage_context(bundles["plain"], Failure(switch="sw3"), bundles["plain-switch"], bundles["plain"])
    assert ctx["table"] == {} and ctx["repair"] is None and ctx["delta"]["dead"] == ["sw3"]
    assert ctx["delta"]["relearn"] and ctx["delta"]["lines"]
    assert not any(s == "sw3" for s, *_ in ctx["delta"]["lines"])
    _replay(bundles["plain"], bundles["plain-switch"], bundles["plain"], ctx["delta"]["lines"])


def test_the_repair_alone_heals_a_covered_pair_by_its_lines(bundles: dict[str, Path]) -> None:
    # bench/outage.py --repair: the pair is covered by backups, but no failover is taken.
    ctx = stage_context(bundles["plan"], Failure(pair=("sw1", "sw2")), bundles["pair"], bundles["plan"],
                        failover=False)
    assert ctx["table"] == {} and ctx["repair"] is None and ctx["delta"]["dead"] == []
    assert ctx["delta"]["relearn"] and ctx["delta"]["lines"]
    _replay(bundles["plan"], bundles["pair"], bundles["plan"], ctx["delta"]["lines"])
    # A bundle that is not this bundle's repair is refused, naming the file.
    with pytest.raises(UserError, match="other switches"):
        stage_context(bundles["plan"], Failure(pair=("sw1", "sw2")), bundles["switch"], bundles["plan"],
                      failover=False)


def test_after_a_repair_the_next_failure_fails_over_from_it(bundles: dict[str, Path]) -> None:
    # The repaired bundle keeps backups for the pairs still alive (not for the dead one).
    ctx = stage_context(bundles["pair"], Failure(switch="sw3"), bundles["then-switch"], bundles["plan"])
    assert "sw1:sw2" not in ctx["table"] and "sw2:sw3" in ctx["table"]
    assert "sw2" not in ctx["uplinks"].get("sw1", {})          # the dead pair is no uplink of the repair
    if "sw3" in ctx["table"]:
        _replay(bundles["pair"], bundles["then-switch"], bundles["plan"],
                ctx["repair"]["trees"] + ctx["repair"]["back"], ctx["table"]["sw3"])
    else:
        _replay(bundles["pair"], bundles["then-switch"], bundles["plan"], ctx["delta"]["lines"])
    first = stage_context(bundles["plan"], Failure(pair=("sw1", "sw2")), bundles["pair"], bundles["plan"])
    assert first["delta"] is None and first["repair"]["trees"] and first["table"]["sw1:sw2"]
    # After a dead switch's repair, the next pair: the switch stays dead in every line.
    then = stage_context(bundles["switch"], Failure(pair=("sw1", "sw2")), bundles["then-pair"], bundles["plan"])
    assert "sw3" not in then["uplinks"] and not any("sw3" in k.split(":") for k in then["table"])
    part = then["repair"] or then["delta"]
    assert part["dead"] == ["sw3"] and not any(s == "sw3" for s, *_ in part.get("lines", part.get("trees", [])))
    if then["repair"]:
        _replay(bundles["switch"], bundles["then-pair"], bundles["plan"], then["repair"]["trees"] + then["repair"]["back"],
                then["table"]["sw1:sw2"])
    else:
        _replay(bundles["switch"], bundles["then-pair"], bundles["plan"], then["delta"]["lines"])


def test_what_died() -> None:
    uplinks = {"a": {"b": ["p1"], "c": ["p2"]}, "b": {"a": ["p1"], "c": ["p3"]}, "c": {"a": ["p2"], "b": ["p3"]},
               "d": {"c": ["p4"]}}
    assert what_died(["a:b"], uplinks) == ("pair", "a:b")
    assert what_died(["a:b", "a:c"], uplinks) == ("switch", "a")
    assert what_died(["a:c", "a:b"], uplinks) == ("switch", "a")
    for bad in ([], ["a:b", "b:c", "a:c"], ["a:b", "c:d"]):
        with pytest.raises(ValueError):
            what_died(bad, uplinks)


class Sock:
    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send(self, data: bytes) -> None:
        self.sent.append(data)

    def recv(self, _n: int) -> bytes:
        # The kernel's ACK: an NLMSG_ERROR with error 0 for sequence 1.
        return struct.pack("=IHHII", 36, rtnl.NLMSG_ERROR, 0, 1, 0) + struct.pack("=i", 0) + bytes(16)


@pytest.mark.parametrize("argv, kind, flags", [
    (["vlan", "add", "dev", "bond1", "vid", "105"], 19, 0),
    (["vlan", "del", "dev", "bond1", "vid", "105"], 17, 0),
    (["vlan", "add", "dev", "p3", "vid", "101", "pvid", "untagged"], 19, 0x2 | 0x4),
    (["vlan", "add", "dev", "p3", "vid", "101", "untagged"], 19, 0x4),
])
def test_a_bridge_vlan_line_is_the_message_iproute2_sends(argv: list[str], kind: int, flags: int) -> None:
    # iproute2 bridge/vlan.c: `add` is RTM_SETLINK (19), `del` RTM_DELLINK (17); an ifinfomsg
    # of family AF_BRIDGE (7) for the port's index; IFLA_AF_SPEC (26) holding
    # IFLA_BRIDGE_VLAN_INFO (2) = struct bridge_vlan_info {u16 flags; u16 vid}.
    sock = Sock()
    rtnl.bridge_vlan(sock, 42, argv)  # type: ignore[arg-type]
    (msg,) = sock.sent
    length, mtype, mflags, seq, _pid = struct.unpack_from("=IHHII", msg)
    assert (length, mtype, mflags & 0x5, seq) == (len(msg), kind, 0x5, 1)
    family, _t, index, _f, _c = struct.unpack_from("=BxHiII", msg, 16)
    assert (family, index) == (7, 42)
    alen, atype, ilen, itype, vflags, vid = struct.unpack_from("=HHHHHH", msg, 32)
    assert (atype, itype, ilen, alen) == (26, 2, 8, 12)
    assert (vflags, vid) == (flags, int(argv[5]))


@pytest.mark.parametrize("argv", [["vlan", "set", "dev", "p", "vid", "5"], ["fdb", "add", "dev", "p", "vid", "5"],
                                  ["vlan", "add", "dev", "p", "vid", "5", "self"], ["vlan", "add"]])
def test_other_lines_are_refused(argv: list[str]) -> None:
    with pytest.raises(ValueError):
        rtnl.bridge_vlan(Sock(), 1, argv)  # type: ignore[arg-type]
