"""`vlanroute import nautobot` and `export nautobot` against a real Nautobot server
(tests/nautobot_server.py: Nautobot 2.4 from PyPI on PostgreSQL and Redis from Debian, all on
127.0.0.1), filled through its REST API (tests/nautobot_fill.py) with
- `seed`: the seed torus (inventories/seed-torus.yaml rendered: 8 PowerConnect 6248, 225
  hosts with MACs, 2 cables per neighbour pair in LAGs), as connected cables;
- `broken`: a site with a cable into a patch panel that goes no further, a cable to a device
  of another location, a host without a cable, two hosts with one MAC, and two parallel
  cables of which only one is in a LAG;
- `broken-port`: a cable on a port a PowerConnect 6248 does not have;
- `writeback`: the seed torus's switches and one host per switch, with their interfaces and
  no cable, for the write-back.

The server starts once per run and is shared by the pytest-xdist workers: the first to need
it starts and fills it under a file lock (about 25 s on the 2-core machine: its database is the
committed dump of these locations filled through the API by this very code, then `migrate`;
where the fill or the seed's plan has changed since that dump was written (`fill_key`), a
dump of a freshly migrated database and the fill through the API, 2 to 3 minutes more;
without a dump of the installed Nautobot's 2.4.x the full migration adds minutes,
tests/nautobot_server.py), and
tests/conftest.py stops it when the whole run is over. Without PostgreSQL, Redis or nautobot the tests skip
with the reason; on CI (.ci/run installs them) that is an error.
"""

from __future__ import annotations

import fcntl
import filecmp
import hashlib
import inspect
import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml

import nautobot_fill
import nautobot_server
from nautobot_fill import Base, Fabric, fill
from vlanroute import schemas
from vlanroute.cli import main

ROOT = Path(__file__).resolve().parent.parent
PLATFORM_MAP = ["--platform-map", "PowerConnect 6248=powerconnect-6248"]
PORTS = [f"1/g{i}" for i in range(1, 49)] + [f"1/xg{i}" for i in range(1, 5)]
# The first test waits for the server's start and fill (minutes on a busy machine; more when
# there is no dump to restore and the full migration runs).
pytestmark = [pytest.mark.slow, pytest.mark.timeout(3000)]

_why = nautobot_server.missing()
if _why:
    if os.environ.get("CI"):
        raise RuntimeError(f"cannot start a Nautobot server on CI: {_why}")
    pytest.skip(f"cannot start a Nautobot server here: {_why}", allow_module_level=True)

import pynautobot  # noqa: E402 - after the skip: installed with the nautobot extra


def validated(command: str, text: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(text)
    jsonschema.validate(data, schemas.load(command), cls=jsonschema.Draft202012Validator)
    return data


def mac_of(index: int) -> str:
    """A locally administered unicast MAC per host (the seed inventory gives none)."""
    return f"02:00:00:00:{index // 256:02x}:{index % 256:02x}"


def render_seed(where: Path) -> dict[str, Any]:
    """The seed torus rendered by vlanroute from its YAML; its plan.json."""
    out = where / "seed-out"
    if not (out / "plan.json").exists():
        assert main(["render", str(ROOT / "inventories" / "seed-torus.yaml"), "-o", str(out), "-q"]) == 0
    plan: dict[str, Any] = json.loads((out / "plan.json").read_text())
    return plan


def seed_fabric(plan: dict[str, Any], *, cabled: bool = True) -> Fabric:
    """The seed torus as a site keeps it; `cabled=False`: its switches and the first host of
    each switch, without a cable or a LAG (what the write-back fills in)."""
    switches = {s: d["mgmt"] for s, d in plan["switches"].items()}
    cables = [(c["a"], c["a_port"], c["b"], c["b_port"]) for c in plan["cabling"]] if cabled else []
    lags = {}
    if cabled:
        for c in plan["cabling"]:
            lags[(c["a"], c["a_port"])] = f"ch{c['a_lag']}"
            lags[(c["b"], c["b_port"])] = f"ch{c['b_lag']}"
        hosts = {h: (d["switch"], d["port"], mac_of(d["index"])) for h, d in plan["hosts"].items()}
    else:
        first = {d["switch"]: h for h, d in reversed(list(plan["hosts"].items()))}
        hosts = {h: (plan["hosts"][h]["switch"], None, mac_of(plan["hosts"][h]["index"])) for h in first.values()}
    return Fabric(switches=switches, ports=PORTS, cables=cables, hosts=hosts, lags=lags)


def plan_of(where: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((where / "seed-out" / "plan.json").read_text())
    return data


def expected_inventory(plan: dict[str, Any]) -> dict[str, Any]:
    """The seed torus as a YAML inventory of a custom topology, written from its plan.json
    (not from the importer): every cable with its ports, every host with port and MAC."""
    links: dict[tuple[str, str], list[list[str]]] = {}
    for c in plan["cabling"]:
        links.setdefault((c["a"], c["b"]), []).append([c["a_port"], c["b_port"]])
    return {
        "name": "seed-torus",
        "platform": "powerconnect-6248",
        "topology": {"kind": "custom", "switches": list(plan["switches"]),
                     "links": [{"a": a, "b": b, "ports": ports} for (a, b), ports in links.items()]},
        "hosts": {"list": [{"name": h, "switch": d["switch"], "port": d["port"], "mac": mac_of(d["index"]),
                            "interface": "eth0"} for h, d in plan["hosts"].items()]},
        "switches": {s: {"mgmt": d["mgmt"]} for s, d in plan["switches"].items()},
    }


def links_of(inventory: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """Every cable of a custom topology, each end as (switch, port), in one order."""
    out = []
    for link in inventory["topology"]["links"]:
        for pa, pb in link["ports"]:
            a, b = sorted([(link["a"], pa), (link["b"], pb)])
            out.append((*a, *b))
    return sorted(out)


def fill_broken(nb: Any, base: Base) -> None:
    broken = Fabric(switches={"b1": "198.51.100.1", "b2": "198.51.100.2", "b3": "198.51.100.3"}, ports=PORTS,
                    cables=[("b1", "1/g47", "b2", "1/g47"), ("b1", "1/g48", "b2", "1/g48"),
                            ("b2", "1/g46", "b3", "1/g46"), ("b3", "1/g45", "b1", "1/g45")],
                    hosts={"bh1": ("b1", "1/g1", "02:00:00:00:01:01"), "bh2": ("b2", "1/g1", "02-00-00-00-01-01"),
                           "bh4": ("b3", "1/g1", "0200.0000.0104")},
                    lags={("b1", "1/g47"): "ch1"}, loose_hosts=["bh3"])
    devices = fill(nb, base, "broken", broken, prefix="198.51.100.0/24")
    loc = base.location("broken")
    # A patch panel whose front port 1 takes b1's cable, its rear port cabled nowhere.
    panel = nb.dcim.devices.create({"name": "pp1", "device_type": base.panel_type, "role": base.roles["patch panel"],
                                    "location": loc, "status": base.active})
    rear = nb.dcim.rear_ports.create({"device": panel.id, "name": "R1", "type": "8p8c", "positions": 1})
    front = nb.dcim.front_ports.create({"device": panel.id, "name": "F1", "type": "8p8c", "rear_port": rear.id,
                                        "rear_port_position": 1})
    b1_20 = nb.dcim.interfaces.get(device_id=devices["b1"].id, name="1/g20")
    nb.dcim.cables.create({"termination_a_type": "dcim.interface", "termination_a_id": b1_20.id,
                           "termination_b_type": "dcim.frontport", "termination_b_id": front.id,
                           "status": base.connected})
    # A device of another location on b2's 1/g21.
    stray = fill(nb, base, "elsewhere", Fabric(switches={}, ports=[], cables=[], hosts={}, loose_hosts=["stray"]))
    stray_eth0 = nb.dcim.interfaces.get(device_id=stray["stray"].id, name="eth0")
    b2_21 = nb.dcim.interfaces.get(device_id=devices["b2"].id, name="1/g21")
    nb.dcim.cables.create({"termination_a_type": "dcim.interface", "termination_a_id": b2_21.id,
                           "termination_b_type": "dcim.interface", "termination_b_id": stray_eth0.id,
                           "status": base.connected})
    port = Fabric(switches={"c1": "", "c2": ""}, ports=PORTS, cables=[("c1", "1/g99", "c2", "1/g48")],
                  hosts={"ch1": ("c1", "1/g1", None)}, extra_ports={"c1": ["1/g99"]})
    fill(nb, base, "broken-port", port)


def fill_all(nb: Any, plan: dict[str, Any]) -> dict[str, float]:
    """The three locations the tests read, filled through the API; seconds each."""
    seconds: dict[str, float] = {}
    t = time.monotonic()
    base = Base(nb, PORTS)
    fill(nb, base, "seed", seed_fabric(plan), prefix="192.0.2.0/24")
    seconds["seed"] = round(time.monotonic() - t, 1)
    fill(nb, base, "writeback", seed_fabric(plan, cabled=False))
    seconds["writeback"] = round(time.monotonic() - t - sum(seconds.values()), 1)
    fill_broken(nb, base)
    seconds["broken"] = round(time.monotonic() - t - sum(seconds.values()), 1)
    return seconds


def fill_key(plan: dict[str, Any], version: str | None) -> str:
    """A hash of everything the fill depends on: the Nautobot version, the code that fills
    (tests/nautobot_fill.py, fill_all, fill_broken) and the data it fills (the seed's plan)."""
    parts = [str(version), inspect.getsource(nautobot_fill), inspect.getsource(fill_all), inspect.getsource(fill_broken),
             repr(PORTS), repr(seed_fabric(plan)), repr(seed_fabric(plan, cabled=False))]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def start_and_fill(shared: Path, work: Path) -> dict[str, Any]:
    """Start the server and fill it: from the filled dump of the installed Nautobot when its
    fill key is the current one (tests/nautobot_filled_dump.py writes it), else through the API."""
    plan = render_seed(work)
    version = nautobot_server.nautobot_version()
    filled, how = nautobot_server.choose_filled(version, fill_key(plan, version))
    t = time.monotonic()
    server = nautobot_server.start(shared, filled=filled)
    started = time.monotonic() - t
    fills = fill_all(pynautobot.api(server.url, token=server.token), plan) if filled is None else {}
    info = {"url": server.url, "token": server.token, "steps": {k: round(v, 1) for k, v in server.seconds.items()},
            "start_s": round(started, 1), "fill_s": fills, "filled": how, "database": server.database}
    (shared / "filled.json").write_text(json.dumps(info))
    return info


@pytest.fixture(scope="session")
def nautobot(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The shared, filled server: url, token and what starting it took (seconds)."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if hasattr(request.config, "workerinput") else base
    shared = root / "nautobot"
    shared.mkdir(exist_ok=True)
    with open(root / "nautobot.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)          # the other worker waits while one starts it
        failed = shared / "failed.txt"
        if failed.exists():
            pytest.fail(f"the Nautobot server did not start (another worker tried): {failed.read_text()[-2000:]}")
        filled = shared / "filled.json"
        if filled.exists():
            info: dict[str, Any] = json.loads(filled.read_text())
            return info
        try:
            return start_and_fill(shared, tmp_path_factory.mktemp("seed"))
        except Exception as exc:
            failed.write_text(f"{type(exc).__name__}: {exc}")
            raise


@pytest.fixture
def env(nautobot: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, Any]]:
    monkeypatch.setenv("NAUTOBOT_URL", nautobot["url"])
    monkeypatch.setenv("NAUTOBOT_TOKEN", nautobot["token"])
    yield nautobot


def _render_in(directory: Path, inventory: str) -> Path:
    """Render `directory/fabric.yaml` from inside `directory`, so plan.json names the
    inventory `fabric.yaml` whichever directory it is."""
    (directory / "fabric.yaml").write_text(inventory)
    here = os.getcwd()
    os.chdir(directory)
    try:
        assert main(["render", "fabric.yaml", "-o", "out", "-q"]) == 0
    finally:
        os.chdir(here)
    return directory / "out"


def _same_tree(a: Path, b: Path) -> list[str]:
    """Files that differ or exist on one side only."""
    cmp = filecmp.dircmp(a, b)
    out = [str(a / f) for f in cmp.left_only + cmp.right_only + cmp.funny_files]
    out += [str(a / f) for f in cmp.common_files if (a / f).read_bytes() != (b / f).read_bytes()]
    for sub in cmp.common_dirs:
        out += _same_tree(a / sub, b / sub)
    return out


def test_the_seed_torus_read_from_nautobot_renders_byte_identical_to_its_yaml(
        env: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with capsys.disabled():
        print(f"\nNautobot start-up {env['start_s']} s ({env['steps']}), filling {env['fill_s']} s\n"
              f"its database: {env['database']}\nits data: {env['filled']}")
    # The database was built as tests/nautobot_server.py says: the installed version's filled
    # dump restored where its fill key is the current one, else its migrated dump, each with
    # `migrate` left nothing to apply, or the fallback, said as such.
    plan = render_seed(tmp_path)
    version = nautobot_server.nautobot_version()
    filled, how = nautobot_server.choose_filled(version, fill_key(plan, version))
    assert env["filled"] == how
    if filled is not None:
        assert env["fill_s"] == {} and env["database"] == f"{how}; migrate applied 0 migration(s)"
        assert "restore" in env["steps"]
    else:
        assert set(env["fill_s"]) == {"seed", "writeback", "broken"}
        dump, said = nautobot_server.choose_dump(version)
        assert env["database"].startswith(said)
        if "psql could not load it" in env["database"]:       # a psql older than the dump's pg_dump
            assert "so the full migration on an empty database" in env["database"]
        elif dump == nautobot_server.dump_path(str(version)):
            assert "restore" in env["steps"] and env["database"].endswith("migrate applied 0 migration(s)")
        elif dump is None:
            assert "restore" not in env["steps"] and "the full migration" in env["database"]
    imported = tmp_path / "imported"
    imported.mkdir()
    assert main(["import", "nautobot", "--location", "seed", "--switch-role", "switch", *PLATFORM_MAP,
                 "--name", "seed-torus", "-o", str(imported / "fabric.yaml")]) == 0
    captured = capsys.readouterr()
    assert "8 switches, 24 inter-switch cables, 225 hosts" in captured.err
    text = (imported / "fabric.yaml").read_text()
    assert env["token"] not in text + captured.out + captured.err
    data = yaml.safe_load(text)
    expected = expected_inventory(plan)
    assert links_of(data) == links_of(expected)
    assert {k: v for k, v in data.items() if k != "topology"} == {k: v for k, v in expected.items() if k != "topology"}
    assert data["topology"]["switches"] == expected["topology"]["switches"]
    # The same fabric as a YAML written from the plan (not by the importer), rendered from
    # the same file name: every file byte for byte.
    by_hand = tmp_path / "by-hand"
    by_hand.mkdir()
    out_yaml = _render_in(by_hand, yaml.safe_dump(expected, sort_keys=False))
    out_nautobot = _render_in(imported, text)
    assert _same_tree(out_yaml, out_nautobot) == []
    assert len(list(out_nautobot.rglob("*"))) > 15
    # --json: the same inventory in vlanroute-import/1.
    assert main(["import", "nautobot", "--location", "seed", *PLATFORM_MAP, "--name", "seed-torus", "--json"]) == 0
    doc = validated("import", capsys.readouterr().out)
    assert doc["groups"] == ["location 'seed'"] and doc["topology"] == data["topology"]
    assert doc["hosts"] == data["hosts"] and doc["switches"] == data["switches"]
    # And the imported fabric is the seed torus's: its cabling.csv has the seed's cables.
    seed_rows = sorted((tmp_path / "seed-out" / "cabling.csv").read_text().splitlines()[1:])
    assert sorted(r.rsplit(",", 3)[0] for r in (out_nautobot / "cabling.csv").read_text().splitlines()[1:]) == \
        sorted(r.rsplit(",", 3)[0] for r in seed_rows)


def test_a_broken_site_gives_every_problem_with_the_nautobot_objects_named(
        env: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    args = ["import", "nautobot", "--location", "broken", "--switch-role", "switch", "--host-role", "host",
            *PLATFORM_MAP]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and env["token"] not in err
    assert f"Nautobot {env['url']} (location 'broken'): 5 problem(s) in the fabric" in err
    # The patch panel's rear port goes nowhere: the cable reaches no interface.
    assert "device 'b1' interface '1/g20': its cable reaches no interface (its other end: dcim.frontport 'F1'" in err
    assert "device 'b2' interface '1/g21': its cable ends at device 'stray' interface 'eth0', which is not in the " \
           "selection" in err
    assert "device 'bh3': no cable from any of its interfaces reaches a switch of the selection, so it has no " \
           "switch port" in err
    assert "device 'b1': its 2 cables to 'b2' are not in one LAG: 1/g47 (ch1), 1/g48 (no LAG)" in err
    # The duplicate MAC, in the words `plan` uses for a YAML inventory (model/hosts.py).
    assert "MAC 02:00:00:00:01:01 is given to both 'bh1' and 'bh2'" in err
    assert "fix: every host needs its own MAC address" in err

    assert main(["import", "nautobot", "--location", "broken-port", *PLATFORM_MAP]) == 2
    err = capsys.readouterr().err
    # As plan/ports.py says it of a YAML inventory's cable.
    assert "port '1/g99' does not exist on powerconnect-6248 (switch 'c1')" in err
    assert "Traceback" not in err


def test_a_wrong_token_or_selection_is_a_clear_error(env: dict[str, Any], monkeypatch: pytest.MonkeyPatch,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["import", "nautobot", "--location", "nowhere"]) == 2
    assert "Nautobot has no location named 'nowhere'" in capsys.readouterr().err
    wrong = "0123456789abcdef0123456789abcdef01234567"
    monkeypatch.setenv("NAUTOBOT_TOKEN", wrong)
    assert main(["import", "nautobot", "--location", "seed"]) == 2
    err = capsys.readouterr().err
    assert "Nautobot refused the token" in err and "NAUTOBOT_TOKEN" in err
    assert wrong not in err and "Traceback" not in err
    monkeypatch.delenv("NAUTOBOT_TOKEN")
    assert main(["import", "nautobot", "--location", "seed"]) == 2
    assert "$NAUTOBOT_TOKEN is not set" in capsys.readouterr().err


def _state(nb: Any, location: str) -> dict[str, Any]:
    """What a write-back may change at a location: cables, the VLAN group's VLANs, ports."""
    loc = nb.dcim.locations.get(name=location)
    cables = [dict(c) for c in nb.dcim.cables.filter(location_id=loc.id, depth=1)]
    group = nb.ipam.vlan_groups.get(name="vlanroute-seed-torus")
    vlans = sorted(int(v.vid) for v in nb.ipam.vlans.filter(vlan_group=group.id)) if group else []
    names = {d.id: d.name for d in nb.dcim.devices.filter(location=loc.id)}
    ifaces = {(names[i.device.id], i.name): i for i in nb.dcim.interfaces.filter(location=loc.id, depth=1)}
    return {"cables": cables, "vlans": vlans, "ifaces": ifaces, "names": names}


def test_write_back_dry_run_then_planned_cables_and_vlans_idempotent(
        env: dict[str, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    nb = pynautobot.api(env["url"], token=env["token"])
    render_seed(tmp_path)
    out = str(tmp_path / "seed-out")
    before = _state(nb, "writeback")
    assert before["cables"] == [] and before["vlans"] == []

    assert main(["export", "nautobot", out, "--location", "writeback", "--dry-run"]) == 0
    captured = capsys.readouterr()
    dry = captured.out
    assert "would create cable " in dry and "would create VLAN 101 'vlanroute-101'" in dry
    # 8 switches with 3 LAGs each: 225 host ports, 48 LAG members and 24 LAGs set; 8 hosts of
    # 225 are devices there: 24 inter-switch cables and 8 host cables.
    assert ("(location 'writeback'): 1 create VLAN group, 4 create VLAN, 24 create LAG, 297 update interface, "
            "32 create cable (dry run: nothing written)") in dry
    assert "note: 217 host(s) of the plan are not devices in Nautobot, their cables are not written" in captured.err
    assert main(["export", "nautobot", out, "--location", "writeback", "--dry-run", "--json"]) == 0
    doc = validated("export-nautobot", capsys.readouterr().out)
    assert doc["counts"] == {"create VLAN group": 1, "create VLAN": 4, "create LAG": 24, "update interface": 297,
                             "create cable": 32}
    assert len(doc["changes"]) == 358 and doc["written"] is False
    after_dry = _state(nb, "writeback")
    assert after_dry["cables"] == [] and after_dry["vlans"] == []
    assert nb.ipam.vlan_groups.get(name="vlanroute-seed-torus") is None

    assert main(["export", "nautobot", out, "--location", "writeback"]) == 0
    assert "32 create cable" in capsys.readouterr().out
    state = _state(nb, "writeback")
    assert state["vlans"] == [101, 102, 103, 104]
    # Every cable of cabling.csv between devices Nautobot has, planned, with its label.
    hosts_there = set(seed_fabric(plan_of(tmp_path), cabled=False).hosts)
    rows = [r.split(",") for r in (tmp_path / "seed-out" / "cabling.csv").read_text().splitlines()[1:]]
    want = {r[7]: r[:4] for r in rows if r[6] == "inter-switch" or r[2] in hosts_there}
    assert len(want) == 32
    got = {}
    for c in state["cables"]:
        assert c["status"]["name"] == "Planned"
        a, b = c["termination_a"], c["termination_b"]
        got[c["label"]] = [state["names"][a["device"]["id"]], a["name"], state["names"][b["device"]["id"]], b["name"]]
    assert {k: sorted([v[:2], v[2:]]) for k, v in got.items()} == {k: sorted([v[:2], v[2:]]) for k, v in want.items()}
    # The ports as Nautobot shows them: a host port's PVID, a LAG's tagged VLANs and members.
    plan = json.loads((tmp_path / "seed-out" / "plan.json").read_text())
    host = state["ifaces"][("sw3", "1/g1")]
    assert host.mode.value == "access" and host.untagged_vlan.vid == plan["switches"]["sw3"]["ports"]["1/g1"]["pvid"]
    for lag_id, lag in plan["switches"]["sw1"]["lags"].items():
        iface = state["ifaces"][("sw1", f"ch{lag_id}")]
        assert iface.type.value == "lag" and iface.mode.value == "tagged"
        assert sorted(v.vid for v in iface.tagged_vlans) == lag["tagged"]
        for member in lag["members"]:
            assert state["ifaces"][("sw1", member)].lag.id == iface.id

    # A second run changes nothing, and its dry run says so.
    assert main(["export", "nautobot", out, "--location", "writeback"]) == 0
    assert capsys.readouterr().out.strip().endswith("(location 'writeback'): nothing to change")
    assert main(["export", "nautobot", out, "--location", "writeback", "--dry-run", "--json"]) == 0
    doc = validated("export-nautobot", capsys.readouterr().out)
    assert doc["changes"] == [] and doc["written"] is False and doc["dry_run"] is True
    again = _state(nb, "writeback")
    assert sorted(c["id"] for c in again["cables"]) == sorted(c["id"] for c in state["cables"])

    # What was written reads back as the plan's fabric (planned cables count as cables).
    assert main(["import", "nautobot", "--location", "writeback", *PLATFORM_MAP, "--name", "seed-torus",
                 "-o", str(tmp_path / "back.yaml")]) == 0
    back = yaml.safe_load((tmp_path / "back.yaml").read_text())
    assert sorted(map(tuple, (p for link in back["topology"]["links"] for p in link["ports"]))) == \
        sorted((c["a_port"], c["b_port"]) for c in plan["cabling"])


def test_write_back_with_a_conflict_writes_nothing(env: dict[str, Any], tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    render_seed(tmp_path)
    nb = pynautobot.api(env["url"], token=env["token"])
    before = _state(nb, "broken-port")
    assert main(["export", "nautobot", str(tmp_path / "seed-out"), "--location", "broken-port"]) == 2
    err = capsys.readouterr().err
    assert "8 conflict(s) between the plan and Nautobot; nothing was written" in err
    assert "switch 'sw1' of the plan is not a device of location 'broken-port' in Nautobot" in err
    after = _state(nb, "broken-port")
    assert [c["id"] for c in after["cables"]] == [c["id"] for c in before["cables"]] and len(after["cables"]) == 2
    assert {k: _port_state(i) for k, i in after["ifaces"].items()} == \
        {k: _port_state(i) for k, i in before["ifaces"].items()}


def _port_state(iface: Any) -> tuple[str, str | None, str | None, list[str]]:
    return (str(iface.mode), getattr(iface.untagged_vlan, "id", None), getattr(iface.lag, "id", None),
            sorted(v.id for v in iface.tagged_vlans))
