"""The plan document (vlanroute.bundle.document): validated once, the same way for every
command that reads plan.json, and serialised to the documented bytes."""

from __future__ import annotations

import copy
import json
import os
import shutil
from pathlib import Path

import click
import pytest

from vlanroute.bundle.document import plan_document
from vlanroute.cli import group, main
from vlanroute.errors import UserError
from vlanroute.plan.build import plan_from_file
from vlanroute.render.write import RenderOptions, render_to_dir

from push_support import set_ssh_env

INVENTORIES = Path(__file__).resolve().parent.parent / "inventories"


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("doc") / "out"
    render_to_dir(plan_from_file(INVENTORIES / "custom-lab.yaml").to_document(), out, RenderOptions(verify=False))
    return out


def _rename(mapping: dict, old: str, new: str) -> None:
    mapping[new] = mapping.pop(old)


# Each: how plan.json is edited, and the start of the message every command must give.
EDITS = {
    "switch ../x": (lambda d: _rename(d["switches"], "core1", "../x"),
                    "plan.json: switches: switch name '../x' is not allowed"),
    "switch ../../../x": (lambda d: _rename(d["switches"], "leaf3", "../../../x"),
                          "plan.json: switches: switch name '../../../x' is not allowed"),
    "host a/b": (lambda d: _rename(d["hosts"], "gpu01", "a/b"),
                 "plan.json: hosts: host name 'a/b' is not allowed"),
    "port with a space": (lambda d: _rename(d["switches"]["leaf2"]["ports"], "1/g10", "1/g1 0"),
                          "plan.json: switches.leaf2.ports: port name '1/g1 0' is not allowed"),
    "host switch ../x": (lambda d: d["hosts"]["gpu02"].__setitem__("switch", "../x"),
                         "plan.json: hosts.gpu02.switch: switch name '../x' is not allowed"),
    "interface with ;": (lambda d: d["hosts"]["gpu03"].__setitem__("interface", "eth0;reboot"),
                         "plan.json: hosts.gpu03.interface: interface name 'eth0;reboot' is not allowed"),
}
# Every command that takes an OUTDIR (`vlanroute --help`; draw, report, plan and analyze
# take an inventory and refuse a plan.json given as one). A state directory inside the
# checked tree shows that nothing is written there either.
COMMANDS = {
    "verify": ["verify"],
    "push": ["push", "--yes"],
    "push --dry-run": ["push", "--dry-run"],
    "push --resume": ["push", "--resume", "--yes", "--state-dir", "{state}"],
    "audit": ["audit"],
    "save": ["save", "--state-dir", "{state}"],
    "rollback": ["rollback", "--state-dir", "{state}"],
    "rollback --dry-run": ["rollback", "--dry-run", "--state-dir", "{state}"],
    "cabling check": ["cabling", "check"],
    "emulate": ["emulate"],
    "repair": ["repair", "--failed-switch", "sw1", "-o", "{state}/repaired"],
    "lab up": ["lab", "up", "--state-dir", "{state}"],
    # Refused when it reads plan.json, before it reads $NAUTOBOT_TOKEN or asks the server.
    "export nautobot": ["export", "nautobot", "--url", "http://127.0.0.1:1", "--location", "x", "--dry-run"],
    "watch": ["watch", "--once", "--state-dir", "{state}"],
}


def _tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("edit", sorted(EDITS))
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_unsafe_name_in_plan_json_is_refused_by_every_command(rendered, tmp_path, monkeypatch, capsys,
                                                              edit, command) -> None:
    set_ssh_env(monkeypatch)
    work = tmp_path / "a" / "b" / "c"
    out = work / "out"
    out.parent.mkdir(parents=True)
    shutil.copytree(rendered, out)
    doc = json.loads((out / "plan.json").read_text())
    change, message = EDITS[edit]
    change(doc)
    (out / "plan.json").write_text(json.dumps(doc, indent=1))
    state = tmp_path / "state"
    xdg = Path(os.environ["XDG_STATE_HOME"])     # conftest: the default state directory
    before = _tree(tmp_path), _tree(xdg)

    rc = main([*(a.format(state=state) for a in COMMANDS[command]), str(out)])
    err = capsys.readouterr().err
    assert rc == 2, err
    assert f"error: {out}/{message}" in err and "fix:" in err and "Traceback" not in err
    # nothing written: inside OUTDIR, beside it, in either state directory
    assert (_tree(tmp_path), _tree(xdg)) == before


def test_plan_document_round_trip_is_the_documented_json() -> None:
    plan = plan_from_file(INVENTORIES / "custom-lab.yaml")
    doc = plan.to_document()
    data = doc.to_json()
    assert plan.to_json() == data
    assert plan_document(copy.deepcopy(data)) == doc
    assert doc.to_json_text() == json.dumps(data, separators=(",", ":")) + "\n"
    assert "\n" not in doc.to_json_text()[:-1]              # format 2: no indentation
    assert list(data) == ["format", "name", "inventory", "topology", "routing", "settings", "vlans", "hosts",
                          "switches", "platforms", "cabling", "metrics", "warnings"]
    # Each port role keeps its own keys (docs/plan-format.md); a host port that follows the
    # rule (untagged in every routing VLAN, tagged in none) has no lists.
    ports = data["switches"]["core1"]["ports"]
    assert {tuple(p) for p in ports.values()} == {
        ("role", "host", "pvid"),
        ("role", "neighbor", "lag", "pvid", "untagged", "tagged")}
    # No per-host learning addresses: the host index, and the rule gives the address.
    assert {tuple(h) for h in data["hosts"].values()} == {("switch", "port", "vlan", "mac", "interface", "index")}
    assert sorted(h["index"] for h in data["hosts"].values()) == list(range(len(data["hosts"])))


def test_host_port_lists_follow_the_rule_and_anything_else_is_written_out() -> None:
    data = plan_from_file(INVENTORIES / "custom-lab.yaml").to_json()
    ids = sorted(v["id"] for v in data["vlans"])
    doc = plan_document(copy.deepcopy(data))
    host_ports = [p for sw in doc.switches.values() for p in sw.ports.values() if p.role == "host"]
    assert host_ports and all(p.untagged == ids and p.tagged == [] for p in host_ports)
    # a host port that is not an untagged member of every routing VLAN keeps its lists
    name, port = next((n, p) for n, p in data["switches"]["core1"]["ports"].items() if p["role"] == "host")
    port.update(untagged=ids[:1], tagged=ids[1:])
    doc = plan_document(data)
    assert doc.switches["core1"].ports[name].untagged == ids[:1]
    assert doc.to_json()["switches"]["core1"]["ports"][name] == {
        "role": "host", "host": port["host"], "pvid": port["pvid"], "untagged": ids[:1], "tagged": ids[1:]}


def test_format_1_is_refused_with_the_way_out() -> None:
    data = plan_from_file(INVENTORIES / "custom-lab.yaml").to_json()
    data["format"] = "vlanroute-plan/1"
    with pytest.raises(UserError, match="format vlanroute-plan/1 was written by an older vlanroute") as info:
        plan_document(data, "out/plan.json")
    assert info.value.field == "format" and "re-render with this version" in (info.value.fix or "")


def test_plan_json_text_takes_the_slow_path_for_what_json_dumps_writes_differently() -> None:
    data = plan_from_file(INVENTORIES / "seed-ring.yaml").to_json()
    data["warnings"] = ["naïve"]                          # json.dumps escapes non-ASCII
    data["metrics"]["mean_stretch"] = 1e-05               # json.dumps writes an exponent
    doc = plan_document(data)
    assert doc.to_json_text() == json.dumps(doc.to_json(), separators=(",", ":")) + "\n"
    assert "na\\u00efve" in doc.to_json_text()


def test_references_between_records_are_checked() -> None:
    data = plan_from_file(INVENTORIES / "custom-lab.yaml").to_json()
    bad = copy.deepcopy(data)
    bad["cabling"][0]["b"] = "nowhere"
    with pytest.raises(UserError, match=r"cabling\[0\]\.b: switch 'nowhere' is not in switches"):
        plan_document(bad)
    bad = copy.deepcopy(data)
    bad["vlans"][0]["links"].append(["leaf1", "leaf2"])     # no cable between them
    with pytest.raises(UserError, match="link leaf1-leaf2: leaf1 has no inter-switch port to leaf2"):
        plan_document(bad)
    bad = copy.deepcopy(data)
    bad["switches"]["core1"]["ssh_port"] = "22"             # strict: no strings for numbers
    with pytest.raises(UserError, match="switches.core1.ssh_port"):
        plan_document(bad)


def test_the_rule_a_refused_name_quotes_is_the_rule_applied() -> None:
    """The message quotes the rule; a 15-character NIC name (Linux's maximum) is accepted,
    so the rule must not say fewer."""
    data = plan_from_file(INVENTORIES / "custom-lab.yaml").to_json()
    data["hosts"]["gpu01"]["interface"] = "enp129s0f1np1.9"         # a dot: refused
    with pytest.raises(UserError, match=r"interface name 'enp129s0f1np1.9' is not allowed \(.*at most 15\)"):
        plan_document(copy.deepcopy(data))
    data["hosts"]["gpu01"]["interface"] = "enp129s0f1np1x9"         # 15 characters: accepted
    assert plan_document(data).hosts["gpu01"].interface == "enp129s0f1np1x9"


def _outdir_commands(cmd: click.Command = group, name: str = "") -> set[str]:
    """Every command of `vlanroute --help` (and of its subgroups) that takes an OUTDIR."""
    if isinstance(cmd, click.Group):
        ctx = click.Context(cmd)
        return {found for sub in cmd.list_commands(ctx)
                for found in _outdir_commands(cmd.get_command(ctx, sub), f"{name} {sub}".strip())}
    return {name} if any(isinstance(p, click.Argument) and p.name == "outdir" for p in cmd.params) else set()


def test_the_unsafe_name_test_covers_every_command_that_takes_an_outdir() -> None:
    """A new OUTDIR command must join COMMANDS above (and the inventory's pointer to them)."""
    found = _outdir_commands()
    assert found == {c.split(" --")[0] for c in COMMANDS}
    assert {"verify", "push", "save", "rollback", "cabling check", "lab up"} <= found


def test_a_plan_json_given_as_an_inventory_points_to_every_outdir_command(tmp_path, capsys) -> None:
    plan = tmp_path / "plan.json"
    plan.write_text(plan_from_file(INVENTORIES / "custom-lab.yaml").to_document().to_json_text())
    for command in ("plan", "draw", "report", "analyze"):
        args = {"draw": ["-o", str(tmp_path / "d")], "report": ["-o", str(tmp_path / "r.html")]}.get(command, [])
        assert main([command, str(plan), *args]) == 2
        err = " ".join(capsys.readouterr().err.split())
        assert "this is a rendered plan" in err
        assert [c for c in sorted(_outdir_commands()) if c not in err.split("fix:", 1)[1]] == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["plan.json"]


@pytest.mark.parametrize("name", ["lab..x", "x.", "a_b-c.d"])
def test_a_name_the_inventory_accepts_renders(tmp_path, capsys, name) -> None:
    """One name rule for the inventory, plan.json and the renderer's re-check: the renderer
    refused `..` inside a name that the inventory and plan.json accept, so `plan` passed and
    `render` failed its own verification (exit 1, "a valid inventory never produces them")."""
    out = tmp_path / "out"
    rc = main(["render", str(INVENTORIES / "custom-lab.yaml"), "--set", f"name={name}", "-o", str(out), "-q"])
    assert rc == 0, capsys.readouterr().err
    assert plan_document(json.loads((out / "plan.json").read_text())).name == name


def test_ports_sources_and_loops_are_checked_too() -> None:
    """What made verify, repair and report end in a KeyError (found by fuzzing the CLI): a
    cable on a port that is not the switch's port to its neighbour, a VLAN source that is not a
    switch; and a VLAN whose links close a loop, which no plan ever has."""
    data = plan_from_file(INVENTORIES / "custom-lab.yaml").to_json()
    bad = copy.deepcopy(data)
    bad["cabling"][0]["a_port"] = "x"
    with pytest.raises(UserError, match=r"cabling\[0\]\.a_port: \S+ x is not an inter-switch port to"):
        plan_document(bad)
    bad = copy.deepcopy(data)
    bad["vlans"][1]["sources"][0] = "x"
    with pytest.raises(UserError, match=r"vlans\[\d+\]\.sources: switch 'x' is not in switches"):
        plan_document(bad)
    bad = copy.deepcopy(data)
    host, h = next(iter(bad["hosts"].items()))
    next(v for v in bad["vlans"] if v["id"] == h["vlan"])["sources"].remove(h["switch"])
    with pytest.raises(UserError, match=rf"hosts\.{host}\.vlan: VLAN {h['vlan']} does not have {h['switch']} among"):
        plan_document(bad)
    bad = copy.deepcopy(data)
    vlan = bad["vlans"][0]
    tree = {frozenset(link) for link in vlan["links"]}
    cabled = {frozenset((c["a"], c["b"])) for c in bad["cabling"]}
    a, b = sorted(next(iter(sorted(cabled - tree, key=sorted))))
    vlan["links"].append([a, b])                         # cabled, so only the loop is wrong
    with pytest.raises(UserError, match=rf"vlans\[{vlan['id']}\]: link {a}-{b} closes a loop"):
        plan_document(bad)


def test_a_vlan_that_does_not_join_its_source_to_every_switch_with_hosts_is_refused() -> None:
    """A link deleted from a VLAN by hand (found by fuzzing: repair and report ended in a
    KeyError): each deletion is refused exactly when networkx says the source's part of the
    VLAN no longer holds every switch with hosts."""
    import networkx as nx
    data = plan_from_file(INVENTORIES / "custom-lab.yaml").to_json()
    with_hosts = {h["switch"] for h in data["hosts"].values()}
    refused = 0
    for i, vlan in enumerate(data["vlans"]):
        if not vlan["sources"]:
            continue
        for cut in vlan["links"]:
            bad = copy.deepcopy(data)
            bad["vlans"][i]["links"].remove(cut)
            g = nx.Graph([tuple(lk) for lk in bad["vlans"][i]["links"]])
            g.add_nodes_from(vlan["sources"])
            joined = (with_hosts | set(vlan["sources"])) <= nx.node_connected_component(g, vlan["sources"][0])
            if joined:
                plan_document(bad)
            else:
                refused += 1
                with pytest.raises(UserError, match=rf"vlans\[{vlan['id']}\]\.links: its links do not join its "
                                                    rf"source {vlan['sources'][0]} to "):
                    plan_document(bad)
    assert refused


def test_verify_names_a_cable_on_a_port_that_is_not_there(rendered: Path, tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    shutil.copytree(rendered, out)
    data = json.loads((out / "plan.json").read_text())
    data["cabling"][2]["a_port"] = "x"
    (out / "plan.json").write_text(json.dumps(data))
    assert main(["verify", str(out)]) != 0                # was a KeyError traceback
    assert "cabling[2].a_port" in capsys.readouterr().err


def test_a_plan_read_back_holds_one_object_per_switch_name(rendered: Path) -> None:
    """json.loads makes a new str per occurrence; the reader makes every switch name in the
    VLANs, hosts, cabling and ports the key's own object, so that the repair's and whatif's
    lookups match at once (bundle/document.py `_one_object_per_name`). Nothing else
    changes: the document is equal to one validated without it."""
    from vlanroute.bundle.document import PlanDocument
    from vlanroute.bundle.reader import read_plan
    doc = read_plan(rendered)
    key = {s: s for s in doc.switches}
    seen = [x for v in doc.vlans for x in (*v.sources, *v.switches, *(e for ln in v.links for e in ln))]
    seen += [h.switch for h in doc.hosts.values()] + [e for c in doc.cabling for e in (c.a, c.b)]
    seen += [p.neighbor for sw in doc.switches.values() for p in (*sw.ports.values(), *sw.lags.values())
             if getattr(p, "neighbor", None)]
    assert len(seen) > 50 and all(key[x] is x for x in seen)
    plain = PlanDocument.model_validate(json.loads((rendered / "plan.json").read_text()))
    assert plain == doc
    assert not all(key[x] is x for x in [e for v in plain.vlans for ln in v.links for e in ln])
