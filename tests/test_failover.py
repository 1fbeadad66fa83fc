"""The fast failover (issue 39 item 2): backup VLANs planned with `routing.protection: links`
(plan/protection.py) and the failed-over plan of a dead neighbour pair (bundle/failedover.py).

Checked against networkx on the plan's own document, not against the code's figures: every
backup is a loop-free tree over every switch with hosts; it avoids the links it protects;
for every single dead pair of the seed torus, every host pair is delivered again by a PVID
change on source switches alone (no inter-switch port changes), on trees that avoid the
dead pair; the costs (VLANs, MAC entries) fit the platform's limits as plan checks them."""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import pytest

from vlanroute import api
from vlanroute.bundle.document import PlanDocument, plan_document
from vlanroute.bundle.failedover import failover_document
from vlanroute.bundle.failures import Failures
from vlanroute.cli import main
from vlanroute.errors import PlanError

ROOT = Path(__file__).resolve().parent.parent
SEED_TORUS = ROOT / "inventories" / "seed-torus.yaml"
SEED_TREE = ROOT / "inventories" / "seed-tree.yaml"
PROTECT = ("routing.protection=links",)


@pytest.fixture(scope="module")
def protected(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("torus") / "out"
    api.render(SEED_TORUS, out, sets=PROTECT)
    return out


def _doc(outdir: Path) -> PlanDocument:
    return plan_document(json.loads((outdir / "plan.json").read_text()))


def _tree(links: list[list[str]]) -> nx.Graph:
    return nx.Graph([tuple(lk) for lk in links])


def test_backups_are_trees_over_every_host_switch_avoiding_what_they_protect(protected: Path) -> None:
    doc = _doc(protected)
    routing = {v.id: v for v in doc.vlans if v.sources}
    backups = [v for v in doc.vlans if v.protects]
    assert routing and backups and len(routing) + len(backups) == len(doc.vlans)
    host_switches = {h.switch for h in doc.hosts.values()}
    covered = set()
    for b in backups:
        t = _tree(b.links)
        assert nx.is_tree(t) and host_switches <= set(t.nodes)
        for p in b.protects:
            primary = {frozenset(lk) for lk in routing[p.vlan].links}
            for lk in p.links:
                assert frozenset(lk) in primary and not t.has_edge(*lk)
                covered.add((p.vlan, frozenset(lk)))
    # Every link of every routing tree is protected: the torus has no bridge.
    assert covered == {(vid, frozenset(lk)) for vid, v in routing.items() for lk in v.links}
    # Every host port is a member of every backup (so every host learns in it), and every
    # inter-switch port carries exactly the VLANs whose trees use its link.
    data = json.loads((protected / "plan.json").read_text())
    for s, rec in data["switches"].items():
        for lag in rec["lags"].values():
            want = sorted(v.id for v in doc.vlans if _tree(v.links).has_edge(s, lag["neighbor"]))
            assert lag["tagged"] == want
    vlans_tsv = (protected / "hosts" / "vlans.tsv").read_text()
    for b in backups:
        assert any(line.split("\t")[0] == str(b.id) for line in vlans_tsv.splitlines()), b.id


def test_the_costs_are_planned_and_shown(protected: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads((protected / "plan.json").read_text())
    m = data["metrics"]
    backups = sum(1 for v in data["vlans"] if v.get("protects"))
    assert m["protection"]["backup_vlans"] == backups and m["vlan_count"] == len(data["vlans"])
    # Every switch learns every host once per VLAN it is in: the backups count in the MAC table.
    assert m["max_mac_entries"] == len(data["hosts"]) * len(data["vlans"]) <= m["mac_capacity"]
    assert len(data["vlans"]) <= data["routing"]["max_vlans"]
    rc = main(["plan", str(SEED_TORUS), "--set", PROTECT[0]])
    out = capsys.readouterr().out
    assert rc == 0 and f"fast failover: {backups} backup VLANs" in " ".join(out.split())


def test_a_vlan_budget_too_small_for_the_backups_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["plan", str(SEED_TORUS), "--set", PROTECT[0], "--set", "routing.max_vlans=6"])
    err = capsys.readouterr().err
    assert rc != 0 and "Traceback" not in err
    assert "routing.protection" in err and "backup VLANs" in err


def test_a_tree_fabric_has_nothing_to_protect_and_says_so() -> None:
    plan = api.plan(SEED_TREE, PROTECT)
    assert plan.metrics.protection is not None
    assert plan.metrics.protection.backup_vlans == 0
    assert plan.metrics.protection.links_unprotected == len(plan.vlans[0].links) > 0


def _delivered(doc: PlanDocument, dead: set[frozenset[str]]) -> list[str]:
    """Host switch pairs a frame cannot travel between: from each host port, on the tree of
    the VLAN its PVID names (one or several per switch: routing below the switch), without
    the dead pairs."""
    pvids = {s: {p.pvid for p in rec.ports.values() if p.role == "host"} for s, rec in doc.switches.items()}
    pvids = {s: pv for s, pv in pvids.items() if pv}
    trees = {v.id: v.links for v in doc.vlans}
    bad = []
    for s, pv in pvids.items():
        for vid in sorted(pv):      # type: ignore[type-var]
            t = nx.Graph([tuple(lk) for lk in trees[vid] if frozenset(lk) not in dead])
            t.add_node(s)
            for d in pvids:
                if d != s and not (d in t and nx.has_path(t, s, d)):
                    bad.append(f"{s}->{d} in VLAN {vid}")
    return bad


def test_every_single_dead_pair_fails_over_by_pvids_alone(protected: Path) -> None:
    doc = _doc(protected)
    before = json.loads((protected / "plan.json").read_text())
    pairs = sorted({tuple(sorted((c.a, c.b))) for c in doc.cabling if c.b in doc.switches})
    assert len(pairs) == 12
    for a, b in pairs:
        dead = {frozenset((a, b))}
        assert _delivered(doc, dead), "the cut breaks something before the failover"
        rep = failover_document(doc, Failures(pairs=((a, b),)))
        assert _delivered(rep.doc, dead) == [], (a, b)
        after = json.loads(json.dumps(rep.doc.to_json()))
        plan_document(after)              # every reader takes it: each source joined to every host
        moved = {s for m in rep.record["failover"] for s in m["sources"]}
        for s, rec in before["switches"].items():
            for name, port in rec["ports"].items():
                new = after["switches"][s]["ports"][name]
                if port["role"] == "host" and s in moved:
                    assert new["pvid"] != port["pvid"]
                    assert {k: v for k, v in new.items() if k != "pvid"} == {k: v for k, v in port.items() if k != "pvid"}
                else:
                    assert new == port, (a, b, s, name)
            assert after["switches"][s]["lags"] == rec["lags"]
        assert [v["links"] for v in after["vlans"]] == [v["links"] for v in before["vlans"]]
        assert rep.record["affected_vlans"] == [] and rep.record["switches_touched"] == sorted(moved, key=list(doc.switches).index)
        assert rep.record["max_link_load"] <= 2 * before["metrics"]["max_link_load"]


def test_a_second_dead_pair_uses_any_backup_that_avoids_both(protected: Path) -> None:
    doc = _doc(protected)
    dead = (("sw1", "sw2"), ("sw3", "sw7"))
    rep = failover_document(doc, Failures(pairs=dead))
    assert _delivered(rep.doc, {frozenset(p) for p in dead}) == []


def test_a_dead_switch_fails_over_its_transit_vlans_and_leaves_the_plan(protected: Path) -> None:
    doc = _doc(protected)
    over = failover_document(doc, Failures(switches=("sw3",)))
    new = over.doc
    plan_document(json.loads(json.dumps(new.to_json())))
    assert "sw3" not in new.switches and not any(h.switch == "sw3" for h in new.hosts.values())
    assert over.record["hosts_lost"] == sorted((h for h, r in doc.hosts.items() if r.switch == "sw3"),
                                               key=lambda h: doc.hosts[h].index)
    # Moved: exactly the VLANs whose tree, without sw3, no longer joins the live switches
    # with hosts; each onto a backup whose tree avoids sw3 and joins them all.
    live = {h.switch for h in doc.hosts.values()} - {"sw3"}

    def joins(links: list[tuple[str, str]] | list[list[str]]) -> bool:
        g = nx.Graph([tuple(lk) for lk in links if "sw3" not in lk])
        g.add_nodes_from(live)
        return all(nx.has_path(g, a, b) for a in live for b in live)
    hit = {v.id for v in doc.vlans if v.sources and not joins(v.links)}
    assert hit and {m["vlan"] for m in over.record["failover"]} == hit
    by_id = {v.id: v for v in doc.vlans}
    for m in over.record["failover"]:
        assert joins(by_id[m["backup"]].links) and "sw3" not in m["sources"]
    # Nothing else changes but host PVIDs and, towards sw3, ports that now carry nothing.
    for s, rec in new.switches.items():
        for name, port in rec.ports.items():
            old = doc.switches[s].ports[name]
            if port.role == "host":
                assert port.pvid == old.pvid or (s, old.pvid) in {(x, m["vlan"]) for m in over.record["failover"]
                                                                  for x in m["sources"]}
            elif port.neighbor == "sw3":
                assert port.tagged == []
            else:
                assert port.tagged == old.tagged
    touched = set(over.record["switches_touched"])
    assert {s for m in over.record["failover"] for s in m["sources"]} | {"sw2", "sw4", "sw7"} == touched


def test_what_cannot_fail_over_is_an_error_naming_the_way(protected: Path) -> None:
    plain = api.plan(SEED_TORUS).to_document()
    with pytest.raises(PlanError, match="routing.protection"):
        failover_document(plain, Failures(pairs=(("sw1", "sw2"),)))


def test_repair_failover_writes_a_verified_bundle_that_push_sends_as_pvids(protected: Path, tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    new = tmp_path / "failed-over"
    rc = main(["repair", str(protected), "--failover", "--failed-pair", "sw1:sw2", "-o", str(new), "--json"])
    captured = capsys.readouterr()
    assert rc == 0, captured.err
    out = json.loads(captured.out)
    record = json.loads((new / "repair.json").read_text())
    assert out["repair"] == record and out["verified"] is True
    assert record["failover"] and record["changes"] == [] and record["affected_vlans"] == []
    assert not (new / "hosts" / "relearn.sh").exists()
    # The switch configs differ only on the moved sources' switches.
    changed = sorted(p.name for p in (new / "switches").iterdir()
                     if p.read_text() != (protected / "switches" / p.name).read_text())
    moved = sorted({s for m in record["failover"] for s in m["sources"]})
    assert [c.split(".")[0] for c in changed] == moved
    # A dead switch: its bundle leaves it out, and the configs change on the moved sources'
    # switches and on its neighbours (their ports towards it) only.
    rc = main(["repair", str(protected), "--failover", "--failed-switch", "sw3", "-o", str(tmp_path / "x"), "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["verified"] is True
    record = out["repair"]
    assert not (tmp_path / "x" / "switches" / "sw3.cfg").exists()
    changed = sorted(p.name.split(".")[0] for p in (tmp_path / "x" / "switches").iterdir()
                     if p.read_text() != (protected / "switches" / p.name).read_text())
    assert changed == record["switches_touched"]


def test_a_switch_whose_hosts_send_in_several_vlans_moves_only_the_hit_ones(tmp_path: Path) -> None:
    """Routed below the switch (a leaf-spine: each leaf's hosts on every spine's tree) with
    backups: a dead leaf-spine pair moves the hosts of the VLANs whose trees use it, each
    leaf's other hosts keep their PVID, and the planned failed-over load is what the moved
    document gives."""
    from test_spread import leaf_spine_inventory
    inv = leaf_spine_inventory(tmp_path, "linux-bridge", leaves=4, spines=2, per=2)
    out = tmp_path / "out"
    api.render(inv, out, sets=PROTECT)
    doc = _doc(out)
    routing = [v for v in doc.vlans if not v.protects]
    assert len(routing) == 2 and all(len(v.sources) == 4 for v in routing)     # every leaf in both
    planned = json.loads((out / "plan.json").read_text())["metrics"]["protection"]
    worst = 0.0
    for leaf, spine in [(f"l{i}", f"s{j}") for i in range(4) for j in range(2)]:
        dead = {frozenset((leaf, spine))}
        rep = failover_document(doc, Failures(pairs=((leaf, spine),)))
        assert _delivered(rep.doc, dead) == []
        hit = {v.id for v in routing if frozenset((leaf, spine)) in {frozenset(lk) for lk in v.links}}
        for s, rec in doc.switches.items():
            for name, port in rec.ports.items():
                new = rep.doc.switches[s].ports[name]
                assert (new.pvid != port.pvid) == (port.role == "host" and port.pvid in hit), (leaf, spine, s, name)
        worst = max(worst, rep.record["max_link_load"])
    assert worst == pytest.approx(planned["max_link_load_failed_over"])


def test_failover_then_repair_cuts_no_host_pair_by_way_of_the_repairs_trees(tmp_path: Path) -> None:
    """On linux bridges (the emulation's transition, every state checked): the plan to the
    failover, the failover to the repair's trees with the failover's PVIDs, and that to the
    repair each cut no host pair; straight from the failover to the repair does (a switch's
    hosts move back before other switches have added the repaired VLAN's new links)."""
    from dataclasses import replace

    from vlanroute.emulate.spec import load
    from vlanroute.emulate.transition import plan_bridges
    from vlanroute.render.repaired import write_failedover, write_repaired, write_retreed
    out = tmp_path / "out"
    api.render(SEED_TORUS, out, sets=(*PROTECT, "platform=linux-bridge", "hosts.count=null", "hosts.per_switch=4"))
    doc = _doc(out)
    failures = Failures(pairs=(("sw1", "sw2"),))
    write_failedover(out, doc, failures, tmp_path / "failover")
    write_retreed(out, doc, failures, tmp_path / "retree")
    write_repaired(out, doc, failures, tmp_path / "repair", compare=False)
    spec, retree, repair = load(out), load(tmp_path / "retree"), load(tmp_path / "repair")
    over = _doc(tmp_path / "failover")
    failed_over = replace(spec, hosts={n: replace(h, vlan=over.hosts[n].vlan) for n, h in spec.hosts.items()})
    assert failed_over.hosts != spec.hosts

    def cut(a, b) -> int:  # type: ignore[no-untyped-def]
        return sum(len(c.pairs) for c in plan_bridges(a, b, spec).transition.cuts)
    assert cut(spec, failed_over) == 0
    assert cut(failed_over, retree) == 0 and cut(retree, repair) == 0
    assert cut(failed_over, repair) > 0


def test_repair_after_failover_writes_the_repairs_trees_with_the_hosts_failed_over(
        protected: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """By hand, the watcher's middle step: `repair --after-failover` keeps the failover's
    PVIDs (hosts' VLANs) and takes the repair's trees; with --failover it is refused."""
    over, mid, rep = tmp_path / "failover", tmp_path / "mid", tmp_path / "repair"
    for flags, where in ((["--failover"], over), (["--after-failover"], mid), ([], rep)):
        assert main(["repair", str(protected), *flags, "--failed-pair", "sw1:sw2", "-o", str(where), "-q",
                     "--no-compare"]) == 0, capsys.readouterr().err
    capsys.readouterr()
    plans = {n: json.loads((d / "plan.json").read_text()) for n, d in (("over", over), ("mid", mid), ("rep", rep))}
    assert [v["links"] for v in plans["mid"]["vlans"]] == [v["links"] for v in plans["rep"]["vlans"]]
    assert [v["links"] for v in plans["mid"]["vlans"]] != [v["links"] for v in plans["over"]["vlans"]]
    pvids = {n: {(s, p): port["pvid"] for s, rec in d["switches"].items() for p, port in rec["ports"].items()
                 if port["role"] == "host"} for n, d in plans.items()}
    assert pvids["mid"] == pvids["over"] != pvids["rep"]
    assert (mid / "hosts" / "relearn.sh").is_file()     # the hosts may learn in the new trees at once
    rc = main(["repair", str(protected), "--failover", "--after-failover", "--failed-pair", "sw1:sw2",
               "-o", str(tmp_path / "x")])
    err = capsys.readouterr().err
    assert rc != 0 and "--after-failover" in err and "Traceback" not in err
