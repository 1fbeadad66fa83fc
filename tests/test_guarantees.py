"""What heals by itself (bundle/guarantees.py, issue 39 item 4): every class a failure is
given is checked against what really happens, never against the code's own figures.

- a failure classed as healing is healed: the repaired document (`vlanroute repair`'s,
  bundle/repaired.py) and, where the backups cover it, the failed-over one
  (bundle/failedover.py) deliver between every two surviving switches with hosts, each
  host's frames on the tree of the VLAN its port's PVID names, no tree using a dead link or
  switch (a search with networkx); a few are rendered and verified by vlanroute's own
  verification (parsed back, simulated as 802.1Q bridges);
- a failure classed as a split really leaves the live switches with hosts in several parts
  (networkx), and `repair` refuses it;
- the figures (loads, deadlock freedom) equal those of the documents;
- on a ring, a tree, the seed torus with and without backups, and random 2-edge-connected
  fabrics (hypothesis), where no single pair failure may split the fabric.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import random
import tempfile
from pathlib import Path

import jsonschema
import networkx as nx
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vlanroute import api, schemas
from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.failedover import failover_document
from vlanroute.bundle.failures import Failures
from vlanroute.bundle.guarantees import Fabric, Policy, Verdict
from vlanroute.bundle.repaired import repair_document
from vlanroute.cli import main
from vlanroute.errors import PlanError

ROOT = Path(__file__).resolve().parent.parent
INVENTORIES = ROOT / "inventories"
PROTECT = ("routing.protection=links",)


def _doc(name: str, sets: tuple[str, ...] = ()) -> PlanDocument:
    return api.plan(INVENTORIES / f"{name}.yaml", sets).to_document()


def _splits(doc: PlanDocument, failures: Failures) -> bool:
    """Whether the live fabric leaves its switches with hosts in several parts."""
    g = nx.Graph()
    dead = set(failures.switches)
    g.add_nodes_from(s for s in doc.switches if s not in dead)
    g.add_edges_from((c.a, c.b) for c in doc.cabling
                     if c.a not in dead and c.b not in dead and tuple(sorted((c.a, c.b))) not in failures.pairs)
    hosted = {h.switch for h in doc.hosts.values()} - dead
    return len({frozenset(nx.node_connected_component(g, s)) for s in hosted}) > 1


def _undelivered(doc: PlanDocument, failures: Failures) -> list[str]:
    """What a healed document fails to deliver: from each host port, on the tree of the VLAN
    its PVID names without the dead links and switches, to every other live switch with
    hosts. Every VLAN must be loop-free (a VLAN no host sends in any more, a primary while
    failed over, may keep its dead link: no frame of a host enters it; one that ran through a
    dead switch is left a forest without it)."""
    dead_pairs = {frozenset(p) for p in failures.pairs}
    dead = set(failures.switches)
    bad = []
    trees = {}
    for v in doc.vlans:
        whole = nx.Graph([tuple(lk) for lk in v.links])
        if whole.number_of_nodes() and not nx.is_forest(whole):
            bad.append(f"VLAN {v.id} has a loop")
        trees[v.id] = nx.Graph([tuple(lk) for lk in v.links if frozenset(lk) not in dead_pairs and not set(lk) & dead])
    pvids = {s: {p.pvid for p in rec.ports.values() if p.role == "host"} for s, rec in doc.switches.items()
             if s not in dead}
    pvids = {s: pv for s, pv in pvids.items() if pv}
    want = {h.switch for h in doc.hosts.values()} - dead
    assert set(pvids) == want
    for s, pv in pvids.items():
        for vid in sorted(pv):     # type: ignore[type-var]
            t = trees[vid]
            for d in want - {s}:
                if not (s in t and d in t and nx.has_path(t, s, d)):
                    bad.append(f"{s}->{d} in VLAN {vid}")
    return bad


def _check(doc: PlanDocument, fab: Fabric, v: Verdict) -> None:
    """The verdict against what repair and failover really do (module docstring)."""
    assert v.heals == (not _splits(doc, v.failures)), v.name()
    assert v.hosts_lost == sorted((h for h, r in doc.hosts.items() if r.switch in v.failures.switches),
                                  key=lambda h: doc.hosts[h].index)
    if not v.heals:
        assert v.cut_off and v.cut_off_hosts > 0 and v.outage == "until-return"
        with pytest.raises(PlanError):
            repair_document(doc, v.failures, compare=False)
        return
    assert v.cut_off == [] and v.cut_off_hosts == 0
    rep = repair_document(doc, v.failures, compare=False)
    assert _undelivered(rep.doc, v.failures) == [], v.name()
    fab.price(v)
    assert v.max_link_load == pytest.approx(rep.record["max_link_load"], abs=1e-3)
    if fab.deadlock_free:
        assert v.deadlock_free == rep.record["deadlock_free"], v.name()
        assert (v.deadlock_note == "") == bool(v.deadlock_free)
    else:
        assert v.deadlock_free is None and "not deadlock-free" in v.deadlock_note
    if v.failover == "covers":
        over = failover_document(doc, v.failures)
        assert _undelivered(over.doc, v.failures) == [], v.name()
        assert over.record["not_failed_over"] == []
        assert v.max_link_load_failed_over == pytest.approx(over.metrics.max_link_load, abs=1e-3)
        if fab.deadlock_free:
            assert v.deadlock_free_failed_over == over.metrics.deadlock_free


@pytest.fixture(scope="module")
def torus() -> PlanDocument:
    return _doc("seed-torus")


@pytest.fixture(scope="module")
def protected() -> PlanDocument:
    return _doc("seed-torus", PROTECT)


def test_every_single_failure_of_the_seed_torus_heals_by_repair(torus: PlanDocument) -> None:
    fab = Fabric.of(torus)
    verdicts = [fab.classify(f) for f in fab.singles()]
    assert [v.kind for v in verdicts] == ["pair"] * 12 + ["switch"] * 8
    for v in verdicts:
        assert v.heal == "repair" and v.failover in ("no-backups", "switch")
        # No operation section: the watcher's defaults, which only propose.
        assert not v.automatic and "propose" in v.why_not
        _check(torus, fab, v)
        assert v.outage == "person" and v.deadlock_free is True


def test_with_backups_every_pair_fails_over_and_the_policy_decides_who_acts(protected: PlanDocument) -> None:
    fab = Fabric.of(protected)
    for v in (fab.classify(f) for f in fab.singles()):
        _check(protected, fab, v)
        # The default strategies fail over first: every pair and every switch (its own
        # hosts aside) by failover then repair.
        assert v.failover == "covers" and v.heal == "failover+repair", v.name()
    # A site whose watcher only repairs: the failover is ready, by hand.
    fab = Fabric.of(protected, Policy("propose", frozenset({"pair", "switch"}), ("repair",)))
    for v in (fab.classify(f) for f in fab.singles()):
        assert v.heal == "repair"
    auto = Policy("auto", frozenset({"pair"}), ("failover", "repair"))
    fab = Fabric.of(protected, auto)
    for v in (fab.classify(f) for f in fab.singles()):
        fab.price(v)
        if v.kind == "pair":
            assert v.heal == "failover+repair" and v.automatic and v.outage == "failover"
            assert v.max_link_load_failed_over is not None
        else:
            assert v.heal == "failover+repair" and not v.automatic and "switch" in v.why_not and v.outage == "person"


def test_the_doubles_of_the_seed_torus_all_heal_as_repair_says(protected: PlanDocument) -> None:
    fab = Fabric.of(protected)
    counts = fab.double_counts()
    assert counts == {"pair+pair": 66, "pair+switch": 12 * 6, "switch+switch": 28}
    # 166 in all, fewer than 200: every one, each once, never a pair on its dead switch.
    doubles = fab.doubles(200, 0)
    assert len(doubles) == len(set(doubles)) == 166
    assert all(not set(p) & set(f.switches) for f in doubles for p in f.pairs)
    rng = random.Random(5)
    for f in rng.sample(doubles, 12):
        _check(protected, fab, fab.classify(f))


def test_a_ring_heals_every_single_failure_and_no_two_dead_pairs() -> None:
    doc = _doc("seed-ring")
    fab = Fabric.of(doc)
    for v in (fab.classify(f) for f in fab.singles()):
        assert v.heals
        _check(doc, fab, v)
    for f in fab.doubles(200, 0):
        v = fab.classify(f)
        assert v.heals == (v.kind == "switch+switch" and _adjacent(doc, f.switches)), v.name()
        if v.kind == "pair+pair":
            assert not v.heals and v.cut_off_hosts > 0
    for f in random.Random(1).sample(fab.doubles(200, 0), 8):
        _check(doc, fab, fab.classify(f))


def _adjacent(doc: PlanDocument, switches: tuple[str, ...]) -> bool:
    a, b = switches
    return any({c.a, c.b} == {a, b} for c in doc.cabling)


def test_a_tree_heals_only_the_loss_of_a_leaf_and_names_what_is_cut_off() -> None:
    doc = _doc("seed-tree")
    fab = Fabric.of(doc)
    g = nx.Graph([(c.a, c.b) for c in doc.cabling])
    for v in (fab.classify(f) for f in fab.singles()):
        _check(doc, fab, v)
        if v.kind == "pair":
            assert v.heal == "split"
            # The smaller side is named as cut off.
            a, b = v.failures.pairs[0]
            sides = list(nx.connected_components(nx.restricted_view(g, [], [(a, b), (b, a)])))
            small = min(sides, key=lambda side: (sum(1 for h in doc.hosts.values() if h.switch in side),
                                                 -min(list(doc.switches).index(s) for s in side)))
            assert {s for part in v.cut_off for s in part} <= small
        else:
            assert v.heals == (g.degree(v.failures.switches[0]) == 1)


def test_the_site_policy_decides_what_the_watcher_heals_by_itself(tmp_path: Path) -> None:
    sets = ("operation.watch.policy=auto", "operation.watch.heal=[pair]")
    doc = _doc("seed-ring", sets)
    fab = Fabric.of(doc)
    assert fab.policy == Policy("auto", frozenset({"pair"}), ("failover", "repair"))
    singles = [fab.classify(f) for f in fab.singles()]
    assert all(v.automatic == (v.kind == "pair") for v in singles)
    assert all("pair failures only" in v.why_not for v in singles if v.kind == "switch")
    for f in fab.doubles(200, 0):
        v = fab.classify(f)
        assert v.automatic == (v.heals and "switch" not in v.kind)


def _whatif(*args: str) -> dict:  # type: ignore[type-arg]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["whatif", *args, "--json"]) == 0
    data = json.loads(out.getvalue())
    jsonschema.validate(data, schemas.load("whatif"))
    return data  # type: ignore[no-any-return]


def test_whatif_json_states_the_classes_and_plan_says_the_same_in_one_line(
        capsys: pytest.CaptureFixture[str]) -> None:
    data = _whatif(str(INVENTORIES / "seed-ring.yaml"), "--doubles", "30", "--seed", "7")
    g = data["guarantees"]
    rows = data["failures"]
    assert g["policy"] == {"policy": "propose", "heal": ["pair", "switch"], "strategies": ["failover", "repair"]}
    assert g["single"]["pair"]["heal"] == {"repair": 8} and g["single"]["switch"]["heal"] == {"repair": 8}
    assert all(r["heal"] == "repair" and r["outage"] == "person" for r in rows)
    assert [len(r["hosts_lost_names"]) for r in rows] == [r["hosts_lost"] for r in rows]
    d = g["doubles"]
    assert d["sampled"] == len(d["failures"]) == 30 and d["seed"] == 7
    assert d["population"] == {"pair+pair": 28, "pair+switch": 48, "switch+switch": 28}
    doc = _doc("seed-ring")
    healed = 0
    for row in d["failures"]:
        f = Failures(pairs=tuple(tuple(p.split(":")) for p in row["failures"]["pairs"]),  # type: ignore[misc]
                     switches=tuple(row["failures"]["switches"]))
        assert row["heals"] == (not _splits(doc, f))
        assert (row["max_link_load"] is None) == (not row["heals"])
        healed += row["heals"]
    assert d["heal"] == healed == sum(k["heal"].get("repair", 0) for k in d["kinds"].values())
    # The same seed draws the same sample.
    assert _whatif(str(INVENTORIES / "seed-ring.yaml"), "--doubles", "30", "--seed", "7")["guarantees"] == g
    assert main(["plan", str(INVENTORIES / "seed-ring.yaml")]) == 0
    line = " ".join(capsys.readouterr().out.split())
    assert ("self-healing: every single pair failure (8) heals by repair; every single switch failure (8) "
            "heals by repair") in line
    share = 100 * sum(1 for f in Fabric.of(doc).doubles(200, 0) if not _splits(doc, f)) / 104
    assert f"double failures: {share:.0f} % of all 104 heal" in line


def test_whatif_without_doubles_and_an_older_whatif_still_reads() -> None:
    data = _whatif(str(INVENTORIES / "seed-tree.yaml"), "--doubles", "0")
    assert data["guarantees"]["doubles"] is None
    assert data["guarantees"]["single"]["pair"]["heal"] == {"split": 7}
    old = {**data, "failures": [{k: v for k, v in r.items() if k in (
        "kind", "failure", "pairs_cut", "hosts_lost", "trees", "links_added", "unrepairable", "max_link_load",
        "link_load_lower_bound")} for r in data["failures"]]}
    del old["guarantees"]
    jsonschema.validate(old, schemas.load("whatif"))


def test_a_repair_that_loses_deadlock_freedom_names_a_real_cycle(protected: PlanDocument) -> None:
    """Where a double failure's repair cannot keep the channel order, the note's cycle is
    one: each channel waits for the next because some host pair's route in the repaired
    trees crosses them in turn (found by walking every route)."""
    fab = Fabric.of(protected)
    lost = []
    for f in fab.doubles(200, 0):
        v = fab.classify(f)
        if v.kind == "switch+switch":
            fab.price(v)
            if v.deadlock_free is False:
                lost.append(v)
    assert lost, "the protected seed torus has switch pairs whose repair cannot keep the order"
    for v in lost[:2]:
        rep = repair_document(protected, v.failures, compare=False)
        assert rep.record["deadlock_free"] is False
        waits: set[tuple[tuple[str, str], tuple[str, str]]] = set()
        doc = rep.doc
        hosted = {h.switch for h in doc.hosts.values()}
        for vlan in doc.vlans:
            t = nx.Graph([tuple(lk) for lk in vlan.links])
            for s in vlan.sources:
                for d in hosted - {s}:
                    path = nx.shortest_path(t, s, d)
                    waits |= {((a, b), (b, c)) for a, b, c in zip(path, path[1:], path[2:])}
        chain = [tuple(x.split("->")) for x in v.deadlock_note.split("cycle ")[1].split(" (")[0].split(" => ")]
        assert len(chain) >= 3 and chain[0] == chain[-1]
        for here, there in itertools.pairwise(chain):
            assert (here, there) in waits, (here, there)


def test_healed_documents_pass_vlanroutes_verification(protected: PlanDocument, tmp_path: Path) -> None:
    """One of each heal the protected seed torus is classed for, rendered and verified as
    `vlanroute repair` publishes it (every config parsed back and simulated as 802.1Q
    bridges: no loop, every surviving host pair delivered once along the plan's path)."""
    from vlanroute.render.write import RenderOptions, render_to_dir
    fab = Fabric.of(protected)
    cases = [Failures(pairs=(("sw1", "sw2"),)), Failures(pairs=(("sw3", "sw4"),), switches=("sw6",))]
    for i, f in enumerate(cases):
        v = fab.classify(f)
        assert v.heals
        rep = repair_document(protected, f, compare=False)
        assert render_to_dir(rep.doc, tmp_path / f"repaired{i}", RenderOptions(verify=True)).verified
    assert fab.classify(cases[0]).failover == "covers"
    over = failover_document(protected, cases[0])
    assert render_to_dir(over.doc, tmp_path / "failed-over", RenderOptions(verify=True)).verified


# ------------------------------------------------------------------ random fabrics


def _inventory(n: int, chords: list[tuple[int, int]], empty: set[int], protect: bool) -> dict:  # type: ignore[type-arg]
    names = [f"s{i}" for i in range(n)]
    edges = {tuple(sorted((i, (i + 1) % n))) for i in range(n)} | {tuple(sorted(c)) for c in chords if c[0] != c[1]}
    hosts = [{"name": f"h{i}{k}", "switch": names[i]} for i in range(n) if i not in empty for k in range(2)]
    inv = {"name": "random", "platform": "powerconnect-6248",
           "topology": {"kind": "custom", "switches": names,
                        "links": [{"a": names[a], "b": names[b]} for a, b in sorted(edges)]},
           "hosts": {"list": hosts}, "routing": {"algorithm": "shortest"},
           "switches": {s: {"mgmt": f"192.0.2.{10 + i}"} for i, s in enumerate(names)}}
    if protect:
        inv["routing"]["protection"] = "links"
    return inv


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(4, 7).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=4),
    st.sets(st.integers(1, n - 1), max_size=n // 2), st.booleans(), st.integers(0, 1000))))
def test_on_random_two_edge_connected_fabrics_every_class_is_what_happens(case) -> None:  # type: ignore[no-untyped-def]
    """A ring with random chords (no bridge), some switches without hosts, with and without
    backups: no single pair failure splits it, and every single failure and a sample of
    double ones heal exactly when the live switches with hosts stay joined, as the repaired
    and failed-over documents show."""
    n, chords, empty, protect, seed = case
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "random.yaml"
        path.write_text(yaml.safe_dump(_inventory(n, chords, empty, protect)))
        doc = api.plan(path).to_document()
    fab = Fabric.of(doc)
    for v in (fab.classify(f) for f in fab.singles()):
        if v.kind == "pair":
            assert v.heals, v.name()
        _check(doc, fab, v)
    for f in fab.doubles(4, seed):
        _check(doc, fab, fab.classify(f))


def _fabric_of_graph(g: nx.Graph, hosted: set[str]) -> Fabric:
    """A Fabric straight from a graph (no plan: the classes need only cables and hosts)."""
    switches = sorted(g.nodes)
    return Fabric(switches, list(g.edges), [(f"h-{s}", s) for s in switches if s in hosted], [], False,
                  Policy("propose", frozenset(), ("repair",)), False, lambda: None)  # type: ignore[arg-type,return-value]


@settings(max_examples=60, deadline=None)
@given(st.integers(3, 9).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), max_size=2 * n),
    st.sets(st.integers(0, n - 1), min_size=1))))
def test_parts_match_networkx_for_every_single_and_double_failure(case) -> None:  # type: ignore[no-untyped-def]
    """The parts a failure leaves (the quick search from the switches next to it, the
    bridges and articulation points) against networkx's components, for every single and
    double failure of random connected graphs, adjacent dead switches among them."""
    n, extra, hosted_i = case
    g = nx.path_graph(n)                       # connected; the extra edges add cycles
    g.add_edges_from((a, b) for a, b in extra if a != b)
    g = nx.relabel_nodes(g, {i: f"s{i}" for i in range(n)})
    hosted = {f"s{i}" for i in hosted_i}
    fab = _fabric_of_graph(g, hosted)
    for f in [*fab.singles(), *fab.doubles(10_000, 0)]:
        live = g.copy()
        live.remove_nodes_from(f.switches)
        live.remove_edges_from(f.pairs)
        want = {frozenset(c & hosted) for c in nx.connected_components(live)} - {frozenset()}
        got = fab.parts(f)
        assert {frozenset(p) for p in got if p} == want or (not want and got == [[]]), f
        sizes = [len(p) for p in got]            # one host per switch with hosts
        assert sizes == sorted(sizes, reverse=True)


def test_the_barbell_splits_when_both_middle_switches_die() -> None:
    """Two triangles joined through two adjacent switches: each dead switch's neighbours
    still join up on their own side, but not across; the block of both is what counts."""
    g = nx.Graph([("a", "b"), ("a", "w1"), ("b", "w1"), ("w1", "w2"), ("c", "w2"), ("d", "w2"), ("c", "d")])
    fab = _fabric_of_graph(g, {"a", "b", "c", "d"})
    assert sorted(map(sorted, fab.parts(Failures(switches=("w1", "w2"))))) == [["a", "b"], ["c", "d"]]
    assert fab.parts(Failures(switches=("w1",))) == [["a", "b"], ["c", "d"]]
    assert fab.parts(Failures(pairs=(("a", "b"),))) == [["a", "b", "c", "d"]]


@pytest.mark.parametrize("sets", [(), PROTECT, ("operation.watch.policy=auto",)])
def test_plan_classes_from_the_plan_itself_equal_those_from_its_document(sets: tuple[str, ...]) -> None:
    """`plan` classes from the Plan (no document built unless the failover needs it):
    the same classes as from its plan.json."""
    plan = api.plan(INVENTORIES / "seed-torus.yaml", sets)
    doc = plan.to_document()
    a, b = Fabric.of(doc), Fabric.of_plan(plan)
    assert (a.switches, a.cables, a.hosts, a.host_names, a.trees, a.deadlock_free, a.has_backups, a.policy) == \
           (b.switches, b.cables, b.hosts, b.host_names, b.trees, b.deadlock_free, b.has_backups, b.policy)
    for f in [*a.singles(), *a.doubles(40, 3)]:
        assert a.classify(f) == b.classify(f)
