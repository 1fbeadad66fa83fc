"""`vlanroute cabling check`, push's cabling gate and the LLDP table reader.

The fake switches serve LLDP neighbour tables from a cabling file (vlanroute.lab.wiring),
so a test swaps two cables by editing a copy of cabling.csv."""

from __future__ import annotations

import csv
import json
from pathlib import Path
import re

import jsonschema
import pytest

from vlanroute import schemas
from push_support import build_cluster, run, set_ssh_env, wire_as_planned
from vlanroute.bundle.reader import Cable
from vlanroute.device.cabling import MISSING, NO_LLDP, OK, SWAPPED, check_cabling
from vlanroute.device.lldp import LldpTable
from vlanroute.drivers import FAMILIES
from vlanroute.drivers.family import LldpNeighbor

# Written by us in the layout of the OS6 captures (napalm-dellos6 N4032 6.2.0.5, dellemc.os6
# fixture): blank line, title, `Local`, header, dashes; a server NIC row (MAC as Port ID, no
# name), a switch row whose name drifts two columns right and is cut to 14 chars + "...".
OS6_SUMMARY = """
LLDP Remote Device Summary

Local
Interface RemID   Chassis ID          Port ID           System Name
--------- ------- ------------------- ----------------- -----------------
Te1/0/3   17      00:1E:C9:AA:00:03   00:1E:C9:AA:00:03
Te1/0/23  40      02:11:22:33:44:55   Te1/0/24            rack7-spine-nu...
Te1/0/24  41      02:11:22:33:44:55   Te1/0/23            leaf9

"""
# FASTPATH lists every port, a port without neighbour bare, a port once per neighbour.
FASTPATH_SUMMARY = """LLDP Remote Device Summary

Local
Interface RemID   Chassis ID          Port ID           System Name
--------- ------- ------------------- ----------------- -----------------
1/g1
1/g2      3       02:00:00:00:00:01   1/g9                sw2
1/g2      4       02:00:00:00:00:07   1/g9                sw7
"""
DETAIL = """
LLDP Remote Device Detail

Local Interface: Te1/0/23


Remote Identifier: 40
Chassis ID Subtype: MAC Address
Chassis ID: 02:11:22:33:44:55
Port ID Subtype: Interface Name
Port ID: Te1/0/24
System Name: rack7-spine-number-one
System Description:
Time to Live: 99 seconds
"""


def test_dell_lldp_summary_rows_and_detail_name() -> None:
    family = FAMILIES["dell-os6"]
    assert family.lldp_command == "show lldp remote-device all"
    rows = family.parse_lldp(OS6_SUMMARY)
    assert rows == [
        LldpNeighbor("Te1/0/3", "00:1E:C9:AA:00:03", "00:1E:C9:AA:00:03", ""),
        LldpNeighbor("Te1/0/23", "02:11:22:33:44:55", "Te1/0/24", "rack7-spine-nu..."),
        LldpNeighbor("Te1/0/24", "02:11:22:33:44:55", "Te1/0/23", "leaf9")]
    assert [r.truncated for r in rows] == [False, True, False]
    assert family.lldp_detail_command("Te1/0/23") == "show lldp remote-device detail Te1/0/23"
    assert family.parse_lldp_detail(DETAIL) == "rack7-spine-number-one"
    pc = FAMILIES["powerconnect-62xx"]
    assert [(r.local_port, r.system_name) for r in pc.parse_lldp(FASTPATH_SUMMARY)] == [
        ("1/g2", "sw2"), ("1/g2", "sw7")]
    assert FAMILIES["linux-bridge"].lldp_command is None


# --- the comparison, without switches --------------------------------------------------------

def _cable(a: str, pa: str, b: str, pb: str, label: str, kind: str = "inter-switch") -> Cable:
    return Cable(0, a, pa, b, pb, None, None, kind, label)


PLANNED = [_cable("s1", "p1", "s2", "p2", "LAB-A"), _cable("s3", "p3", "s4", "p4", "LAB-B"),
           _cable("s1", "p9", "h1", "eth0", "LAB-H", "host"), _cable("s2", "p9", "h2", "eth0", "LAB-I", "host")]
HOSTS = {"h1": "00:1e:c9:00:00:01", "h2": None}


def _tables(links: list[tuple[str, str, str, str]], hosts: list[tuple[str, str, str]] = (),
            unread: tuple[str, ...] = ()) -> dict[str, LldpTable]:
    rows: dict[str, list[LldpNeighbor]] = {s: [] for s in ("s1", "s2", "s3", "s4")}
    for a, pa, b, pb in links:
        rows[a].append(LldpNeighbor(pa, "02:00:00:00:00:00", pb, b))
        rows[b].append(LldpNeighbor(pb, "02:00:00:00:00:00", pa, a))
    for sw, port, mac_or_name in hosts:
        rows[sw].append(LldpNeighbor(port, mac_or_name, mac_or_name, "") if ":" in mac_or_name
                        else LldpNeighbor(port, "02:aa:00:00:00:01", "eth0", mac_or_name + ".example.org"))
    return {s: LldpTable(s, error="down") if s in unread else LldpTable(s, tuple(r)) for s, r in rows.items()}


def _check(tables: dict[str, LldpTable]):  # type: ignore[no-untyped-def]
    return check_cabling(PLANNED, tables, ["s1", "s2", "s3", "s4"], HOSTS)


def apply_fixes(links: set[frozenset[tuple[str, str]]], fixes: list[str]) -> set[frozenset[tuple[str, str]]]:
    """What a technician does with the fix list (docs/cabling.md): unplug every end that moves,
    then plug each into its new port; plug new cables, remove extra ones."""
    links = set(links)
    moves = []
    for fix in fixes:
        if m := re.match(r"swap the plugs in (\S+) (\S+) and (\S+) (\S+)", fix):
            moves += [((m[1], m[2]), (m[3], m[4])), ((m[3], m[4]), (m[1], m[2]))]
        elif m := re.match(r"move the cable on (\S+) (\S+) to (\S+) (\S+)", fix):
            moves.append(((m[1], m[2]), (m[3], m[4])))
    unplugged = []
    for src, dst in moves:
        (cable,) = [c for c in links if src in c]
        links.remove(cable)
        unplugged.append((cable - {src}, dst))
    for rest, dst in unplugged:
        assert not any(dst in c for c in links), f"{dst} is still taken"
        links.add(frozenset({dst, *rest}))
    for fix in fixes:
        if fix.startswith(("swap ", "move ")):
            continue
        elif m := re.match(r"connect (\S+) (\S+) to (\S+) (\S+)", fix):
            links.add(frozenset({(m[1], m[2]), (m[3], m[4])}))
        elif m := re.match(r"remove the cable between (\S+) (\S+) and (\S+) (\S+)", fix):
            links.remove(frozenset({(m[1], m[2]), (m[3], m[4])}))
        else:
            raise AssertionError(f"fix not understood: {fix}")
    return links


def test_two_swapped_cables_name_both_and_the_moves_restore_the_plan() -> None:
    seen = [("s1", "p1", "s4", "p4"), ("s3", "p3", "s2", "p2")]
    report = _check(_tables(seen, [("s1", "p9", "00:1E:C9:00:00:01")]))
    status = {c.label: c for c in report.cables}
    assert status["LAB-A"].status == status["LAB-B"].status == SWAPPED
    assert status["LAB-A"].seen_a == "s4 p4" and status["LAB-B"].seen_a == "s2 p2"
    assert status["LAB-H"].status == OK                 # the host's MAC, lldpd's default Port ID
    assert status["LAB-I"].status == NO_LLDP and not report.ok
    assert len(report.fixes) == 1 and report.fixes[0].startswith("swap the plugs in ")
    assert "LAB-A" in report.fixes[0] and "LAB-B" in report.fixes[0]
    after = apply_fixes({frozenset({(a, pa), (b, pb)}) for a, pa, b, pb in seen}, report.fixes)
    assert after == {frozenset({("s1", "p1"), ("s2", "p2")}), frozenset({("s3", "p3"), ("s4", "p4")})}


def test_two_plugs_swapped_on_one_switch_are_swapped_back_there() -> None:
    """s1's two cables (to s2 and to s4) in each other's port: the fix is on s1, where the
    mistake was, not a swap of far ends between s2 and s4 (same cables, two other racks)."""
    planned = [_cable("s1", "p1", "s4", "p4", "LAB-A"), _cable("s1", "p3", "s2", "p2", "LAB-B")]
    seen = [("s1", "p1", "s2", "p2"), ("s1", "p3", "s4", "p4")]
    report = check_cabling(planned, _tables(seen), ["s1", "s2", "s3", "s4"], {})
    assert {c.label: c.status for c in report.cables} == {"LAB-A": SWAPPED, "LAB-B": SWAPPED}
    assert report.fixes == ["swap the plugs in s1 p1 and s1 p3 (cables LAB-A, LAB-B)"]
    after = apply_fixes({frozenset({(a, pa), (b, pb)}) for a, pa, b, pb in seen}, report.fixes)
    assert after == {frozenset({("s1", "p1"), ("s4", "p4")}), frozenset({("s1", "p3"), ("s2", "p2")})}


def test_missing_misplugged_and_unexpected_cables() -> None:
    # LAB-A's far end is in s2 p7 instead of p2; LAB-B is not there; an extra s3-s4 cable.
    seen = [("s1", "p1", "s2", "p7"), ("s3", "p5", "s4", "p5")]
    report = _check(_tables(seen, [("s2", "p9", "h2")]))
    status = {c.label: c.status for c in report.cables}
    assert status == {"LAB-A": SWAPPED, "LAB-B": MISSING, "LAB-H": NO_LLDP, "LAB-I": OK}
    fixes = report.fixes + [u.fix for u in report.unexpected]
    assert "move the cable on s2 p7 to s2 p2 (cable LAB-A)" in fixes
    assert "connect s3 p3 to s4 p4 (cable LAB-B)" in fixes
    assert [u.ends for u in report.unexpected] == [("s3 p5", "s4 p5")]
    after = apply_fixes({frozenset({(a, pa), (b, pb)}) for a, pa, b, pb in seen}, fixes)
    assert after == {frozenset({("s1", "p1"), ("s2", "p2")}), frozenset({("s3", "p3"), ("s4", "p4")})}


def test_one_side_is_enough_and_an_unread_pair_is_unknown() -> None:
    report = _check(_tables([("s1", "p1", "s2", "p2")], unread=("s2", "s3", "s4")))
    status = {c.label: c.status for c in report.cables}
    assert status["LAB-A"] == OK and status["LAB-B"] == "unknown"
    assert set(report.errors) == {"s2", "s3", "s4"} and not report.ok


def test_a_host_on_the_wrong_port_is_moved_back() -> None:
    seen = [("s1", "p1", "s2", "p2"), ("s3", "p3", "s4", "p4")]
    report = _check(_tables(seen, [("s1", "p8", "00:1e:c9:00:00:01")]))
    status = {c.label: c.status for c in report.cables}
    assert status["LAB-H"] == SWAPPED and status["LAB-A"] == status["LAB-B"] == OK
    assert report.fixes == ["move the cable on s1 p8 to s1 p9 (cable LAB-H)"]
    assert not report.inter_switch_problems()          # push does not refuse for a host cable


def test_two_hosts_swapped_on_a_switch_are_one_swap_of_plugs() -> None:
    """Hosts h1 and h2 (planned on s1 p8 and s1 p9) in each other's port: one swap at the
    switch, not two 'unplug ... and connect ...' lines."""
    hosts = [_cable("s1", "p8", "h1", "eth0", "LAB-H", "host"), _cable("s1", "p9", "h2", "eth0", "LAB-I", "host")]
    report = check_cabling(PLANNED[:2] + hosts, _tables([("s1", "p1", "s2", "p2"), ("s3", "p3", "s4", "p4")],
                                                       [("s1", "p8", "h2"), ("s1", "p9", "h1")]),
                           ["s1", "s2", "s3", "s4"], {"h1": None, "h2": None})
    assert {c.label: c.status for c in report.cables if c.label in ("LAB-H", "LAB-I")} == \
        {"LAB-H": SWAPPED, "LAB-I": SWAPPED}
    # the labels name the plugs in the order of the ports: s1 p8 holds h2's cable (LAB-I)
    assert report.fixes == ["swap the plugs in s1 p8 and s1 p9 (cables LAB-I, LAB-H)"]
    assert not report.inter_switch_problems()


# --- on fake switches ---------------------------------------------------------------------------

def _swap_two_inter_switch_cables(outdir: Path, tmp: Path, lag_members: bool = False
                                  ) -> tuple[Path, list[dict[str, str]]]:
    """A copy of cabling.csv in which the far ends (b, b_port) of two inter-switch cables
    between four different switches are exchanged (LAG members too if `lag_members`: on a
    fabric whose every link is a LAG)."""
    with open(outdir / "cabling.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    isl = [r for r in rows if r["kind"] == "inter-switch" and (lag_members or not r["a_lag"])]
    first = isl[0]
    second = next(r for r in isl if not {r["a"], r["b"]} & {first["a"], first["b"]})
    first["b"], second["b"] = second["b"], first["b"]
    first["b_port"], second["b_port"] = second["b_port"], first["b_port"]
    path = tmp / "swapped.csv"
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    return path, [first, second]


def test_cabling_check_and_push_on_fake_switches(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    out = str(cluster.outdir)
    known = ["--known-hosts", str(cluster.known_hosts)]
    rc, text, err = run(capsys, "cabling", "check", out, *known)
    assert rc == 0 and "cabling: OK" in text, text + err
    assert "7 of 7 inter-switch cables ok" in text and "host cables: 5 ok" in text

    swapped, (first, second) = _swap_two_inter_switch_cables(cluster.outdir, tmp_path)
    wire_as_planned(farm, cluster.outdir, swapped)
    rc, text, err = run(capsys, "cabling", "check", out, *known)
    flat = " ".join(text.replace("│", " ").split())
    assert rc == 1 and "cabling: FAILED" in flat, text + err
    for row in (first, second):
        assert row["cable"] in flat and f"{row['a']} {row['a_port']}" in flat
    assert "5 of 7 inter-switch cables ok" in flat

    rc, text, err = run(capsys, "cabling", "check", out, *known, "--json")
    doc = json.loads(text)
    assert rc == 1 and list(doc)[0] == "schema" and doc["schema"] == "vlanroute-cabling-check/1"
    jsonschema.validate(doc, schemas.load("cabling-check"), cls=jsonschema.Draft202012Validator)
    bad = {c["cable"] for c in doc["cables"] if c["status"] != "ok"}
    assert bad == {first["cable"], second["cable"]}
    # The technician's moves turn the swapped cabling back into the planned one.
    now = {frozenset({(r["a"], r["a_port"]), (r["b"], r["b_port"])})
           for r in csv.DictReader(swapped.open()) if r["kind"] == "inter-switch"}
    planned = {frozenset({(r["a"], r["a_port"]), (r["b"], r["b_port"])})
               for r in csv.DictReader((cluster.outdir / "cabling.csv").open()) if r["kind"] == "inter-switch"}
    assert now != planned and apply_fixes(now, doc["fixes"]) == planned

    before = {n: sw.running_config() for n, sw in farm.switches.items()}
    rc, text, err = run(capsys, "push", out, *known, "--yes")
    assert rc == 1 and "push refused before any change" in err, text + err
    assert first["cable"] in err and second["cable"] in err
    assert {n: sw.running_config() for n, sw in farm.switches.items()} == before
    assert all(sw.config_commands == 0 and not sw.saved for sw in farm.switches.values())

    rc, text, err = run(capsys, "push", out, *known, "--yes", "--skip-cabling-check", "--switch", "leaf1")
    assert "WARNING: --skip-cabling-check" in err and rc == 0, text + err
    assert farm.switches["leaf1"].config_commands > 0


def test_push_refuses_cables_that_neither_end_could_read_once_every_switch_logged_in(
        farm, tmp_path, monkeypatch, capsys):
    """Two cabled neighbours that log in fine but whose LLDP table cannot be read (here the
    command is refused): their cables were never checked, so push changes nothing."""
    from vlanroute.lab import Faults

    set_ssh_env(monkeypatch)
    no_lldp = {name: Faults(lacks=r"^show lldp") for name in ("core1", "core2")}
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml", no_lldp)
    between = [r for r in csv.DictReader((cluster.outdir / "cabling.csv").open())
               if r["kind"] == "inter-switch" and {r["a"], r["b"]} == {"core1", "core2"}]
    assert between
    known = ["--known-hosts", str(cluster.known_hosts)]
    before = {n: sw.running_config() for n, sw in farm.switches.items()}
    rc, text, err = run(capsys, "push", str(cluster.outdir), *known, "--yes")
    assert rc == 1 and "push refused before any change" in err, text + err
    assert f"{len(between)} inter-switch cable(s) could not be checked" in err
    assert all(r["cable"] in err for r in between)
    assert {n: sw.running_config() for n, sw in farm.switches.items()} == before
    assert all(sw.config_commands == 0 and not sw.saved for sw in farm.switches.values())
    assert not list((cluster.state / "pushes").glob("*.jsonl"))

    rc, text, err = run(capsys, "push", str(cluster.outdir), *known, "--dry-run")
    assert rc == 0 and f"{len(between)} NOT checked" in err, text + err
    # A switch whose own cables were all seen from the other end may still be pushed alone.
    rc, text, err = run(capsys, "push", str(cluster.outdir), *known, "--yes", "--switch", "leaf1")
    assert rc == 0, text + err


def test_lab_serves_lldp_of_a_cabling_file(farm, tmp_path, monkeypatch, capsys):
    """The fake switch prints the cables it was given in the Dell layout, and vlanroute's
    own reader reads them back: a host row as lldpd sends it, a switch row with its port."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    sw = farm.switches["leaf2"]
    cli = sw.interpreter()
    cli.mode, cli.paging = "priv", False
    text = cli.execute("show lldp remote-device all").output
    rows = {r.local_port: r for r in FAMILIES["powerconnect-62xx"].parse_lldp(text)}
    assert rows["1/g10"].system_name == "gpu03" and rows["1/g10"].port_id == "00:1E:C9:00:00:03"
    cables = [r for r in csv.DictReader((cluster.outdir / "cabling.csv").open())
              if r["kind"] == "inter-switch" and "leaf2" in (r["a"], r["b"])]
    assert cables
    for r in cables:
        here, there = (("a", "b") if r["a"] == "leaf2" else ("b", "a"))
        assert rows[r[f"{here}_port"]].system_name == r[there]
        assert rows[r[f"{here}_port"]].port_id == r[f"{there}_port"]


def test_members_of_one_lag_cabled_in_another_order_are_ok() -> None:
    lag = [Cable(0, "s1", "p1", "s2", "p1", 1, 4, "inter-switch", "L1"),
           Cable(0, "s1", "p2", "s2", "p2", 1, 4, "inter-switch", "L2"),
           Cable(0, "s3", "p3", "s4", "p4", None, None, "inter-switch", "X")]
    crossed = _tables([("s1", "p1", "s2", "p2"), ("s1", "p2", "s2", "p1"), ("s3", "p3", "s4", "p4")])
    report = check_cabling(lag, crossed, ["s1", "s2", "s3", "s4"], {})
    assert report.ok and {c.status for c in report.cables} == {OK}
    # ... but not a member cabled to a port outside the LAG.
    wrong = _tables([("s1", "p1", "s2", "p2"), ("s1", "p2", "s2", "p9"), ("s3", "p3", "s4", "p4")])
    report = check_cabling(lag, wrong, ["s1", "s2", "s3", "s4"], {})
    assert {c.label: c.status for c in report.cables} == {"L1": SWAPPED, "L2": SWAPPED, "X": OK}


def _cable_set(plan: dict) -> set[frozenset[tuple[str, str]]]:
    return {frozenset({(c["a"], c["a_port"]), (c["b"], c["b_port"])}) for c in plan["cabling"]}


def test_discover_builds_a_fragment_that_plans_into_the_same_topology(farm, tmp_path, monkeypatch, capsys):
    from vlanroute.plan.build import plan_from_file

    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    targets = tmp_path / "targets.json"
    targets.write_text(json.dumps({"format": "vlanroute-targets/1", "switches": {
        n: {"host": sw.host, "port": sw.port} for n, sw in farm.switches.items()}}))
    frag = tmp_path / "discovered.yaml"
    rc, text, err = run(capsys, "discover", "--targets", str(targets), "--known-hosts",
                        str(cluster.known_hosts), "-o", str(frag))
    assert rc == 0, text + err
    body = frag.read_text()
    assert body.startswith("# Discovered by `vlanroute discover`") and "kind: custom" in body
    again = plan_from_file(frag).to_json()
    assert sorted(again["switches"]) == sorted(cluster.plan["switches"])
    assert _cable_set(again) == _cable_set(cluster.plan)
    lags = lambda plan: {frozenset((c["a"], c["b"])) for c in plan["cabling"] if c["a_lag"]}  # noqa: E731
    assert lags(again) == lags(cluster.plan) == {frozenset(("core1", "core2"))}
    assert {h: (d["switch"], d["port"], d["mac"]) for h, d in again["hosts"].items()} == \
        {h: (d["switch"], d["port"], d["mac"]) for h, d in cluster.plan["hosts"].items()}
    # The same as JSON, for scripts.
    rc, text, err = run(capsys, "discover", "--targets", str(targets), "--known-hosts",
                        str(cluster.known_hosts), "--json")
    doc = json.loads(text)
    assert rc == 0 and list(doc)[0] == "schema" and doc["schema"] == "vlanroute-discover/1"
    jsonschema.validate(doc, schemas.load("discover"), cls=jsonschema.Draft202012Validator)
    assert doc["inventory"]["topology"]["kind"] == "custom"


def test_lab_daemon_serves_the_given_cabling_file(tmp_path, monkeypatch, capsys):
    """`vlanroute lab up --cabling FILE` (the daemon's start): the switches' LLDP tables show
    that file's cables, so `cabling check` through the lab's target map finds the swap."""
    from vlanroute.lab.daemon import start
    from vlanroute.lab.statedir import StateDir
    from vlanroute.plan.build import plan_from_file
    from vlanroute.render.write import RenderOptions, render_to_dir
    from push_support import REPO

    set_ssh_env(monkeypatch)
    outdir = tmp_path / "out"
    render_to_dir(plan_from_file(REPO / "inventories" / "custom-lab.yaml").to_document(), outdir,
                  RenderOptions(verify=False))
    swapped, (first, second) = _swap_two_inter_switch_cables(outdir, tmp_path)
    state = StateDir(tmp_path / "state")
    farm = start(outdir, state, "netops", "Pw-7f3c9e1a-do-not-print", None, cabling=swapped)
    try:
        rc, text, err = run(capsys, "cabling", "check", str(outdir), "--json",
                            "--targets", str(state.path / "targets.json"),
                            "--known-hosts", str(state.path / "known_hosts"))
        doc = json.loads(text)
        assert rc == 1 and {c["cable"] for c in doc["cables"] if c["status"] != "ok"} == \
            {first["cable"], second["cable"]}, text + err
    finally:
        farm.close()


# --- Arista EOS and Dell OS10 fabrics -----------------------------------------------------------

TRUNK_FABRICS = {"arista": ("seed-torus-arista.yaml", "arista-7050sx-64"),
                 "os10": ("seed-torus-os10.yaml", "dell-s5248f-on")}


def _without_one_inter_switch_cable(outdir: Path, tmp: Path) -> tuple[Path, dict[str, str]]:
    """A copy of cabling.csv without its first inter-switch row: that cable is not plugged."""
    with open(outdir / "cabling.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    gone = next(r for r in rows if r["kind"] == "inter-switch")
    path = tmp / "missing.csv"
    with open(path, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(r for r in rows if r is not gone)
    return path, gone


@pytest.mark.parametrize("kind", sorted(TRUNK_FABRICS))
def test_cabling_check_on_eos_and_os10_fake_switches(kind, farm, tmp_path, monkeypatch, capsys):
    """The fake EOS / OS10 switches print their wired cables in their own layout (`show lldp
    neighbors`) and the check reads every switch: ok, a swapped pair, a missing cable."""
    from vlanroute.model.platforms import PLATFORMS

    set_ssh_env(monkeypatch)
    inventory, platform = TRUNK_FABRICS[kind]
    cluster = build_cluster(farm, tmp_path, inventory, platform=PLATFORMS[platform])
    out = str(cluster.outdir)
    known = ["--known-hosts", str(cluster.known_hosts)]
    rows = list(csv.DictReader((cluster.outdir / "cabling.csv").open()))
    isl = sum(r["kind"] == "inter-switch" for r in rows)
    hosts = sum(r["kind"] == "host" for r in rows)
    assert isl and hosts

    rc, text, err = run(capsys, "cabling", "check", out, *known, "--json")
    doc = json.loads(text)
    jsonschema.validate(doc, schemas.load("cabling-check"), cls=jsonschema.Draft202012Validator)
    assert rc == 0 and doc["ok"] and not doc["not_read"], text + err
    assert len(doc["cables"]) == isl + hosts and {c["status"] for c in doc["cables"]} == {"ok"}

    swapped, (first, second) = _swap_two_inter_switch_cables(cluster.outdir, tmp_path, lag_members=True)
    wire_as_planned(farm, cluster.outdir, swapped)
    rc, text, err = run(capsys, "cabling", "check", out, *known, "--json")
    doc = json.loads(text)
    assert rc == 1 and not doc["not_read"], text + err
    assert {c["cable"]: c["status"] for c in doc["cables"] if c["status"] != "ok"} == \
        {first["cable"]: SWAPPED, second["cable"]: SWAPPED}
    now = {frozenset({(r["a"], r["a_port"]), (r["b"], r["b_port"])})
           for r in csv.DictReader(swapped.open()) if r["kind"] == "inter-switch"}
    planned = {frozenset({(r["a"], r["a_port"]), (r["b"], r["b_port"])})
               for r in rows if r["kind"] == "inter-switch"}
    assert now != planned and apply_fixes(now, doc["fixes"]) == planned

    missing, gone = _without_one_inter_switch_cable(cluster.outdir, tmp_path)
    wire_as_planned(farm, cluster.outdir, missing)
    rc, text, err = run(capsys, "cabling", "check", out, *known)
    flat = " ".join(text.replace("│", " ").split())
    assert rc == 1 and "cabling: FAILED" in flat, text + err
    assert f"{isl - 1} of {isl} inter-switch cables ok" in flat
    assert f"connect {gone['a']} {gone['a_port']} to {gone['b']} {gone['b_port']} (cable {gone['cable']})" in flat


# Two OS10 switches whose names share their first 17 characters, in a ring with two spines.
# The summary `show lldp neighbors` cuts both names to `rack01-leaf-switc...` [MFD]; the
# detail vlanroute reads prints them in full [ARC]. (Two cables between the same two
# switches would be one LAG, whose members interchanged are harmless and reported ok.)
EAST, WEST = "rack01-leaf-switch-east", "rack01-leaf-switch-west"
LONG_NAMES_OS10 = f"""name: long-names-os10
platform: dell-s5248f-on
topology:
  kind: custom
  switches: [{EAST}, spine1, {WEST}, spine2]
  links:
    - {{a: {EAST}, b: spine1}}
    - {{a: spine1, b: {WEST}}}
    - {{a: {WEST}, b: spine2}}
    - {{a: spine2, b: {EAST}}}
hosts:
  list:
    - {{name: gpu01, switch: {EAST}, mac: "02:00:0a:00:01:01"}}
    - {{name: gpu02, switch: {WEST}, mac: "02:00:0a:00:01:02"}}
routing:
  algorithm: shortest
switches:
  {EAST}: {{mgmt: 192.0.2.31}}
  spine1: {{mgmt: 192.0.2.32}}
  {WEST}: {{mgmt: 192.0.2.33}}
  spine2: {{mgmt: 192.0.2.34}}
"""


def test_os10_cabling_check_tells_apart_names_alike_in_their_first_17_characters(
        farm, tmp_path, monkeypatch, capsys):
    """The cables spine1-east and spine2-west with their leaf ends exchanged (spine1 now
    reaches west, spine2 east): in the summary both spines saw `rack01-leaf-switc...`,
    which two plan switches start with, so neither cable could be resolved there; read from
    `show lldp neighbors detail`, the check names both cables as swapped and the fix."""
    from vlanroute.lab.os10 import lldp_neighbors
    from vlanroute.model.platforms import PLATFORMS

    set_ssh_env(monkeypatch)
    inventory = tmp_path / "long-names-os10.yaml"
    inventory.write_text(LONG_NAMES_OS10)
    cluster = build_cluster(farm, tmp_path, str(inventory), platform=PLATFORMS["dell-s5248f-on"])
    out = str(cluster.outdir)
    known = ["--known-hosts", str(cluster.known_hosts)]
    rows = list(csv.DictReader((cluster.outdir / "cabling.csv").open()))

    rc, text, err = run(capsys, "cabling", "check", out, *known, "--json")
    doc = json.loads(text)
    assert rc == 0 and doc["ok"] and not doc["not_read"], text + err
    assert all("show lldp neighbors detail" in sw.received for sw in farm.switches.values())

    def leaf_side(row: dict[str, str]) -> str:
        return "a" if row["a"] in (EAST, WEST) else "b"

    (first,) = [r for r in rows if {r["a"], r["b"]} == {EAST, "spine1"}]
    (second,) = [r for r in rows if {r["a"], r["b"]} == {WEST, "spine2"}]
    x, y = leaf_side(first), leaf_side(second)
    (first[x], first[x + "_port"]), (second[y], second[y + "_port"]) = \
        (second[y], second[y + "_port"]), (first[x], first[x + "_port"])
    swapped = tmp_path / "swapped.csv"
    with open(swapped, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    wire_as_planned(farm, cluster.outdir, swapped)
    # What the summary shows the spines: one cut name for either leaf.
    for spine in ("spine1", "spine2"):
        names = {line.split()[1] for line in lldp_neighbors(farm.switches[spine].state.lldp).splitlines()[2:]}
        assert names == {"rack01-leaf-switc..."}, names

    rc, text, err = run(capsys, "cabling", "check", out, *known, "--json")
    doc = json.loads(text)
    assert rc == 1 and not doc["not_read"] and not doc["unexpected"], text + err
    assert {c["cable"]: c["status"] for c in doc["cables"] if c["status"] != "ok"} == \
        {first["cable"]: SWAPPED, second["cable"]: SWAPPED}
    assert not any("rack01-leaf-switc..." in json.dumps(c) for c in doc["cables"])
    now = {frozenset({(r["a"], r["a_port"]), (r["b"], r["b_port"])}) for r in rows if r["kind"] == "inter-switch"}
    planned = {frozenset({(r["a"], r["a_port"]), (r["b"], r["b_port"])})
               for r in csv.DictReader((cluster.outdir / "cabling.csv").open()) if r["kind"] == "inter-switch"}
    assert now != planned and apply_fixes(now, doc["fixes"]) == planned
    assert all(first["cable"] in fix and second["cable"] in fix for fix in doc["fixes"]), doc["fixes"]


def test_push_refuses_before_any_change_on_a_swapped_eos_cable(farm, tmp_path, monkeypatch, capsys):
    from vlanroute.model.platforms import PLATFORMS

    set_ssh_env(monkeypatch)
    inventory, platform = TRUNK_FABRICS["arista"]
    cluster = build_cluster(farm, tmp_path, inventory, platform=PLATFORMS[platform])
    swapped, (first, second) = _swap_two_inter_switch_cables(cluster.outdir, tmp_path, lag_members=True)
    wire_as_planned(farm, cluster.outdir, swapped)
    before = {n: sw.running_config() for n, sw in farm.switches.items()}
    rc, text, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts), "--yes")
    assert rc == 1 and "push refused before any change" in err, text + err
    assert first["cable"] in err and second["cable"] in err
    assert {n: sw.running_config() for n, sw in farm.switches.items()} == before
    assert all(sw.config_commands == 0 and not sw.saved and not sw.eos.sessions for sw in farm.switches.values())
    # Only the login dialog, the LLDP table and the logout went over the wire.
    sent = {c for sw in farm.switches.values() for c in sw.received}
    assert sent == {"terminal length 0", "terminal width 511", "end", "show lldp neighbors", "exit"}, sent


@pytest.mark.parametrize("kind", sorted(TRUNK_FABRICS))
def test_discover_on_eos_and_os10_fake_switches(kind, farm, tmp_path, monkeypatch, capsys):
    """discover reads the EOS / OS10 tables too: every cable with its plan port names, every
    host with its MAC (EOS prints a MAC Port ID dotted, OS10 with colons)."""
    from vlanroute.bundle.reader import host_macs, read_plan
    from vlanroute.model.platforms import PLATFORMS

    set_ssh_env(monkeypatch)
    inventory, platform = TRUNK_FABRICS[kind]
    cluster = build_cluster(farm, tmp_path, inventory, platform=PLATFORMS[platform])
    targets = tmp_path / "targets.json"
    targets.write_text(json.dumps({"format": "vlanroute-targets/1", "switches": {
        n: {"host": sw.host, "port": sw.port} for n, sw in farm.switches.items()}}))
    rc, text, err = run(capsys, "discover", "--targets", str(targets), "--platform", platform,
                        "--known-hosts", str(cluster.known_hosts), "--json")
    doc = json.loads(text)
    assert rc == 0 and not doc["not_read"], text + err
    inv = doc["inventory"]
    seen = {frozenset({(link["a"], pa), (link["b"], pb)}) for link in inv["topology"]["links"]
            for pa, pb in link["ports"]}
    assert seen == _cable_set(cluster.plan)
    macs = host_macs(read_plan(cluster.outdir))           # what the lab's hosts send
    assert {h["name"]: (h["switch"], h["port"], h["mac"]) for h in inv["hosts"]["list"]} == \
        {h: (d["switch"], d["port"], macs[h].lower()) for h, d in cluster.plan["hosts"].items()}
