"""A cable taken down in the lab (`vlanroute lab cable-down` / `cable-up`,
vlanroute.lab.linkdown), and the operator's whole path after a dead neighbour pair:
cabling check names the dead cables, `repair --from-cabling-check` writes the new bundle,
push changes only the switches that need it, a second push has nothing to change."""

from __future__ import annotations

import csv
import json
import os
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from push_support import REPO, build_cluster, run, set_ssh_env

from vlanroute.bundle.reader import host_macs, read_all_cables, read_plan
from vlanroute.lab import linkdown
from vlanroute.lab.daemon import follow_cables_down
from vlanroute.lab.statedir import StateDir
from vlanroute.model.platforms import PLATFORMS

FABRICS = {"powerconnect-6248": "seed-torus.yaml", "arista-7050sx-64": "seed-torus-arista.yaml",
           "dell-s5248f-on": "seed-torus-os10.yaml"}
STATUS = {"powerconnect-6248": "show interfaces status", "arista-7050sx-64": "show interfaces status",
          "dell-s5248f-on": "show interface status"}


def _pair_cables(outdir: Path, a: str, b: str) -> list[dict[str, str]]:
    with open(outdir / "cabling.csv", newline="") as fh:
        return [r for r in csv.DictReader(fh) if r["kind"] == "inter-switch" and {r["a"], r["b"]} == {a, b}]


def _take_down(cluster, ends: set[tuple[str, str]]) -> None:
    """What the lab daemon does when `lab cable-down` asks (follow_cables_down)."""
    doc = read_plan(cluster.outdir)
    cables = read_all_cables(cluster.outdir, doc.switches, hosts=doc.hosts)
    cluster.farm.wire(linkdown.plugged(cables, ends), host_macs(doc))


def _show(sw, command: str) -> str:
    it = sw.interpreter()
    if hasattr(it, "paging"):
        it.paging = False
    for line in ("enable", command):
        reply = it.execute(line)
    return reply.output


def _line_of(text: str, port: str) -> str:
    import re
    names = {port, "Et" + port.removeprefix("Ethernet"), "Eth " + port.removeprefix("ethernet")}
    return next(line for line in text.splitlines()
                if any(re.match(re.escape(n) + r"\s", line) for n in names))


@pytest.mark.parametrize("platform", sorted(FABRICS))
def test_a_cable_down_loses_lldp_and_link_at_both_ends(platform, farm, tmp_path, monkeypatch, capsys) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, FABRICS[platform], platform=PLATFORMS[platform])
    dead = _pair_cables(cluster.outdir, "sw1", "sw2")
    other = next(r for r in csv.DictReader((cluster.outdir / "cabling.csv").open())
                 if r["kind"] == "inter-switch" and "sw1" in (r["a"], r["b"]) and r not in dead)
    up_word = {"powerconnect-6248": "Up", "arista-7050sx-64": "connected", "dell-s5248f-on": "up"}[platform]
    down_word = {"powerconnect-6248": "Down", "arista-7050sx-64": "notconnect", "dell-s5248f-on": "down"}[platform]
    before = _show(cluster.switch("sw1"), STATUS[platform])
    assert up_word in _line_of(before, dead[0]["a_port"] if dead[0]["a"] == "sw1" else dead[0]["b_port"]).split()

    _take_down(cluster, {(r[s], r[f"{s}_port"]) for r in dead for s in ("a", "b")})
    for r in dead:
        for s in ("a", "b"):
            sw = cluster.switch(r[s])
            assert down_word in _line_of(_show(sw, STATUS[platform]), r[f"{s}_port"]).split(), (r, s)
            assert not [e for e in sw.state.lldp if e.port == r[f"{s}_port"]]
    mine = other["a_port"] if other["a"] == "sw1" else other["b_port"]
    assert up_word in _line_of(_show(cluster.switch("sw1"), STATUS[platform]), mine).split()

    # The check names exactly the dead cables, as missing.
    rc, text, err = run(capsys, "cabling", "check", str(cluster.outdir), "--known-hosts",
                        str(cluster.known_hosts), "--json")
    doc = json.loads(text)
    bad = {c["cable"]: c["status"] for c in doc["cables"] if c["status"] != "ok"}
    assert rc == 1 and bad == {r["cable"]: "missing" for r in dead}, text + err

    _take_down(cluster, set())           # cable-up: all plugged again
    rc, text, err = run(capsys, "cabling", "check", str(cluster.outdir), "--known-hosts",
                        str(cluster.known_hosts), "--json")
    assert rc == 0, text + err


def test_the_daemon_follows_the_request_file(farm, tmp_path, monkeypatch) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml")
    state = StateDir(tmp_path / "state")
    stop = threading.Event()
    worker = threading.Thread(target=follow_cables_down,
                              args=(cluster.farm, state, cluster.outdir, None, stop), kwargs={"poll_s": 0.02})
    worker.start()
    try:
        dead = _pair_cables(cluster.outdir, "sw1", "sw2")[0]
        wanted = linkdown.dump({(dead["a"], dead["a_port"]), (dead["b"], dead["b_port"])})
        state.write(linkdown.DOWN_FILE, wanted)
        for _ in range(200):
            if state.read(linkdown.APPLIED_FILE) == wanted:
                break
            threading.Event().wait(0.02)
        assert state.read(linkdown.APPLIED_FILE) == wanted
        assert not [e for e in cluster.switch(dead["a"]).state.lldp if e.port == dead["a_port"]]
    finally:
        stop.set()
        worker.join()


def _vr_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VLANROUTE_", "XDG_", "PYTEST_"))}
    env.update(HOME=str(tmp_path), VLANROUTE_LOOPBACK_ONLY="1", PYTHONPATH=str(REPO),
               VLANROUTE_SSH_PASSWORD="Pw-lab-cable-test", VLANROUTE_SSH_USER="netops", COLUMNS="300")
    return env


@pytest.mark.slow
def test_lab_cable_down_command_and_the_operator_path(tmp_path: Path) -> None:
    """The real commands, as an operator types them, against `vlanroute lab up`."""
    env = _vr_env(tmp_path)
    outdir, state, new = tmp_path / "out", tmp_path / "state", tmp_path / "repaired"

    def vr(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "vlanroute.cli", *args], env=env, capture_output=True, check=False,
                              text=True, timeout=600, cwd=tmp_path)

    assert vr("render", str(REPO / "inventories" / "seed-torus.yaml"), "-o", str(outdir), "-q").returncode == 0
    up = vr("lab", "up", str(outdir), "--state-dir", str(state), "-q")
    assert up.returncode == 0, up.stderr
    for line in up.stdout.splitlines():                  # eval "$(vlanroute lab up out)"
        key, _, value = line.removeprefix("export ").partition("=")
        env[key] = value.strip("'")
    try:
        first = vr("push", str(outdir), "--yes", "--workers", "8")
        assert first.returncode == 0, first.stdout + first.stderr
        # Mistakes are one-line user errors.
        for bad, why in ((["sw1:1/g99"], "no inter-switch cable of the lab ends at sw1 1/g99"),
                         (["sw1"], "is not a cable end"), ([], "no cable named"),
                         (["--pair", "sw1:sw7"], "no cable of the lab joins sw1 and sw7")):
            r = vr("lab", "cable-down", *bad, "--state-dir", str(state))
            assert r.returncode == 2 and why in r.stderr and "Traceback" not in r.stderr, (bad, r.stderr)

        down = vr("lab", "cable-down", "--pair", "sw1:sw2", "--state-dir", str(state))
        assert down.returncode == 0, down.stderr
        dead = _pair_cables(outdir, "sw1", "sw2")
        assert down.stderr.count(" down (LLDP lost at both ends, link down)") == len(dead) == 2

        check = vr("cabling", "check", str(outdir), "--json")
        doc = json.loads(check.stdout)
        assert check.returncode == 1
        assert {c["cable"]: c["status"] for c in doc["cables"] if c["status"] != "ok"} == \
            {r["cable"]: "missing" for r in dead}

        rep = vr("repair", str(outdir), "--from-cabling-check", "-o", str(new), "--json")
        assert rep.returncode == 0, rep.stdout + rep.stderr
        record = json.loads((new / "repair.json").read_text())
        touched = set(record["switches_touched"])
        assert touched == {"sw1", "sw2", "sw3", "sw4"}, record

        lab = json.loads((state / "lab.json").read_text())
        pushed = vr("push", str(new), "--yes", "--json")
        assert pushed.returncode == 0, pushed.stdout + pushed.stderr
        result = json.loads(pushed.stdout)
        text = json.dumps(result)
        for sw in lab["switches"]:
            entry = next(s for s in result["switches"] if s["switch"] == sw)
            if sw in touched:
                assert entry["commands_sent"] > 0, entry
            else:
                assert entry["commands_sent"] == 0 and entry["result"] == "unchanged", entry
        again = vr("push", str(new), "--yes")
        assert again.returncode == 0, again.stdout + again.stderr
        assert again.stdout.count("unchanged") == 8, again.stdout + text

        back = vr("lab", "cable-up", "--pair", "sw1:sw2", "--state-dir", str(state))
        assert back.returncode == 0 and vr("cabling", "check", str(outdir)).returncode == 0
    finally:
        vr("lab", "down", "--state-dir", str(state))
