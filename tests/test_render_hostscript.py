"""The host program hosts/vlanroute-host and its tables: POSIX sh (dash, busybox sh, bash
--posix), idempotent (a second run changes nothing), `--remove` undoes, the row found by
hostname or MAC, the learning frames (broadcast ping of iputils or busybox, ARP probe).

Run under a fake `ip` and `ping` (tests/fakebin, sh) on PATH that keep link state and record
every call: this kernel has no 8021q module, so real VLAN sub-interfaces cannot be made
here (the emulation tests run the same program on a real kernel in a VM)."""

from __future__ import annotations

import ipaddress
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from render_fixtures import document, ring3_plan
from vlanroute.bundle.document import PlanDocument
from vlanroute.render.write import RenderOptions, render_files

FAKEBIN = Path(__file__).parent / "fakebin"
ROOT = Path(__file__).resolve().parent.parent
MUTATING = ("ip link add", "ip link set", "ip link del", "ip addr add", "vconfig add", "vconfig rem")
ETH0 = {"parent": None, "vid": None, "up": True, "addrs": ["192.168.1.4/24"], "mac": "02:00:00:00:00:04"}
SHELLS = [s for s in (["sh"], ["dash"], ["busybox", "sh"], ["bash", "--posix"]) if shutil.which(s[0])]


def bundle(method: str | None = None, network: str | None = None, per_host: bool = False,
           doc: dict | PlanDocument | None = None) -> dict[str, str]:
    doc = doc if isinstance(doc, PlanDocument) else document(doc or ring3_plan())
    return render_files(doc,
                        RenderOptions(learning_method=method, host_network=network, per_host_scripts=per_host))


class Host:
    """A host directory: the bundle's hosts/ files, the fake link state (a tree, see
    fakebin/ip) and the call log."""

    def __init__(self, tmp: Path, files: dict[str, str] | None = None, shell: list[str] | None = None) -> None:
        self.dir = tmp / "hosts"
        self.dir.mkdir(parents=True, exist_ok=True)
        for rel, text in (files or bundle()).items():
            if rel.startswith("hosts/"):
                path = self.dir / rel.removeprefix("hosts/")
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        self.program = self.dir / "vlanroute-host"
        self.state = tmp / "state"
        self.log = tmp / "calls.log"
        shell = shell or ["sh"]
        self.shell = [shutil.which(shell[0]) or shell[0], *shell[1:]]     # found before PATH changes
        self.path = f"{FAKEBIN}:/usr/bin:/bin"
        self.env: dict[str, str] = {}
        self.set_links({"eth0": ETH0})

    def run(self, *args: str, program: Path | None = None, prefix: list[str] | None = None
            ) -> tuple[int, list[str], str, str]:
        self.log.write_text("")
        env = {"PATH": self.path, "FAKEIP_STATE": str(self.state), "FAKEIP_LOG": str(self.log),
               "VLANROUTE": str(FAKEBIN / "fake-vlanroute"), **self.env}
        proc = subprocess.run([*(prefix or []), *self.shell, str(program or self.program), *args], env=env,
                              capture_output=True, text=True, timeout=60)
        return proc.returncode, self.log.read_text().splitlines(), proc.stdout, proc.stderr

    def links(self) -> dict:
        out = {}
        for d in sorted((self.state / "links").iterdir()):
            parent = (d / "parent").read_text().strip()
            vid = (d / "vid").read_text().strip()
            out[d.name] = {"parent": parent or None, "vid": int(vid) if vid else None,
                           "up": (d / "up").read_text().strip() == "1",
                           "addrs": (d / "addrs").read_text().split(), "mac": (d / "mac").read_text().strip()}
        return out

    def set_links(self, links: dict) -> None:
        shutil.rmtree(self.state, ignore_errors=True)
        (self.state / "links").mkdir(parents=True)
        for name, link in links.items():
            d = self.state / "links" / name
            d.mkdir()
            (d / "parent").write_text(f"{link['parent'] or ''}\n")
            (d / "vid").write_text(f"{link['vid'] or ''}\n")
            (d / "up").write_text("1\n" if link["up"] else "0\n")
            (d / "addrs").write_text("".join(f"{a}\n" for a in link["addrs"]))
            (d / "mac").write_text(link["mac"] + "\n")


def _mutations(calls: list[str]) -> list[str]:
    return [c for c in calls if c.startswith(MUTATING)]


def _pings(calls: list[str]) -> list[str]:
    return sorted(c for c in calls if c.startswith("ping "))


def _without_ping() -> list[str]:
    """A command prefix that hides this machine's ping (a private mount namespace with
    /dev/null bound over it): the program also searches the standard directories."""
    real = shutil.which("ping", path="/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    if real is None:
        return []
    if subprocess.run(["unshare", "-m", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs root and unshare -m to hide this machine's ping")
    return ["unshare", "-m", "sh", "-c", f'mount --bind /dev/null {real} && exec "$0" "$@"']


# --- the bundle -----------------------------------------------------------------------------

def test_every_rendered_host_file_is_valid_posix_sh(tmp_path: Path) -> None:
    for method in ("system", "ip-link", "vconfig", "raw"):
        for network in ("script", "networkd", "networkmanager", "netplan"):
            if network != "script" and method not in ("system", "ip-link"):
                continue
            files = bundle(method, network, per_host=True)
            for rel, text in files.items():
                if rel.startswith("hosts/") and text.startswith("#!/bin/sh"):
                    path = tmp_path / "x.sh"
                    path.write_text(text)
                    for shell in SHELLS:
                        r = subprocess.run([*shell, "-n", str(path)], capture_output=True, text=True)
                        assert r.returncode == 0, (method, network, rel, shell, r.stderr)


def test_seed_bundle_needs_no_vlanroute_on_the_hosts(tmp_path: Path) -> None:
    from vlanroute.plan.build import plan_from_file
    doc = plan_from_file(ROOT / "inventories" / "seed-torus.yaml").to_document()
    files = bundle(doc=doc)
    host_files = {rel: text for rel, text in files.items() if rel.startswith("hosts/")}
    assert sorted(host_files) == ["hosts/ansible-playbook.yml", "hosts/hosts.tsv", "hosts/install.sh",
                                  "hosts/vlanroute-host", "hosts/vlans.tsv"]
    for rel, text in host_files.items():
        code = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("#"))
        # The program mentions `vlanroute learn` only in the branch of the other methods,
        # which a bundle rendered with the default method never takes: METHOD=system.
        code = re.sub(r"\n        vids=\n.*?how=\"vlanroute learn\"", "", code, flags=re.S)
        assert not re.search(r"\bvlanroute (learn|-)|python[0-9.]* -m vlanroute|VLANROUTE", code), rel
    assert "\nMETHOD=system\n" in files["hosts/vlanroute-host"]
    assert len(files["hosts/hosts.tsv"].splitlines()) == 2 + 225
    assert files["hosts/vlans.tsv"].splitlines()[2:] == [
        "101\t10.240.0.0/24", "102\t10.240.1.0/24", "103\t10.240.2.0/24", "104\t10.240.3.0/24"]


def test_table_rows_and_the_address_rule(tmp_path: Path) -> None:
    files = bundle()
    rows = [line.split("\t") for line in files["hosts/hosts.tsv"].splitlines() if not line.startswith("#")]
    assert rows[3] == ["node004", "eth0", "-", "102", "3", "untagged"]
    assert files["hosts/hosts.tsv"].startswith("# vlanroute plan ring3: ")
    # What the host computes (first address + 1 + index) is the plan's rule, computed apart
    # with ipaddress (vlanroute.plan.learning.learning_address).
    from vlanroute.plan.learning import learning_address
    host = Host(tmp_path, files)
    plan = ring3_plan()
    for name, h in plan["hosts"].items():
        rc, _, out, err = host.run("--host", name, "--show")
        assert rc == 0, err
        shown = dict(re.findall(r"^vr(\d+)\tVLAN \d+\t([\d.]+)/24", out, re.M))
        assert shown == {str(v["id"]): learning_address(v["learning_subnet"], h["index"])
                         for v in plan["vlans"]}, name


def _arp_frames(vlans: tuple[int, ...], index: int) -> list[str]:
    return [line for v in vlans for line in (
        f"ip ntable change name arp_cache dev vr{v} ucast_probes 1",
        f"ip neigh replace 10.250.{v - 101}.{index + 1} dev vr{v} lladdr ff:ff:ff:ff:ff:ff nud probe")]


@pytest.mark.parametrize("shell", SHELLS, ids=lambda s: s[0])
def test_setup_is_idempotent_and_remove_undoes_it(tmp_path: Path, shell: list[str]) -> None:
    host = Host(tmp_path, shell=shell)
    rc, calls, out, err = host.run("--host", "node004")
    assert rc == 0, err
    assert _mutations(calls) == [
        "ip link add link eth0 name vr101 type vlan id 101",
        "ip addr add 10.250.0.4/24 brd + dev vr101",
        "ip link set dev vr101 up",
        "ip link add link eth0 name vr102 type vlan id 102",
        "ip addr add 10.250.1.4/24 brd + dev vr102",
        "ip link set dev vr102 up",
        "ip link add link eth0 name vr103 type vlan id 103",
        "ip addr add 10.250.2.4/24 brd + dev vr103",
        "ip link set dev vr103 up",
    ]
    # iproute2: one `ip` reads the state, one `ip -batch` makes the sub-interfaces and
    # sends the frames (ARP announcements, the default with iproute2).
    assert calls.count("ip -batch") == 2 and _pings(calls) == []
    assert calls[calls.index("ip link set dev vr103 up") + 1:] == _arp_frames((101, 102, 103), 3)
    assert "node004: 3 learning frames sent (arp) from vr101..vr103" in out
    after_first = host.links()
    assert after_first["vr102"] == {"parent": "eth0", "vid": 102, "up": True, "addrs": ["10.250.1.4/24"],
                                    "mac": ETH0["mac"]}

    rc, calls, _, err = host.run("--host", "node004")
    assert rc == 0, err
    assert _mutations(calls) == [] and host.links() == after_first          # changes nothing
    assert calls[calls.index("ip -batch", 1) + 1:] == _arp_frames((101, 102, 103), 3)   # but sends again

    rc, calls, out, err = host.run("--host", "node004", "--remove")
    assert rc == 0, err
    assert host.links() == {"eth0": ETH0} and "neigh" not in " ".join(calls)
    assert "removed vr101 vr102 vr103" in out
    rc, calls, _, _ = host.run("--host", "node004", "--remove")
    assert rc == 0 and _mutations(calls) == []


def test_broadcast_ping_of_iputils(tmp_path: Path) -> None:
    host = Host(tmp_path)
    rc, calls, out, err = host.run("--host", "node004", "--frame", "ping")
    assert rc == 0, err
    assert len(_mutations(calls)) == 9 and "neigh" not in " ".join(calls)
    assert _pings(calls) == [f"ping -q -n -c 1 -b -W 1 -I vr10{v} 10.250.{v - 1}.255" for v in (1, 2, 3)]
    assert "node004: 3 learning frames sent (ping, iputils) from vr101..vr103" in out


def test_busybox_ip_and_ping(tmp_path: Path) -> None:
    # busybox ip has no batch mode (it prints its usage): the state is read plainly and
    # the commands run one by one; busybox ping has no -b and allows broadcast anyway.
    host = Host(tmp_path, shell=["busybox", "sh"] if shutil.which("busybox") else ["sh"])
    host.env = {"FAKEIP_BUSYBOX": "1", "FAKEPING_KIND": "busybox"}
    rc, calls, out, err = host.run("--host", "node001")
    assert rc == 0, err
    assert "ip -batch" not in calls and calls[0] == "ip addr show"
    assert len(_mutations(calls)) == 9
    assert _pings(calls) == [f"ping -q -c 1 -W 1 -I vr10{v} 10.250.{v - 1}.255" for v in (1, 2, 3)]
    assert "(ping, busybox)" in out


def test_frame_choice_and_its_errors(tmp_path: Path) -> None:
    host = Host(tmp_path)
    # With a splay the set-up is done first and the frames follow on their own.
    rc, calls, out, err = host.run("--host", "node002", "--splay", "1")
    assert rc == 0, err
    assert calls.count("ip -batch") == 3 and calls[-6:] == _arp_frames((101, 102, 103), 1)
    rc, calls, out, err = host.run("--host", "node002", "--frame", "arp", "--splay", "1")
    assert rc == 0 and calls.count("ip -batch") == 2 and _mutations(calls) == []      # the frames alone
    # Without a ping, --frame ping cannot work; busybox ip cannot send the ARP probe.
    host.path = f"{tmp_path / 'noping'}:/usr/bin:/bin"
    (tmp_path / "noping").mkdir()
    (tmp_path / "noping" / "ip").symlink_to(FAKEBIN / "ip")
    no_ping = _without_ping()
    rc, _, _, err = host.run("--host", "node002", "--frame", "ping", prefix=no_ping)
    assert rc == 1 and "--frame ping: no iputils or busybox ping found" in err
    host.env = {"FAKEIP_BUSYBOX": "1"}
    rc, _, _, err = host.run("--host", "node002", prefix=no_ping)
    assert rc == 1 and "cannot send the ARP announcement: install iproute2 or a ping" in err
    rc, _, _, err = host.run("--host", "node002", "--frame", "arp", prefix=no_ping)
    assert rc == 1 and "needs iproute2's ip" in err


def test_answered_and_failed_pings(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.env = {"FAKEPING_REPLY": "1"}
    rc, _, _, err = host.run("--host", "node001", "--frame", "ping")
    assert rc == 0 and "icmp_echo_ignore_broadcasts=0" in err          # a warning, not a failure
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "ping").write_text("#!/bin/sh\n[ \"$1\" = -V ] && { echo 'ping from iputils'; exit 0; }\n"
                                           "echo 'ping: sendmsg: Network is unreachable' >&2; exit 2\n")
    (tmp_path / "bin" / "ping").chmod(0o755)
    host.env = {}
    host.path = f"{tmp_path / 'bin'}:{host.path}"
    rc, _, _, err = host.run("--host", "node001", "--frame", "ping")
    assert rc == 1 and "the learning ping failed on vr101 vr102 vr103" in err.replace("  ", " ")


def test_repairs_a_partly_removed_setup(tmp_path: Path) -> None:
    host = Host(tmp_path)
    assert host.run("--host", "node001", "--no-learn")[0] == 0
    links = host.links()
    links["vr102"]["up"] = False
    links["vr103"]["addrs"] = []
    host.set_links(links)
    rc, calls, out, _ = host.run("--host", "node001", "--no-learn")
    assert rc == 0
    assert _mutations(calls) == ["ip link set dev vr102 up", "ip addr add 10.250.2.1/24 brd + dev vr103"]
    assert _pings(calls) == [] and "(repaired)" in out


def test_refuses_a_sub_interface_it_did_not_make(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.set_links({"eth0": ETH0, "eth1": {**ETH0, "addrs": []},
                    "vr102": {"parent": "eth1", "vid": 102, "up": True, "addrs": [], "mac": ETH0["mac"]}})
    rc, calls, _, err = host.run("--host", "node001")
    assert rc == 1 and "vr102 exists but sits on eth1, not on eth0" in err and _mutations(calls) == []
    host.set_links({"eth0": ETH0, "vr102": {"parent": "eth0", "vid": 7, "up": True, "addrs": [], "mac": ETH0["mac"]}})
    rc, calls, _, err = host.run("--host", "node001")
    assert rc == 1 and "vr102 exists but is VLAN 7, not 102" in err and _mutations(calls) == []


def test_finds_its_row_by_hostname_or_mac(tmp_path: Path) -> None:
    if subprocess.run(["unshare", "-u", "true"], capture_output=True).returncode != 0:
        pytest.skip("needs root and unshare -u (a private hostname)")
    doc = ring3_plan()
    doc["hosts"]["node005"]["mac"] = "02:00:00:00:00:04"        # eth0's MAC in the fake state
    host = Host(tmp_path, bundle(doc=doc))

    def show_as(hostname: str) -> tuple[int, str, str]:
        rc, _, out, err = host.run("--show", prefix=["unshare", "-u", "sh", "-c",
                                                     f'hostname {hostname} && exec "$0" "$@"'])
        return rc, out.splitlines()[0] if out else "", err

    assert show_as("node003")[1].startswith("host node003 (found by hostname node003)")
    assert show_as("node003.cluster.example")[1].startswith("host node003 (found by hostname node003.cluster")
    assert show_as("login7")[1].startswith("host node005 (found by the MAC address of eth0)")
    doc["hosts"]["node006"]["mac"] = "02:00:00:00:00:04"
    host = Host(tmp_path / "two", bundle(doc=doc))
    rc, _, err = show_as("login7")
    assert rc == 1 and "match 2 rows" in err
    doc["hosts"]["node006"]["mac"] = None
    doc["hosts"]["node005"]["mac"] = None
    host = Host(tmp_path / "none", bundle(doc=doc))
    rc, _, err = show_as("login7")
    assert rc == 1 and "this host (hostname login7) is not in" in err and "give --host NAME" in err


def test_tables_of_another_plan_are_refused(tmp_path: Path) -> None:
    host = Host(tmp_path)
    text = (host.dir / "vlans.tsv").read_text()
    (host.dir / "vlans.tsv").write_text(text.replace("plan ring3:", "plan other:"))
    rc, calls, _, err = host.run("--host", "node001")
    assert rc == 1 and "not those of plan ring3" in err and calls == []
    (host.dir / "vlans.tsv").write_text(text.replace("10.250.1.0/24", "10.250.1.0/24;reboot"))
    rc, calls, _, err = host.run("--host", "node001")
    assert rc == 1 and "vlans.tsv: VLAN 102" in err and _mutations(calls) == []


@pytest.mark.parametrize("args", [["--splay"], ["--splay", "1;reboot"], ["--host", "a b"], ["--bogus"],
                                  ["--frame", "udp"], ["--root", "/tmp/x"]])
def test_bad_arguments_change_nothing(tmp_path: Path, args: list[str]) -> None:
    host = Host(tmp_path)
    rc, calls, _, _ = host.run(*args)
    assert rc == 2 and calls == []


def test_missing_parent_interface_is_reported(tmp_path: Path) -> None:
    host = Host(tmp_path)
    host.set_links({})
    rc, calls, _, err = host.run("--host", "node001")
    assert rc == 1 and "interface eth0 (the row of node001 in" in err and _mutations(calls) == []


# --- the other learning methods (frames from `vlanroute learn`) -------------------------------

def test_ip_link_method_calls_vlanroute_learn(tmp_path: Path) -> None:
    host = Host(tmp_path, bundle("ip-link"))
    rc, calls, _, err = host.run("--host", "node004", "--splay", "0")
    assert rc == 0, err
    assert len(_mutations(calls)) == 9 and _pings(calls) == []
    assert calls[-1] == "vlanroute learn --interface eth0 --prefix vr 101 102 103"


def test_vconfig_method(tmp_path: Path) -> None:
    host = Host(tmp_path, bundle("vconfig"))
    rc, calls, _, err = host.run("--host", "node006")
    assert rc == 0, err
    assert "vconfig add eth0 101" in calls and "ip link set dev vlan101 name vr101" in calls
    assert not any(c.startswith("ip link add") for c in calls)
    first = host.links()
    assert sorted(first) == ["eth0", "vr101", "vr102", "vr103"] and first["vr103"]["vid"] == 103
    assert host.run("--host", "node006")[0] == 0 and host.links() == first
    assert host.run("--host", "node006", "--remove")[0] == 0 and host.links() == {"eth0": ETH0}


def test_raw_method_creates_nothing(tmp_path: Path) -> None:
    host = Host(tmp_path, bundle("raw"))
    rc, calls, _, err = host.run("--host", "node002")
    assert rc == 0, err
    assert _mutations(calls) == [] and host.links() == {"eth0": ETH0}
    assert calls[-1] == "vlanroute learn --interface eth0 --raw 101 102 103"
    assert host.run("--host", "node002", "--remove")[0] == 0


# --- per-host scripts -------------------------------------------------------------------------

def test_per_host_scripts_carry_their_row(tmp_path: Path) -> None:
    files = bundle(per_host=True)
    assert sorted(f for f in files if f.startswith("hosts/per-host/")) == [
        f"hosts/per-host/node00{i}.sh" for i in range(1, 7)]
    host = Host(tmp_path, files)
    own = host.dir / "per-host" / "node003.sh"
    (host.dir / "hosts.tsv").unlink()            # it needs no table
    rc, calls, out, err = host.run(program=own)
    assert rc == 0, err
    assert "ip addr add 10.250.0.3/24 brd + dev vr101" in calls and "node003: 3 learning frames" in out
    rc, calls, _, err = host.run("--host", "node004", program=own)
    assert rc == 1 and "the program of host node003" in err and calls == []


# --- persistent network configuration ------------------------------------------------------

def _network_root(tmp_path: Path) -> Path:
    root = tmp_path / "root"
    (root / "etc/systemd/network").mkdir(parents=True)
    (root / "etc/systemd/network/20-wired.network").write_text("[Match]\nName=enp129s0f1np1\n\n[Network]\nDHCP=yes\n")
    (root / "etc/systemd/network/99-other.network").write_text("[Match]\nName=eth9 eth10\n")
    (root / "etc/netplan").mkdir(parents=True)
    (root / "etc/netplan/50-cloud-init.yaml").write_text(
        "network:\n  version: 2\n  ethernets:\n    enp129s0f1np1:\n      dhcp4: true\n")
    (root / "etc/netplan/50-cloud-init.yaml").chmod(0o600)
    return root


def _long_nic_plan() -> dict:
    doc = ring3_plan()
    for h in doc["hosts"].values():
        h["interface"] = "enp129s0f1np1"
    return doc


@pytest.mark.parametrize("network", ["networkd", "networkmanager", "netplan"])
def test_write_network_files_parse_and_name_the_right_things(tmp_path: Path, network: str) -> None:
    import configparser

    import yaml

    host = Host(tmp_path, bundle(network=network, doc=_long_nic_plan()))
    root = _network_root(tmp_path)
    rc, _, out, err = host.run("--write-network", "--root", str(root), "--host", "node005")
    assert rc == 0, err
    written = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()
                     and "vlanroute" in p.name + str(p.parent))
    if network == "networkd":
        assert written == ["etc/systemd/network/10-vlanroute-vr101.netdev", "etc/systemd/network/10-vlanroute-vr101.network",
                           "etc/systemd/network/10-vlanroute-vr102.netdev", "etc/systemd/network/10-vlanroute-vr102.network",
                           "etc/systemd/network/10-vlanroute-vr103.netdev", "etc/systemd/network/10-vlanroute-vr103.network",
                           "etc/systemd/network/20-wired.network.d/90-vlanroute.conf"]
        for v in (101, 102, 103):
            netdev = configparser.ConfigParser()
            netdev.read(root / f"etc/systemd/network/10-vlanroute-vr{v}.netdev")
            assert dict(netdev["NetDev"]) == {"name": f"vr{v}", "kind": "vlan"} and netdev["VLAN"]["id"] == str(v)
            net = configparser.ConfigParser()
            net.read(root / f"etc/systemd/network/10-vlanroute-vr{v}.network")
            assert net["Match"]["name"] == f"vr{v}"
            assert net["Network"]["address"] == f"10.250.{v - 101}.5/24"
            assert net["Network"]["linklocaladdressing"] == "no"
        # The drop-in of the file networkd applies to the parent: one VLAN= line per VLAN
        # (configparser keeps only one of repeated keys, so read the lines).
        drop = (root / "etc/systemd/network/20-wired.network.d/90-vlanroute.conf").read_text().splitlines()
        assert [l for l in drop if not l.startswith("#")] == ["[Network]", "VLAN=vr101", "VLAN=vr102", "VLAN=vr103"]
        assert "networkctl reload && networkctl reconfigure enp129s0f1np1" in out
    elif network == "networkmanager":
        assert written == [f"etc/NetworkManager/system-connections/vlanroute-vr10{v}.nmconnection" for v in (1, 2, 3)]
        uuids = set()
        for v in (1, 2, 3):
            path = root / f"etc/NetworkManager/system-connections/vlanroute-vr10{v}.nmconnection"
            assert path.stat().st_mode & 0o777 == 0o600          # NM ignores keyfiles others can read
            kf = configparser.ConfigParser(interpolation=None)
            kf.read(path)
            assert kf["connection"]["type"] == "vlan" and kf["connection"]["interface-name"] == f"vr10{v}"
            assert kf["vlan"]["id"] == f"10{v}" and kf["vlan"]["parent"] == "enp129s0f1np1"
            assert kf["ipv4"]["address1"] == f"10.250.{v - 1}.5/24" and kf["ipv4"]["method"] == "manual"
            assert kf["ipv6"]["method"] == "disabled"
            assert re.fullmatch(r"[0-9a-f]{8}(-[0-9a-f]{4}){3}-[0-9a-f]{12}", kf["connection"]["uuid"])
            uuids.add(kf["connection"]["uuid"])
        assert len(uuids) == 3
    else:
        path = root / "etc/netplan/90-vlanroute.yaml"
        assert written == ["etc/netplan/90-vlanroute.yaml"] and path.stat().st_mode & 0o777 == 0o600
        vlans = yaml.safe_load(path.read_text())["network"]["vlans"]
        assert vlans == {f"vr10{v}": {"id": 100 + v, "link": "enp129s0f1np1", "addresses": [f"10.250.{v - 1}.5/24"],
                                      "link-local": [], "accept-ra": False} for v in (1, 2, 3)}
        if shutil.which("netplan"):
            # netplan itself reads the files and generates networkd's: the VLANs hang off the parent.
            r = subprocess.run(["netplan", "generate", "--root-dir", str(root)], capture_output=True, text=True)
            assert r.returncode == 0, r.stderr
            parent = (root / "run/systemd/network/10-netplan-enp129s0f1np1.network").read_text()
            assert "VLAN=vr101" in parent and "DHCP=ipv4" in parent
            assert "Id=102" in (root / "run/systemd/network/10-netplan-vr102.netdev").read_text()
    before = {p: p.read_bytes() for p in root.rglob("*") if p.is_file()}
    rc, _, out, _ = host.run("--write-network", "--root", str(root), "--host", "node005")
    assert rc == 0 and "already up to date" in out                  # idempotent, UUIDs kept
    assert {p: p.read_bytes() for p in root.rglob("*") if p.is_file()} == before


def _ini_pairs(text: str) -> list[tuple[str, str, str]]:
    """(section, key, value) of every assignment of a systemd unit-style or keyfile text,
    repeated keys included (configparser would keep only one)."""
    section, out = "", []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith(("#", ";")):
            continue
        if line.startswith("["):
            section = line.strip("[]")
        else:
            key, _, value = line.partition("=")
            out.append((section, key.strip(), value.strip()))
    return out


NETWORKD = next((p for p in ("/lib/systemd/systemd-networkd", "/usr/lib/systemd/systemd-networkd")
                 if Path(p).is_file()), None)


@pytest.mark.skipif(NETWORKD is None, reason="needs systemd-networkd (package systemd)")
def test_networkd_knows_every_key_we_write(tmp_path: Path) -> None:
    """networkd looks settings up in tables of "Section.Key" strings compiled into its binary
    (its network-gperf and netdev-gperf tables; systemd.network(5), systemd.netdev(5)): every
    key the program writes must be one of them, or networkd would ignore it with a warning."""
    host = Host(tmp_path, bundle(network="networkd", doc=_long_nic_plan()))
    root = _network_root(tmp_path)
    rc, _, _, err = host.run("--write-network", "--root", str(root), "--host", "node005")
    assert rc == 0, err
    known = set(re.findall(rb"(?<=\0)([A-Z][A-Za-z0-9]*\.[A-Z][A-Za-z0-9]*)(?=\0)", Path(NETWORKD).read_bytes()))
    assert {b"Network.VLAN", b"NetDev.Kind", b"Match.Name"} <= known        # the table was found
    files = [p for p in root.rglob("*") if p.is_file() and "vlanroute" in p.name]
    assert len(files) == 7
    for path in files:
        for section, key, _ in _ini_pairs(path.read_text()):
            assert f"{section}.{key}".encode() in known, (path.name, section, key)


@pytest.mark.skipif(shutil.which("nmcli") is None, reason="needs nmcli (package network-manager)")
def test_networkmanager_reads_our_keyfiles_as_written(tmp_path: Path) -> None:
    """NetworkManager's own keyfile reader (`nmcli --offline connection modify` reads a
    keyfile on stdin and prints it back normalised, without a running daemon; nmcli(1),
    nm-settings-keyfile(5)) keeps every key and value we wrote: a key it did not know would
    be dropped, a bad value refused."""
    host = Host(tmp_path, bundle(network="networkmanager", doc=_long_nic_plan()))
    root = _network_root(tmp_path)
    rc, _, _, err = host.run("--write-network", "--root", str(root), "--host", "node005")
    assert rc == 0, err
    for v in (101, 102, 103):
        ours = (root / f"etc/NetworkManager/system-connections/vlanroute-vr{v}.nmconnection").read_text()
        r = subprocess.run(["nmcli", "--offline", "connection", "modify", "connection.id", f"vlanroute-vr{v}"],
                           input=ours, capture_output=True, text=True, timeout=60)
        if r.returncode != 0 and "offline" in r.stderr:
            pytest.skip("this nmcli has no --offline mode (NetworkManager 1.42 or newer)")
        assert r.returncode == 0, r.stderr
        theirs = set(_ini_pairs(r.stdout))
        # NM prints no value that equals its default (nm-settings-nmcli(5): autoconnect, default yes).
        written = set(_ini_pairs(ours)) - {("connection", "autoconnect", "true")}
        assert written <= theirs, written - theirs
        assert ("vlan", "parent", "enp129s0f1np1") in theirs and ("vlan", "id", str(v)) in theirs


def test_write_network_refuses_what_the_stack_cannot_do(tmp_path: Path) -> None:
    root = _network_root(tmp_path)
    host = Host(tmp_path / "n", bundle(network="netplan", doc=ring3_plan()))        # parent eth0
    rc, _, _, err = host.run("--write-network", "--root", str(root), "--host", "node001")
    assert rc == 1 and "eth0 is not defined in any netplan file" in err
    host = Host(tmp_path / "d", bundle(network="networkd", doc=ring3_plan()))
    rc, _, _, err = host.run("--write-network", "--root", str(root), "--host", "node001")
    assert rc == 1 and "no systemd-networkd .network file names eth0" in err
    rc, _, _, err = host.run("--write-network", "--root", str(root), "--host", "node001",
                             "--networkd-parent", "10-eth0.network")
    assert rc == 0 and (root / "etc/systemd/network/10-eth0.network.d/90-vlanroute.conf").is_file()
    (root / "etc/systemd/network/30-also.network").write_text("[Match]\nName=eth0\n")
    (root / "etc/systemd/network/31-again.network").write_text("[Match]\nName=eth0\n")
    rc, _, _, err = host.run("--write-network", "--root", str(root), "--host", "node001")
    assert rc == 1 and "several .network files name eth0 (30-also.network 31-again.network)" in err
    # In network mode the refresh run leaves the sub-interfaces to the stack.
    rc, calls, _, err = host.run("--host", "node001")
    assert rc == 1 and "not set up by networkd" in err and _mutations(calls) == []
    script = Host(tmp_path / "s")
    rc, _, _, err = script.run("--write-network", "--root", str(root), "--host", "node001")
    assert rc == 1 and "rendered with --host-network script" in err


# --- install.sh and the playbook -------------------------------------------------------------

@pytest.mark.parametrize("shell", [s for s in SHELLS if s[0] in ("sh", "busybox")], ids=lambda s: s[0])
def test_install_places_program_tables_and_refresh_job(tmp_path: Path, shell: list[str]) -> None:
    files = bundle()
    for rel, text in files.items():
        if rel.startswith(("hosts/", "refresh/")):
            (tmp_path / "b" / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / "b" / rel).write_text(text)
    root = tmp_path / "img"
    (root / "etc/cron.d").mkdir(parents=True)

    def install(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*shell, str(tmp_path / "b/hosts/install.sh"), "--root", str(root), *args],
                              capture_output=True, text=True, timeout=60)

    r = install("--no-run")
    assert r.returncode == 0, r.stderr
    assert sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file()) == [
        "etc/cron.d/vlanroute-refresh", "etc/vlanroute/hosts.tsv", "etc/vlanroute/vlans.tsv",
        "usr/local/sbin/vlanroute-host"]
    assert (root / "usr/local/sbin/vlanroute-host").stat().st_mode & 0o777 == 0o755
    assert (root / "etc/cron.d/vlanroute-refresh").stat().st_mode & 0o777 == 0o644
    assert r.stdout.count("changed: ") == 4
    assert install("--no-run").stdout == ""                            # idempotent
    r = install("--no-run", "--refresh", "systemd")
    assert r.returncode == 0, r.stderr
    assert sorted(str(p.relative_to(root / "etc/systemd/system")) for p in (root / "etc/systemd/system").rglob("*")
                  if not p.is_dir() or p.is_symlink()) == [
        "multi-user.target.wants/vlanroute-refresh.service", "timers.target.wants/vlanroute-refresh.timer",
        "vlanroute-refresh.service", "vlanroute-refresh.timer"]
    assert os.readlink(root / "etc/systemd/system/timers.target.wants/vlanroute-refresh.timer") == \
        "/etc/systemd/system/vlanroute-refresh.timer"
    assert not (root / "etc/cron.d/vlanroute-refresh").exists()        # one refresh job, not two
    r = install("--remove")
    assert r.returncode == 0, r.stderr
    assert [p for p in root.rglob("*") if p.is_file() or p.is_symlink()] == []


def test_ansible_playbook_copies_and_runs_install(tmp_path: Path) -> None:
    import yaml

    play = yaml.safe_load(bundle()["hosts/ansible-playbook.yml"])
    assert len(play) == 1 and play[0]["become"] is True
    copy, run = play[0]["tasks"]
    assert copy["ansible.builtin.copy"]["dest"] == "/var/tmp/vlanroute/"
    assert copy["loop"] == ["{{ playbook_dir }}", "{{ playbook_dir }}/../refresh"]
    assert run["ansible.builtin.command"] == "sh /var/tmp/vlanroute/hosts/install.sh"
    assert run["changed_when"] == "'changed:' in vlanroute_install.stdout"


def test_address_rule_in_sh_matches_the_plan_past_octet_boundaries(tmp_path: Path) -> None:
    """1,000 hosts in /22 learning subnets from a pool above 2^31: the sh arithmetic carries
    across octets exactly as plan.json's addresses do, and finds the subnet's broadcast."""
    from vlanroute.plan.build import plan_from_file
    from vlanroute.plan.learning import learning_address
    doc = plan_from_file(ROOT / "inventories" / "seed-torus.yaml",
                         ["platform=linux-bridge", "hosts.count=1000", "switches={}",
                          "settings.learning.pool=172.16.0.0/12"]).to_document()
    names = list(doc.hosts)
    host = Host(tmp_path, bundle(doc=doc))
    line = re.compile(r"^vr(\d+)\tVLAN \d+\t([\d.]+)/22\tbroadcast ([\d.]+)", re.M)
    for name in (names[0], names[254], names[255], names[511], names[-1]):
        rc, _, out, err = host.run("--host", name, "--show")
        assert rc == 0, err
        shown = line.findall(out)
        assert {v: a for v, a, _ in shown} == {str(x.id): learning_address(x.learning_subnet, doc.hosts[name].index)
                                               for x in doc.vlans}, name
        for v, _a, bcast in shown:
            subnet = next(x.learning_subnet for x in doc.vlans if str(x.id) == v)
            assert bcast == str(ipaddress.ip_network(subnet).broadcast_address)
