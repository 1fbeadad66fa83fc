"""`vlanroute whatif`: every single failure of the seed torus, checked against `repair` and
against a count of the cut host pairs by a search in each tree."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import networkx as nx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from vlanroute import schemas
from vlanroute.bundle.failures import parse_failures
from vlanroute.bundle.repaired import repair_document
from vlanroute.cli import main
from vlanroute.plan.build import plan_from_file

ROOT = Path(__file__).resolve().parent.parent
SEED_TORUS = ROOT / "inventories" / "seed-torus.yaml"


@pytest.fixture(scope="module")
def rows() -> dict[str, dict[str, object]]:
    import contextlib
    import io
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["whatif", str(SEED_TORUS), "--json"]) == 0
    data = json.loads(out.getvalue())
    jsonschema.validate(data, schemas.load("whatif"))
    return {r["failure"]: r for r in data["failures"]}


def _cut_pairs(doc, dead_pair: frozenset[str] | None, dead_switch: str | None) -> int:  # type: ignore[no-untyped-def]
    hosts: dict[str, int] = {}
    for h in doc.hosts.values():
        hosts[h.switch] = hosts.get(h.switch, 0) + 1
    cut = 0
    for v in doc.vlans:
        g = nx.Graph()
        g.add_nodes_from(hosts)
        g.add_edges_from(tuple(l) for l in v.links if frozenset(l) != dead_pair and dead_switch not in l)
        for s in v.sources:
            if s == dead_switch:
                continue
            for t, n in hosts.items():
                if t != s and t != dead_switch and not nx.has_path(g, s, t):
                    cut += hosts[s] * n
    return cut


def test_every_failure_of_the_seed_torus_matches_repair(rows: dict[str, dict[str, object]]) -> None:
    doc = plan_from_file(SEED_TORUS).to_document()
    pairs = sorted({tuple(sorted((c.a, c.b))) for c in doc.cabling})
    assert len(rows) == len(pairs) + len(doc.switches) == 20
    for a, b in pairs:
        row = rows[f"{a}:{b}"] if f"{a}:{b}" in rows else rows[f"{b}:{a}"]
        rep = repair_document(doc, parse_failures(pairs=[f"{a}:{b}"]), compare=False)
        assert row["trees"] == len(rep.record["broken_vlans"])
        assert row["links_added"] == rep.record["links_added"] == row["trees"]     # one link per tree
        assert row["max_link_load"] == pytest.approx(rep.record["max_link_load"])
        assert row["link_load_lower_bound"] <= rep.record["link_load_lower_bound"] + 1e-6
        assert row["pairs_cut"] == _cut_pairs(doc, frozenset((a, b)), None)
    for sw in doc.switches:
        row = rows[sw]
        rep = repair_document(doc, parse_failures(switches=[sw]), compare=False)
        assert row["kind"] == "switch" and row["hosts_lost"] == len(rep.hosts_lost)
        assert row["links_added"] == rep.record["links_added"]
        assert row["max_link_load"] == pytest.approx(rep.record["max_link_load"])
        assert row["link_load_lower_bound"] <= rep.record["link_load_lower_bound"] + 1e-6
        assert row["pairs_cut"] == _cut_pairs(doc, None, sw)


def test_top_limits_the_rows(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["whatif", str(SEED_TORUS), "--json", "--top", "3"]) == 0
    got = json.loads(capsys.readouterr().out)["failures"]
    assert len(got) == 3 and got[0]["pairs_cut"] >= got[1]["pairs_cut"] >= got[2]["pairs_cut"]
    assert main(["whatif", str(SEED_TORUS)]) == 0
    assert "pair sw1-sw2" in capsys.readouterr().out


def _brute_switch_cuts(trees, hosts):  # type: ignore[no-untyped-def]
    """Per dead switch w, by a search in each tree without w: a source's hosts lose every live
    host outside its part."""
    out: dict[str, int] = {}
    for t in trees:
        g = nx.Graph()
        g.add_edges_from(t.links)
        for w in g.nodes:
            rest = g.subgraph(n for n in g.nodes if n != w)
            for s in t.sources:
                if s == w or s not in rest:
                    continue
                part = nx.node_connected_component(rest, s)
                out[w] = out.get(w, 0) + hosts.get(s, 0) * sum(n for x, n in hosts.items() if x != w and x not in part)
    return out



@settings(max_examples=60, deadline=None)
@given(st.integers(2, 12).flatmap(lambda n: st.tuples(
    st.lists(st.tuples(st.lists(st.integers(0, 10_000), min_size=n - 1, max_size=n - 1),
                       st.sets(st.integers(0, n - 1))), min_size=1, max_size=4),
    st.lists(st.integers(0, 3), min_size=n + 2, max_size=n + 2))))
def test_switch_cuts_in_one_pass_match_a_search(case) -> None:  # type: ignore[no-untyped-def]
    """switch_cuts (one pass per tree) equals a search per switch and tree, on random trees
    (a tree per VLAN over some of the switches; two switches outside every tree hold hosts too)."""
    from vlanroute.model.links import link
    from vlanroute.routing.repair.model import Tree
    from vlanroute.routing.whatif.failures import switch_cuts
    raw_trees, counts = case
    n = len(counts) - 2
    hosts = {f"s{i}": c for i, c in enumerate(counts)}
    trees = []
    for vid, (parents, sources) in enumerate(raw_trees):
        links = frozenset(link(f"s{i}", f"s{parents[i - 1] % i}") for i in range(1, n))
        trees.append(Tree(vid, tuple(f"s{i}" for i in sorted(sources)), links))
    got = {w: c for w, c in switch_cuts(trees, hosts).items() if c}
    assert got == {w: c for w, c in _brute_switch_cuts(trees, hosts).items() if c}
