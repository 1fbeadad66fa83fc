"""The post-push checks render writes (issue 42, part 3): checks.json for every switch, and for
Arista EOS switches an ANTA catalog and inventory (docs/checks.md).

The catalog is loaded by ANTA's own catalog and inventory loaders and scheduled by ANTA's
runner in a dry run; what it must name is taken from the bundle's cabling.csv and plan.json
read here on their own (tests/avd_oracle.py derives each switch's VLANs and trunk lists from
the VLAN trees), not from the code that wrote it. Its running-config patterns are run, by
ANTA's own test class, against each switch's config as Arista's generator (pyavd) lays it out.
"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from anta.catalog import AntaCatalog, AntaTestDefinition
from anta.device import AntaDevice
from anta.inventory import AntaInventory
from anta.models import AntaCommand
from anta.result_manager import ResultManager
from anta.runner import main as anta_main
from anta.tests.configuration import VerifyRunningConfigLines

import avd_oracle as oracle
from vlanroute.bundle.document import PlanDocument
from vlanroute.device.audit import expected_entries
from vlanroute.model.bridge import LagPort
from vlanroute.plan.build import plan_from_file
from vlanroute.render import checks as checks_module
from vlanroute.render.exact import check_exact
from vlanroute.render.write import RenderOptions, render_files, render_to_dir

ROOT = Path(__file__).resolve().parent.parent
INVENTORIES = ROOT / "inventories"
SMALL_EOS = ["topology.dims=[3,2]", "topology.links_per_pair=1", "hosts.count=null", "hosts.per_switch=2",
             "routing.algorithm=dor", "switches={}"]


def eos_plan(*sets: str) -> PlanDocument:
    return plan_from_file(INVENTORIES / "seed-torus-arista.yaml", [*SMALL_EOS, *sets]).to_document()


@pytest.fixture(scope="module")
def seed_arista() -> tuple[PlanDocument, dict[str, str]]:
    doc = plan_from_file(INVENTORIES / "seed-torus-arista.yaml").to_document()
    return doc, render_files(doc)


def cabling_rows(files: dict[str, str]) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(files["cabling.csv"])))


def catalog_of(files: dict[str, str], tmp: Path) -> AntaCatalog:
    path = tmp / "catalog.yml"
    path.write_text(files["anta/catalog.yml"])
    return AntaCatalog.parse(path)


def entries(catalog: AntaCatalog, test: str, switch: str) -> list[Any]:
    """The inputs of every `test` entry that runs on `switch`."""
    return [t.inputs for t in catalog.tests if t.test.name == test and t.inputs.filters.tags == {switch}]


def description(inputs: Any) -> str:
    return inputs.result_overwrite.description


# -- the ANTA catalog ----------------------------------------------------------------------------

def test_antas_loaders_read_the_rendered_catalog_and_inventory_and_schedule_every_test(tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_to_dir(plan_from_file(INVENTORIES / "seed-torus-arista.yaml").to_document(), out, RenderOptions(verify=False))
    catalog = AntaCatalog.parse(out / "anta" / "catalog.yml")
    inventory = AntaInventory.parse(out / "anta" / "inventory.yml", username="u", password="p")
    assert sorted(inventory) == [f"sw{n}" for n in range(1, 9)]
    assert {t.test.name for t in catalog.tests} == {
        "VerifyLLDPNeighbors", "VerifyInterfacesStatus", "VerifyPortChannels", "VerifyVlanStatus",
        "VerifySTPForwardingPorts", "VerifySTPBlockedPorts", "VerifyRunningConfigLines"}
    manager = ResultManager()
    asyncio.run(anta_main(manager, inventory, catalog, dry_run=True, established_only=False))
    # Each test runs on the one switch its tags name: as many scheduled as in the catalog.
    assert len(manager.results) == len(catalog.tests)
    assert {r.name for r in manager.results} == set(inventory)
    manifest = json.loads((out / "manifest.json").read_text())["files"]
    assert {"checks.json", "anta/catalog.yml", "anta/inventory.yml"} <= set(manifest)


def test_the_catalog_names_every_planned_cable_and_vlan(seed_arista: tuple[PlanDocument, dict[str, str]],
                                                        tmp_path: Path) -> None:
    doc, files = seed_arista
    catalog = catalog_of(files, tmp_path)
    plan = json.loads(files["plan.json"])
    rows = cabling_rows(files)
    assert len(rows) == 24 + 225                  # the 4x2 torus's 12 pairs x 2 cables, one cable per host
    for row in rows:
        if row["kind"] == "inter-switch":
            for me, port, far, far_port in ((row["a"], row["a_port"], row["b"], row["b_port"]),
                                            (row["b"], row["b_port"], row["a"], row["a_port"])):
                found = [e for e in entries(catalog, "VerifyLLDPNeighbors", me) if row["cable"] in description(e)]
                assert len(found) == 1, row
                (n,) = found[0].neighbors
                assert (n.port, n.neighbor_device, n.neighbor_port) == (port, far, far_port)
                assert found[0].require_fqdn is False
        else:
            found = [e for e in entries(catalog, "VerifyInterfacesStatus", row["a"]) if row["cable"] in description(e)]
            assert len(found) == 1, row
            assert row["b"] in description(found[0]) and row["b_port"] in description(found[0])
            assert [(i.name, i.status) for i in found[0].interfaces] == [(row["a_port"], "up")]
    seen: set[int] = set()
    for sw in plan["switches"]:
        intent = oracle.intent(plan, sw)
        (vlan_status,) = entries(catalog, "VerifyVlanStatus", sw)
        assert {(v.vlan_id, v.status) for v in vlan_status.vlans} == {(v, "active") for v in intent.vlans}
        (forwarding,) = entries(catalog, "VerifySTPForwardingPorts", sw)
        assert set(forwarding.vlans) == intent.vlans
        seen |= intent.vlans
        (config,) = entries(catalog, "VerifyRunningConfigLines", sw)
        patterns = list(config.regex_patterns)
        for port, vlans in intent.trunks.items():
            assert any(f"^interface {port}\\n" in p and p.endswith(f"allowed vlan {oracle.allowed(vlans)}$")
                       for p in patterns), (sw, port)
        (status,) = [e for e in entries(catalog, "VerifyInterfacesStatus", sw) if "inter-switch" in description(e)]
        assert {i.name for i in status.interfaces} == set(intent.trunks) | set(intent.members)
    assert seen == {v.id for v in doc.vlans}


@pytest.mark.slow
@pytest.mark.parametrize("bundle", ["seed-torus-arista", "eos-trunk-hosts"])
def test_arista_s_own_catalog_generator_expects_the_same_neighbours_and_interfaces_up(
        bundle: str, seed_arista: tuple[PlanDocument, dict[str, str]], tmp_path: Path) -> None:
    """pyavd's ANTA catalog generator, given each switch's intent (tests/avd_oracle.py) and its
    cables as AVD's peer metadata, expects the same LLDP neighbours and the same interfaces up
    as the rendered catalog, switch by switch. (It adds hardware, logging and NTP tests, which
    the plan says nothing about.)"""
    if bundle == "seed-torus-arista":
        files = seed_arista[1]
    else:
        inv = tmp_path / "eos-trunk-hosts.yaml"
        inv.write_text(yaml.safe_dump(oracle.TRUNK_HOSTS, sort_keys=False))
        files = render_files(plan_from_file(inv).to_document())
    catalog = catalog_of(files, tmp_path)
    plan = json.loads(files["plan.json"])
    for sw, theirs in oracle.avd_catalogs(plan).items():
        def of(cat: Any, test: str) -> list[Any]:
            return [t.inputs for t in cat.tests if t.test.name == test and t.inputs.filters.tags == {sw}]
        want_lldp = {(n.port, n.neighbor_device, n.neighbor_port) for i in of(theirs, "VerifyLLDPNeighbors")
                     for n in i.neighbors}
        got_lldp = {(n.port, n.neighbor_device, n.neighbor_port) for i in of(catalog, "VerifyLLDPNeighbors")
                    for n in i.neighbors}
        assert got_lldp == want_lldp and want_lldp, sw
        want_up = {(i.name, i.status) for t in of(theirs, "VerifyInterfacesStatus") for i in t.interfaces}
        got_up = {(i.name, i.status) for t in of(catalog, "VerifyInterfacesStatus") for i in t.interfaces}
        assert got_up == want_up and want_up, sw
        assert bool(of(theirs, "VerifyPortChannels")) == bool(of(catalog, "VerifyPortChannels")), sw


class RunningConfig(AntaDevice):
    """An ANTA device that answers `show running-config` with a given text (and nothing else)."""

    def __init__(self, text: str) -> None:
        super().__init__("sw", disable_cache=True)
        self.text = text
        self.is_online = self.established = True

    @property
    def _keys(self) -> tuple[Any, ...]:
        return ("sw",)

    async def _collect(self, command: AntaCommand, *, collection_id: str | None = None) -> None:
        assert command.command == "show running-config"
        command.output = self.text

    async def refresh(self) -> None:
        return None


def run_config_test(definition: AntaTestDefinition, text: str) -> tuple[str, list[str]]:
    test = VerifyRunningConfigLines(device=RunningConfig(text), inputs=definition.inputs)
    result = asyncio.run(test.test())
    return result.result, result.messages


@pytest.mark.slow
def test_the_running_config_patterns_match_the_config_as_arista_s_generator_lays_it_out(tmp_path: Path) -> None:
    """For every EOS switch of a 6-switch torus (single cables), one with LAGs and the custom
    fabric with trunk-attached hosts (a LAG of three, QSFP ports, an allowed list `none`,
    flow control off): ANTA's own VerifyRunningConfigLines passes on pyavd's text of the
    switch's intent, and fails, naming the pattern, once a native VLAN or an allowed list in
    that text is changed."""
    inv = tmp_path / "eos-trunk-hosts.yaml"
    inv.write_text(yaml.safe_dump(oracle.TRUNK_HOSTS, sort_keys=False))
    nones = 0
    for doc in (eos_plan(), eos_plan("topology.links_per_pair=2"), plan_from_file(inv).to_document()):
        files = render_files(doc)
        plan = json.loads(files["plan.json"])
        catalog = catalog_of(files, tmp_path)
        for sw in sorted(plan["switches"]):
            intent = oracle.intent(plan, sw)
            text = oracle.avd_config(intent)
            (definition,) = [t for t in catalog.tests
                             if t.test.name == "VerifyRunningConfigLines" and t.inputs.filters.tags == {sw}]
            assert run_config_test(definition, text) == ("success", []), sw
            nones += "switchport trunk allowed vlan none$" in "".join(definition.inputs.regex_patterns)
            for port, native in list(intent.host_ports.items())[:1]:
                changed = re.sub(f"(?m)^(interface {port}\n(?:   .*\n)*?   switchport trunk native vlan ){native}$",
                                 r"\g<1>4000", text)
                assert changed != text
                status, messages = run_config_test(definition, changed)
                assert status == "failure" and f"^interface {port}\\n" in messages[0] and f"native vlan {native}$" in messages[0]
            trunk, vlans = next(iter(intent.trunks.items()))
            line = f"switchport trunk allowed vlan {oracle.allowed(vlans)}\n"
            assert run_config_test(definition, text.replace(line, "switchport trunk allowed vlan 1-4094\n", 1))[0] == \
                "failure"
    assert nones == 2                     # both ends of the cable no VLAN's tree uses


def test_no_management_address_no_anta_inventory_and_no_eos_switch_no_anta_files() -> None:
    files = render_files(eos_plan("switches={}"))
    assert "anta/catalog.yml" in files and "anta/inventory.yml" not in files
    files = render_files(eos_plan("switches={sw1: {mgmt: 192.0.2.1}}"))
    inventory = yaml.safe_load(files["anta/inventory.yml"])
    assert inventory == {"anta_inventory": {"hosts": [{"name": "sw1", "host": "192.0.2.1"}]}}
    assert "no management address in the plan: sw2 sw3 sw4 sw5 sw6" in files["anta/inventory.yml"]
    files = render_files(plan_from_file(INVENTORIES / "custom-lab.yaml").to_document())
    assert "checks.json" in files and not any(rel.startswith("anta/") for rel in files)


# -- checks.json ---------------------------------------------------------------------------------

@pytest.mark.parametrize("inventory", ["custom-lab.yaml", "seed-torus-os10.yaml"])
def test_checks_json_names_every_cable_and_vlan_of_every_switch(inventory: str) -> None:
    files = render_files(plan_from_file(INVENTORIES / inventory).to_document())
    plan = json.loads(files["plan.json"])
    checks = json.loads(files["checks.json"])
    assert checks["format"] == "vlanroute-checks/1" and checks["plan"] == plan["name"]
    switches = checks["switches"]
    assert set(switches) == set(plan["switches"])
    for row in cabling_rows(files):
        if row["kind"] == "inter-switch":
            for me, port, far, far_port in ((row["a"], row["a_port"], row["b"], row["b_port"]),
                                            (row["b"], row["b_port"], row["a"], row["a_port"])):
                assert {"cable": row["cable"], "port": port, "neighbor": far, "neighbor_port": far_port} \
                    in switches[me]["lldp"]
                assert port in switches[me]["up"]
        else:
            (entry,) = [e for e in switches[row["a"]]["host_cables"] if e["cable"] == row["cable"]]
            assert (entry["port"], entry["host"], entry["interface"]) == (row["a_port"], row["b"], row["b_port"])
            assert entry["mac"] == plan["hosts"][row["b"]]["mac"]
    for sw, c in switches.items():
        # The VLANs and trunk lists from the trees, derived on their own.
        pair_vlans: dict[str, set[int]] = {}
        for v in plan["vlans"]:
            for a, b in v["links"]:
                if sw in (a, b):
                    pair_vlans.setdefault(b if a == sw else a, set()).add(v["id"])
        hosts = [h for h in plan["hosts"].values() if h["switch"] == sw]
        want = set().union(*pair_vlans.values()) | ({v["id"] for v in plan["vlans"]} if hosts else set())
        assert c["vlans"] == oracle.list_compress(sorted(want))
        assert {t["neighbor"]: t["tagged"] for t in c["trunks"]} == \
            {n: oracle.list_compress(sorted(vs)) for n, vs in pair_vlans.items()}
        assert all(t["forwarding"] is True for t in c["trunks"])
        assert {hp["port"]: hp["pvid"] for hp in c["host_ports"]} == {h["port"]: h["vlan"] for h in hosts}


def test_learned_macs_are_what_audit_checks() -> None:
    doc = plan_from_file(INVENTORIES / "custom-lab.yaml").to_document()
    checks = json.loads(render_files(doc)["checks.json"])
    assert checks["learned_left_out"] is None and checks["hosts_without_mac"] == 0
    got = {(sw, e["vlan"], host, f"lag{e['lag']}" if "lag" in e else e["port"])
           for sw, c in checks["switches"].items() for e in c["learned"] for host in e["hosts"]}
    expected, no_mac = expected_entries(doc)
    assert not no_mac
    assert got == {(x.switch, x.vlan, x.host, str(x.port) if isinstance(x.port, LagPort) else x.port)
                   for x in expected}
    assert len(got) == len(expected) > 0


def test_learned_macs_above_the_limit_are_left_out_and_said_why(monkeypatch: pytest.MonkeyPatch) -> None:
    doc = plan_from_file(INVENTORIES / "custom-lab.yaml").to_document()
    monkeypatch.setattr(checks_module, "LEARNED_LIMIT", 10)
    checks = json.loads(render_files(doc)["checks.json"])
    assert all(c["learned"] is None for c in checks["switches"].values())
    assert re.search(r"more than 10 entries; `vlanroute audit` computes them", checks["learned_left_out"])


def test_verify_names_a_changed_or_missing_check_file(tmp_path: Path) -> None:
    out = tmp_path / "out"
    render_to_dir(eos_plan("switches={sw1: {mgmt: 192.0.2.1}}"), out)
    assert check_exact(out).ok
    catalog = out / "anta" / "catalog.yml"
    catalog.write_text(catalog.read_text().replace("neighbor_device: sw2", "neighbor_device: sw9", 1))
    (out / "anta" / "inventory.yml").unlink()
    checks = out / "checks.json"
    checks.write_text(checks.read_text().replace('"forwarding": true', '"forwarding": false', 1))
    problems = check_exact(out).problems
    assert any(p.startswith("anta/catalog.yml:") and "foreign line" in p and "sw9" in p for p in problems)
    assert "anta/inventory.yml: missing (render writes it for this plan)" in problems
    assert any(p.startswith("checks.json:") and '"forwarding": false' in p for p in problems)
