"""Switch families behind one front door (vlanroute.drivers): a derived platform works
everywhere its base family works, push refuses other families with the exact list of
platforms it supports, and a family registered from outside the package (a toy one,
here) renders, parses back and verifies like a built-in one."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from vlanroute.drivers import FAMILIES, family_of
from vlanroute.drivers.common import parse_error, vlan_ids
from vlanroute.drivers.family import Capabilities, Family
from vlanroute.errors import PlanError
from vlanroute.lab import FakeSwitchFarm
from vlanroute.model.bridge import SwitchConfig
from vlanroute.model.platforms import PLATFORMS, POWERCONNECT_6248, Platform
from vlanroute.plan.build import plan_from_file
from vlanroute.render.write import RenderOptions, render_to_dir
from vlanroute.verify.configs import verify_outdir

from push_support import build_cluster, correct_tables, run, set_ssh_env

pytestmark = pytest.mark.timeout(300)

# The README's example of a platform an inventory derives from a built-in one.
DERIVED = ("platforms={pc6248-big: {base: powerconnect-6248, mac_capacity: 16384}}", "platform=pc6248-big")


@pytest.fixture
def farm():
    with FakeSwitchFarm() as f:
        yield f


def test_every_platform_has_a_registered_family() -> None:
    for platform in PLATFORMS.values():
        assert family_of(platform).name == platform.family
    assert {f.name for f in FAMILIES.values() if f.capabilities.push} == {"powerconnect-62xx", "arista-eos",
                                                                             "dell-os10"}


def test_derived_platform_renders_verifies_pushes_and_audits(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml", extra_sets=DERIVED)
    assert {s["platform"] for s in cluster.plan["switches"].values()} == {"pc6248-big"}
    assert cluster.plan["platforms"]["pc6248-big"]["base"] == "powerconnect-6248"

    rc, out, err = run(capsys, "verify", str(cluster.outdir))
    assert rc == 0, out + err
    assert "not built in" not in out                 # rebuilt from plan.json's record

    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--dry-run")
    assert rc == 0, out + err
    assert out.count("dry-run") == len(cluster.plan["switches"]) and "would be sent" in out
    assert all(sw.config_commands == 0 for sw in farm.switches.values())

    for name, entries in correct_tables(cluster.plan).items():
        for vlan, mac, port in entries:
            farm.switches[name].seed_mac(vlan, mac, port)
    rc, out, err = run(capsys, "audit", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts))
    assert rc == 0, out + err
    total = sum(len(e) for e in correct_tables(cluster.plan).values())
    assert total > 0 and f"{total} of {total} expected MAC entries present" in out


def test_derived_platform_through_lab_up(tmp_path, monkeypatch, capsys):
    """The same README example the way a user tries it: `vlanroute lab up OUTDIR` (its
    daemon's start) emulates the derived platform from plan.json's own record, and push
    --dry-run and audit reach it through the lab's target map and host keys (plan.json
    keeps the inventory's 192.0.2.x addresses)."""
    from vlanroute.lab.daemon import start
    from vlanroute.lab.statedir import StateDir

    set_ssh_env(monkeypatch)
    inventory = Path(__file__).resolve().parent.parent / "inventories" / "custom-lab.yaml"
    doc = plan_from_file(inventory, list(DERIVED)).to_document()
    out = tmp_path / "out"
    render_to_dir(doc, out, RenderOptions())
    plan = json.loads((out / "plan.json").read_text())
    state = StateDir(tmp_path / "lab")
    lab = start(out, state, "netops", "Pw-lab-3b8e", None)
    try:
        assert {sw.platform.name for sw in lab.switches.values()} == {"pc6248-big"}
        assert {sw.platform.mac_capacity for sw in lab.switches.values()} == {16384}
        monkeypatch.setenv("VLANROUTE_SSH_USER", "netops")
        monkeypatch.setenv("VLANROUTE_SSH_PASSWORD", "Pw-lab-3b8e")
        monkeypatch.setenv("VLANROUTE_TARGETS", str(state.path / "targets.json"))
        monkeypatch.setenv("VLANROUTE_KNOWN_HOSTS", str(state.path / "known_hosts"))

        rc, out_text, err = run(capsys, "verify", str(out))
        assert rc == 0, out_text + err
        rc, out_text, err = run(capsys, "push", str(out), "--dry-run")
        assert rc == 0, out_text + err
        assert out_text.count("dry-run") == len(plan["switches"]) and "would be sent" in out_text
        assert all(sw.config_commands == 0 for sw in lab.switches.values())

        tables = correct_tables(plan)
        for name, entries in tables.items():
            for vlan, mac, port in entries:
                lab.switches[name].seed_mac(vlan, mac, port)
        rc, out_text, err = run(capsys, "audit", str(out))
        total = sum(len(e) for e in tables.values())
        assert rc == 0 and total > 0 and f"{total} of {total} expected MAC entries present" in out_text, \
            out_text + err
    finally:
        lab.close()


def test_push_refuses_other_families_listing_exactly_what_it_supports(farm, tmp_path, monkeypatch,
                                                                    capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml", extra_sets=DERIVED)
    plan = json.loads((cluster.outdir / "plan.json").read_text())
    plan["switches"]["leaf2"]["platform"] = "powerconnect-8132"      # OS6: push --dry-run only
    plan["switches"]["leaf3"]["platform"] = "apresia-15000-64xl"     # AEOS: no push at all
    (cluster.outdir / "plan.json").write_text(json.dumps(plan))
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--yes")
    assert rc == 2 and "leaf2 (dell-os6)" in err and "leaf3 (apresia-aeos)" in err
    # Built-in 62xx models and the plan's own derived one; not OS6, AEOS or linux-bridge.
    assert ("push supports: arista-7050sx-64, dell-s5248f-on, pc6248-big, powerconnect-6224, powerconnect-6248; "
            "push --dry-run also reads: powerconnect-8132\n") in err + "\n"
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--dry-run")
    assert rc == 2 and "leaf2" not in err.split("fix:")[0] and "leaf3 (apresia-aeos)" in err
    assert all(sw.logins == 0 for sw in farm.switches.values())
    assert not (cluster.outdir / "backups").exists()


# --- a toy family, registered from outside vlanroute ------------------------------------------

TOY_TEMPLATE = """\
# toy {{ switch }} ({{ platform.name }})
{% for v in vlans %}
vlan {{ v }}
{% endfor %}
{% for lag in lags %}
lag {{ lag.id }} members {{ lag.members | join(',') }} tagged {{ lag.tagged_list }} hash {{ settings.lag_hash_mode }}
{% endfor %}
{% for link in links %}
port {{ link.port }} tagged {{ link.tagged_list }}
{% endfor %}
{% for hp in host_ports %}
port {{ hp.port }} pvid {{ hp.pvid }} untagged {{ hp.untagged_list }}
{% endfor %}
aging {{ settings.aging_time }}
"""


class ToyCli(Family):
    """One line per port; VLAN 1 is never mentioned and spanning tree does not exist."""

    name = "toy-cli"
    title = "Toy CLI"
    capabilities = Capabilities(host_untagged_in_many_vlans=True, eee=False,
                                lag_hash_modes={"src-dst-ip-port": "l34"})
    unconfirmed = ("every command (a toy)",)

    def __init__(self, template_dir: Path) -> None:
        self.template_dir = template_dir

    def lag_label(self, lag_id: int) -> str:
        return f"bundle-{lag_id}"

    def parse(self, text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
        cfg = SwitchConfig.with_defaults(name=switch, family=self.name, platform=platform.name,
                                         ports=platform.ports, aging_time=platform.aging_default,
                                         source=source)
        cfg.stp_global_enabled = False
        for lineno, line in enumerate(text.splitlines(), start=1):
            w = line.split()
            if not w or w[0] == "#":
                continue
            if w[0] == "vlan":
                cfg.vlans.add(int(w[1]))
            elif w[0] == "aging":
                cfg.aging_time = int(w[1])
            elif w[0] == "lag" and w[2] == "members" and w[4] == "tagged" and w[6] == "hash":
                lag = cfg.add_lag(int(w[1]), self.lag_label(int(w[1])))
                lag.untagged, lag.tagged, lag.hash_mode = set(), vlan_ids(w[5]), w[7]
                for member in w[3].split(","):
                    cfg.ports[member].lag = int(w[1])
                    cfg.touched.add(member)
                    lag.members.append(member)
            elif w[0] == "port" and w[2] == "tagged":
                port = cfg.ports[w[1]]
                port.untagged, port.tagged = set(), vlan_ids(w[3])
                cfg.touched.add(w[1])
            elif w[0] == "port" and w[2] == "pvid" and w[4] == "untagged":
                port = cfg.ports[w[1]]
                port.pvid, port.untagged = int(w[3]), vlan_ids(w[5])
                cfg.touched.add(w[1])
            else:
                raise parse_error(source, lineno, line, "unsupported toy command")
        return cfg


TOY_PLATFORM = Platform(
    name="toy-8", family="toy-cli", description="toy switch", ports=tuple(f"t{i}" for i in range(1, 9)),
    max_vlans=64, vid_min=2, vid_max=4094, mac_capacity=1024, aging_min=10, aging_max=3600,
    aging_default=300, max_lags=4, max_lag_members=4)


def _toy_inventory(tmp: Path) -> Path:
    inventory = tmp / "toyring.yaml"
    inventory.write_text("name: toyring\nplatform: toy-8\n"
                         "topology: {kind: ring, size: 3, links_per_pair: 2}\nhosts: {per_switch: 2}\n")
    return inventory


def test_a_registered_family_renders_parses_back_and_verifies(tmp_path, monkeypatch) -> None:
    templates = tmp_path / "toy-templates"
    (templates / "switch").mkdir(parents=True)
    (templates / "switch" / "toy-cli.j2").write_text(TOY_TEMPLATE)
    # The whole front door: one family object in FAMILIES, one platform of that family.
    monkeypatch.setitem(FAMILIES, "toy-cli", ToyCli(templates))
    monkeypatch.setitem(PLATFORMS, "toy-8", TOY_PLATFORM)

    plan = plan_from_file(_toy_inventory(tmp_path))
    out = tmp_path / "out"
    result = render_to_dir(plan.to_document(), out, RenderOptions(verify=True))
    assert result.verified                       # parsed back and simulated before publishing
    assert any(w.startswith("Toy CLI syntax that no public source confirms") for w in result.warnings)
    text = (out / "switches" / "sw1.cfg").read_text()
    assert text.startswith("# toy sw1 (toy-8)") and re.search(r"^lag 1 members t\d,t\d tagged \S+ hash l34$",
                                                             text, re.M)
    report = verify_outdir(out)
    assert report.ok, report.violations[:5]
    assert report.summary[2].startswith("30 of 30 ordered host pairs")
    # A wrong membership in the toy's own syntax is caught, and named the toy's way.
    cfg = out / "switches" / "sw1.cfg"
    cfg.write_text(re.sub(r"^(lag 1 .* tagged )(\S+)", r"\g<1>\2,1", cfg.read_text(), flags=re.M))
    report = verify_outdir(out)
    assert not report.ok and any(v.startswith("sw1 bundle-1 (LAG 1 to") for v in report.violations)


def test_a_family_whose_host_ports_cannot_be_untagged_in_many_vlans_gets_trunk_host_ports(
        tmp_path, monkeypatch) -> None:
    class TrunkOnly(ToyCli):
        capabilities = Capabilities(host_untagged_in_many_vlans=False, eee=False,
                                    lag_hash_modes={"src-dst-ip-port": "l34"})

    monkeypatch.setitem(FAMILIES, "toy-cli", TrunkOnly(tmp_path))
    monkeypatch.setitem(PLATFORMS, "toy-8", TOY_PLATFORM)
    plan = plan_from_file(_toy_inventory(tmp_path))
    sw1 = plan.switches["sw1"]
    assert sw1.host_attachment == "trunk" and "Toy CLI cannot make a host port" in sw1.attachment_reason
    routing = sorted(v.id for v in plan.vlans)
    for port in (p for p in sw1.ports.values() if p.role == "host"):
        assert port.untagged == [port.pvid] and port.tagged == [v for v in routing if v != port.pvid]
    assert plan.to_json()["switches"]["sw1"]["host_attachment"] == "trunk"
    # Forcing untagged host ports on it is refused, naming the fact and the way out.
    with pytest.raises(PlanError, match="cannot make a host port an untagged member of several VLANs") as exc:
        plan_from_file(_toy_inventory(tmp_path), ["settings.host_attachment=untagged"])
    assert exc.value.field == "settings.host_attachment" and "trunk" in (exc.value.fix or "")
    assert family_of(POWERCONNECT_6248).capabilities.host_untagged_in_many_vlans


def test_lab_help_names_every_family_the_lab_emulates(capsys) -> None:
    """The help is static text (the CLI loads without asyncssh), so it must be kept in step
    with the lab's own table: it said 62xx and OS6 after EOS and OS10 were added."""
    from vlanroute.lab.server import EMULATED

    rc, out, _ = run(capsys, "lab", "--help")
    text = " ".join(out.split())
    assert rc == 0 and EMULATED
    assert [FAMILIES[f].title for f in EMULATED if FAMILIES[f].title not in text] == []
