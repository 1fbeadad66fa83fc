"""`vlanroute whatif`: every single failure of the seed torus, checked against `repair` and
against a count of the cut host pairs by a search in each tree."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import networkx as nx
import pytest

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
