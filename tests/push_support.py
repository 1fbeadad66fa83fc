"""Helpers for the push/audit tests: a rendered OUTDIR whose switches are fake switches.

Every fake switch listens on its own 127.0.0.x address; the inventory's management
addresses are overridden with `--set` before planning, so plan.json only ever names
loopback targets. Rendering skips `verify` so these tests depend on render + parser only.
"""

from __future__ import annotations

from dataclasses import dataclass
import json
import os
from pathlib import Path

import networkx as nx
import yaml

from vlanroute.bundle.reader import host_macs, read_all_cables, read_plan
from vlanroute.cli import main
from vlanroute.device.session import HostKeyPolicy
from vlanroute.lab import FakeSwitchFarm, Faults
from vlanroute.model.platforms import POWERCONNECT_6248, Platform
from vlanroute.plan.build import plan_from_file
from vlanroute.render.write import RenderOptions, render_to_dir

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

    @property
    def state(self) -> Path:
        """The default state directory of this plan (conftest points XDG_STATE_HOME at a
        temporary folder): backups/ and pushes/ of every push without --state-dir."""
        return Path(os.environ["XDG_STATE_HOME"]) / "vlanroute" / self.plan["name"]

    def backups(self, switch: str) -> list[Path]:
        return sorted((self.state / "backups").glob(f"{switch}-*.cfg"))


def switch_names(inventory: Path) -> list[str]:
    return list(yaml.safe_load(inventory.read_text())["switches"])


def build_cluster(farm: FakeSwitchFarm, tmp: Path, inventory: str,
                  faults: dict[str, Faults] | None = None, extra_sets: tuple[str, ...] = (),
                  platform: Platform = POWERCONNECT_6248, seeds: dict[str, str] | None = None) -> Cluster:
    """Fake switches of `platform` (optionally started from running configs `seeds`), and
    OUTDIR rendered for them."""
    inv = REPO / "inventories" / inventory
    sets = list(extra_sets)
    for i, name in enumerate(switch_names(inv), start=1):
        sw = farm.add(name, host=f"127.0.0.{10 + i}", username=USER, password=PASSWORD,
                      faults=(faults or {}).get(name), platform=platform,
                      seed=(seeds or {}).get(name))
        sets += [f"switches.{name}.mgmt={sw.host}", f"switches.{name}.ssh_port={sw.port}"]
    doc = plan_from_file(inv, sets).to_document()
    outdir = tmp / "out"
    render_to_dir(doc, outdir, RenderOptions(verify=False))
    wire_as_planned(farm, outdir)
    known = farm.write_known_hosts(tmp / "known_hosts")
    return Cluster(farm, outdir, known, json.loads((outdir / "plan.json").read_text()))


def wire_as_planned(farm: FakeSwitchFarm, outdir: Path, cabling: Path | None = None) -> None:
    """The fake switches' LLDP tables show the cables of OUTDIR/cabling.csv (or `cabling`),
    so push's cabling check finds what the plan wants."""
    doc = read_plan(outdir)
    farm.wire(read_all_cables(outdir, doc.switches, hosts=doc.hosts, path=cabling), host_macs(doc))


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


def correct_tables(plan: dict) -> dict[str, list[tuple[int, str, str]]]:
    """Independently of vlanroute: the learned-MAC table each switch should show, with paths
    from networkx over each VLAN's links and ports from the cabling list (a LAG shows as chN
    in a 62xx address table)."""
    port_to: dict[tuple[str, str], str] = {}
    for c in plan["cabling"]:
        port_to[(c["a"], c["b"])] = f"ch{c['a_lag']}" if c["a_lag"] else c["a_port"]
        port_to[(c["b"], c["a"])] = f"ch{c['b_lag']}" if c["b_lag"] else c["b_port"]
    tables: dict[str, list[tuple[int, str, str]]] = {s: [] for s in plan["switches"]}
    for vlan in plan["vlans"]:
        tree = nx.Graph([tuple(link) for link in vlan["links"]])
        tree.add_nodes_from(vlan["switches"])
        for host in plan["hosts"].values():
            for s in vlan["switches"]:
                if s == host["switch"]:
                    tables[s].append((vlan["id"], host["mac"], host["port"]))
                else:
                    nxt = nx.shortest_path(tree, s, host["switch"])[1]
                    tables[s].append((vlan["id"], host["mac"], port_to[(s, nxt)]))
    return tables


def read_running(host: str, port: int, policy: HostKeyPolicy, password: str = "pw") -> str:
    """An emulated 6248's running config, read by vlanroute's own SSH session as admin."""
    from vlanroute.device.credentials import Credentials
    from vlanroute.device.session import SwitchSession
    from vlanroute.drivers import FAMILIES
    session = SwitchSession(FAMILIES["powerconnect-62xx"].cli, host, port, Credentials("admin", password), policy)
    try:
        return session.running_config()
    finally:
        session.close()
