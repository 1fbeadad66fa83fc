"""Golden tests: the rendered text of a hand-written 3-switch ring plan against expected
files that were written by hand from the CLI facts (tests/golden/ring3/README.md)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from render_fixtures import document, ring3_plan
from vlanroute.cli import group
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


def test_cabling_csv() -> None:
    assert _render("powerconnect-6248")["cabling.csv"] == (
        "a,a_port,b,b_port,a_lag,b_lag\n"
        "sw1,1/g21,sw2,1/g21,1,1\n"
        "sw1,1/g22,sw2,1/g22,1,1\n"
        "sw1,1/g24,sw3,1/g23,,\n"
        "sw2,1/g24,sw3,1/g24,,\n")


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
    assert json.loads(written)["format"] == "vlanroute-plan/1"
