"""`vlanroute emulate --json` and `emulate --traffic --json` are built by pydantic models
(vlanroute/schemas/outputs.py: EmulateDocument, EmulateTrafficDocument) whose schema files
are generated: the objects print what the plain dicts printed before (expected objects
written out here by hand), and each generated schema still refuses what the hand-written
one refused (git history: its required keys and types)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pydantic
import pytest

from vlanroute import schemas
from vlanroute.cli import main
from vlanroute.emulate.flowagent import GOODPUT
from vlanroute.emulate.run import Check, Report
from vlanroute.emulate.traffic import Measured, TrafficReport
from vlanroute.schemas.outputs import EmulateDocument, EmulateTrafficDocument

V = jsonschema.Draft202012Validator
INV = Path(__file__).resolve().parent.parent / "inventories"

EMULATE = {"schema": "vlanroute-emulate/1", "outdir": "out/lb", "plan": "lb", "kernel": "this host's kernel",
           "size": "8 switches, 16 hosts", "checks": [
               {"name": "no storm", "ok": True, "detail": "0 frames", "problems": []},
               {"name": "MAC learning (bridge fdb)", "ok": False, "detail": "1/2 entries",
                "problems": ["sw1 VLAN 101: h1 not learned"]}],
           "phases": {"build": 1.5, "learn": 2.0, "teardown": 0.25}, "storm_frames": 3,
           "teardown": "18 namespaces removed, none left", "teardown_clean": True, "aborted": "", "ok": False}


def _report() -> Report:
    return Report("out/lb", "lb", "this host's kernel", "8 switches, 16 hosts",
                  [Check("no storm", True, "0 frames"),
                   Check("MAC learning (bridge fdb)", False, "1/2 entries", ["sw1 VLAN 101: h1 not learned"])],
                  {"build": 1.5, "learn": 2.0, "teardown": 0.25}, storm_frames=3,
                  teardown="18 namespaces removed, none left", teardown_clean=True)


def test_the_emulation_report_prints_what_the_dict_printed() -> None:
    # The same keys in the same order as asdict(report) + "ok" did, the schema key first
    # (the --json-report file now has it too).
    data = _report().to_json()
    assert json.dumps(data, indent=1) == json.dumps(EMULATE, indent=1)
    V(schemas.load("emulate")).validate(data)


def test_emulate_schema_still_refuses() -> None:
    schema = V(schemas.load("emulate"))
    schema.validate(EMULATE)
    for key in EMULATE:
        assert not schema.is_valid({k: v for k, v in EMULATE.items() if k != key}), key
    check = EMULATE["checks"][0]                                                   # type: ignore[index]
    for bad in ({"storm_frames": -1}, {"phases": {"build": "1.5"}}, {"phases": {"build": -1.0}},
                {"ok": "yes"}, {"schema": "vlanroute-emulate/2"}, {"extra": 1},
                {"checks": [{k: v for k, v in check.items() if k != "problems"}]},
                {"checks": [{**check, "problems": [1]}]}, {"checks": [{**check, "extra": 1}]}):
        assert not schema.is_valid({**EMULATE, **bad}), bad
    with pytest.raises(pydantic.ValidationError):
        EmulateDocument.model_validate({**EMULATE, "storm_frames": -1})


def test_emulate_json_through_the_vm_is_read_back_through_the_model(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--kernel vm: the report file the VM wrote is printed through EmulateDocument (here a
    fake VM runner writes what the real one writes: the report with the VM's phases)."""
    out = tmp_path / "lb"
    inv = tmp_path / "lb.yaml"
    inv.write_text((INV / "seed-ring.yaml").read_text())
    assert main(["render", str(inv), "-o", str(out), "--set", "platform=linux-bridge", "-q"]) == 0
    capsys.readouterr()
    written = {**_report().to_json(), "outdir": str(out)}
    written["phases"] = {"vm boot": 20.5, **written["phases"], "vm total": 40.0}   # type: ignore[dict-item]

    def fake_run_in_vm(_outdir: Path, _options: object, _timeout: float, report_file: Path | None,
                       log: object) -> tuple[int, float]:
        assert report_file is not None
        report_file.write_text(json.dumps(written, indent=1) + "\n")
        return 1, 20.5
    monkeypatch.setattr("vlanroute.commands.emulate.run_in_vm", fake_run_in_vm)
    monkeypatch.setattr("vlanroute.emulate.vm.missing_tools", lambda: [])
    assert main(["emulate", str(out), "--kernel", "vm", "--json"]) == 1
    data = json.loads(capsys.readouterr().out)
    V(schemas.load("emulate")).validate(data)
    assert data == written and list(data)[0] == "schema"


TRAFFIC = {"schema": "vlanroute-emulate-traffic/1", "outdir": "out/ring", "rate_mbit": 2.0, "queue": "sfq",
           "goodput": GOODPUT, "notes": ["measured in the QEMU VM under KVM, 2 vCPUs"], "aborted": "",
           "rows": [{"pattern": "all-to-all", "fabric": "VLAN routing", "flows": 56, "predicted_mbit": 13.4,
                     "measured_mbit": 12.0, "slowest_predicted_mbit": 1.0, "slowest_measured_mbit": 0.9,
                     "max_mbit": 14.0, "tcp_mbit": 13.7, "tcp_slowest_mbit": 0.95,
                     "ratio": 0.8955, "tcp_ratio": 0.8759},        # 12.0 / 13.4 and 12.0 / 13.7, 4 places
                    {"pattern": "all-to-all", "fabric": "spanning tree", "flows": 56, "predicted_mbit": 12.1,
                     "measured_mbit": 0.0, "slowest_predicted_mbit": 1.0, "slowest_measured_mbit": 0.0,
                     "max_mbit": 0.0, "tcp_mbit": 0.0, "tcp_slowest_mbit": 0.0, "ratio": 0.0, "tcp_ratio": 0.0}]}


def _traffic() -> TrafficReport:
    report = TrafficReport("out/ring", 2.0, "sfq", notes=["measured in the QEMU VM under KVM, 2 vCPUs"])
    report.rows += [Measured("all-to-all", "VLAN routing", 56, 13.4, 12.0, 1.0, 0.9, 14.0, 13.7, 0.95),
                    Measured("all-to-all", "spanning tree", 56, 12.1, 0.0, 1.0, 0.0)]
    return report


def test_the_traffic_report_prints_what_the_dict_printed() -> None:
    # The same fields as the dict had (rows: Measured's fields, then the two ratios), schema first.
    data = _traffic().to_json()
    assert json.dumps(data, indent=1) == json.dumps(TRAFFIC, indent=1)
    V(schemas.load("emulate-traffic")).validate(data)


def test_emulate_traffic_schema_still_refuses() -> None:
    schema = V(schemas.load("emulate-traffic"))
    schema.validate(TRAFFIC)
    for key in ("schema", "outdir", "queue", "rate_mbit", "goodput", "notes", "aborted", "rows"):
        assert not schema.is_valid({k: v for k, v in TRAFFIC.items() if k != key}), key
    row: dict[str, Any] = TRAFFIC["rows"][0]                                         # type: ignore[index]
    for bad in ({"queue": "pie"}, {"rate_mbit": -1}, {"notes": [1]}, {"extra": 1},
                {"rows": [{**row, "fabric": "TRILL"}]}, {"rows": [{**row, "flows": -1}]},
                {"rows": [{**row, "measured_mbit": "12"}]},
                *({"rows": [{k: v for k, v in row.items() if k != key}]} for key in row)):
        assert not schema.is_valid({**TRAFFIC, **bad}), bad
    with pytest.raises(pydantic.ValidationError):
        EmulateTrafficDocument.model_validate({**TRAFFIC, "queue": "pie"})


def test_emulate_traffic_json_is_valid(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                       capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "lb"
    inv = tmp_path / "lb.yaml"
    inv.write_text((INV / "seed-ring.yaml").read_text())
    assert main(["render", str(inv), "-o", str(out), "--set", "platform=linux-bridge", "-q"]) == 0
    capsys.readouterr()
    monkeypatch.setattr("vlanroute.commands.emulate_traffic.run_traffic", lambda *a, **k: _traffic())
    monkeypatch.setattr("os.geteuid", lambda: 0)
    report = tmp_path / "traffic.json"
    assert main(["emulate", str(out), "--kernel", "host", "--traffic", "all-to-all", "--json",
                 "--json-report", str(report)]) == 0
    data = json.loads(capsys.readouterr().out)
    V(schemas.load("emulate-traffic")).validate(data)
    assert data == TRAFFIC and json.loads(report.read_text()) == TRAFFIC
