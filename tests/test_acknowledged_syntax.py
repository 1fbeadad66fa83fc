"""The inventory's `site.acknowledged_syntax`: a site names the unconfirmed commands it
checked on its own switches; render stops warning about exactly those, `--strict` passes on
the seed torus, a stale or misspelt entry is an error with a fix, and the report and
plan.json say who checked what."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from vlanroute.cli import main
from vlanroute.drivers import FAMILIES
from vlanroute.plan.build import plan_from_file

REPO = Path(__file__).resolve().parent.parent
TORUS = str(REPO / "inventories" / "seed-torus.yaml")
OS10_TORUS = str(REPO / "inventories" / "seed-torus-os10.yaml")

# The five items render lists for the 62xx, named as its warning prints them (written by
# hand from the warning text, before the parenthesis of each).
PC62XX_ITEMS = ["hashing-mode 6", "channel-group N mode on", "spanning-tree disable on a port-channel",
                "bridge aging-time 1000000", "flowcontrol / no flowcontrol"]


def _ack(commands: list[str], family: str = "powerconnect-62xx") -> str:
    return ("site.acknowledged_syntax=[{family: " + family + ", commands: " + json.dumps(commands)
            + ', note: "typed on sw1 (FW 3.3.18), each printed as typed", by: "J. Smith", date: 2026-11-20}]')


def test_strict_render_of_the_seed_torus_fails_without_and_passes_with_the_acknowledgment(tmp_path, capsys):
    assert main(["render", TORUS, "-o", str(tmp_path / "a"), "--strict"]) != 0
    err = capsys.readouterr().err
    assert "PowerConnect 62xx syntax that no public source confirms" in err
    assert not (tmp_path / "a").exists()
    assert main(["render", TORUS, "-o", str(tmp_path / "b"), "--strict", "--set", _ack(PC62XX_ITEMS)]) == 0
    out = capsys.readouterr()
    assert "warning" not in out.err
    plan = json.loads((tmp_path / "b" / "plan.json").read_text())
    assert plan["acknowledged_syntax"] == [{"family": "powerconnect-62xx", "commands": PC62XX_ITEMS,
                                            "note": "typed on sw1 (FW 3.3.18), each printed as typed",
                                            "by": "J. Smith", "date": "2026-11-20"}]


def test_a_partial_acknowledgment_leaves_the_other_items_in_the_warning(tmp_path, capsys):
    assert main(["render", TORUS, "-o", str(tmp_path / "o"), "--set",
                 _ack(["hashing-mode 6 (LAG hash on IP and L4 ports; confirmed for OS6 and FW 4.x only)",
                       "bridge aging-time 1000000"])]) == 0
    err = " ".join(capsys.readouterr().err.split())
    assert "hashing-mode" not in err and "bridge aging-time" not in err
    for left in ("channel-group N mode on", "spanning-tree disable on a port-channel", "flowcontrol / no flowcontrol"):
        assert left in err


def test_a_plan_without_acknowledgments_has_no_key():
    assert "acknowledged_syntax" not in plan_from_file(TORUS).to_json()


@pytest.mark.parametrize("ack, field, problem", [
    (_ack(["hashing-mode 7"]), "site.acknowledged_syntax.0.commands.0", "'hashing-mode 7' is not a command"),
    # Confirmed since (issue 25): an acknowledgment of it no longer means anything.
    (_ack(["mac address-table aging-time 1000000"], "dell-os10"), "site.acknowledged_syntax.0.commands.0",
     "is not a command Dell OS10 marks unconfirmed"),
    (_ack(["hashing-mode 6"], "powerconnect-63xx"), "site.acknowledged_syntax.0.family", "no switch family"),
    (_ack(["hashing-mode 6", "hashing-mode 6 (LAG hash)"]), "site.acknowledged_syntax.0.commands.1",
     "already acknowledged"),
])
def test_an_acknowledgment_of_nothing_unconfirmed_is_an_error_with_a_fix(ack, field, problem, tmp_path, capsys):
    assert main(["plan", TORUS, "--set", ack]) == 2
    err = capsys.readouterr().err
    assert f"{field}: " in err and problem in err and "fix:" in err
    assert "Traceback" not in err


def test_the_fix_names_every_item_the_family_accepts(capsys):
    assert main(["plan", TORUS, "--set", _ack(["hashing mode 6"])]) == 2
    fix = capsys.readouterr().err.split("fix:", 1)[1]
    for item in PC62XX_ITEMS:
        assert f"'{item}'" in fix


def test_every_unconfirmed_item_has_a_name_of_its_own():
    """Items are named by the text before their parenthesis: two alike would be one name."""
    from vlanroute.drivers.family import syntax_key
    for family in FAMILIES.values():
        names = [syntax_key(i) for i in family.unconfirmed + family.unconfirmed_untagged_hosts]
        assert len(names) == len(set(names)), family.name
        assert all(names), family.name


def test_a_note_must_be_one_line(capsys):
    bad = _ack(PC62XX_ITEMS).replace("typed on sw1", "typed\\non sw1").replace('note: "', "note: \"")
    assert main(["plan", TORUS, "--set", bad]) == 2
    assert "site.acknowledged_syntax.0.note" in capsys.readouterr().err


def test_the_os10_acknowledgment_of_its_remaining_items_lets_strict_pass(tmp_path, capsys):
    items = ["flowcontrol transmit on|off", "spanning-tree disable under interface port-channelN"]
    assert main(["render", OS10_TORUS, "-o", str(tmp_path / "o"), "--strict", "--set", _ack(items, "dell-os10")]) == 0


def test_the_report_lists_what_is_acknowledged_and_by_whom():
    from vlanroute.model.inventory import load_inventory
    from vlanroute.pictures.report import report_html
    from vlanroute.plan.build import build_plan
    inv = load_inventory(TORUS, [_ack(["hashing-mode 6"]).replace("J. Smith", "<b>J. Smith</b>")])
    html = report_html(build_plan(inv), max_vlans=1)
    section = html[html.index('<h2 id="acknowledged">'):]
    assert "powerconnect-62xx" in section and "<code>hashing-mode 6</code>" in section
    assert "&lt;b&gt;J. Smith&lt;/b&gt;" in section and "<b>J. Smith" not in html
    assert "2026-11-20" in section and "typed on sw1 (FW 3.3.18), each printed as typed" in section
    assert '<h2 id="acknowledged">' not in report_html(plan_from_file(TORUS), max_vlans=1)
