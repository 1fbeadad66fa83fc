"""`vlanroute verify` on real `vlanroute render` output: clean examples, and mutations
of the rendered files that must each be caught with a precise message."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from vlanroute.bundle.manifest import write_manifest
from vlanroute.cli import main
from vlanroute.verify.configs import verify_outdir

ROOT = Path(__file__).resolve().parent.parent
INVENTORIES = ROOT / "inventories"
# Example inventories verified here; the others are too large for unit tests and are
# measured by bench/verify.py instead. Every example must be in exactly one of the sets.
SMALL = {"seed-torus", "seed-ring", "seed-tree", "seed-mesh", "seed-complete", "custom-lab",
         "seed-torus-arista", "seed-torus-os10", "seed-tree-1link", "seed-tree-6link", "seed-complete-1link"}
LARGE = {"hyper-crossbar-16x16"}


def render(inventory: Path, outdir: Path) -> Path:
    # --no-verify: the verification under test runs explicitly below.
    assert main(["render", str(inventory), "-o", str(outdir), "--no-verify"]) == 0
    return outdir


@pytest.fixture(scope="module")
def torus(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return render(INVENTORIES / "seed-torus.yaml", tmp_path_factory.mktemp("r") / "torus")


@pytest.fixture()
def copy(torus: Path, tmp_path: Path) -> Path:
    out = tmp_path / "out"
    shutil.copytree(torus, out)
    return out


def plan(outdir: Path) -> dict:
    return json.loads((outdir / "plan.json").read_text())


def vlan_text(ids: set[int]) -> str:
    return ",".join(str(v) for v in sorted(ids))


def edit_cfg(outdir: Path, switch: str, fn) -> None:  # type: ignore[no-untyped-def]
    path = outdir / "switches" / f"{switch}.cfg"
    path.write_text(fn(path.read_text()))


def append_block(outdir: Path, switch: str, block: str) -> None:
    """Add commands at the end of the config, before its final `end`."""
    def fn(text: str) -> str:
        lines = text.rstrip("\n").split("\n")
        assert lines[-1] == "end"
        return "\n".join(lines[:-1] + block.strip("\n").split("\n") + ["end"]) + "\n"
    edit_cfg(outdir, switch, fn)


def in_blocks(text: str, header: str, fn) -> str:  # type: ignore[no-untyped-def]
    """Apply fn(line) -> line | None to the lines of every block opened by `header`."""
    out, inside = [], False
    for line in text.split("\n"):
        if line.startswith("interface "):
            inside = line == header
        elif line == "exit":
            inside = False
        elif inside:
            new = fn(line)
            if new is None:
                continue
            line = new
        out.append(line)
    return "\n".join(out)


def lag_to(doc: dict, switch: str, neighbor: str) -> tuple[int, list[int]]:
    for lag_id, lag in doc["switches"][switch]["lags"].items():
        if lag["neighbor"] == neighbor:
            return int(lag_id), lag["tagged"]
    raise AssertionError(f"no LAG {switch}-{neighbor}")


def has(violations: list[str], pattern: str) -> bool:
    return any(re.search(pattern, v) for v in violations)


# --- clean ----------------------------------------------------------------------------------

def test_every_example_inventory_is_classified() -> None:
    assert {p.stem for p in INVENTORIES.glob("*.yaml")} == SMALL | LARGE


@pytest.mark.parametrize("name", sorted(SMALL))
def test_example_inventories_verify_clean(name: str, tmp_path: Path) -> None:
    out = render(INVENTORIES / f"{name}.yaml", tmp_path / name)
    report = verify_outdir(out)
    assert report.ok, report.violations[:5]
    n = len(plan(out)["hosts"])
    assert f"{n * (n - 1)} of {n * (n - 1)} ordered host pairs" in "\n".join(report.summary)
    # learned entries per switch: every host once per routing VLAN whose tree reaches it
    doc = plan(out)
    for sw, (learned, cap) in report.table_sizes.items():
        expect = sum(1 for v in doc["vlans"] if sw in v["switches"] for _ in doc["hosts"])
        assert learned == expect and learned <= cap


def test_render_runs_the_verification(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(INVENTORIES / "seed-ring.yaml"), "-o", str(tmp_path / "o")]) == 0
    assert "verified" in capsys.readouterr().out


# --- mutations ------------------------------------------------------------------------------

def test_routing_vlan_missing_from_one_lag(copy: Path) -> None:
    doc = plan(copy)
    neighbor = next(l["neighbor"] for l in doc["switches"]["sw1"]["lags"].values() if len(l["tagged"]) >= 2)
    lag, tagged = lag_to(doc, "sw1", neighbor)
    vid = max(tagged)
    append_block(copy, "sw1", f"interface port-channel {lag}\n"
                              f"switchport general allowed vlan remove {vid}\nexit")
    r = verify_outdir(copy)
    assert not r.ok
    assert (f"sw1 ch{lag} (LAG {lag} to {neighbor}): tagged member of VLAN "
            f"{vlan_text(set(tagged) - {vid})}, plan says {vlan_text(set(tagged))} "
            f"(missing VLAN {vid})") in r.violations
    # the far end still sends VLAN vid into the LAG, where ingress filtering drops it
    assert has(r.violations, rf"dropped at sw1 port ch{lag}: ingress filtering: port not a member of VLAN {vid}")
    # and hosts of VLAN vid on one side are never learned on the other: flooding
    assert has(r.violations, rf"-> \S+ \(VLAN {vid}\): flooded at \S+ in VLAN {vid}: destination not learned")


def test_vlan_1_left_on_inter_switch_ports(copy: Path) -> None:
    doc = plan(copy)

    def keep_vlan_1(line: str) -> str | None:
        m = re.fullmatch(r"switchport general allowed vlan remove (\S+)", line)
        if not m:
            return line
        ids = [x for x in m.group(1).split(",") if x != "1"]
        return f"switchport general allowed vlan remove {','.join(ids)}" if ids else None

    for sw, spec in doc["switches"].items():
        for lag_id in spec["lags"]:
            edit_cfg(copy, sw, lambda t, i=lag_id: in_blocks(t, f"interface port-channel {i}", keep_vlan_1))
    r = verify_outdir(copy)
    assert not r.ok
    lag, _ = lag_to(doc, "sw1", "sw2")
    assert has(r.violations, rf"^sw1 ch{lag} \(LAG {lag} to sw2\): untagged member of VLAN 1, "
                             r"plan says none \(extra VLAN 1\)$")
    # VLAN 1 is in no plan tree: the cycle is named, hop by hop
    assert has(r.violations, r"^VLAN 1 has a loop: sw\d ch\d - sw\d ch\d( / sw\d ch\d - sw\d ch\d)+$")
    assert not has(r.violations, r"^VLAN 10\d has a loop")


def test_wrong_pvid_on_one_host_port(copy: Path) -> None:
    doc = plan(copy)
    host = doc["hosts"]["node001"]
    wrong = next(v["id"] for v in doc["vlans"] if v["id"] != host["vlan"])
    edit_cfg(copy, host["switch"], lambda t: in_blocks(
        t, f"interface ethernet {host['port']}",
        lambda line: f"switchport general pvid {wrong}" if line.startswith("switchport general pvid") else line))
    r = verify_outdir(copy)
    assert not r.ok
    where = f"{host['switch']} port {host['port']} (host node001)"
    assert f"{where}: PVID {wrong}, plan says {host['vlan']}" in r.violations
    assert (f"host node001: untagged frames enter VLAN {wrong} at {host['switch']} port {host['port']}, "
            f"plan says VLAN {host['vlan']}") in r.violations
    # only node001's traffic is affected
    assert all("node001" in v or v.startswith("...") for v in r.violations)


def test_host_port_not_untagged_member_of_one_vlan(copy: Path) -> None:
    doc = plan(copy)
    host = doc["hosts"]["node001"]
    port_spec = doc["switches"][host["switch"]]["ports"][host["port"]]
    assert "untagged" not in port_spec            # the rule: untagged in every routing VLAN
    untagged = sorted(v["id"] for v in doc["vlans"])
    vid = next(v for v in untagged if v != host["vlan"])
    append_block(copy, host["switch"], f"interface ethernet {host['port']}\n"
                                       f"switchport general allowed vlan remove {vid}\nexit")
    r = verify_outdir(copy)
    assert not r.ok
    rest = set(untagged) - {vid}
    assert (f"{host['switch']} port {host['port']} (host node001): untagged member of VLAN "
            f"{vlan_text(rest)}, plan says {vlan_text(set(untagged))} (missing VLAN {vid})"
            ) in r.violations
    assert (f"host node001: learning broadcast tagged {vid} dropped at {host['switch']} port "
            f"{host['port']}: ingress filtering: port not a member of VLAN {vid}") in r.violations
    # senders in VLAN vid cannot reach node001: it was never learned in that VLAN
    assert has(r.violations, rf"-> node001 \(VLAN {vid}\): flooded at sw\d in VLAN {vid}: "
                             "destination not learned")


def test_extra_tagged_vlan_closes_a_loop(copy: Path) -> None:
    doc = plan(copy)
    # a LAG of sw1 and a VLAN whose tree reaches both ends but does not use this link
    for lag_id, lag in sorted(doc["switches"]["sw1"]["lags"].items()):  # noqa: B007  (used after the loop)
        nb = lag["neighbor"]
        extra = [v["id"] for v in doc["vlans"] if v["id"] not in lag["tagged"]
                 and {"sw1", nb} <= set(v["switches"])]
        if extra:
            break
    vid = extra[0]
    far_lag, _ = lag_to(doc, nb, "sw1")
    append_block(copy, "sw1", f"interface port-channel {lag_id}\n"
                              f"switchport general allowed vlan add {vid} tagged\nexit")
    append_block(copy, nb, f"interface port-channel {far_lag}\n"
                           f"switchport general allowed vlan add {vid} tagged\nexit")
    r = verify_outdir(copy)
    assert not r.ok
    assert has(r.violations, rf"^VLAN {vid} has a loop: .*; not in the plan's tree of VLAN {vid}: "
                             rf"(sw1 ch{lag_id} - {nb} ch{far_lag}|{nb} ch{far_lag} - sw1 ch{lag_id})$")
    assert has(r.violations, rf"learning broadcast tagged {vid} loops in VLAN {vid}: a copy returns to sw\d")
    assert has(r.violations, rf"^sw1 ch{lag_id} .*extra VLAN {vid}\)$")
    assert not has(r.violations, rf"^VLAN (?!{vid})\d+ has a loop")


def test_cable_moved_to_another_port(copy: Path) -> None:
    doc = plan(copy)
    lines = (copy / "cabling.csv").read_text().splitlines()
    a, a_port, b, b_port, a_lag, b_lag, kind, label = lines[1].split(",")
    used = set(doc["switches"][a]["ports"]) | set(doc["switches"][a]["reserved_ports"])
    free = next(f"1/g{i}" for i in range(48, 0, -1) if f"1/g{i}" not in used)
    lines[1] = ",".join([a, free, b, b_port, a_lag, b_lag, kind, label])
    (copy / "cabling.csv").write_text("\n".join(lines) + "\n")
    r = verify_outdir(copy)
    assert not r.ok
    assert (f"cabling.csv line 2: cable {a} {free} - {b} {b_port} is not in the plan; "
            f"plan.json has {a} {a_port} - {b} {b_port}") in r.violations
    assert f"cabling.csv: planned cable {a} {a_port} - {b} {b_port} is missing" in r.violations
    assert (f"cabling.csv line 2: {a} {free} is not in a LAG in switches/{a}.cfg, "
            f"the file says LAG {a_lag}") in r.violations
    assert has(r.violations, rf"^{b} ch{b_lag}: members are cabled to different far ends")


# --- the command ----------------------------------------------------------------------------

def test_cli_clean_and_failing(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(copy), "--tables"]) == 0
    text = capsys.readouterr().out
    assert text.rstrip().endswith(": OK")
    # seed torus: all 4 routing VLANs span all 8 switches, so each learns 225 x 4 entries
    assert "  sw8: 900 learned MAC entries of 8192" in text
    host = plan(copy)["hosts"]["node001"]
    append_block(copy, host["switch"], f"interface ethernet {host['port']}\nshutdown\nexit")
    assert main(["verify", str(copy)]) == 1     # ExitCode.FAILED_CHECK
    err = capsys.readouterr().err
    assert "verification failed" in err and f"{host['port']} (host node001): shut down" in err


def test_cli_user_mistakes_have_no_traceback(copy: Path, tmp_path: Path,
                                             capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["verify", str(tmp_path / "missing")]) == 2
    assert "is not a directory" in capsys.readouterr().err
    lines = (copy / "cabling.csv").read_text().splitlines()
    (copy / "cabling.csv").write_text("\n".join(lines + [lines[1]]) + "\n")    # a cable twice
    assert main(["verify", str(copy)]) == 2
    a, a_port = lines[1].split(",")[:2]
    assert (f"cabling.csv: line {len(lines) + 1}: {a} {a_port} is already cabled on line 2"
            in capsys.readouterr().err)
    (copy / "cabling.csv").unlink()
    assert main(["verify", str(copy)]) == 2
    err = capsys.readouterr().err
    assert "cabling.csv: cabling.csv not found" in err or "cabling.csv not found" in err
    assert "Traceback" not in err


def test_cli_names_file_and_line_of_a_bad_config(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    append_block(copy, "sw3", "ip routing")
    lineno = (copy / "switches" / "sw3.cfg").read_text().count("\n") - 1   # the line before `end`
    assert main(["verify", str(copy)]) == 2
    err = capsys.readouterr().err
    assert f"switches/sw3.cfg: line {lineno}: unsupported PowerConnect 62xx command: 'ip routing'" in err


# --- the other plan checks ---------------------------------------------------------------------

def test_lag_hash_and_unplanned_port_are_named(copy: Path) -> None:
    doc = plan(copy)
    used = set(doc["switches"]["sw2"]["ports"])
    free = next(f"1/g{i}" for i in range(1, 49) if f"1/g{i}" not in used)
    append_block(copy, "sw2", "interface port-channel 1\nhashing-mode 5\nexit\n"
                              f"interface ethernet {free}\nswitchport mode general\nexit")
    r = verify_outdir(copy)
    # the 6248 maps the plan's src-dst-ip-port hash to hashing-mode 6
    assert r.violations == ["sw2 ch1: LAG hash 5, plan says 6 (src-dst-ip-port)",
                            f"sw2 port {free}: not in the plan, but switches/sw2.cfg configures it"]


def test_reserved_port_touched(tmp_path: Path) -> None:
    out = render(INVENTORIES / "custom-lab.yaml", tmp_path / "lab")
    reserved = plan(out)["switches"]["core1"]["reserved_ports"]
    assert reserved == ["1/g1"]                      # as the inventory says
    append_block(out, "core1", "interface ethernet 1/g1\nspanning-tree disable\nexit")
    r = verify_outdir(out)
    assert r.violations == ["core1 port 1/g1: reserved, but switches/core1.cfg configures it"]


def test_hand_edited_plan_gets_a_user_error(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    doc = plan(copy)
    doc["hosts"]["node001"]["switch"] = "nope"
    (copy / "plan.json").write_text(json.dumps(doc))
    assert main(["verify", str(copy)]) == 2
    err = capsys.readouterr().err
    assert "plan.json: hosts.node001.switch: switch 'nope' is not in switches" in err


def test_host_missing_from_the_host_table_is_simulated(copy: Path) -> None:
    # The learning broadcasts are the ones the host program sends: one per VLAN of
    # hosts/vlans.tsv for each host of hosts/hosts.tsv. A host left out of the table sends
    # none, so no switch learns it in the VLANs of other sources: they flood towards it.
    doc = plan(copy)
    own = doc["hosts"]["node001"]["vlan"]
    table = copy / "hosts" / "hosts.tsv"
    table.write_text("".join(l for l in table.read_text().splitlines(keepends=True) if not l.startswith("node001\t")))
    r = verify_outdir(copy)
    assert r.counts == {"unicast": len(doc["hosts"]) - 1}      # every other host's frames to node001
    assert has(r.violations, rf"-> node001 \(VLAN {own}\): flooded at sw\d in VLAN {own}: destination not learned")
    assert all("-> node001 (VLAN" in v or v.startswith("...") for v in r.violations)


def test_vlan_missing_from_the_vlan_table_is_simulated(copy: Path) -> None:
    doc = plan(copy)
    vid = doc["vlans"][-1]["id"]
    table = copy / "hosts" / "vlans.tsv"
    table.write_text("".join(l for l in table.read_text().splitlines(keepends=True) if not l.startswith(f"{vid}\t")))
    r = verify_outdir(copy)
    assert has(r.violations, rf"\(VLAN {vid}\): flooded at sw\d in VLAN {vid}: destination not learned")


# --- the fast checks against the frame-by-frame reference ----------------------------------------

@pytest.mark.parametrize("mutation", ["none", "lag-missing-vlan", "loop-closing-vlan"])
def test_verify_matches_frame_by_frame_reference(mutation: str, tmp_path: Path) -> None:
    """verify_outdir's memoised answers == BridgeNetwork.send frame by frame, pair by pair,
    with the planned path computed separately (networkx on the plan's VLAN links)."""
    import networkx as nx

    from vlanroute.verify.simulate import BROADCAST
    from vlanroute.verify.configs import load_outdir

    out = tmp_path / "small"
    assert main(["render", str(INVENTORIES / "seed-torus.yaml"), "-o", str(out), "--no-verify",
                 "--set", "hosts={per_switch: 2}"]) == 0
    doc = plan(out)
    lags = doc["switches"]["sw1"]["lags"]
    if mutation == "lag-missing-vlan":
        lag_id, lag = next((i, l) for i, l in lags.items() if len(l["tagged"]) >= 2)
        append_block(out, "sw1", f"interface port-channel {lag_id}\n"
                                 f"switchport general allowed vlan remove {lag['tagged'][-1]}\nexit")
    elif mutation == "loop-closing-vlan":
        lag_id, lag = next((i, l) for i, l in sorted(lags.items()) if len(l["tagged"]) < len(doc["vlans"]))
        vid = next(v["id"] for v in doc["vlans"] if v["id"] not in lag["tagged"])
        far, _ = lag_to(doc, lag["neighbor"], "sw1")
        append_block(out, "sw1", f"interface port-channel {lag_id}\nswitchport general allowed vlan add {vid} tagged\nexit")
        append_block(out, lag["neighbor"], f"interface port-channel {far}\n"
                                           f"switchport general allowed vlan add {vid} tagged\nexit")
    report = verify_outdir(out)

    ld = load_outdir(out)
    net = ld.net
    for host in sorted(ld.sends):
        for tag in ld.sends[host]:
            net.send(host, BROADCAST, tag)
    sizes = {b: 0 for b in net.bridges}
    for (bridge, _vid), table in net.tables.items():
        sizes[bridge] += len(table)
    assert {sw: n for sw, (n, _) in report.table_sizes.items()} == sizes

    trees = {v["id"]: nx.Graph([tuple(link) for link in v["links"]]) for v in doc["vlans"]}
    good = bad = 0
    for a, ha in sorted(net.hosts.items()):
        for b, hb in sorted(net.hosts.items()):
            if a == b:
                continue
            t = net.send(a, hb.mac, learn=False)
            vid = doc["hosts"][a]["vlan"]
            want = [ha.bridge] if ha.bridge == hb.bridge else nx.shortest_path(trees[vid], ha.bridge, hb.bridge)
            clean = (not t.floods and not t.loops and not t.drops
                     and [(d.host, d.tag) for d in t.deliveries] == [(b, None)]
                     and [h[0] for h in t.hops] == want)
            good += clean
            bad += not clean
    n = len(net.hosts)
    assert good + bad == n * (n - 1)
    assert f"{good} of {n * (n - 1)} ordered host pairs" in report.summary[2]
    assert report.counts.get("unicast", 0) == bad
    assert (bad == 0) == (mutation == "none")


def test_inventory_derived_platform_verifies_from_the_outdir_alone(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "derived"
    assert main(["render", str(INVENTORIES / "seed-ring.yaml"), "-o", str(out), "--no-verify",
                 "--set", "platforms={pc-big: {base: powerconnect-6248, mac_capacity: 20000}}",
                 "--set", "platform=pc-big", "--set", "switches={}", "--set", "hosts={per_switch: 2}"]) == 0
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    text = capsys.readouterr().out
    # plan.json records the derived platform (base and limits): verify rebuilds it, no guessing.
    assert "is not built in" not in text
    # A plan.json without that record (an older render): the built-in of the family is used, and said.
    plan_path = out / "plan.json"
    doc = json.loads(plan_path.read_text())
    del doc["platforms"]
    plan_path.write_text(json.dumps(doc, indent=1))
    write_manifest(out)                     # as that older render would have listed it
    # The parse-back and simulation still run on it; but such a plan.json cannot be
    # rendered again to prove the files are exactly render's (issue 24): a violation.
    assert main(["verify", str(out)]) == 1
    captured = capsys.readouterr()
    text = captured.out
    assert "platform pc-big is not built in: checked as powerconnect-6248 with 48 ports and a MAC capacity of 20000" in text
    assert "plan.json: cannot be rendered again to compare the files line by line" in captured.err
    assert "1 bundle violations" in captured.err


# --- any planned fabric verifies ------------------------------------------------------------------

@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kind=st.sampled_from(["torus", "mesh", "ring", "complete", "hyper-crossbar"]),
       a=st.integers(2, 4), b=st.integers(1, 3), links=st.integers(1, 2), hosts=st.integers(1, 3),
       algorithm=st.sampled_from(["dor", "shortest", "updown"]))
def test_any_planned_fabric_verifies_clean(tmp_path: Path, kind: str, a: int, b: int, links: int,
                                           hosts: int, algorithm: str) -> None:
    """Planner, templates and verifier agree on every fabric the planner accepts."""
    import contextlib
    import io
    import uuid

    dims = [a + 1] if kind in ("ring", "complete") else [a, b]
    out = tmp_path / uuid.uuid4().hex
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        rc = main(["render", str(INVENTORIES / "seed-torus.yaml"), "-o", str(out), "--no-verify",
                   "--set", f"topology.kind={kind}", "--set", f"topology.dims={json.dumps(dims)}",
                   "--set", f"topology.links_per_pair={links}", "--set", f"hosts={{per_switch: {hosts}}}",
                   "--set", "switches={}", "--set", f"routing.algorithm={algorithm}"])
    assume(rc == 0)                # the planner refused this combination (its own tests cover why)
    report = verify_outdir(out)
    assert report.ok, report.violations[:5]
