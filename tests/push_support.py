"""Helpers for the push/audit tests: a rendered OUTDIR whose switches are fake switches.

Every fake switch listens on its own 127.0.0.x address; the inventory's management
addresses are overridden with `--set` before planning, so plan.json only ever names
loopback targets. Rendering skips `verify` so these tests depend on render + parser only.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
from pathlib import Path

import yaml

from vlanroute.cli import main
from vlanroute.lab import FakeSwitchFarm, Faults
from vlanroute.plan.build import plan_from_file
from vlanroute.render.write import RenderOptions, platform_lookup, render_to_dir

REPO = Path(__file__).resolve().parent.parent
USER = "netops"
# A password no code path would print by accident: a test greps every output for it.
PASSWORD = "Pw-7f3c9e1a-do-not-print"


@dataclass
class Cluster:
    farm: FakeSwitchFarm
    outdir: Path
    known_hosts: Path
    plan: dict

    def switch(self, name: str):  # type: ignore[no-untyped-def]
        return self.farm.switches[name]


def switch_names(inventory: Path) -> list[str]:
    return list(yaml.safe_load(inventory.read_text())["switches"])


def build_cluster(farm: FakeSwitchFarm, tmp: Path, inventory: str,
                  faults: dict[str, Faults] | None = None) -> Cluster:
    inv = REPO / "inventories" / inventory
    sets = []
    for i, name in enumerate(switch_names(inv), start=1):
        sw = farm.add(name, host=f"127.0.0.{10 + i}", username=USER, password=PASSWORD,
                      faults=(faults or {}).get(name))
        sets += [f"switches.{name}.mgmt={sw.host}", f"switches.{name}.ssh_port={sw.port}"]
    doc = plan_from_file(inv, sets).to_json()
    outdir = tmp / "out"
    render_to_dir(doc, outdir, platform_lookup(), RenderOptions(verify=False))
    known = farm.write_known_hosts(tmp / "known_hosts")
    return Cluster(farm, outdir, known, json.loads((outdir / "plan.json").read_text()))


def set_ssh_env(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setenv("VLANROUTE_SSH_USER", USER)
    monkeypatch.setenv("VLANROUTE_SSH_PASSWORD", PASSWORD)
    monkeypatch.delenv("VLANROUTE_SSH_KEY", raising=False)
    monkeypatch.setenv("VLANROUTE_LOOPBACK_ONLY", "1")
    monkeypatch.setenv("COLUMNS", "400")     # rich: one table row per line, nothing wrapped


def run(capsys, *args: str) -> tuple[int, str, str]:  # type: ignore[no-untyped-def]
    """Run the real CLI entry point; return (exit code, stdout, stderr)."""
    rc = main(list(args))
    captured = capsys.readouterr()
    return rc, captured.out, captured.err
