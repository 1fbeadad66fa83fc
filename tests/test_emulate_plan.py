"""What the emulation expects, from a hand-written 3-switch ring plan (no kernel needed),
the linux-bridge template, and the emulate command's user errors."""

from __future__ import annotations

from vlanroute.bundle.reader import read_plan

import csv
import json
import re
from pathlib import Path

import pytest

from emulate_support import render
from vlanroute.emulate import spec as emulate_plan
from vlanroute.cli import main
from vlanroute.errors import UserError

ROOT = Path(__file__).resolve().parent.parent
ALL = [101, 102, 103]


def _host_port(host: str, pvid: int) -> dict[str, object]:
    return {"role": "host", "host": host, "pvid": pvid, "untagged": ALL, "tagged": []}


def _isl(neighbor: str, tagged: list[int]) -> dict[str, object]:
    return {"role": "inter-switch", "neighbor": neighbor, "lag": None, "pvid": None,
            "untagged": [], "tagged": tagged}


# Ring a-b-c. VLAN 101 carries a's hosts over the star a-b, a-c; 102 is b's star; 103 c's.
RING3 = {
    "format": "vlanroute-plan/2", "name": "ring3",
    "vlans": [
        {"id": 101, "sources": ["a"], "switches": ["a", "b", "c"], "links": [["a", "b"], ["a", "c"]],
         "learning_subnet": "10.250.0.0/24"},
        {"id": 102, "sources": ["b"], "switches": ["a", "b", "c"], "links": [["a", "b"], ["b", "c"]],
         "learning_subnet": "10.250.1.0/24"},
        {"id": 103, "sources": ["c"], "switches": ["a", "b", "c"], "links": [["a", "c"], ["b", "c"]],
         "learning_subnet": "10.250.2.0/24"},
    ],
    "hosts": {
        "ha": {"switch": "a", "port": "p1", "vlan": 101, "mac": None, "interface": "eth0", "index": 0},
        "hb": {"switch": "b", "port": "p1", "vlan": 102, "mac": "00:1E:C9:00:00:02", "interface": "eth0", "index": 1},
        "hc": {"switch": "c", "port": "p1", "vlan": 103, "mac": None, "interface": "eth0", "index": 2},
    },
    "switches": {
        "a": {"platform": "linux-bridge", "ports": {"p1": _host_port("ha", 101), "p2": _isl("b", [101, 102]),
                                                    "p3": _isl("c", [101, 103])}, "lags": {}},
        "b": {"platform": "linux-bridge", "ports": {"p1": _host_port("hb", 102), "p2": _isl("a", [101, 102]),
                                                    "p3": _isl("c", [102, 103])}, "lags": {}},
        "c": {"platform": "linux-bridge", "ports": {"p1": _host_port("hc", 103), "p2": _isl("a", [101, 103]),
                                                    "p3": _isl("b", [102, 103])}, "lags": {}},
    },
    "cabling": [
        {"a": "a", "a_port": "p2", "b": "b", "b_port": "p2", "a_lag": None, "b_lag": None},
        {"a": "a", "a_port": "p3", "b": "c", "b_port": "p2", "a_lag": None, "b_lag": None},
        {"a": "b", "a_port": "p3", "b": "c", "b_port": "p3", "a_lag": None, "b_lag": None},
    ],
}


def write_outdir(root: Path, doc: dict[str, object]) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "plan.json").write_text(json.dumps(doc))
    with open(root / "cabling.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["a", "a_port", "b", "b_port", "a_lag", "b_lag"])
        for c in doc["cabling"]:  # type: ignore[attr-defined]
            w.writerow([c["a"], c["a_port"], c["b"], c["b_port"], c["a_lag"] or "", c["b_lag"] or ""])
    (root / "switches").mkdir(exist_ok=True)
    for n in doc["switches"]:  # type: ignore[attr-defined]
        (root / "switches" / f"{n}.cfg").write_text("#!/bin/sh\n")
    (root / "hosts").mkdir(exist_ok=True)
    for f in ("vlanroute-host", "hosts.tsv", "vlans.tsv"):
        (root / "hosts" / f).write_text("#!/bin/sh\n")
    return root


def test_ring3_learning_ports_follow_each_vlan_tree(tmp_path: Path) -> None:
    plan = emulate_plan.load(write_outdir(tmp_path / "out", RING3))
    fdb = plan.expected_fdb()
    hb, hc = plan.hosts["hb"], plan.hosts["hc"]
    assert hb.mac == "00:1e:c9:00:00:02"              # the plan's MAC, normalised
    assert plan.hosts["ha"].mac.startswith("02:")     # generated: locally administered
    # In VLAN 101 (a's star) b reaches c through a: c's MAC must sit on b's port to a.
    assert fdb[("b", 101, hc.mac)] == {"p2"}
    # In VLAN 102 (b's star) the cable b-c is used directly.
    assert fdb[("b", 102, hc.mac)] == {"p3"}
    assert fdb[("c", 103, hc.mac)] == {"p1"}           # own host port
    assert len(fdb) == 3 * 3 * 3                       # switches x VLANs x hosts


def test_ring3_traffic_crosses_only_tree_links(tmp_path: Path) -> None:
    plan = emulate_plan.load(write_outdir(tmp_path / "out", RING3))
    pairs = [("hb", "hc"), ("hc", "hb"), ("ha", "hc")]
    uplinks, host_tx, host_rx = plan.expected_tx(pairs, 2)
    # hb -> hc in VLAN 102: b-c direct. hc -> hb in VLAN 103: c-b direct.
    # ha -> hc in VLAN 101: a-c direct. Nothing crosses a-b.
    assert uplinks == {("a", "b"): 0, ("b", "a"): 0, ("a", "c"): 2, ("c", "a"): 0,
                       ("b", "c"): 2, ("c", "b"): 2}
    assert host_tx == {"ha": 0, "hb": 2, "hc": 4}
    assert host_rx == {"ha": 2, "hb": 2, "hc": 2}
    assert plan.path(101, "b", "c") == ["b", "a", "c"]


def test_the_vm_gets_exactly_the_spec_load_reads(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """run_in_vm loads the bundles on the host and the VM preloads them (spec.save_specs,
    spec.preload): the VM's spec must equal what load reads from the files."""
    outdir = write_outdir(tmp_path / "out", RING3)
    read = emulate_plan.load(outdir)
    emulate_plan.save_specs([outdir], tmp_path / "specs.pickle")
    monkeypatch.setattr(emulate_plan, "_PRELOADED", {})
    (outdir / "plan.json").write_text("{}")          # from now on only the preloaded spec loads
    with pytest.raises(UserError):
        emulate_plan.load(outdir)
    emulate_plan.preload(tmp_path / "specs.pickle")
    got = emulate_plan.load(outdir)
    assert got == read and got is not read
    assert got.expected_fdb() == read.expected_fdb() and len(got.learned) == 3 * 3 * 3
    assert got.plan_macs == {"ha": None, "hb": "00:1e:c9:00:00:02", "hc": None}
    assert got.interface_prefix == "vr"


def test_preload_refuses_a_file_that_holds_no_specs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import pickle
    monkeypatch.setattr(emulate_plan, "_PRELOADED", {})
    (tmp_path / "specs.pickle").write_bytes(pickle.dumps({tmp_path: "not a spec"}))
    with pytest.raises(UserError, match="not a file of emulation specs"):
        emulate_plan.preload(tmp_path / "specs.pickle")
    (tmp_path / "specs.pickle").write_text("garbage\n")
    with pytest.raises(UserError, match="not a file of emulation specs"):
        emulate_plan.preload(tmp_path / "specs.pickle")
    with pytest.raises(UserError, match="cannot read the emulation specs"):
        emulate_plan.preload(tmp_path / "missing.pickle")
    assert emulate_plan._PRELOADED == {}


def test_the_vm_imports_neither_pydantic_nor_the_switch_families() -> None:
    """Under QEMU TCG they took about 12 s of the guest's 18 s of imports (measured): the
    command the VM runs must not import them (the host loads the bundles, run_in_vm)."""
    import subprocess
    import sys
    code = ("import sys, vlanroute.commands.emulate, vlanroute.emulate.failure, vlanroute.emulate.relearn, "
            "vlanroute.emulate.traffic; "
            "print(sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'scipy', 'netmiko') "
            "or m.startswith(('vlanroute.drivers', 'vlanroute.bundle.document', 'vlanroute.render'))))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]", r.stdout


def test_load_rejects_other_platforms_and_mismatched_cabling(tmp_path: Path) -> None:
    doc = json.loads(json.dumps(RING3))
    doc["switches"]["a"]["platform"] = "powerconnect-6248"
    with pytest.raises(UserError, match="not on the linux-bridge platform"):
        emulate_plan.load(write_outdir(tmp_path / "pc", doc))
    out = write_outdir(tmp_path / "cab", RING3)
    (out / "cabling.csv").write_text("a,a_port,b,b_port,a_lag,b_lag\na,p2,b,p2,,\n")
    with pytest.raises(UserError, match="same cables"):
        emulate_plan.load(out)


def test_emulate_command_user_errors_have_no_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["emulate", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert "not a directory" in err and "Traceback" not in err
    (tmp_path / "empty").mkdir()
    assert main(["emulate", str(tmp_path / "empty")]) == 2
    assert "no plan.json" in capsys.readouterr().err


def test_linux_bridge_template_for_the_seed_ring(tmp_path: Path) -> None:
    out = render(ROOT / "inventories" / "seed-ring.yaml", tmp_path / "ring",
                 "hosts.count=null", "hosts.per_switch=2", "platform=linux-bridge",
                 "settings.aging_time=86400")
    doc = read_plan(out).model_dump()      # every port's lists, the rule's filled in
    text = (out / "switches" / "sw1.cfg").read_text()
    assert text.startswith("#!/bin/sh\n")
    assert "vlan_filtering 1 stp_state 0 ageing_time 8640000" in text    # centiseconds
    ports = doc["switches"]["sw1"]["ports"]
    lags = doc["switches"]["sw1"]["lags"]
    def added(dev: str, flags: str) -> set[int]:
        """The VLANs of `vlan add dev DEV vid V|A-B FLAGS` lines (iproute2 ranges A-B, A < B)."""
        got: set[int] = set()
        for a, b in re.findall(rf"^vlan add dev {re.escape(dev)} vid (\d+)(?:-(\d+))?{flags}$", text, re.M):
            assert not b or int(b) > int(a)
            got.update(range(int(a), int(b or a) + 1))
        return got

    for port, spec in ports.items():
        if spec["role"] == "host":
            assert f"vlan add dev {port} vid {spec['pvid']} pvid untagged" in text
            assert added(port, "(?: pvid)? untagged") == set(spec["untagged"])
            assert f"vlan del dev {port} vid 1\n" in text
        else:
            assert spec["role"] == "lag-member"
            assert f"link set {port} master bond{spec['lag']}" in text
    for lag_id, lag in lags.items():
        assert added(f"$LAG{lag_id}", "") == set(lag["tagged"])
        assert f"vlan del dev $LAG{lag_id} vid 1\n" in text
        assert "xmit_hash_policy layer3+4" in text
    # Loop-safe order: ports join down, VLANs are set, and only then does anything go up.
    assert text.index("bridge -batch") < text.index("link set p1 up")
    assert text.rstrip().endswith("link set br0 up\nEOF")
