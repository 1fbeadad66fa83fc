"""Host attachment (docs/method.md): `untagged` host ports (PVID own VLAN, untagged in every
routing VLAN) or `trunk` host ports (PVID own VLAN, untagged in it, tagged in every other
routing VLAN, received on the host's VLAN sub-interfaces): chosen by the plan, recorded in
plan.json, rendered by every family, parsed back and checked by verify's 802.1Q simulation."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from vlanroute.cli import main
from vlanroute.errors import PlanError
from vlanroute.model.bridge import host_port_membership
from vlanroute.plan.build import plan_from_file
from vlanroute.verify import configs as verify_configs
from vlanroute.verify.configs import verify_outdir
from vlanroute.verify.simulate import BridgeNetwork, BridgePort

ROOT = Path(__file__).resolve().parent.parent
TORUS = str(ROOT / "inventories" / "seed-torus.yaml")
SMALL = ["--set", "hosts={per_switch: 3}", "--set", "switches={}"]


def test_membership_of_the_two_attachments() -> None:
    untagged = host_port_membership("untagged", 102, [101, 102, 103])
    assert (untagged.pvid, untagged.untagged, untagged.tagged) == (102, {101, 102, 103}, frozenset())
    trunk = host_port_membership("trunk", 102, [101, 102, 103])
    assert (trunk.pvid, trunk.untagged, trunk.tagged) == (102, {102}, {101, 103})
    with pytest.raises(ValueError):
        host_port_membership("trunk", 104, [101, 102, 103])


def test_auto_is_untagged_where_the_family_can_and_the_inventory_can_force_trunk() -> None:
    plan = plan_from_file(TORUS, SMALL[1::2])
    assert {sp.host_attachment for sp in plan.switches.values()} == {"untagged"}
    assert plan.to_json()["settings"]["host_attachment"] == "auto"
    forced = plan_from_file(TORUS, [*SMALL[1::2], "settings.host_attachment=trunk"])
    routing = sorted(v.id for v in forced.vlans)
    doc = forced.to_json()
    assert {s["host_attachment"] for s in doc["switches"].values()} == {"trunk"}
    for sw in doc["switches"].values():
        for port in (p for p in sw["ports"].values() if p["role"] == "host"):
            assert port["untagged"] == [port["pvid"]]
            assert port["tagged"] == [v for v in routing if v != port["pvid"]]


def test_mixed_platforms_choose_per_switch(capsys) -> None:  # type: ignore[no-untyped-def]
    sets = [*SMALL[1::2], "switches={sw3: {platform: apresia-15000-64xl}}"]
    plan = plan_from_file(TORUS, sets)
    got = {name: sp.host_attachment for name, sp in plan.switches.items()}
    assert got.pop("sw3") == "trunk" and set(got.values()) == {"untagged"}
    assert main(["plan", TORUS, *[a for s in sets for a in ("--set", s)]]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "host attachment: trunk on sw3 (APRESIA AEOS:" in out
    assert "host attachment: untagged on sw1, sw2, sw4, sw5, sw6, sw7, sw8 (PowerConnect 62xx" in out
    with pytest.raises(PlanError) as exc:
        plan_from_file(TORUS, [*sets, "settings.host_attachment=untagged"])
    assert exc.value.field == "settings.host_attachment" and "apresia-15000-64xl" in exc.value.message


@pytest.fixture(scope="module", params=["powerconnect-6248", "powerconnect-8132", "apresia-15000-64xl",
                                        "linux-bridge"])
def trunk_outdir(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("trunk") / request.param
    assert main(["render", TORUS, "-o", str(out), "--no-verify", "--set", f"platform={request.param}",
                 "--set", "settings.host_attachment=trunk", *SMALL]) == 0
    return out


def test_trunk_renders_and_verifies_for_every_family(trunk_outdir: Path) -> None:
    r = verify_outdir(trunk_outdir)
    assert r.ok, r.violations[:5]
    assert "552 of 552 ordered host pairs delivered exactly once, untagged or tagged to a sub-interface" \
        in r.summary[2]


def _host_port_line(out: Path) -> tuple[dict, str, str, int]:   # type: ignore[type-arg]
    doc = json.loads((out / "plan.json").read_text())
    host = doc["hosts"]["node001"]
    family = doc["switches"][host["switch"]]["family"]
    tagged = doc["switches"][host["switch"]]["ports"][host["port"]]["tagged"]
    return host, family, (out / "switches" / f"{host['switch']}.cfg").read_text(), tagged[-1]


def test_trunk_host_port_missing_a_tagged_vlan_is_caught(trunk_outdir: Path, tmp_path: Path) -> None:
    out = tmp_path / "o"
    shutil.copytree(trunk_outdir, out)
    host, family, text, gone = _host_port_line(out)
    port = host["port"]
    if family == "linux-bridge":
        # the last run of the port's tagged VLANs ends at `gone`: end it one VLAN earlier
        m = re.search(rf"^vlan add dev {port} vid (?:(\d+)-)?{gone}\n", text, re.M)
        assert m is not None
        first = int(m.group(1)) if m.group(1) else gone
        shorter = "" if first == gone else (f"vlan add dev {port} vid "
                                            f"{first if first == gone - 1 else f'{first}-{gone - 1}'}\n")
        text = text[:m.start()] + shorter + text[m.end():]
    else:
        # the host port's tagged list loses its last VLAN (node001's port comes first)
        block = re.search(rf"^interface (ethernet |port )?{re.escape(port)}\n(.*?\n)exit$", text, re.M | re.S)
        assert block is not None
        body = block.group(2)
        m = re.search(r"(switchport (general allowed vlan|trunk) add )(\S+)( tagged)?\n", body)
        assert m is not None
        ids = m.group(3)
        cut = ids.rsplit(",", 1)[0] if "," in ids else None
        if cut is None or cut == ids:      # a range or a single VLAN: write the list out anew
            vlans = _expand(ids)
            vlans.remove(gone)
            cut = ",".join(str(v) for v in vlans)
        text = text.replace(block.group(0), block.group(0).replace(m.group(0), m.group(1) + cut
                                                                   + (m.group(4) or "") + "\n"), 1)
    (out / "switches" / f"{host['switch']}.cfg").write_text(text)
    r = verify_outdir(out)
    assert not r.ok
    assert any(v.startswith(f"{host['switch']} port {port} (host node001): tagged member of VLAN")
               and f"missing VLAN {gone}" in v for v in r.violations), r.violations[:5]


def _expand(ids: str) -> list[int]:
    out: list[int] = []
    for part in ids.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def test_trunk_host_without_a_sub_interface_does_not_receive(trunk_outdir: Path,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    """A frame tagged with a VLAN the host has no sub-interface for is dropped by the host:
    verify's simulation knows that the host receives on its sub-interfaces only."""
    doc = json.loads((trunk_outdir / "plan.json").read_text())
    host = doc["hosts"]["node001"]
    other = next(v["id"] for v in doc["vlans"] if v["id"] != host["vlan"])
    # Learned (it sends its learning frames), but the sub-interface gone: the receiving side alone.
    build = verify_configs._build_network

    def without(doc, configs, families, cables, macs, subifs):  # type: ignore[no-untyped-def]
        return build(doc, configs, families, cables, macs, {**subifs, "node001": subifs["node001"] - {other}})
    monkeypatch.setattr(verify_configs, "_build_network", without)
    r = verify_outdir(trunk_outdir)
    assert not r.ok
    assert any(f"-> node001 (VLAN {other}): delivered tagged {other}" in v
               and f"node001 has no sub-interface for VLAN {other}" in v for v in r.violations), r.violations[:5]


def test_simulated_host_receives_tagged_frames_on_its_sub_interfaces_only() -> None:
    net = BridgeNetwork()
    trunk = BridgePort(pvid=101, untagged=frozenset({101}), tagged=frozenset({102}))
    net.add_bridge("b", {101, 102}, {"p1": trunk, "p2": BridgePort(pvid=102, untagged=frozenset({102}))})
    net.add_host("h1", "02:00:00:00:00:01", "b", "p1", frozenset({102}))
    net.add_host("h2", "02:00:00:00:00:02", "b", "p2")
    got = net.send("h2", "ff:ff:ff:ff:ff:ff").delivered_to("h1")
    assert [d.tag for d in got] == [102] and net.hosts["h1"].receives(102)
    assert not net.hosts["h2"].receives(101) and net.hosts["h2"].receives(None)


def test_raw_learning_has_no_sub_interfaces_so_trunk_hosts_are_refused(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    assert main(["render", TORUS, "-o", str(tmp_path / "o"), "--set", "platform=linux-bridge",
                 "--set", "settings.host_attachment=trunk", "--learning-method", "raw", *SMALL]) == 2
    assert "learning method raw makes no VLAN sub-interfaces" in capsys.readouterr().err
    assert not (tmp_path / "o").exists()


# --- the host program on a trunk-attached host ------------------------------------------------

FAKEBIN = ROOT / "tests" / "fakebin"
KEYS = ("rp_filter", "arp_ignore", "arp_filter")


def _host_bundle(tmp: Path, attachment: str) -> Path:
    from vlanroute.render.write import RenderOptions, render_files
    doc = plan_from_file(ROOT / "inventories" / "seed-ring.yaml",
                         ["platform=linux-bridge", "hosts={per_switch: 1}", "switches={}",
                          f"settings.host_attachment={attachment}"]).to_document()
    hosts = tmp / "hosts"
    hosts.mkdir()
    for rel, text in render_files(doc, RenderOptions()).items():
        if rel.startswith("hosts/") and rel.count("/") == 1:
            (hosts / rel.removeprefix("hosts/")).write_text(text)
    return hosts


def _proc(tmp: Path, devices: list[str], values: dict[str, dict[str, int]]) -> Path:
    """A /proc/sys/net/ipv4/conf tree: a distribution-like start (strict rp_filter, and an
    `all` that would override the sub-interfaces' ARP settings)."""
    root = tmp / "proc"
    for dev in devices:
        for key in KEYS:
            path = root / "net" / "ipv4" / "conf" / dev / key
            path.parent.mkdir(parents=True, exist_ok=True)
            # without the newline: what busybox sh's one-byte reads get from a real sysctl file
            path.write_text(f"{values.get(dev, {}).get(key, {'rp_filter': 1}.get(key, 0))}")
    return root


def _sysctls(root: Path, devices: list[str]) -> dict[str, tuple[int, ...]]:
    return {d: tuple(int((root / "net" / "ipv4" / "conf" / d / k).read_text()) for k in KEYS) for d in devices}


SHELLS = [s for s in (["dash"], ["busybox", "sh"], ["bash", "--posix"]) if shutil.which(s[0])]


def _run_host(hosts: Path, tmp: Path, proc: Path, *args: str, shell: tuple[str, ...] = ("sh",)
              ) -> tuple[int, str, str]:
    state = tmp / "links"
    if not state.exists():
        eth0 = state / "links" / "eth0"
        eth0.mkdir(parents=True)
        for name, value in (("parent", ""), ("vid", ""), ("up", "1"), ("addrs", "198.18.0.1/15"),
                            ("mac", "02:00:00:00:00:01")):
            (eth0 / name).write_text(value + "\n")
    env = {"PATH": f"{FAKEBIN}:/usr/bin:/bin", "FAKEIP_STATE": str(state), "FAKEIP_LOG": str(tmp / "ip.log"),
           "VRHOST_PROC_SYS": str(proc), "VRHOST_STATE_DIR": str(tmp / "run")}
    r = subprocess.run([shutil.which(shell[0]) or shell[0], *shell[1:], str(hosts / "vlanroute-host"), *args],
                       env=env, capture_output=True, text=True, timeout=60)
    return r.returncode, r.stdout, r.stderr


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: s[0])
def test_host_program_sets_loose_rp_filter_and_arp_sysctls_and_remove_restores_them(
        tmp_path: Path, shell: list[str]) -> None:
    hosts = _host_bundle(tmp_path, "trunk")
    assert "\ttrunk\n" in (hosts / "hosts.tsv").read_text()
    vlans = [line.split("\t")[0] for line in (hosts / "vlans.tsv").read_text().splitlines()
             if not line.startswith("#")]
    subs = [f"vr{v}" for v in vlans]
    devices = ["all", "default", "eth0", *subs]
    start = {"all": {"rp_filter": 1, "arp_ignore": 1}, "default": {"rp_filter": 1}}
    proc = _proc(tmp_path, devices, start)
    before = _sysctls(proc, devices)

    rc, out, err = _run_host(hosts, tmp_path, proc, "--host", "node001", shell=tuple(shell))
    assert rc == 0, err
    after = _sysctls(proc, devices)
    assert all(after[s] == (2, 0, 0) for s in subs)                 # loose, answer ARP, no arp_filter
    assert after["all"] == (1, 0, 0)                                # rp_filter of all is left alone:
    assert after["default"] == before["default"] and after["eth0"] == before["eth0"]   # max(1, 2) = 2
    assert "trunk attachment: set vr" in out and "all.arp_ignore=0" in out
    saved = (tmp_path / "run" / "sysctl-node001.saved").read_text().splitlines()
    assert "all/arp_ignore 1" in saved and f"{subs[0]}/rp_filter 1" in saved

    # A second run changes nothing and keeps the values from before vlanroute.
    rc, out, err = _run_host(hosts, tmp_path, proc, "--host", "node001", shell=tuple(shell))
    assert rc == 0 and "trunk attachment: set" not in out, err
    assert (tmp_path / "run" / "sysctl-node001.saved").read_text().splitlines() == saved

    rc, out, err = _run_host(hosts, tmp_path, proc, "--host", "node001", "--show", shell=tuple(shell))
    assert rc == 0, err
    assert "host attachment trunk" in out and f"{subs[0]}\tVLAN" in out and "rp_filter 2, arp_ignore 0" in out

    rc, out, err = _run_host(hosts, tmp_path, proc, "--host", "node001", "--remove", shell=tuple(shell))
    assert rc == 0, err
    assert _sysctls(proc, devices) == before and "restored" in out
    assert not (tmp_path / "run" / "sysctl-node001.saved").exists()


def test_host_program_leaves_the_sysctls_of_an_untagged_host_alone(tmp_path: Path) -> None:
    hosts = _host_bundle(tmp_path, "untagged")
    assert "\tuntagged\n" in (hosts / "hosts.tsv").read_text()
    devices = ["all", "default", "eth0"]
    proc = _proc(tmp_path, devices, {"all": {"arp_ignore": 1}})
    before = _sysctls(proc, devices)
    rc, out, err = _run_host(hosts, tmp_path, proc, "--host", "node001")
    assert rc == 0, err
    assert _sysctls(proc, devices) == before and not (tmp_path / "run").exists()
    rc, out, err = _run_host(hosts, tmp_path, proc, "--host", "node001", "--show")
    assert rc == 0 and "host attachment untagged" in out, err


def test_a_plan_without_host_attachment_is_read_as_untagged(tmp_path: Path) -> None:
    from vlanroute.bundle.document import plan_document
    data = plan_from_file(TORUS, SMALL[1::2]).to_json()
    for sw in data["switches"].values():
        del sw["host_attachment"]
    del data["settings"]["host_attachment"]
    doc = plan_document(data)
    assert {sw.host_attachment for sw in doc.switches.values()} == {"untagged"}
    assert doc.settings.host_attachment == "auto"


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_push_trunk_host_ports_to_fake_62xx_switches(farm, tmp_path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    """Push, read back and compare: the general-mode trunk host port (untagged in its own
    VLAN, tagged in the others) goes through the same loop-safe push as the untagged one."""
    from push_support import build_cluster, run, set_ssh_env
    from vlanroute.drivers import parse_config
    from vlanroute.model.platforms import PLATFORMS
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-ring.yaml",
                            extra_sets=("settings.host_attachment=trunk", "hosts={per_switch: 2}"))
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts", str(cluster.known_hosts),
                       "--yes", "--workers", "8")
    assert rc == 0, out + err
    for name, doc in cluster.plan["switches"].items():
        assert doc["host_attachment"] == "trunk"
        running = parse_config(PLATFORMS[doc["platform"]], cluster.switch(name).running_config(), switch=name)
        for port, spec in doc["ports"].items():
            if spec["role"] == "host":
                got = running.ports[port]
                assert (got.pvid, got.untagged, got.tagged) == (spec["pvid"], {spec["pvid"]}, set(spec["tagged"]))
                assert spec["tagged"], port


def test_aeos_warns_of_untagged_host_ports_only_where_a_plan_uses_them() -> None:
    """The open AEOS question (a port untagged in several VLANs) is in the render warning
    only when an AEOS switch has untagged host ports (confirmed by the inventory); a
    trunk-attached AEOS switch never renders that command."""
    from vlanroute.api import render_warnings

    aeos = ["platform=apresia-15000-64xl", "switches={}", "hosts={per_switch: 3}"]
    confirmed = ["platforms={aeos-ok: {base: apresia-15000-64xl, confirm: [host-untagged-in-many-vlans]}}",
                 "platform=aeos-ok", "switches={}", "hosts={per_switch: 3}"]
    question = "a host port untagged in several VLANs"
    trunk = render_warnings(plan_from_file(TORUS, aeos).to_document())
    untagged_doc = plan_from_file(TORUS, confirmed).to_document()
    assert {s.host_attachment for s in untagged_doc.switches.values()} == {"untagged"}
    untagged = render_warnings(untagged_doc)
    assert len(trunk) == len(untagged) == 1 and "APRESIA AEOS syntax" in trunk[0]
    assert question not in trunk[0] and "spanning-tree disable" in trunk[0]
    assert question in untagged[0] and "spanning-tree disable" in untagged[0]
