"""Golden tests: the rendered text of a hand-written 3-switch ring plan against expected
files that were written by hand from the CLI facts (tests/golden/ring3/README.md)."""

from __future__ import annotations

import base64
import hashlib
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from render_fixtures import document, ring3_plan
from vlanroute.cli import group
from vlanroute.bundle.cables import planned_cables
from vlanroute.render.write import render_files

GOLDEN = Path(__file__).parent / "golden" / "ring3"


def _render(platform: str, **settings: object) -> dict[str, str]:
    return render_files(document(ring3_plan(platform, **settings)))


@pytest.mark.parametrize("platform, switch", [
    ("powerconnect-6248", "sw1"),
    ("powerconnect-6248", "sw3"),
    ("powerconnect-8132", "sw1"),
    ("apresia-15000-64xl", "sw1"),
])
def test_switch_config_matches_hand_written(platform: str, switch: str) -> None:
    expected = (GOLDEN / f"{platform}-{switch}.cfg").read_text()
    assert _render(platform)[f"switches/{switch}.cfg"] == expected


@pytest.mark.parametrize("unit", ["vlanroute-refresh.cron", "vlanroute-refresh.timer"])
def test_refresh_job_matches_hand_written(unit: str) -> None:
    assert _render("powerconnect-6248")[f"refresh/{unit}"] == (GOLDEN / unit).read_text()


def _label(first: tuple[str, str], second: tuple[str, str]) -> str:
    """The documented rule, written out again: base32 of sha256 over "name<TAB>port" lines."""
    digest = hashlib.sha256(f"{first[0]}\t{first[1]}\n{second[0]}\t{second[1]}".encode()).digest()
    text = base64.b32encode(digest).decode()
    return f"{text[:4]}-{text[4:8]}"


def test_cabling_csv() -> None:
    rows = _render("powerconnect-6248")["cabling.csv"].splitlines()
    assert rows[0] == "a,a_port,b,b_port,a_lag,b_lag,kind,cable"
    assert [r.rsplit(",", 1)[0] for r in rows[1:]] == [
        "sw1,1/g21,sw2,1/g21,1,1,inter-switch",
        "sw1,1/g22,sw2,1/g22,1,1,inter-switch",
        "sw1,1/g24,sw3,1/g23,,,inter-switch",
        "sw2,1/g24,sw3,1/g24,,,inter-switch",
        "sw1,1/g1,node001,eth0,,,host",
        "sw1,1/g2,node002,eth0,,,host",
        "sw2,1/g1,node003,eth0,,,host",
        "sw2,1/g2,node004,eth0,,,host",
        "sw3,1/g1,node005,eth0,,,host",
        "sw3,1/g2,node006,eth0,,,host"]
    labels = [r.rsplit(",", 1)[1] for r in rows[1:]]
    assert labels[0] == _label(("sw1", "1/g21"), ("sw2", "1/g21"))
    assert labels[2] == _label(("sw1", "1/g24"), ("sw3", "1/g23"))
    assert labels[4] == _label(("sw1", "1/g1"), ("node001", "eth0"))
    assert len(set(labels)) == len(labels)


def test_cable_labels_do_not_depend_on_row_order() -> None:
    """A label comes from the cable's ends: the same cable keeps it when others come and go,
    and an inter-switch cable written the other way round gets the same one."""
    doc = document(ring3_plan("powerconnect-6248"))
    before = {(c.a, c.a_port): c.label for c in planned_cables(doc)}
    fewer = doc.model_copy(update={"cabling": doc.cabling[2:], "hosts": dict(list(doc.hosts.items())[3:])})
    after = {(c.a, c.a_port): c.label for c in planned_cables(fewer)}
    assert after and all(before[k] == v for k, v in after.items())
    c = doc.cabling[2]
    flipped = doc.model_copy(update={"cabling": [c.model_copy(update={"a": c.b, "a_port": c.b_port,
                                                                     "b": c.a, "b_port": c.a_port})]})
    assert planned_cables(flipped)[0].label == before[(c.a, c.a_port)]


def test_flow_control_off_and_shorter_aging() -> None:
    learning = {"pool": "10.250.0.0/16", "interval_s": 1800, "splay_s": 300}
    files = _render("powerconnect-6248", flow_control=False, aging_time=7200, learning=learning)
    cfg = files["switches/sw2.cfg"]
    assert files["refresh/vlanroute-refresh.cron"].splitlines()[-1].startswith("*/30 * * * * root ")
    lines = cfg.splitlines()
    assert "no flowcontrol" in lines and "flowcontrol" not in lines
    assert "bridge aging-time 7200" in lines


def test_refresh_too_slow_for_the_aging_time_is_a_user_error() -> None:
    from vlanroute.errors import UserError
    with pytest.raises(UserError, match="half the aging time"):
        _render("powerconnect-6248", aging_time=7200)   # daily refresh, 2 h aging


def test_eee_on_when_asked_on_os6_only() -> None:
    os6 = _render("powerconnect-8132", eee=True)["switches/sw3.cfg"].splitlines()
    assert os6.count("green-mode eee") == 4 and "no green-mode eee" not in os6
    pc = _render("powerconnect-6248", eee=True)["switches/sw3.cfg"]
    assert "green-mode" not in pc          # the 62xx has no EEE


def test_lag_hash_the_platform_lacks_is_a_user_error() -> None:
    from vlanroute.errors import UserError
    with pytest.raises(UserError, match="settings.lag_hash"):
        _render("apresia-15000-64xl", lag_hash="src-dst-mac")


def test_host_tables_list_every_host_and_vlan() -> None:
    files = _render("powerconnect-6248")
    # Written by hand from tests/render_fixtures.py: hosts in inventory order, index from 0,
    # no MACs; the VLANs with their learning subnets.
    assert files["hosts/hosts.tsv"].splitlines()[1:] == [
        "# host\tinterface\tmac\tvlan\tindex\tattachment",
        "node001\teth0\t-\t101\t0\tuntagged", "node002\teth0\t-\t101\t1\tuntagged",
        "node003\teth0\t-\t102\t2\tuntagged", "node004\teth0\t-\t102\t3\tuntagged",
        "node005\teth0\t-\t103\t4\tuntagged", "node006\teth0\t-\t103\t5\tuntagged"]
    assert files["hosts/vlans.tsv"].splitlines()[1:] == [
        "# vlan\tlearning_subnet", "101\t10.250.0.0/24", "102\t10.250.1.0/24", "103\t10.250.2.0/24"]
    program = files["hosts/vlanroute-host"].splitlines()
    for line in ("PLAN=ring3", "METHOD=system", "NETWORK=script", "PREFIX=vr", "TABLE_DIR=/etc/vlanroute"):
        assert line in program, line


def test_plan_json_is_byte_identical_to_plan_command(tmp_path: Path) -> None:
    inv = Path(__file__).parents[1] / "inventories" / "seed-ring.yaml"
    printed = CliRunner().invoke(group, ["plan", str(inv), "--json"])
    assert printed.exit_code == 0, printed.output
    result = CliRunner().invoke(group, ["render", str(inv), "-o", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    written = (tmp_path / "out" / "plan.json").read_text()
    assert written == printed.output
    assert json.loads(written)["format"] == "vlanroute-plan/2"
