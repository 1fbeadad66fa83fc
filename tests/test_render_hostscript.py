"""Host scripts: POSIX sh, idempotent (a second run changes nothing), `--remove` undoes,
run under a fake `ip`/`vconfig` (tests/fakebin, sh) on PATH that keeps link state and records every call
(this kernel has no 8021q module, so real VLAN sub-interfaces cannot be made here)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from render_fixtures import document, ring3_plan
from vlanroute.render.write import RenderOptions, render_files

FAKEBIN = Path(__file__).parent / "fakebin"
MUTATING = ("ip link add", "ip link set", "ip link del", "ip addr add", "vconfig add", "vconfig rem")
INITIAL = {"links": {"eth0": {"parent": None, "vid": None, "up": True, "addrs": ["192.168.1.4/24"]}}}


class Host:
    """A host directory: the script, the fake link state (a tree, see fakebin/ip), the call log."""

    def __init__(self, tmp: Path, script: str) -> None:
        self.script = tmp / "vlanroute-host"
        self.script.write_text(script)
        self.script.chmod(0o755)
        self.state = tmp / "state"
        self.log = tmp / "calls.log"
        self.set_links(INITIAL["links"])

    def run(self, *args: str) -> tuple[int, list[str], str]:
        self.log.write_text("")
        env = {"PATH": f"{FAKEBIN}:/usr/bin:/bin", "FAKEIP_STATE": str(self.state),
               "FAKEIP_LOG": str(self.log), "VLANROUTE": str(FAKEBIN / "fake-vlanroute")}
        proc = subprocess.run(["sh", str(self.script), *args], env=env, capture_output=True,
                              text=True, timeout=30)
        return proc.returncode, self.log.read_text().splitlines(), proc.stderr

    def links(self) -> dict:
        out = {}
        for d in sorted((self.state / "links").iterdir()):
            parent = (d / "parent").read_text().strip()
            vid = (d / "vid").read_text().strip()
            out[d.name] = {"parent": parent or None, "vid": int(vid) if vid else None,
                           "up": (d / "up").read_text().strip() == "1",
                           "addrs": (d / "addrs").read_text().split()}
        return out

    def set_links(self, links: dict) -> None:
        shutil.rmtree(self.state, ignore_errors=True)
        for name, link in links.items():
            d = self.state / "links" / name
            d.mkdir(parents=True)
            (d / "parent").write_text(f"{link['parent'] or ''}\n")
            (d / "vid").write_text(f"{link['vid'] or ''}\n")
            (d / "up").write_text("1\n" if link["up"] else "0\n")
            (d / "addrs").write_text("".join(f"{a}\n" for a in link["addrs"]))
        (self.state / "links").mkdir(parents=True, exist_ok=True)


def _script(host: str = "node004", method: str | None = None) -> str:
    return render_files(document(ring3_plan()), RenderOptions(learning_method=method))[f"hosts/{host}.sh"]


def _mutations(calls: list[str]) -> list[str]:
    return [c for c in calls if c.startswith(MUTATING)]


def test_every_host_script_is_valid_posix_sh(tmp_path: Path) -> None:
    for method in ("ip-link", "vconfig", "raw"):
        files = render_files(document(ring3_plan()), RenderOptions(learning_method=method))
        for rel, text in files.items():
            if rel.startswith("hosts/"):
                path = tmp_path / "x.sh"
                path.write_text(text)
                assert subprocess.run(["sh", "-n", str(path)]).returncode == 0, (method, rel)
                if shutil.which("dash"):
                    assert subprocess.run(["dash", "-n", str(path)]).returncode == 0, (method, rel)


def test_ip_link_setup_is_idempotent_and_remove_undoes_it(tmp_path: Path) -> None:
    host = Host(tmp_path, _script("node004"))
    rc, calls, err = host.run()
    assert rc == 0, err
    assert _mutations(calls) == [
        "ip link add link eth0 name eth0.101 type vlan id 101",
        "ip addr add 10.250.0.4/24 brd + dev eth0.101",
        "ip link set dev eth0.101 up",
        "ip link add link eth0 name eth0.102 type vlan id 102",
        "ip addr add 10.250.1.4/24 brd + dev eth0.102",
        "ip link set dev eth0.102 up",
        "ip link add link eth0 name eth0.103 type vlan id 103",
        "ip addr add 10.250.2.4/24 brd + dev eth0.103",
        "ip link set dev eth0.103 up",
    ]
    assert calls[-1] == "vlanroute learn --interface eth0 --splay 0 101 102 103"
    after_first = host.links()
    assert after_first["eth0.102"] == {"parent": "eth0", "vid": 102, "up": True, "addrs": ["10.250.1.4/24"]}

    rc, calls, err = host.run()
    assert rc == 0, err
    assert _mutations(calls) == []                 # the second run changes nothing
    assert host.links() == after_first
    assert calls[-1].startswith("vlanroute learn ")  # but it does broadcast again

    rc, calls, err = host.run("--remove")
    assert rc == 0, err
    assert host.links() == INITIAL["links"]
    assert not any(c.startswith("vlanroute") for c in calls)
    rc, calls, err = host.run("--remove")
    assert rc == 0 and _mutations(calls) == []


def test_repairs_a_partly_removed_setup(tmp_path: Path) -> None:
    host = Host(tmp_path, _script("node001"))
    assert host.run("--no-learn")[0] == 0
    links = host.links()
    links["eth0.102"]["up"] = False
    links["eth0.103"]["addrs"] = []
    host.set_links(links)
    rc, calls, _ = host.run("--no-learn")
    assert rc == 0
    assert _mutations(calls) == ["ip link set dev eth0.102 up", "ip addr add 10.250.2.1/24 brd + dev eth0.103"]
    assert not any(c.startswith("vlanroute") for c in calls)


def test_vconfig_method(tmp_path: Path) -> None:
    host = Host(tmp_path, _script("node006", "vconfig"))
    rc, calls, err = host.run("--splay", "30")
    assert rc == 0, err
    assert "vconfig add eth0 101" in calls and "ip link add" not in "\n".join(calls)
    assert calls[-1] == "vlanroute learn --interface eth0 --splay 30 101 102 103"
    first = host.links()
    assert sorted(first) == ["eth0", "eth0.101", "eth0.102", "eth0.103"]
    assert host.run()[0] == 0 and host.links() == first
    rc, calls, _ = host.run("--remove")
    assert rc == 0 and "vconfig rem eth0.101" in calls and host.links() == INITIAL["links"]


def test_raw_method_creates_nothing(tmp_path: Path) -> None:
    host = Host(tmp_path, _script("node002", "raw"))
    rc, calls, err = host.run()
    assert rc == 0, err
    assert _mutations(calls) == [] and host.links() == INITIAL["links"]
    assert calls[-1] == "vlanroute learn --interface eth0 --raw --splay 0 101 102 103"
    assert host.run("--remove")[0] == 0


@pytest.mark.parametrize("args", [["--splay"], ["--splay", "1;reboot"], ["--bogus"]])
def test_bad_arguments_change_nothing(tmp_path: Path, args: list[str]) -> None:
    host = Host(tmp_path, _script())
    rc, calls, _ = host.run(*args)
    assert rc == 2 and calls == []


def test_missing_parent_interface_is_reported(tmp_path: Path) -> None:
    host = Host(tmp_path, _script())
    host.set_links({})
    rc, calls, err = host.run()
    assert rc == 1 and "interface eth0 not found" in err and _mutations(calls) == []
