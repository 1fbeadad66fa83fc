"""Push the rendered seed cluster to 8 fake PowerConnect switches over real SSH on loopback."""

from __future__ import annotations


import pytest

from vlanroute.model.bridge import SwitchConfig
from vlanroute.drivers import parse_config
from vlanroute.model.platforms import PLATFORMS

from push_support import build_cluster, run, set_ssh_env

pytestmark = pytest.mark.timeout(300)


def forwarding_view(cfg: SwitchConfig) -> dict:
    """Everything that decides forwarding, per logical bridge port; independent of text."""
    ports = {}
    for name, p in cfg.bridge_ports().items():
        ports[name] = (p.mode, p.pvid, frozenset(p.untagged), frozenset(p.tagged), p.acceptable,
                       p.ingress_filtering, p.stp_enabled, p.enabled, tuple(sorted(p.members)),
                       p.hash_mode)
    return {"vlans": frozenset(cfg.vlans), "stp": cfg.stp_global_enabled,
            "aging": cfg.aging_time, "flow": cfg.flow_control, "ports": ports}


def parsed(name: str, platform: str, text: str) -> SwitchConfig:
    return parse_config(PLATFORMS[platform], text, switch=name)


def test_push_seed_torus_to_8_switches_matches_rendered(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml")
    assert len(cluster.plan["switches"]) == 8

    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--yes", "--workers", "8")
    assert rc == 0, out + err
    header = next(line for line in out.splitlines() if "switch" in line and "result" in line)
    for column in ("commands sent", "time", "backup"):
        assert column in header
    assert "━" not in err            # the progress bar is off when stderr is not a terminal

    for name, doc in cluster.plan["switches"].items():
        sw = cluster.switch(name)
        running = parsed(name, doc["platform"], sw.running_config())
        rendered = parsed(name, doc["platform"],
                          (cluster.outdir / "switches" / f"{name}.cfg").read_text())
        assert forwarding_view(running) == forwarding_view(rendered), name
        # Saved exactly once, after everything, and the startup config is the final one.
        assert sw.saved == [sw.running_config()]
        # On the wire: spanning tree went off only after every VLAN removal.
        wire = sw.received
        stp_off = [i for i, c in enumerate(wire) if c == "spanning-tree disable"]
        removals = [i for i, c in enumerate(wire) if "allowed vlan remove" in c]
        assert stp_off and removals and max(removals) < min(stp_off), name
        # The backup is the factory config the switch had before the push; the fabric's
        # history keeps what it runs after it too (states/, device/history.py).
        backups = cluster.backups(name)
        assert len(backups) == 2
        assert "vlan database" not in backups[0].read_text()
        assert backups[1].read_text() == sw.running_config()
        assert name in out and str(backups[0].name) in out.replace("\n", "").replace("│", "").replace(" ", "")

    # A dry run now has nothing to change either: it reports unchanged, not commands to send.
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--dry-run", "--workers", "8")
    assert rc == 0, out + err
    assert out.count("unchanged") == 8 and "would be sent" not in out

    # Second push: nothing to do, nothing sent, nothing saved again.
    before = {n: len(cluster.switch(n).received) for n in cluster.plan["switches"]}
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--known-hosts",
                       str(cluster.known_hosts), "--yes", "--workers", "8")
    assert rc == 0, out + err
    assert out.count("unchanged") == 8
    for name in cluster.plan["switches"]:
        sw = cluster.switch(name)
        assert len(sw.saved) == 1
        sent = sw.received[before[name]:]
        assert "configure" not in sent and "config" not in sent, sent
