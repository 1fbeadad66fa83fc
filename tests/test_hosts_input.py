"""Inputs as sites keep them: a tolerant hosts CSV (any column order, extra columns kept as
host attributes, MACs with colons, dashes or dots, bad rows named by line number), and a
plan.json given where an inventory belongs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from vlanroute.cli import main
from vlanroute.errors import UserError
from vlanroute.model.inventory import load_inventory, normalise_mac
from vlanroute.plan.build import plan_from_file

INV = Path(__file__).resolve().parent.parent / "inventories"


def inventory(tmp_path: Path, csv_text: str) -> Path:
    (tmp_path / "hosts.csv").write_text(csv_text)
    doc = {"name": "csvtest", "platform": "linux-bridge",
           "topology": {"kind": "ring", "size": 3, "switch_name": "s{index}"}, "hosts": {"csv": "hosts.csv"}}
    p = tmp_path / "inv.yaml"
    p.write_text(yaml.safe_dump(doc))
    return p


@pytest.mark.parametrize("written", ["00:13:c6:01:53:a7", "00-13-C6-01-53-A7", "0013.c601.53a7",
                                     "0013.C601.53A7", "0013c60153a7", " 00:13:C6:01:53:A7 "])
def test_mac_forms(written: str) -> None:
    assert normalise_mac(written) == "00:13:c6:01:53:a7"


@pytest.mark.parametrize("bad", ["00:13:c6:01:53", "0013.c601.53a", "00:13-c6:01:53:a7", "0013c60153a7ff",
                                 "00:13:c6:01:53:zz", "00.13.c6.01.53.a7"])
def test_not_macs(bad: str) -> None:
    with pytest.raises(ValueError, match="not a MAC"):
        normalise_mac(bad)


def test_shuffled_columns_extra_columns_dotted_macs_load(tmp_path: Path) -> None:
    p = inventory(tmp_path, "\ufeffRack;Switch;MAC Address;Hostname;Serial;Port\n"
                            "r1;s1;0013.c601.53a7;a1;SN-1;p5\n"
                            "r1;s2;00-13-C6-01-53-A8;a2;;\n"
                            "\n"
                            "r2;s3;;a3;SN-3\n")           # short row: the missing port is empty
    inv = load_inventory(p)
    assert [e.attributes for e in inv.hosts_csv] == [{"rack": "r1", "serial": "SN-1"}, {"rack": "r1"},
                                                     {"rack": "r2", "serial": "SN-3"}]
    plan = plan_from_file(p)
    assert {h.name: h.attributes for h in plan.hosts}["a1"] == {"rack": "r1", "serial": "SN-1"}
    hosts = plan.to_json()["hosts"]
    assert hosts["a1"]["mac"] == "00:13:c6:01:53:a7" and hosts["a1"]["port"] == "p5"
    assert hosts["a2"]["mac"] == "00:13:c6:01:53:a8" and hosts["a3"]["mac"] is None


def test_a_bad_mac_on_line_7_names_line_7(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = [f"n{i},s1,00:00:00:00:00:0{i}" for i in range(1, 6)]   # lines 2-6
    p = inventory(tmp_path, "hostname,switch,mac\n" + "\n".join(rows) + "\nn6,s2,00:00:00:00:00:0g\n"
                  "n7,s3,00:00:00:00:00:07\n")
    with pytest.raises(UserError) as info:
        load_inventory(p)
    text = info.value.render()
    assert "line 7" in text and "00:00:00:00:00:0g" in text and "line 6" not in text and "line 8" not in text
    assert main(["plan", str(p)]) == 2
    err = capsys.readouterr().err
    assert "hosts.csv: line 7:" in err and "Traceback" not in err


def test_every_bad_row_is_named(tmp_path: Path) -> None:
    p = inventory(tmp_path, "hostname,switch,mac\nok,s1,\nbad name,s1,\nn3,s2,xx\nn4,s2,,extra\n")
    with pytest.raises(UserError) as info:
        load_inventory(p)
    text = info.value.render()
    assert "line 3: hostname" in text and "line 4: mac" in text and "line 5: 4 values" in text


@pytest.mark.parametrize("last_row, says", [("n9,s9,", "unknown switch 's9'"),
                                            ("n1,s2,", "host name 'n1' is used twice"),
                                            ("n9,s2,0000.0000.0001", "is given to both 'n1' and 'n9'")])
def test_a_row_refused_after_reading_is_named_by_its_line_too(tmp_path: Path, last_row: str, says: str) -> None:
    # Rows that parse but do not fit the topology or each other: the line, not a list index.
    p = inventory(tmp_path, "hostname,switch,mac\nn1,s1,00:00:00:00:00:01\n\nn2,s2,\n" + last_row + "\n")
    with pytest.raises(UserError) as info:
        plan_from_file(p)
    text = info.value.render()
    assert "hosts.csv line 5" in text and says in text, text


@pytest.mark.parametrize("header, says", [("mac,port\n", "no name and no switch column"),
                                          ("hostname,switch,host\n", "repeats"),
                                          ("hostname,switch,,x\n", "has no name"),
                                          ("hostname,switch,r$ck\n", "not allowed")])
def test_header_mistakes(tmp_path: Path, header: str, says: str) -> None:
    with pytest.raises(UserError, match="line 1") as info:
        load_inventory(inventory(tmp_path, header + "a,s1,x\n"))
    assert says in info.value.render()


def test_a_plan_json_given_as_inventory_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["render", str(INV / "seed-ring.yaml"), "-o", str(out), "-q"]) == 0
    capsys.readouterr()
    assert main(["plan", str(out / "plan.json")]) == 2
    err = capsys.readouterr().err
    assert "this is a rendered plan (vlanroute-plan/2" in err and "not an inventory" in err
    assert "unknown key" not in err and err.count("\n") < 5
