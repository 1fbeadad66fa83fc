"""Issue 41 item 8: cases still open from the earlier catalogue. VLAN 4094 on a
PowerConnect 62xx through a plan.json's derived-platform record; a newline in a plan's
description; a missing --known-hosts file; one Ansible Vault value in an inventory."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from vlanroute import api
from vlanroute.bundle.document import plan_document
from vlanroute.cli import main
from vlanroute.errors import UserError

ROOT = Path(__file__).resolve().parent.parent
RING = ROOT / "inventories" / "seed-ring.yaml"


@pytest.fixture(scope="module")
def ring(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ring") / "out"
    api.render(RING, out)
    return out


def cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in err, err
    return rc, out, err


def _with_vlan_4094(plan: dict, vid_max: int = 4094) -> dict:
    """plan.json whose switches use a platform derived from the 6248 whose record claims
    `vid_max`, and whose last VLAN is renumbered 4094 everywhere."""
    d = json.loads(json.dumps(plan))
    rec = dict(d["platforms"]["powerconnect-6248"], base="powerconnect-6248", vid_max=vid_max)
    d["platforms"] = {"pc-big": rec}
    for s in d["switches"].values():
        s["platform"] = "pc-big"
    old = d["vlans"][-1]["id"]

    def renumber(o: object) -> None:
        if isinstance(o, dict):
            for k, v in o.items():
                if k in ("pvid", "id") and v == old:
                    o[k] = 4094
                elif k in ("tagged", "untagged") and isinstance(v, list):
                    o[k] = sorted(4094 if x == old else x for x in v)
                else:
                    renumber(v)
        elif isinstance(o, list):
            for x in o:
                renumber(x)
    renumber(d)
    return d


def test_catalogue_accepted_vlan_4094_on_6248_through_a_plan_json_record(ring: Path, tmp_path: Path) -> None:
    """A derived platform's record in plan.json cannot widen its base's VLAN id range: the
    62xx guides reserve 4094, and the switch would refuse `vlan 4094` mid-push."""
    doc = _with_vlan_4094(json.loads((ring / "plan.json").read_text()))
    with pytest.raises(UserError) as caught:
        api.render(plan_document(doc, "plan.json"), tmp_path / "out4094")
    assert "vid_max" in str(caught.value) and "4093" in str(caught.value)
    assert not (tmp_path / "out4094").exists()


def test_a_record_narrowing_the_range_is_kept(ring: Path, tmp_path: Path) -> None:
    d = json.loads((ring / "plan.json").read_text())
    rec = dict(d["platforms"]["powerconnect-6248"], base="powerconnect-6248", vid_max=2000)
    d["platforms"] = {"pc-small": rec}
    for s in d["switches"].values():
        s["platform"] = "pc-small"
    result = api.render(plan_document(d, "plan.json"), tmp_path / "small")
    assert result.verified


@pytest.mark.parametrize("text", ["x\nreload", "x\r\nwrite memory", "x\x1b[2J", "ok\x00"])
def test_catalogue_security_a_control_character_in_a_plan_description(ring: Path, tmp_path: Path,
                                                                     capsys: pytest.CaptureFixture[str],
                                                                     text: str) -> None:
    """plan.json's record of a derived platform: its description reaches the lab switches'
    `show system` (the model name) and messages; one line only, as the inventory's."""
    d = json.loads((ring / "plan.json").read_text())
    d["platforms"] = {"pc-x": dict(d["platforms"]["powerconnect-6248"], base="powerconnect-6248", description=text)}
    for s in d["switches"].values():
        s["platform"] = "pc-x"
    with pytest.raises(UserError) as caught:
        plan_document(d, "plan.json")
    assert "platforms.pc-x.description" in str(caught.value)
    out = tmp_path / "out"
    shutil.copytree(ring, out)
    (out / "plan.json").write_text(json.dumps(d))
    rc, _, err = cli(capsys, "verify", str(out))
    assert rc == 2 and "description" in err and "\nreload" not in err and "\x1b" not in err


@pytest.mark.parametrize("command", ["audit", "push"])
def test_catalogue_accepted_a_missing_known_hosts_file_is_named(farm, tmp_path: Path, monkeypatch,
                                                                capsys: pytest.CaptureFixture[str],
                                                                command: str) -> None:
    """A --known-hosts path that is not there was reported as every switch failing (for push
    "not-started"): it is a usage error naming the option, before any connection."""
    from push_support import build_cluster, set_ssh_env
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    missing = tmp_path / "no-such-known_hosts"
    extra = ["--dry-run"] if command == "push" else []
    rc, out, err = cli(capsys, command, str(cluster.outdir), *extra, "--known-hosts", str(missing))
    assert rc == 2, out + err
    assert "--known-hosts" in err and str(missing) in err and "fix:" in err
    assert all(sw.logins == 0 for sw in farm.switches.values())


def test_the_api_names_a_missing_known_hosts_file_too(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="known_hosts"):
        api.audit(tmp_path, api.Credentials("u", password="p"), known_hosts=tmp_path / "missing")
