"""`vlanroute repair`: the published seed torus repaired around each single failure.

Checked independently of routing/repair/: the broken trees are found from plan.json
here, tree-ness and spanning with networkx, and the push order by applying the membership
changes one command at a time (each switch adds before it removes, as a push does) and
testing every VLAN for a loop after each command.
"""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import networkx as nx
import pytest

from vlanroute import api, schemas
from vlanroute.device.change import repair_down_cables
from vlanroute.transition.fabric import Wire
from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.failures import (
    Failures,
    check,
    parse_failures,
    read_failures_file,
)
from vlanroute.bundle.manifest import read_manifest
from vlanroute.bundle.reader import read_plan
from vlanroute.bundle.repaired import REPAIR_FILE, Repaired, repair_document
from vlanroute.cli import main
from vlanroute.errors import UserError

ROOT = Path(__file__).resolve().parent.parent
SEED_TORUS = ROOT / "inventories" / "seed-torus.yaml"


@pytest.fixture(scope="module")
def torus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("torus") / "out"
    api.render(SEED_TORUS, out)
    return out


@pytest.fixture(scope="module")
def doc(torus: Path) -> PlanDocument:
    return read_plan(torus)


def _pairs(doc: PlanDocument) -> list[tuple[str, str]]:
    return sorted({tuple(sorted((c.a, c.b))) for c in doc.cabling})  # type: ignore[misc]


def _links(v: object) -> set[frozenset[str]]:
    return {frozenset(l) for l in v.links}  # type: ignore[attr-defined]


def _is_tree_over(links: set[frozenset[str]], wanted: set[str]) -> bool:
    g = nx.Graph()
    g.add_nodes_from(wanted)
    g.add_edges_from(tuple(l) for l in links)
    return nx.is_tree(g) and wanted <= set(g.nodes)


def _host_switches(doc: PlanDocument) -> set[str]:
    return {h.switch for h in doc.hosts.values()}


def _commands(old: PlanDocument, new: PlanDocument, order: list[str]) -> list[tuple[str, int, str, str]]:
    """The membership commands of a push in `order`, independent of the repair's own model:
    per switch, per port to a neighbour, the VLANs it gains (first) and loses (after)."""
    def members(d: PlanDocument) -> set[tuple[int, str, str]]:
        return {(vid, sw, p.neighbor) for sw, spec in d.switches.items() for p in spec.ports.values()
                if p.role != "host" and p.neighbor for vid in p.tagged}
    before, after = members(old), members(new)
    out = []
    for sw in order:
        out += [("add", v, s, n) for v, s, n in sorted(after - before) if s == sw]
        out += [("remove", v, s, n) for v, s, n in sorted(before - after) if s == sw]
    # Every live switch that changes is in the order (a dead one keeps its old memberships).
    assert {s for _, s, _ in (after ^ before)} & set(new.switches) <= set(order)
    return out


def _check_every_state(old: PlanDocument, new: PlanDocument, order: list[str]) -> int:
    """Apply the commands one at a time; after each, every VLAN's active links (both ports
    carry it; a dead cable counts, as it may come back) are a forest, and every tree the
    repair leaves alone is whole. Returns the number of states checked."""
    state = {(vid, sw, p.neighbor) for sw, spec in old.switches.items() for p in spec.ports.values()
             if p.role != "host" and p.neighbor for vid in p.tagged}
    untouched = {v.id: _links(v) for v in old.vlans
                 if _links(v) == _links(next(w for w in new.vlans if w.id == v.id))}
    states = 0
    for op, vid, sw, nb in _commands(old, new, order):
        (state.add if op == "add" else state.discard)((vid, sw, nb))
        states += 1
        for v in old.vlans:
            active = {frozenset((s, n)) for x, s, n in state if x == v.id and (x, n, s) in state}
            g = nx.Graph()
            g.add_edges_from(tuple(l) for l in active)
            assert g.number_of_nodes() == 0 or nx.is_forest(g), f"VLAN {v.id} has a loop after {op} {vid} on {sw} to {nb}"
            if v.id in untouched:
                assert untouched[v.id] <= active, f"surviving VLAN {v.id} cut after {op} on {sw}"
    return states


@pytest.mark.parametrize("pair", [("sw1", "sw2"), ("sw1", "sw4"), ("sw1", "sw5"), ("sw2", "sw3"), ("sw2", "sw6"),
                                  ("sw3", "sw4"), ("sw3", "sw7"), ("sw4", "sw8"), ("sw5", "sw6"), ("sw5", "sw8"),
                                  ("sw6", "sw7"), ("sw7", "sw8")])
def test_each_dead_pair_of_the_seed_torus(doc: PlanDocument, pair: tuple[str, str]) -> None:
    assert pair in _pairs(doc)          # the list above is every pair of the seed torus
    rep = repair_document(doc, parse_failures(pairs=[f"{pair[0]}:{pair[1]}"]), compare=False)
    new = rep.doc
    dead = frozenset(pair)
    broken = {v.id for v in doc.vlans if dead in _links(v)}
    assert broken, "on the seed torus every pair is in some tree"
    assert rep.record["broken_vlans"] == sorted(broken)
    # Hosts: same switch, port, PVID, MAC and index (so the same learning address and row).
    assert new.hosts == doc.hosts
    assert [(v.id, v.learning_subnet, v.sources) for v in new.vlans] == \
           [(v.id, v.learning_subnet, v.sources) for v in doc.vlans]
    wanted = _host_switches(doc)
    for old_v, new_v in zip(doc.vlans, new.vlans):
        if old_v.id not in broken:
            assert _links(new_v) == _links(old_v), f"surviving VLAN {old_v.id} changed"
            continue
        removed, added = _links(old_v) - _links(new_v), _links(new_v) - _links(old_v)
        assert removed == {dead} and len(added) == 1, f"VLAN {old_v.id}: -{removed} +{added}"
        assert dead not in _links(new_v)
        assert _is_tree_over(_links(new_v), wanted)
    assert rep.record["links_added"] == len(broken)
    assert _check_every_state(doc, new, rep.record["push_order"]) > 0
    assert rep.record["push_order_loop_free"] is True
    assert rep.record["hosts_lost"] == []
    assert rep.record["affected_vlans"] == sorted(broken)


@pytest.mark.parametrize("switch", [f"sw{i}" for i in range(1, 9)])
def test_each_dead_switch_of_the_seed_torus(doc: PlanDocument, switch: str) -> None:
    rep = repair_document(doc, parse_failures(switches=[switch]), compare=False)
    new = rep.doc
    lost = sorted(h for h, rec in doc.hosts.items() if rec.switch == switch)
    assert sorted(rep.hosts_lost) == lost and len(lost) >= 28
    assert new.hosts == {h: rec for h, rec in doc.hosts.items() if rec.switch != switch}
    assert switch not in new.switches
    wanted = _host_switches(doc) - {switch}
    for old_v, new_v in zip(doc.vlans, new.vlans):
        assert switch not in {s for l in _links(new_v) for s in l}
        assert _is_tree_over(_links(new_v), wanted)
        if switch not in {s for l in _links(old_v) for s in l}:
            assert _links(new_v) == _links(old_v)
        else:
            # The fewest links: the parts the dead switch leaves, less one.
            g = nx.Graph()
            g.add_nodes_from(wanted)
            g.add_edges_from(tuple(l) for l in _links(old_v) if switch not in l)
            parts = nx.number_connected_components(g)
            assert len(_links(new_v) - _links(old_v)) == parts - 1
    # The neighbours' ports to the dead switch carry nothing any more.
    for spec in new.switches.values():
        for p in spec.ports.values():
            if p.neighbor == switch:
                assert p.tagged == []
    assert _check_every_state(doc, new, rep.record["push_order"]) >= 0


def test_a_lag_that_keeps_a_cable_is_no_failure_but_its_load_doubles(doc: PlanDocument) -> None:
    port = next(p for p, spec in doc.switches["sw1"].ports.items() if spec.role == "lag-member"
                and spec.neighbor == "sw2")
    rep = repair_document(doc, parse_failures(cables=[f"sw1:{port}"]), compare=False)
    whole = repair_document(doc, Failures(), compare=False)
    assert rep.record["changes"] == [] and rep.record["broken_vlans"] == []
    assert [(v.id, v.links) for v in rep.doc.vlans] == [(v.id, v.links) for v in doc.vlans]
    assert rep.record["lost_capacity"] == [{"pair": "sw1:sw2", "cables": 2, "live": 1}]
    for arc in (("sw1", "sw2"), ("sw2", "sw1")):
        assert rep.metrics.link_loads[arc] == pytest.approx(2 * whole.metrics.link_loads[arc])
    assert whole.metrics.max_link_load == doc.metrics["max_link_load"]   # same figures as the plan's
    # Both cables down: now a failed pair.
    other = next(p for p, spec in doc.switches["sw1"].ports.items() if spec.role == "lag-member"
                 and spec.neighbor == "sw2" and p != port)
    both = repair_document(doc, parse_failures(cables=[f"sw1:{port}", f"sw2:{_far_end(doc, 'sw1', other)}"]),
                           compare=False)
    assert both.record["broken_vlans"] == [v.id for v in doc.vlans if frozenset(("sw1", "sw2")) in _links(v)]


def _far_end(doc: PlanDocument, sw: str, port: str) -> str:
    for c in doc.cabling:
        if (c.a, c.a_port) == (sw, port):
            return c.b_port
        if (c.b, c.b_port) == (sw, port):
            return c.a_port
    raise AssertionError(port)


def test_the_summary_compares_with_a_full_replan(doc: PlanDocument) -> None:
    rep = repair_document(doc, parse_failures(pairs=["sw1:sw2"]))
    full = rep.record["full_replan"]
    # The issue's own figures: a re-plan from scratch needs 7 VLANs and moves 196 of 225 hosts.
    assert full["vlan_count"] == 7 and full["hosts_new_pvid"] == 196
    assert rep.record["link_load_lower_bound"] <= full["max_link_load"] + 1e-9
    assert rep.record["link_load_lower_bound"] <= rep.record["max_link_load"] + 1e-9
    assert rep.record["deadlock_free"] is True


def _render(rep: Repaired, out: Path) -> None:
    from vlanroute.render.write import RenderOptions, render_to_dir
    render_to_dir(rep.doc, out, RenderOptions(extra_files=((REPAIR_FILE, json.dumps(rep.record)),)))


def test_cli_writes_a_verified_bundle_with_the_same_host_tables(torus: Path, tmp_path: Path,
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    new = tmp_path / "repaired"
    assert main(["repair", str(torus), "--failed-pair", "sw1:sw2", "-o", str(new), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    jsonschema.validate(out, schemas.load("repair"))
    assert out["schema"] == "vlanroute-repair/1" and out["verified"] and out["host_tables_unchanged"]
    for rel in ("hosts/hosts.tsv", "hosts/vlans.tsv", "hosts/vlanroute-host"):
        assert (new / rel).read_bytes() == (torus / rel).read_bytes(), rel
    manifest = read_manifest(new)
    assert manifest is not None and REPAIR_FILE in manifest
    assert api.verify(new).ok
    record = json.loads((new / REPAIR_FILE).read_text())
    assert record == out["repair"]
    # Only the switches touched get a new config.
    changed = sorted(p.stem for p in (new / "switches").iterdir()
                     if p.read_bytes() != (torus / "switches" / p.name).read_bytes())
    assert changed == record["switches_touched"]
    # The cables the repair routes around, for push's transition (device/change.py).
    assert record["down_cables"] == [[c["a"], c["a_port"], c["b"], c["b_port"]]
                                     for c in json.loads((torus / "plan.json").read_text())["cabling"]
                                     if {c["a"], c["b"]} == {"sw1", "sw2"}]
    assert repair_down_cables(new) == [Wire(*row) for row in record["down_cables"]]
    assert repair_down_cables(torus) == []


@pytest.mark.slow
@pytest.mark.parametrize("failure", ["--failed-pair=sw2:sw3", "--failed-pair=sw5:sw8", "--failed-switch=sw3",
                                     "--failed-switch=sw8", "--failed-cable=sw1:1/g47"])
def test_cli_every_kind_of_failure_verifies(torus: Path, tmp_path: Path, failure: str) -> None:
    new = tmp_path / "repaired"
    assert main(["repair", str(torus), failure, "-o", str(new), "-q"]) == 0
    assert api.verify(new).ok
    lost = set(json.loads((new / REPAIR_FILE).read_text())["hosts_lost"])
    old_rows = [r for r in (torus / "hosts/hosts.tsv").read_text().splitlines() if r.split("\t")[0] not in lost]
    assert (new / "hosts/hosts.tsv").read_text().splitlines() == old_rows


@pytest.mark.parametrize("args, field", [
    (["--failed-pair", "sw1:sw3"], "--failed-pair"),          # not neighbours
    (["--failed-pair", "sw1"], "--failed-pair"),              # not a:b
    (["--failed-switch", "sw9"], "--failed-switch"),
    (["--failed-cable", "sw1:1/g1"], "--failed-cable"),       # a host port
    (["--failed-cable", "sw1:9/x9"], "--failed-cable"),       # no such port
    ([], "--failed-cable/--failed-pair/--failed-switch"),     # nothing given
])
def test_bad_failures_exit_2_naming_the_field(torus: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                              args: list[str], field: str) -> None:
    new = tmp_path / "repaired"
    assert main(["repair", str(torus), *args, "-o", str(new)]) == 2
    err = capsys.readouterr().err
    assert field in err and "fix:" in err
    assert not new.exists()


def test_failures_file(tmp_path: Path, doc: PlanDocument) -> None:
    f = tmp_path / "failures.yaml"
    f.write_text("failures:\n  pairs: [sw1:sw2]\n  switches: [sw7]\n  cables: ['sw3:1/g47']\n")
    got = read_failures_file(f)
    assert got.pairs == (("sw1", "sw2"),) and got.switches == ("sw7",) and got.cables == (("sw3", "1/g47"),)
    check(got, doc)
    f.write_text("failures:\n  links: [sw1:sw2]\n")
    with pytest.raises(UserError, match="unknown key"):
        read_failures_file(f)
    f.write_text("failures:\n  pairs: sw1:sw2\n")
    with pytest.raises(UserError, match="failures.pairs"):
        read_failures_file(f)


def test_an_inventory_with_failures_plans_the_intact_fabric_and_feeds_repair(tmp_path: Path, doc: PlanDocument) -> None:
    inv = tmp_path / "inv.yaml"
    inv.write_text(SEED_TORUS.read_text() + "failures:\n  pairs: [sw1:sw2]\n")
    plan = api.plan(inv)
    assert any("lists failures" in w for w in plan.warnings)
    assert [sorted(map(tuple, v.links)) for v in plan.to_document().vlans] == \
           [sorted(map(tuple, v.links)) for v in doc.vlans]
    got = read_failures_file(inv)
    assert got.pairs == (("sw1", "sw2"),)


def _rehash(outdir: Path, rel: str) -> None:
    """Recompute one file's manifest entry, as a tamperer would."""
    import hashlib
    path = outdir / "manifest.json"
    data = json.loads(path.read_text())
    data["files"][rel]["sha256"] = hashlib.sha256((outdir / rel).read_bytes()).hexdigest()
    path.write_text(json.dumps(data))


@pytest.mark.parametrize("rel, edit, named", [
    ("hosts/relearn.sh", lambda t: t.replace("VLANS=101", "VLANS=101; reboot"), "hosts/relearn.sh:"),
    ("repair.json", lambda t: t.replace('"push_order": [', '"push_order": ["evil", '), "'evil'"),
    ("repair.json", lambda t: t.replace('"affected_vlans": [', '"affected_vlans": [4000, '), "4000"),
    ("repair.json", lambda t: t.replace('"format": "vlanroute-repair/1"', '"format": "x"'), "vlanroute-repair/1"),
])
def test_a_repaired_bundle_is_checked_line_by_line_too(torus: Path, tmp_path: Path, rel: str,
                                                        edit: object, named: str) -> None:
    """verify renders a repaired bundle again as any other: relearn.sh from repair.json, and
    repair.json only as far as it agrees with plan.json (its switches, VLANs and links)."""
    new = tmp_path / "repaired"
    assert main(["repair", str(torus), "--failed-pair", "sw1:sw2", "-o", str(new), "-q"]) == 0
    assert api.verify(new).ok
    path = new / rel
    changed = edit(path.read_text())  # type: ignore[operator]
    assert changed != path.read_text()
    path.write_text(changed)
    _rehash(new, rel)
    report = api.verify(new)
    assert not report.ok
    assert any(named in v for v in report.violations), report.violations
