"""Ports as they are (issue #12 part 4): port lists as patterns, the 10G module ports and
stack units of the built-in platforms, inventories that give a platform's or a switch's own
ports, and inter-switch cables placed on given ports; every reader accepts those names."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from vlanroute.cli import main
from vlanroute.errors import PlanError
from vlanroute.model.platforms import (PLATFORMS, POWERCONNECT_6248, derive_platform, platform_from_json,
                                       platform_json)
from vlanroute.model.portlist import PortListError, format_port_list, parse_port_list, stack_units, unit_of
from vlanroute.plan.build import plan_from_file
from vlanroute.render.write import RenderOptions, render_to_dir
from vlanroute.verify.configs import load_outdir

ROOT = Path(__file__).resolve().parent.parent
INV = ROOT / "inventories"


# --- the pattern syntax -------------------------------------------------------------------------

def test_patterns_expand_in_panel_order() -> None:
    assert parse_port_list("1/g1-1/g3,1/xg1") == ("1/g1", "1/g2", "1/g3", "1/xg1")
    assert parse_port_list(["Te1/0/23-Te1/0/24", "Te2/0/1"]) == ("Te1/0/23", "Te1/0/24", "Te2/0/1")
    assert parse_port_list(" p1 , p3-p4 ") == ("p1", "p3", "p4")
    assert parse_port_list("1/g5-1/g5") == ("1/g5",)
    assert format_port_list(["1/g1", "1/g2", "1/g3", "1/xg1", "1/xg2", "2/g7", "p1"]) == \
        "1/g1-1/g3,1/xg1-1/xg2,2/g7,p1"


@pytest.mark.parametrize("text, message", [
    ("1/g48-1/g1", "first number is larger than the last (write 1/g1-1/g48)"),
    ("1/g1-48", "write both ends of a range in full (1/g1-1/g48)"),
    ("1/g1-1/xg4", "differ only in their last number"),
    ("1/g1-1/g2-1/g3", "one '-'"),
    ("1/g01-1/g04", "without leading zeros"),
    ("1/g1,,1/g2", "empty entry"),
    ("1/g1,", "empty entry"),
    ("1/g1,1/g1-1/g2", "port 1/g1 is listed twice"),
    ("1/g 1", "is not a port name"),
    ("1/g1;reload", "is not a port name"),
    ("p1-p5000", "more than 4096 ports"),
])
def test_bad_patterns_say_what_to_write(text: str, message: str) -> None:
    with pytest.raises(PortListError, match="(?s).*" + message.replace("(", r"\(").replace(")", r"\)")):
        parse_port_list(text)


_name = st.tuples(st.sampled_from(["1/g", "1/xg", "2/g", "Te1/0/", "p", "x.y:"]),
                  st.integers(0, 60)).map(lambda t: f"{t[0]}{t[1]}")


@given(st.lists(_name, min_size=1, max_size=40, unique=True))
def test_format_then_parse_gives_the_same_ports_in_the_same_order(ports: list[str]) -> None:
    assert parse_port_list(format_port_list(ports)) == tuple(ports)


def test_stack_units_repeat_unit_one() -> None:
    assert stack_units(["1/g1", "1/xg1"], 2) == ("1/g1", "1/xg1", "2/g1", "2/xg1")
    assert stack_units(["Te1/0/1"], 3) == ("Te1/0/1", "Te2/0/1", "Te3/0/1")
    assert unit_of("12/xg4") == 12 and unit_of("p5") is None
    with pytest.raises(PortListError, match="not a port of stack unit 1"):
        stack_units(["2/g1"], 2)


# --- the built-in descriptors -------------------------------------------------------------------

def test_builtin_port_lists_with_module_ports_outside_the_default_pool() -> None:
    p6248, p6224 = PLATFORMS["powerconnect-6248"], PLATFORMS["powerconnect-6224"]
    assert p6248.port_list() == "1/g1-1/g48,1/xg1-1/xg4"
    assert p6248.pool == parse_port_list("1/g1-1/g48") and not p6248.in_pool("1/xg1")
    assert p6224.port_list() == "1/g1-1/g24,1/xg1-1/xg4" and len(p6224.pool) == 24
    assert PLATFORMS["powerconnect-8132"].port_list() == "Te1/0/1-Te1/0/24"
    assert PLATFORMS["apresia-15000-64xl"].port_list() == "1/1-1/64"
    assert PLATFORMS["linux-bridge"].port_list() == "p1-p512"
    # panel order: the module ports come after 1/g48
    assert p6248.port_index("1/xg1") == p6248.port_index("1/g48") + 1
    # plan.json keeps counting the default pool, as before the module ports existed
    assert platform_json(p6248)["ports"] == 48 and "port_list" not in platform_json(p6248)


def test_a_stack_of_two_6248_units() -> None:
    stack = derive_platform("stack", POWERCONNECT_6248, None, {}, units=2)
    assert stack.port_list() == "1/g1-1/g48,1/xg1-1/xg4,2/g1-2/g48,2/xg1-2/xg4"
    assert format_port_list(stack.pool) == "1/g1-1/g48,2/g1-2/g48"
    assert stack.port_index("2/g1") > stack.port_index("1/xg4")
    with pytest.raises(PortListError, match="at most 12 units, not 13"):
        derive_platform("s", POWERCONNECT_6248, None, {}, units=13)
    with pytest.raises(PortListError, match="at most 1 unit, not 2"):
        derive_platform("s", PLATFORMS["linux-bridge"], None, {}, units=2)
    assert derive_platform("s", PLATFORMS["powerconnect-8132"], None, {}, units=2).ports[-1] == "Te2/0/24"


@settings(max_examples=60, deadline=None)
@given(base=st.sampled_from(sorted(PLATFORMS)), count=st.none() | st.integers(1, 200),
       cut=st.none() | st.integers(1, 40), units=st.none() | st.integers(1, 3),
       mac=st.integers(1, 10**6))
def test_every_derived_platform_is_rebuilt_exactly_from_its_plan_json_record(
        base: str, count: int | None, cut: int | None, units: int | None, mac: int) -> None:
    """What plan.json records (base, limits, pool count, and the port lists where needed)
    rebuilds the same platform, ports, pool and panel order included."""
    b = PLATFORMS[base]
    p = derive_platform("d", b, count, {"mac_capacity": mac})
    if cut is not None:
        p = derive_platform("d", p, None, {}, auto_ports=p.ports[:cut])
    if units is not None and b.max_units >= units and count is None:
        p = derive_platform("d", p, None, {}, units=units)
    record = json.loads(json.dumps(platform_json(p)))
    assert platform_from_json("d", record) == p


def test_old_plan_json_records_are_rebuilt_as_before() -> None:
    """Records written before port lists existed carry only a count."""
    old = {k: v for k, v in platform_json(POWERCONNECT_6248).items()} | {"base": "powerconnect-6248"}
    same = platform_from_json("old", old)
    assert same is not None and same.ports == POWERCONNECT_6248.ports and same.pool == POWERCONNECT_6248.pool
    bigger = platform_from_json("old", old | {"ports": 52})
    assert bigger is not None and bigger.port_list() == "1/g1-1/g52" and bigger.pool == bigger.ports


# --- inventories ----------------------------------------------------------------------------------

def _inventory(tmp_path: Path, base: str = "seed-ring.yaml", **changes: object) -> Path:
    doc = yaml.safe_load((INV / base).read_text())
    for key, value in changes.items():
        where = doc
        *parents, last = key.split("__")
        for p in parents:
            where = where.setdefault(p, {})
        where[last] = value
    path = tmp_path / "inv.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def _render(inventory: Path, out: Path, *sets: str) -> dict:
    plan = plan_from_file(inventory, sets)
    result = render_to_dir(plan.to_document(), out, RenderOptions(verify=True))
    assert result.verified
    return json.loads((out / "plan.json").read_text())


def _cabling(out: Path) -> list[dict[str, str]]:
    with open(out / "cabling.csv", newline="") as fh:
        return list(csv.DictReader(fh))


def test_existing_inventories_keep_their_gbe_cable_ports(tmp_path: Path) -> None:
    """The module ports are outside the default pool: cables stay on the highest GbE ports."""
    plan = plan_from_file(INV / "seed-torus.yaml").to_json()
    ports = {c["a_port"] for c in plan["cabling"]} | {c["b_port"] for c in plan["cabling"]}
    assert ports == {f"1/g{i}" for i in range(43, 49)}
    assert plan["platforms"]["powerconnect-6248"]["ports"] == 48


def test_torus_with_one_cable_per_pair_on_the_module_ports(tmp_path: Path,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The 4x2 torus has degree 3: with topology.inter_switch_ports every switch's three
    cables take 1/xg1, 1/xg2, 1/xg3, neighbours in switch order; render verifies it and
    `vlanroute verify` accepts it from the OUTDIR alone."""
    inv = _inventory(tmp_path, "seed-torus.yaml", topology__links_per_pair=1,
                     topology__inter_switch_ports="1/xg1-1/xg4")
    out = tmp_path / "out"
    plan = _render(inv, out)
    for sw, spec in plan["switches"].items():
        isl = sorted(p for p, d in spec["ports"].items() if d["role"] != "host")
        assert isl == ["1/xg1", "1/xg2", "1/xg3"], sw
        hosts = [p for p, d in spec["ports"].items() if d["role"] == "host"]
        assert hosts == [f"1/g{i}" for i in range(1, len(hosts) + 1)]
    assert {"a": "sw1", "a_port": "1/xg1", "b": "sw2", "b_port": "1/xg1", "a_lag": "", "b_lag": "",
            "kind": "inter-switch"} in [{k: v for k, v in c.items() if k != "cable"} for c in _cabling(out)]
    assert "interface ethernet 1/xg3" in (out / "switches" / "sw1.cfg").read_text()
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    assert f"{out}: OK" in capsys.readouterr().out


def test_ring_with_two_cables_per_pair_on_each_switchs_own_list(tmp_path: Path) -> None:
    """A ring with 2 links per pair needs 4 cables per switch: per-switch lists, given in
    different orders, are used in their order; the LAG members are the listed ports."""
    switches = {f"sw{i}": {"inter_switch_ports": ["1/xg1", "1/xg2", "1/xg3", "1/xg4"]} for i in range(1, 9)}
    switches["sw2"] = {"inter_switch_ports": "1/xg4,1/xg3,1/xg2,1/xg1"}
    inv = _inventory(tmp_path, switches=switches, hosts={"per_switch": 3})
    plan = _render(inv, tmp_path / "out")
    assert plan["switches"]["sw1"]["lags"]["1"] == {"neighbor": "sw2", "members": ["1/xg1", "1/xg2"],
                                                   "tagged": plan["switches"]["sw1"]["lags"]["1"]["tagged"]}
    # sw2's first neighbour in switch order is sw1: it takes 1/xg4 then 1/xg3.
    assert plan["switches"]["sw2"]["lags"]["1"]["members"] == ["1/xg3", "1/xg4"]
    assert plan["switches"]["sw2"]["lags"]["1"]["neighbor"] == "sw1"
    for spec in plan["switches"].values():
        assert {p for p, d in spec["ports"].items() if d["role"] != "host"} == {f"1/xg{i}" for i in range(1, 5)}


def test_a_per_switch_list_replaces_the_common_one(tmp_path: Path) -> None:
    inv = _inventory(tmp_path, topology__inter_switch_ports="1/xg1-1/xg4",
                     switches={"sw3": {"inter_switch_ports": "1/g1-1/g4"}}, hosts={"per_switch": 2})
    plan = plan_from_file(inv).to_json()
    assert sorted(plan["switches"]["sw3"]["lags"]["1"]["members"] + plan["switches"]["sw3"]["lags"]["2"]["members"]) \
        == ["1/g1", "1/g2", "1/g3", "1/g4"]
    # its hosts do not take the listed ports: they start after them
    assert [p for p, d in plan["switches"]["sw3"]["ports"].items() if d["role"] == "host"] == ["1/g5", "1/g6"]


def test_a_stacked_6248_takes_hosts_on_unit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`switches.sw1.units: 2`: sw1 is a 2-unit stack (its own platform, recorded in
    plan.json), its 70 hosts fill 1/g* then 2/g*; its cables take the highest pool ports."""
    inv = _inventory(tmp_path, switches={"sw1": {"units": 2}},
                     hosts={"per_switch": {"sw1": 70, "sw2": 2, "sw5": 2}})
    out = tmp_path / "out"
    plan = _render(inv, out)
    sw1 = plan["switches"]["sw1"]
    assert sw1["platform"] == "powerconnect-6248.sw1"
    hosts = [p for p, d in sw1["ports"].items() if d["role"] == "host"]
    assert hosts == [f"1/g{i}" for i in range(1, 49)] + [f"2/g{i}" for i in range(1, 23)]
    assert sorted(p for p, d in sw1["ports"].items() if d["role"] != "host") == \
        ["2/g45", "2/g46", "2/g47", "2/g48"]
    record = plan["platforms"]["powerconnect-6248.sw1"]
    assert record["port_list"] == "1/g1-1/g48,1/xg1-1/xg4,2/g1-2/g48,2/xg1-2/xg4"
    assert record["auto_ports"] == "1/g1-1/g48,2/g1-2/g48" and record["ports"] == 96
    assert "interface ethernet 2/g22" in (out / "switches" / "sw1.cfg").read_text()
    loaded = load_outdir(out)          # no platform table passed in: only plan.json to go on
    assert loaded.platforms["sw1"].has_port("2/g22") and not loaded.notes
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0


def test_a_derived_platform_with_its_own_port_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """platforms.<name>.ports as a pattern, auto_ports the pool: a 6248 without modules
    but with 4 ports kept for cables, rebuilt by verify from plan.json alone."""
    inv = _inventory(tmp_path, platform="pc-lab",
                     platforms={"pc-lab": {"base": "powerconnect-6248", "ports": "1/g1-1/g24",
                                           "auto_ports": ["1/g1-1/g20"], "mac_capacity": 16384}},
                     topology__inter_switch_ports="1/g21-1/g24", switches={}, hosts={"per_switch": 20})
    out = tmp_path / "out"
    plan = _render(inv, out)
    assert plan["platforms"]["pc-lab"]["port_list"] == "1/g1-1/g24"
    assert plan["platforms"]["pc-lab"]["auto_ports"] == "1/g1-1/g20"
    capsys.readouterr()
    assert main(["verify", str(out)]) == 0
    assert "not built in" not in capsys.readouterr().out


def test_a_derived_count_keeps_its_prefix_numbering(tmp_path: Path) -> None:
    inv = _inventory(tmp_path, platform="pc52", platforms={"pc52": {"base": "powerconnect-6248", "ports": 52}},
                     switches={}, hosts={"per_switch": 48})
    plan = plan_from_file(inv).to_json()
    assert plan["platforms"]["pc52"]["ports"] == 52 and "port_list" not in plan["platforms"]["pc52"]
    assert "1/g52" in plan["switches"]["sw1"]["ports"]


def test_a_switchs_own_port_list(tmp_path: Path) -> None:
    inv = _inventory(tmp_path, switches={"sw4": {"ports": "1/g1-1/g12,1/xg1-1/xg2", "auto_ports": "1/g1-1/g12"}},
                     topology__links_per_pair=1, hosts={"per_switch": 10})
    plan = plan_from_file(inv).to_json()
    assert plan["switches"]["sw4"]["platform"] == "powerconnect-6248.sw4"
    assert sorted(p for p, d in plan["switches"]["sw4"]["ports"].items() if d["role"] != "host") == \
        ["1/g11", "1/g12"]


# --- mistakes -----------------------------------------------------------------------------------

@pytest.mark.parametrize("changes, field, message", [
    ({"topology__inter_switch_ports": "1/xg1-1/xg5"}, "topology.inter_switch_ports",
     "port '1/xg5' does not exist on powerconnect-6248 (switch 'sw1')"),
    ({"topology__inter_switch_ports": "1/xg1-1/xg3"}, "topology.inter_switch_ports",
     "switch 'sw1' has 4 inter-switch cables to place but topology.inter_switch_ports lists 3 free ports "
     "(1/xg1-1/xg3)"),
    ({"switches": {"sw2": {"inter_switch_ports": ["1/xg1", "1/xg2"], "reserved_ports": ["1/xg2"]}}},
     "switches.sw2.inter_switch_ports", "port sw2:1/xg2 is reserved and listed for inter-switch cables"),
    ({"topology__inter_switch_ports": "1/xg4-1/xg1"}, "topology.inter_switch_ports",
     "the first number is larger than the last (write 1/xg1-1/xg4)"),
    ({"switches": {"sw1": {"units": 2}}, "platform": "linux-bridge"}, "switches.sw1.units",
     "linux-bridge stacks at most 1 unit, not 2"),
    ({"switches": {"sw1": {"units": 13}}}, "switches.sw1.units", "stacks at most 12 units, not 13"),
    ({"switches": {"sw1": {"ports": "Te1/0/1-Te1/0/24"}}}, "switches.sw1.ports",
     "powerconnect-6248 has no port named like 'Te1/0/1'"),
    ({"switches": {"sw1": {"auto_ports": "1/g1-1/g60"}}}, "switches.sw1.auto_ports",
     "auto_ports names 1/g49, which is not one of the ports"),
    ({"platforms": {"p": {"base": "powerconnect-6248", "ports": "1/g1-48"}}, "platform": "p"},
     "platforms.p.ports", "write both ends of a range in full (1/g1-1/g48)"),
    ({"platforms": {"p": {"base": "powerconnect-6248", "ports": 0}}, "platform": "p"},
     "platforms.p.ports", "a port count is 1 to 4096, not 0"),
    ({"platforms": {"powerconnect-6248.sw1": {"base": "powerconnect-6248"}},
      "switches": {"sw1": {"units": 2}}}, "switches.sw1.ports", "that name is taken"),
    ({"hosts": {"list": [{"name": "h1", "switch": "sw1", "port": "3/g1"}]}}, "hosts (host 'h1')",
     "port '3/g1' does not exist on powerconnect-6248 (switch 'sw1')"),
])
def test_wrong_ports_are_clear_user_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                           changes: dict, field: str, message: str) -> None:
    inv = _inventory(tmp_path, **changes)
    assert main(["plan", str(inv)]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert f"{field}: " in err and message in err and "fix: " in err, err


def test_ports_outside_the_pool_do_not_count_against_it(tmp_path: Path) -> None:
    """48 hosts and 4 cables fit a 6248 when the cables are on its module ports."""
    inv = _inventory(tmp_path, topology__inter_switch_ports="1/xg1-1/xg4", switches={},
                     hosts={"per_switch": 48})
    plan = plan_from_file(inv).to_json()
    assert len(plan["switches"]["sw1"]["ports"]) == 52
    inv = _inventory(tmp_path, switches={}, hosts={"per_switch": 48})
    with pytest.raises(PlanError, match="needs 52 ports .* but a powerconnect-6248 has 48"):
        plan_from_file(inv)
    inv = _inventory(tmp_path, switches={}, hosts={"per_switch": 45},
                     topology__inter_switch_ports="1/g45-1/g48")
    with pytest.raises(PlanError, match=r"needs 49 ports \(45 hosts \+ 0 inter-switch cables \+ 0 reserved "
                                         r"\+ 4 set aside for inter-switch cables\)"):
        plan_from_file(inv)


# --- any port list and cable count gives a valid, verified port plan -----------------------------

@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), links=st.integers(1, 3), size=st.integers(3, 4), hosts=st.integers(1, 6),
       units=st.integers(1, 2))
def test_any_inter_switch_port_lists_give_a_verified_plan(tmp_path_factory: pytest.TempPathFactory,
                                                          data: st.DataObject, links: int, size: int,
                                                          hosts: int, units: int) -> None:
    """Random per-switch port lists (module ports, GbE ports, other units' ports, in random
    order): the cables take exactly the first ports of each list in order, nothing is used
    twice, hosts stay in the pool and off the lists, and render verifies the configs."""
    stack = derive_platform("s", POWERCONNECT_6248, None, {}, units=units)
    need = 2 * links                                   # a ring: two neighbours
    switches = {}
    for i in range(1, size + 1):
        extra = data.draw(st.integers(0, 3))
        ports = data.draw(st.permutations(stack.ports).map(lambda p: list(p[:need + extra])))
        switches[f"sw{i}"] = {"inter_switch_ports": ports, "units": units}
    tmp = tmp_path_factory.mktemp("ports")
    inv = _inventory(tmp, topology={"kind": "ring", "size": size, "links_per_pair": links},
                     switches=switches, hosts={"per_switch": hosts})
    plan = _render(inv, tmp / "out")
    for name, spec in plan["switches"].items():
        listed = switches[name]["inter_switch_ports"]
        cables = {p for p, d in spec["ports"].items() if d["role"] != "host"}
        assert cables == set(listed[:need]), name
        host_ports = [p for p, d in spec["ports"].items() if d["role"] == "host"]
        assert len(host_ports) == hosts and not set(host_ports) & set(listed)
        assert all(stack.in_pool(p) for p in host_ports)


# --- push and audit: a stack and module-port cables on fake switches -----------------------------

@pytest.mark.timeout(300)
def test_push_and_audit_a_stack_cabled_on_its_module_ports(farm, tmp_path: Path, monkeypatch,  # type: ignore[no-untyped-def]
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """sw1 is a 2-unit stack with hosts on 2/g*; every inter-switch cable (two per pair, a
    LAG) is on 1/xg1-1/xg4. Push reads the ports back from the fake 62xx, a second dry run
    has nothing to change, and audit finds every learned MAC where the plan says."""
    from push_support import PASSWORD, USER, correct_tables, run, set_ssh_env, wire_as_planned
    from vlanroute.drivers import parse_config

    set_ssh_env(monkeypatch)
    stack = derive_platform("stack", POWERCONNECT_6248, None, {}, units=2)
    hosts = [{"name": f"n{i:02d}", "switch": "sw1" if i < 52 else f"sw{2 + i % 2}",
              "mac": f"00:1e:c9:00:01:{i:02x}"} for i in range(56)]
    switches: dict[str, dict[str, object]] = {}
    for i, name in enumerate(("sw1", "sw2", "sw3"), start=1):
        sw = farm.add(name, host=f"127.0.0.{40 + i}", username=USER, password=PASSWORD,
                      ports=stack.ports if name == "sw1" else None)
        switches[name] = {"mgmt": sw.host, "ssh_port": sw.port}
    switches["sw1"]["units"] = 2
    inv = _inventory(tmp_path, topology={"kind": "ring", "size": 3, "links_per_pair": 2,
                                         "inter_switch_ports": "1/xg1-1/xg4"},
                     switches=switches, hosts={"list": hosts})
    out = tmp_path / "out"
    plan = _render(inv, out)
    assert "2/g4" in plan["switches"]["sw1"]["ports"]
    known = farm.write_known_hosts(tmp_path / "known_hosts")
    wire_as_planned(farm, out)

    rc, text, err = run(capsys, "push", str(out), "--known-hosts", str(known), "--yes")
    assert rc == 0, text + err
    for name, spec in plan["switches"].items():
        platform = platform_from_json(spec["platform"], plan["platforms"][spec["platform"]]) \
            or PLATFORMS[spec["platform"]]
        running = parse_config(platform, farm.switches[name].running_config(), switch=name)
        rendered = parse_config(platform, (out / "switches" / f"{name}.cfg").read_text(), switch=name)
        for port in ("1/xg1", "1/xg4", "2/g4") if name == "sw1" else ("1/xg1", "1/xg4"):
            a, b = running.effective(port), rendered.effective(port)
            assert (a.pvid, a.untagged, a.tagged, a.stp_enabled) == (b.pvid, b.untagged, b.tagged, b.stp_enabled)
    rc, text, err = run(capsys, "push", str(out), "--known-hosts", str(known), "--dry-run")
    assert rc == 0 and text.count("unchanged") == 3, text + err

    tables = correct_tables(plan)
    assert (plan["hosts"]["n50"]["vlan"], "00:1e:c9:00:01:32", "2/g3") in tables["sw1"]
    for name, entries in tables.items():
        for vlan, mac, port in entries:
            farm.switches[name].seed_mac(vlan, mac, port)
    total = sum(len(e) for e in tables.values())
    rc, text, err = run(capsys, "audit", str(out), "--known-hosts", str(known))
    assert rc == 0, text + err
    assert f"{total} of {total} expected MAC entries" in text


def test_emulate_reads_a_linux_bridge_plan_with_its_own_ports(tmp_path: Path) -> None:
    """The emulation's expectations follow the ports the plan names (a switch's own list,
    cables on listed ports): no kernel needed for this part."""
    from vlanroute.emulate import spec as emulate_plan

    inv = _inventory(tmp_path, platform="linux-bridge", hosts={"per_switch": 2},
                     topology={"kind": "ring", "size": 4, "links_per_pair": 1,
                               "inter_switch_ports": ["p20", "p10"]},
                     switches={"sw2": {"ports": "p1-p4,p10-p20", "auto_ports": "p3-p4"}})
    out = tmp_path / "out"
    plan = _render(inv, out)
    assert plan["switches"]["sw2"]["platform"] == "linux-bridge.sw2"
    assert sorted(plan["switches"]["sw2"]["ports"]) == ["p10", "p20", "p3", "p4"]
    loaded = emulate_plan.load(out)
    fdb = loaded.expected_fdb()
    first = next(h for h, d in plan["hosts"].items() if d["switch"] == "sw2")      # on p3
    assert fdb[("sw2", plan["hosts"][first]["vlan"], loaded.hosts[first].mac)] == {"p3"}
    assert {ports for (sw, _, _), ports in fdb.items() if sw == "sw1"} <= {frozenset({"p1"}), frozenset({"p2"}),
                                                                         frozenset({"p10"}), frozenset({"p20"})}


@pytest.mark.parametrize("key, value, message", [
    ("port_list", "1/g1-1/g48,1/g1;reload", "'1/g1;reload' is not a port name"),
    ("port_list", "Te1/0/1-Te1/0/4", "powerconnect-6248 has no port named like 'Te1/0/1'"),
    ("auto_ports", "1/g1-1/g60", "auto_ports names 1/g49, which is not one of the ports"),
])
def test_a_hand_edited_port_list_in_plan_json_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         key: str, value: str, message: str) -> None:
    inv = _inventory(tmp_path, switches={"sw1": {"units": 2}}, hosts={"per_switch": 2})
    out = tmp_path / "out"
    _render(inv, out)
    doc = json.loads((out / "plan.json").read_text())
    doc["platforms"]["powerconnect-6248.sw1"][key] = value
    (out / "plan.json").write_text(json.dumps(doc, indent=1))
    capsys.readouterr()
    assert main(["verify", str(out)]) == 2
    err = capsys.readouterr().err
    assert "platforms.powerconnect-6248.sw1" in err and message in err and "Traceback" not in err
