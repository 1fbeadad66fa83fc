"""render -> verify_outdir round trip for every platform family: the configs each template
emits are parsed back by that family's parser and pass the verifier's simulation."""

from __future__ import annotations

from pathlib import Path

import pytest

import vlanroute.render.write as R
from render_fixtures import PORTS, document, ring3_plan
from vlanroute.drivers import family_of
from vlanroute.model.platforms import PLATFORMS

pytest.importorskip("vlanroute.verify.configs")


@pytest.mark.parametrize("platform", sorted(PORTS))
@pytest.mark.parametrize("settings", [{}, {"eee": True, "flow_control": False, "aging_time": 86_400,
                                           "learning": {"pool": "10.250.0.0/16", "interval_s": 14_400,
                                                        "splay_s": 600}}])
def test_every_family_round_trips_through_the_verifier(tmp_path: Path, platform: str, settings: dict) -> None:
    result = R.render_to_dir(document(ring3_plan(platform, **settings)), tmp_path / "out")
    assert result.verified
    # plan.json, cabling.csv, cabling.html, checks.json, manifest.json, switches, hosts/ (program, 2 tables,
    # install.sh, playbook), refresh; Dell OS6 also ansible/<switch>.cfg (docs/ansible.md)
    targets = 3 if family_of(PLATFORMS[platform]).name == "dell-os6" else 0
    assert result.files == 5 + 3 + 5 + 3 + targets
    assert len(list((tmp_path / "out").glob("ansible/*.cfg"))) == targets
