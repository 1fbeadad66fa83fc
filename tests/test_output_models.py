"""Commands whose --json object is built by a pydantic model (vlanroute/schemas/outputs.py)
and whose schema file is generated from it (vlanroute/bundle/schemagen.py): render, verify,
audit, push, analyze, save, rollback, report, draw, whatif, repair, cabling check, lab, import and discover. The objects print the same keys, in the same order, with the same values
as the plain dicts they replaced (written out here by hand, as docs/json.md describes
them); and each generated schema still refuses what the hand-written one refused."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pydantic
import pytest

from vlanroute import schemas
from vlanroute.api import PushRun
from vlanroute.device import push as P
from vlanroute.device.audit import AuditReport, Expected, Finding
from vlanroute.cli import main
from vlanroute.schemas.outputs import (AnalyzeDocument, AuditDocument, PushDocument, RenderDocument, TableSize,
                                       VerifyDocument)

V = jsonschema.Draft202012Validator
INV = Path(__file__).resolve().parent.parent / "inventories"

RENDER = {"schema": "vlanroute-render/1", "outdir": "out", "written": True, "files": 12, "bytes": 3456,
          "verified": True, "warnings": ["deadlock risk"]}
VERIFY = {"schema": "vlanroute-verify/1", "outdir": "out", "ok": False, "summary": ["2 VLANs"],
          "violation_counts": {"loop": 1}, "violations": ["VLAN 2: loop"],
          "tables": {"sw1": {"learned": 4, "capacity": 8192}}}
AUDIT = {"schema": "vlanroute-audit/1", "outdir": "out", "ok": False, "checked": 2, "present": 1,
         "findings": [{"switch": "sw1", "vlan": 2, "host": "h1", "mac": "00:00:00:00:00:01",
                       "expected_port": "1/g1", "found_port": None}],
         "errors": {"sw2": "timed out"}, "no_mac": ["h9"]}


SWITCH = {"switch": "sw1", "result": "saved", "commands_sent": 1, "backup": None, "message": ""}
SAVE = {"schema": "vlanroute-save/1", "journal": "state/j.jsonl", "exit_code": 0, "switches": [SWITCH]}
ROLLBACK = {"schema": "vlanroute-rollback/1", "journal": "state/j.jsonl", "dry_run": True, "exit_code": 0,
            "switches": [{**SWITCH, "backup": "state/sw1.cfg"}]}
REPORT = {"schema": "vlanroute-report/1", "output": "r.html", "bytes": 100, "name": "ring"}
DRAW = {"schema": "vlanroute-draw/1", "outdir": "out", "format": "svg", "files": ["out/pictures/a.svg"],
        "left_out": [], "index": "pictures/index.txt"}


def _printed(doc: Any) -> str:
    return json.dumps(doc.to_json(), indent=1, default=str)


def test_render_and_verify_print_what_the_dicts_printed() -> None:
    render = RenderDocument(outdir="out", written=True, files=12, bytes=3456, verified=True,
                            warnings=["deadlock risk"])
    assert _printed(render) == json.dumps(RENDER, indent=1)
    verify = VerifyDocument(outdir="out", ok=False, summary=["2 VLANs"], violation_counts={"loop": 1},
                            violations=["VLAN 2: loop"], tables={"sw1": TableSize(learned=4, capacity=8192)})
    assert _printed(verify) == json.dumps(VERIFY, indent=1)


def test_audit_prints_what_the_report_gave() -> None:
    report = AuditReport(findings=[Finding(Expected("sw1", 2, "h1", "00:00:00:00:00:01", "1/g1"), None)],
                         checked=2, no_mac=["h9"], errors={"sw2": "timed out"})
    doc = AuditDocument.model_validate({"outdir": "out", **report.to_json()})
    assert _printed(doc) == json.dumps(AUDIT, indent=1)


@pytest.mark.parametrize("extra", [{}, {"journal": "state/j.jsonl"}, {"refused": "the cables disagree"}])
def test_push_prints_what_the_dict_printed(tmp_path: Path, extra: dict[str, str]) -> None:
    run = PushRun(tmp_path, True, [P.SwitchResult("sw1", P.DRY_RUN, commands=["vlan 2"], seconds=0.1234)])
    before = {"schema": "vlanroute-push/1", **run.to_json(), "exit_code": 0, **extra}
    doc = PushDocument.model_validate({**run.to_json(), "exit_code": 0, **extra})
    assert _printed(doc) == json.dumps(before, indent=1)
    assert "null" not in _printed(doc).split('"not_pushed"')[1]      # an absent key is not null
    V(schemas.load("push")).validate(doc.to_json())


@pytest.mark.parametrize("name", ["save", "rollback", "report", "draw"])
def test_small_objects_print_what_the_dicts_printed(name: str) -> None:
    from vlanroute.schemas import outputs
    model = getattr(outputs, f"{name.capitalize()}Document")
    before = {"save": SAVE, "rollback": ROLLBACK, "report": REPORT, "draw": DRAW}[name]
    payload = {k: v for k, v in before.items() if k != "schema"}
    assert _printed(model.model_validate(payload)) == json.dumps(before, indent=1)


def test_save_and_rollback_print_the_fabric_results() -> None:
    from vlanroute.device.fabric import FabricResult
    record = FabricResult("sw1", "saved", commands_sent=1).to_json()
    assert record == SWITCH


# What the hand-written schemas required (git history) and a wrong value each refused.
REQUIRED = {
    "save": (SAVE, ["schema", "journal", "exit_code", "switches"]),
    "rollback": (ROLLBACK, ["schema", "journal", "exit_code", "switches", "dry_run"]),
    "report": (REPORT, ["schema", "output", "bytes", "name"]),
    "draw": (DRAW, ["schema", "outdir", "format", "files", "left_out", "index"]),
    "render": (RENDER, ["schema", "outdir", "written", "files", "bytes", "verified", "warnings"]),
    "verify": (VERIFY, ["schema", "outdir", "ok", "summary", "violation_counts", "violations", "tables"]),
    "audit": (AUDIT, ["schema", "outdir", "ok", "checked", "present", "findings", "errors", "no_mac"]),
}
WRONG: dict[str, list[dict[str, Any]]] = {
    "save": [{"exit_code": "0"}, {"switches": [{**SWITCH, "extra": 1}]}, {"switches": [{**SWITCH, "commands_sent": -1}]},
             {"switches": [{k: v for k, v in SWITCH.items() if k != "backup"}]}],
    "rollback": [{"dry_run": "no"}, {"switches": [{**SWITCH, "backup": 1}]}],
    "report": [{"bytes": -1}, {"name": None}],
    "draw": [{"files": "a.svg"}, {"left_out": [1]}],
    "render": [{"schema": "vlanroute-render/2"}, {"files": "1"}, {"bytes": -1}, {"warnings": [1]}],
    "verify": [{"ok": "yes"}, {"violation_counts": {"loop": -1}}, {"tables": {"sw1": {"learned": 1}}},
               {"tables": {"sw1": {"learned": 1, "capacity": 2, "extra": 3}}}],
    "audit": [{"checked": -1}, {"findings": [{**AUDIT["findings"][0], "vlan": 4095}]},   # type: ignore[index]
              {"findings": [{**AUDIT["findings"][0], "found_port": 1}]},                # type: ignore[index]
              {"findings": [{k: v for k, v in AUDIT["findings"][0].items() if k != "mac"}]},  # type: ignore[index]
              {"errors": {"sw2": 1}}],
}


@pytest.mark.parametrize("name", sorted(REQUIRED))
def test_generated_schema_still_refuses(name: str) -> None:
    good, required = REQUIRED[name]
    schema = V(schemas.load(name))
    schema.validate(good)
    for key in required:
        assert not schema.is_valid({k: v for k, v in good.items() if k != key}), key
    for change in WRONG[name]:
        assert not schema.is_valid({**good, **change}), change


def test_push_schema_still_refuses(tmp_path: Path) -> None:
    run = PushRun(tmp_path, False, [P.SwitchResult("sw1", P.APPLIED)])
    good = {"schema": "vlanroute-push/1", **run.to_json(), "journal": "j.jsonl"}
    schema = V(schemas.load("push"))
    schema.validate(good)
    for key in ["schema", "outdir", "dry_run", "exit_code", "counts", "switches", "not_pushed"]:
        assert not schema.is_valid({k: v for k, v in good.items() if k != key}), key
    record = good["switches"][0]      # type: ignore[index]
    for change in ({"exit_code": 5}, {"journal": None}, {"refused": 1}, {"counts": {"applied": -1}},
                   {"switches": [{**record, "result": "done"}]},
                   {"switches": [{k: v for k, v in record.items() if k != "backup"}]},
                   {"switches": [{**record, "commands_sent": -1}]}):
        assert not schema.is_valid({**good, **change}), change


def test_a_model_refuses_what_its_schema_refuses() -> None:
    with pytest.raises(pydantic.ValidationError):
        RenderDocument(outdir="o", written=True, files=-1, bytes=0, verified=True, warnings=[])
    with pytest.raises(pydantic.ValidationError):
        PushDocument.model_validate({"outdir": "o", "dry_run": False, "exit_code": 7, "counts": {},
                                     "switches": [], "not_pushed": []})


ANALYZE = {"schema": "vlanroute-analyze/1", "sets": ["routing.algorithm=dor"], "inventories": [
    {"inventory": "a.yaml", "ok": True, "name": "a", "max_vlans": 1023,
     "metrics": {"switches": 8, "hosts": 0, "vlan_count": 2, "inter_switch_links": 8, "diameter": 4,
                 "mean_hops": 2, "max_link_load": 0, "link_load_lower_bound": 0.5, "max_mac_entries": 0,
                 "mac_capacity": 8192, "deadlock_free": True, "mean_stretch": 1.0, "link_load_optimum_kind": "optimum"},
     "warnings": []},
    {"inventory": "nope.yaml", "ok": False, "error": "nope.yaml: no such file"}],
    "throughput": [{"pattern": "permutation", "rows": [
        {"label": "a", "cables": 8, "flows": 0, "aggregate_gbps": 0, "slowest_mbps": 0.0, "exchange_s": 0.5,
         "effective_gbps": 1.25, "vs_first": None, "vs_stp": 1.5, "bottlenecks": ["sw1->sw2"]}]}]}


def test_analyze_prints_what_the_dict_printed() -> None:
    # Ints stay ints (2, not 2.0), the plan's other figures pass as they are, a refused
    # inventory prints only its error, and no --patterns prints no throughput key.
    payload = {k: v for k, v in ANALYZE.items() if k != "schema"}
    assert _printed(AnalyzeDocument.model_validate(payload)) == json.dumps(ANALYZE, indent=1)
    without = {k: v for k, v in payload.items() if k != "throughput"}
    assert "throughput" not in AnalyzeDocument.model_validate(without).to_json()


def test_analyze_with_patterns_is_valid(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", "--json", "--patterns", "neighbour", "--seeds", "1", str(INV / "seed-ring.yaml")]) == 0
    data = json.loads(capsys.readouterr().out)
    V(schemas.load("analyze")).validate(data)
    assert [t["pattern"].split()[0] for t in data["throughput"]] == ["neighbour"]
    assert data["throughput"][0]["rows"][0]["label"]


def test_analyze_schema_still_refuses() -> None:
    # What the hand-written analyze.json refused: a planned inventory without its figures, a
    # refused one without its error, a figure missing, a throughput row missing a column.
    schema = V(schemas.load("analyze"))
    schema.validate(ANALYZE)
    ok, refused = ANALYZE["inventories"]                               # type: ignore[misc]
    table = ANALYZE["throughput"][0]                                   # type: ignore[index]
    for key in ("schema", "sets", "inventories"):
        assert not schema.is_valid({k: v for k, v in ANALYZE.items() if k != key}), key
    bad_rows = [{k: v for k, v in ok.items() if k != key} for key in ("inventory", "name", "max_vlans", "metrics",
                                                                     "warnings")]
    bad_rows += [{"inventory": "x", "ok": False}, {k: v for k, v in refused.items() if k != "ok"},
                 {**ok, "metrics": {k: v for k, v in ok["metrics"].items() if k != "deadlock_free"}}]
    for row in bad_rows:
        assert not schema.is_valid({**ANALYZE, "inventories": [row]}), row
    for key in table["rows"][0]:
        row = {k: v for k, v in table["rows"][0].items() if k != key}
        assert not schema.is_valid({**ANALYZE, "throughput": [{**table, "rows": [row]}]}), key
    assert not schema.is_valid({**ANALYZE, "throughput": [{"rows": []}]})
    assert not schema.is_valid({**ANALYZE, "throughput": None})


FAILURE = {"kind": "pair", "failure": "sw1:sw2", "pairs_cut": 12, "hosts_lost": 0, "trees": 2, "links_added": 2,
           "unrepairable": 0, "max_link_load": 3, "link_load_lower_bound": 1.5}
WHATIF = {"schema": "vlanroute-whatif/1", "inventory": "inv.yaml", "sets": [], "name": "torus", "max_link_load": 2.5,
          "failures": [FAILURE, {**FAILURE, "kind": "switch", "failure": "sw3", "max_link_load": None}]}
RECORD = {"format": "vlanroute-repair/1", "plan": "torus",
          "failures": {"cables": ["sw1:1/g45"], "pairs": ["sw1:sw2"], "switches": []},
          "lost_capacity": [{"pair": "sw1:sw2", "cables": 2, "live": 0}], "broken_vlans": [2],
          "changes": [{"vlan": 2, "forced": True, "removed": [["sw1", "sw2"]], "added": [["sw1", "sw4"]]}],
          "affected_vlans": [2], "switches_touched": ["sw1", "sw4"], "hosts_lost": [], "links_added": 1,
          "extra_changes": 0, "max_link_load": 2, "link_load_lower_bound": 1.25, "deadlock_free": True,
          "deadlock_note": "", "full_replan": {"algorithm": "dor", "vlan_count": 7, "max_link_load": 2.5,
                                               "deadlock_free": True, "hosts_new_pvid": 196, "trees_changed": 6},
          "push_order": ["sw4", "sw1"], "push_order_loop_free": True, "down_cables": [["sw1", "1/g47", "sw2", "1/g47"]],
          "failover": [], "not_failed_over": []}
REPAIR = {"schema": "vlanroute-repair/1", "outdir": "out", "newdir": "out-repaired", "files": 30, "verified": True,
          "host_tables_unchanged": True, "warnings": [], "repair": RECORD}


@pytest.mark.parametrize("name", ["whatif", "repair"])
def test_whatif_and_repair_print_what_the_dicts_printed(name: str) -> None:
    from vlanroute.schemas.outputs import RepairDocument, WhatifDocument
    model, before = {"whatif": (WhatifDocument, WHATIF), "repair": (RepairDocument, REPAIR)}[name]
    payload = {k: v for k, v in before.items() if k != "schema"}
    assert _printed(model.model_validate(payload)) == json.dumps(before, indent=1)
    no_replan = {**payload, "repair": {**RECORD, "full_replan": None}} if name == "repair" else payload
    assert model.model_validate(no_replan).to_json() == {"schema": before["schema"], **no_replan}


def test_whatif_and_repair_schemas_still_refuse() -> None:
    # What the hand-written whatif.json and repair.json required, and wrong values.
    whatif, repair = V(schemas.load("whatif")), V(schemas.load("repair"))
    whatif.validate(WHATIF)
    repair.validate(REPAIR)
    for key in ("schema", "inventory", "sets", "name", "max_link_load", "failures"):
        assert not whatif.is_valid({k: v for k, v in WHATIF.items() if k != key}), key
    for key in FAILURE:
        assert not whatif.is_valid({**WHATIF, "failures": [{k: v for k, v in FAILURE.items() if k != key}]}), key
    for change in ({"kind": "cable"}, {"pairs_cut": -1}, {"max_link_load": "3"}):
        assert not whatif.is_valid({**WHATIF, "failures": [{**FAILURE, **change}]}), change
    for key in ("schema", "outdir", "newdir", "files", "verified", "host_tables_unchanged", "warnings", "repair"):
        assert not repair.is_valid({k: v for k, v in REPAIR.items() if k != key}), key
    for key in RECORD:
        without = {**REPAIR, "repair": {k: v for k, v in RECORD.items() if k != key}}
        # A repair.json written before `repair --failover` (no failover lists) still reads.
        assert repair.is_valid(without) == (key in ("failover", "not_failed_over")), key
    change = RECORD["changes"][0]                                        # type: ignore[index]
    for bad in ({"format": "vlanroute-repair/2"}, {"links_added": -1}, {"failures": {"cables": [], "pairs": []}},
                {"changes": [{**change, "added": [["sw1"]]}]}, {"changes": [{**change, "removed": [["a", "b", "c"]]}]},
                {"full_replan": {"algorithm": "dor"}}, {"lost_capacity": [{"pair": "a:b", "cables": 1}]}):
        assert not repair.is_valid({**REPAIR, "repair": {**RECORD, **bad}}), bad


CABLE = {"cable": "sw1:1/g45-sw2:1/g45", "kind": "inter-switch", "a": "sw1", "a_port": "1/g45", "b": "sw2",
         "b_port": "1/g45", "status": "swapped", "seen_a": "sw2 1/g46", "seen_b": "sw1 1/g45",
         "fixes": ["swap the cables at sw2 1/g45 and 1/g46"]}
HOST_CABLE = {"cable": "h1", "kind": "host", "a": "sw1", "a_port": "1/g1", "b": "h1", "b_port": "eth0",
              "status": "ok", "seen_a": "h1", "fixes": []}
CABLING = {"schema": "vlanroute-cabling-check/1", "ok": False, "cables": [CABLE, HOST_CABLE],
           "unexpected": [{"ends": ["sw1 1/g47", "sw3 1/g47"], "fix": "unplug sw1 1/g47", "returned": False}],
           "fixes": ["swap the cables at sw2 1/g45 and 1/g46", "unplug sw1 1/g47"], "not_read": {"sw4": "timed out"}}


def test_cabling_check_prints_what_the_dict_printed() -> None:
    # A host cable has no seen_b key at all (its far end is not read), not a null.
    from vlanroute.schemas.outputs import CablingCheckDocument
    payload = {k: v for k, v in CABLING.items() if k != "schema"}
    assert _printed(CablingCheckDocument.model_validate(payload)) == json.dumps(CABLING, indent=1)


def test_cabling_check_schema_still_refuses() -> None:
    schema = V(schemas.load("cabling-check"))
    schema.validate(CABLING)
    for key in ("schema", "ok", "cables", "unexpected", "fixes", "not_read"):
        assert not schema.is_valid({k: v for k, v in CABLING.items() if k != key}), key
    for key in HOST_CABLE:
        assert not schema.is_valid({**CABLING, "cables": [{k: v for k, v in HOST_CABLE.items() if k != key}]}), key
    for bad in ({**CABLE, "status": "broken"}, {**CABLE, "kind": "lag"}, {**CABLE, "seen_b": None},
                {**CABLE, "extra": 1}):
        assert not schema.is_valid({**CABLING, "cables": [bad]}), bad
    for bad_unexpected in ({"ends": ["sw1 1/g47"], "fix": "x", "returned": False}, {"ends": ["a", "b"]},
                           {"ends": ["a", "b"], "fix": "x"}, {"ends": ["a", "b"], "fix": "x", "returned": "yes"}):
        assert not schema.is_valid({**CABLING, "unexpected": [bad_unexpected]}), bad_unexpected


LAB_UP = {"schema": "vlanroute-lab/1", "action": "up", "plan": "ring", "pid": 123, "state_dir": "/tmp/lab",
          "switches": {"sw1": {"host": "127.0.0.1", "port": 2201, "platform": "powerconnect-6248"}},
          "environment": {"VLANROUTE_TARGETS": "/tmp/lab/targets.json"}}
LAB_DOWN = {"schema": "vlanroute-lab/1", "action": "down", "stopped": 8, "state_dir": "/tmp/lab"}
LAB_CABLE = {"schema": "vlanroute-lab/1", "action": "cable-down", "state_dir": "/tmp/lab",
             "cables": [{"a": "sw1", "a_port": "1/g45", "b": "sw2", "b_port": "1/g45"}], "ends_down": 2}


def test_lab_objects_print_what_the_dicts_printed() -> None:
    from vlanroute.schemas.outputs import LabCableDocument, LabDownDocument, LabUpDocument
    for model, before in ((LabUpDocument, LAB_UP), (LabDownDocument, LAB_DOWN), (LabCableDocument, LAB_CABLE)):
        payload = {k: v for k, v in before.items() if k not in ("schema", "action")}
        if before["action"] == "cable-down":
            payload["action"] = "cable-down"
        assert _printed(model.model_validate(payload)) == json.dumps(before, indent=1)


def test_lab_schema_still_refuses() -> None:
    # What the hand-written lab.json required of each action, and wrong values.
    schema = V(schemas.load("lab"))
    for good, required in ((LAB_UP, ["schema", "action", "state_dir", "plan", "pid", "switches", "environment"]),
                           (LAB_DOWN, ["schema", "action", "state_dir", "stopped"]),
                           (LAB_CABLE, ["schema", "action", "state_dir", "cables", "ends_down"])):
        schema.validate(good)
        for key in required:
            assert not schema.is_valid({k: v for k, v in good.items() if k != key}), (good["action"], key)
    for bad in ({**LAB_DOWN, "action": "sideways"}, {**LAB_DOWN, "stopped": -1},
                {**LAB_UP, "switches": {"sw1": {"host": "h", "port": 1}}}, {**LAB_CABLE, "cables": [{"a": "sw1"}]},
                {**LAB_CABLE, "action": "up"}):
        assert not schema.is_valid(bad), bad


IMPORT = {"schema": "vlanroute-import/1", "source": "hosts.ini", "groups": ["compute", "switches"],
          "hosts": {"list": [{"name": "n1", "switch": "sw1", "port": "1/g1", "mac": "00:11:22:33:44:55"},
                             {"name": "n2", "switch": "sw1", "interface": "eth1"}]},
          "switches": {"sw1": {"mgmt": "10.0.0.1"}}}


def test_import_prints_what_the_dict_printed() -> None:
    # A host prints only the keys its variables gave; no switch group, no switches key.
    from vlanroute.schemas.outputs import ImportDocument
    payload = {k: v for k, v in IMPORT.items() if k != "schema"}
    assert _printed(ImportDocument.model_validate(payload)) == json.dumps(IMPORT, indent=1)
    without = {k: v for k, v in payload.items() if k != "switches"}
    assert "switches" not in ImportDocument.model_validate(without).to_json()


def test_import_schema_still_refuses() -> None:
    schema = V(schemas.load("import"))
    schema.validate(IMPORT)
    for key in ("schema", "source", "groups", "hosts"):
        assert not schema.is_valid({k: v for k, v in IMPORT.items() if k != key}), key
    host = IMPORT["hosts"]["list"][0]                                      # type: ignore[index]
    for bad in ({"list": []}, {}, {"list": [{"name": "n1"}]}, {"list": [{**host, "mac": "00-11-22-33-44-55"}]},
                {"list": [{**host, "extra": "x"}]}, {"list": [{**host, "port": None}]}):
        assert not schema.is_valid({**IMPORT, "hosts": bad}), bad
    assert not schema.is_valid({**IMPORT, "switches": {"sw1": {}}})
    assert not schema.is_valid({**IMPORT, "switches": None})


DISCOVER = {"schema": "vlanroute-discover/1", "inventory": {
    "name": "site", "platform": "powerconnect-6248",
    "topology": {"kind": "custom", "switches": ["sw1", "sw2"],
                 "links": [{"a": "sw1", "b": "sw2", "ports": [["1/g45", "1/g45"]]}]},
    "hosts": {"list": [{"name": "n1", "switch": "sw1", "port": "1/g1"}]},
    "switches": {"sw1": {"mgmt": "127.0.0.1"}, "sw2": {"mgmt": "127.0.0.1", "ssh_port": 2202}}},
    "notes": [], "not_read": {}}


def test_discover_prints_what_the_dict_printed() -> None:
    # ssh_port only when not 22, hosts only when LLDP showed some: left out, not null.
    from vlanroute.schemas.outputs import DiscoverDocument
    payload = {k: v for k, v in DISCOVER.items() if k != "schema"}
    assert _printed(DiscoverDocument.model_validate(payload)) == json.dumps(DISCOVER, indent=1)
    inventory = {k: v for k, v in DISCOVER["inventory"].items() if k != "hosts"}     # type: ignore[attr-defined]
    assert "hosts" not in DiscoverDocument.model_validate({**payload, "inventory": inventory}).to_json()["inventory"]


def test_discover_schema_still_refuses() -> None:
    schema = V(schemas.load("discover"))
    schema.validate(DISCOVER)
    inventory: dict[str, Any] = DISCOVER["inventory"]                                 # type: ignore[assignment]
    for key in ("schema", "inventory", "notes", "not_read"):
        assert not schema.is_valid({k: v for k, v in DISCOVER.items() if k != key}), key
    for key in ("name", "topology", "switches"):
        assert not schema.is_valid({**DISCOVER, "inventory": {k: v for k, v in inventory.items() if k != key}}), key
    for bad in ({**inventory, "topology": {**inventory["topology"], "kind": "torus"}},
                {**inventory, "topology": {"kind": "custom", "switches": []}},
                {**inventory, "switches": {"sw1": {"ssh_port": 22}}},
                {**inventory, "switches": {"sw1": {"mgmt": "h", "ssh_port": None}}}):
        assert not schema.is_valid({**DISCOVER, "inventory": bad}), bad
