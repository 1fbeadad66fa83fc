"""The failure drill on the lab's emulated switches, every line of every push and rollback
watched (tests/loopwatch.py: the fabric's state read from the emulated switches after every
line, checked by the tests' own loop check): cable down, repair, push, cable up, return to
the plan, rollback to the repaired state and to the state before the repair. No VLAN ever
holds a loop, and each run ends where it says."""

from __future__ import annotations

import json

import pytest

from loopwatch import LoopWatch
from push_support import build_cluster, run, set_ssh_env, wire_as_planned
from vlanroute.drivers import FAMILIES
from vlanroute.transition.fabric import Wire


def canonical(farm, names=None):  # type: ignore[no-untyped-def]
    out = {}
    for name, sw in farm.switches.items():
        if names is not None and name not in names:
            continue
        fam = FAMILIES[sw.platform.family]
        cfg = fam.parse_running(sw.running_config(), switch=name, platform=sw.platform, source=name)
        out[name] = [line.text for line in fam.canonical_lines(cfg)]
    return out


def state_canonical(farm, record):  # type: ignore[no-untyped-def]
    out = {}
    for name, rec in record["switches"].items():
        sw = farm.switches[name]
        fam = FAMILIES[sw.platform.family]
        text = open(rec["backup"]).read()
        cfg = fam.parse_running(text, switch=name, platform=sw.platform, source=name)
        out[name] = [line.text for line in fam.canonical_lines(cfg)]
    return out


@pytest.mark.slow
def test_failure_drill_on_the_lab_never_closes_a_loop(farm, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml")
    plan = cluster.plan
    wires = [Wire(c["a"], c["a_port"], c["b"], c["b_port"]) for c in plan["cabling"]]
    watch = LoopWatch(farm, wires)
    known = ["--known-hosts", str(cluster.known_hosts), "--workers", "4"]
    out_dir = str(cluster.outdir)

    # The plan, from the factory state (spanning tree on everywhere).
    rc, out, err = run(capsys, "push", out_dir, *known, "--yes", "--json")
    assert rc == 0, out + err
    assert json.loads(out)["transition"]["steps"]
    plan_state = canonical(farm)

    # sw1-sw2 dies; the repair is pushed (the cabling gate sees the fabric as it is now).
    rep = tmp_path / "repaired"
    rc, out, err = run(capsys, "repair", out_dir, "--failed-pair", "sw1:sw2", "-o", str(rep))
    assert rc == 0, out + err
    wire_as_planned(farm, rep)
    rc, out, err = run(capsys, "push", str(rep), *known, "--yes", "--json")
    assert rc == 0, out + err
    pushed = json.loads(out)
    touched = {s["switch"] for s in pushed["transition"]["steps"]}
    assert touched == set(json.loads((rep / "repair.json").read_text())["switches_touched"])
    repaired_state = canonical(farm)
    assert repaired_state != plan_state

    # The cable comes back; the return to the plan (what the drill pushed in parallel and
    # looped VLAN 101 round the ring with).
    wire_as_planned(farm, cluster.outdir)
    rc, out, err = run(capsys, "push", out_dir, *known, "--yes", "--json")
    assert rc == 0, out + err
    assert canonical(farm) == plan_state

    # History: every push recorded where it started and what it reached.
    states_dir = cluster.state / "states"
    records = [json.loads(p.read_text()) for p in sorted(states_dir.glob("*.json"))]
    assert [r["kind"] for r in records] == ["before", "after"] * 3
    after_repair, before_repair = records[3], records[2]
    assert state_canonical(farm, after_repair) == repaired_state
    assert state_canonical(farm, before_repair) == plan_state
    rc, out, err = run(capsys, "rollback", out_dir, *known, "--list")
    assert rc == 0 and all(r["state"] in out for r in records), out

    # Back to the repaired state, then to the state before the repair: by id and by time.
    rc, out, err = run(capsys, "rollback", out_dir, *known, "--to", after_repair["state"], "--yes", "--json")
    assert rc == 0, out + err
    assert canonical(farm) == repaired_state
    rc, out, err = run(capsys, "rollback", out_dir, *known, "--to", before_repair["time"], "--yes")
    assert rc == 0, out + err
    assert canonical(farm) == plan_state

    watch.stop()
    assert watch.violations == []
    assert watch.states > 1000          # every line of every change was seen


@pytest.mark.slow
def test_split_steps_on_the_lab_and_a_failure_between_them(farm, tmp_path, monkeypatch, capsys):  # type: ignore[no-untyped-def]
    """The split path run on emulated switches: the planner is made to split every switch
    with removals (as it does where no order of whole switches exists). The removals and the
    rest are sent as two steps, every line watched; a failure in the second half leaves the
    switch `partly-applied` (exit 3), loop-free, and `push --resume` finishes it."""
    import vlanroute.transition.planner as P

    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-torus.yaml")
    wires = [Wire(c["a"], c["a_port"], c["b"], c["b_port"]) for c in cluster.plan["cabling"]]
    known = ["--known-hosts", str(cluster.known_hosts), "--workers", "2"]
    rc, out, err = run(capsys, "push", str(cluster.outdir), *known, "--yes")
    assert rc == 0, out + err
    rep = tmp_path / "repaired"
    assert run(capsys, "repair", str(cluster.outdir), "--failed-pair", "sw1:sw2", "-o", str(rep))[0] == 0
    wire_as_planned(farm, rep)
    watch = LoopWatch(farm, wires)

    def split_first(self, base, todo, removed):  # type: ignore[no-untyped-def]
        for s in removed:
            add = self._half(s)[1]
            if not self.unsafe(base, add):
                return P.Step(s, "add", add)
        for s in todo:
            h = self.half(s)
            if h is not None and h[0].before != h[0].after and not self.unsafe(base, h[0]):
                return P.Step(s, "remove", h[0])
        for s in todo:
            if not self.unsafe(base, self.whole[s]):
                return P.Step(s, "change", self.whole[s])
        return None
    monkeypatch.setattr(P._Planner, "whole_order", lambda self: None)
    monkeypatch.setattr(P._Planner, "_next", split_first)
    rc, out, err = run(capsys, "push", str(rep), *known, "--dry-run", "--json")
    assert rc == 0, out + err
    steps = json.loads(out)["transition"]["steps"]
    split = json.loads(out)["transition"]["split"]
    assert split and all(any(s["switch"] == n and s["kind"] == "remove" and s["lines"] for s in steps) for n in split)
    # The second half of the first split switch is refused once: partly-applied, loop-free.
    victim = split[0]
    farm.switches[victim].faults.reject = r"^switchport general allowed vlan add .* tagged$"
    rc, out, err = run(capsys, "push", str(rep), *known, "--yes")
    first = [line for line in out.splitlines() if line.startswith(f"│ {victim} ")]
    assert rc == 3 and first and "partly-applied" in first[0], out + err
    farm.switches[victim].faults.reject = None
    rc, out, err = run(capsys, "push", str(rep), *known, "--yes", "--resume")
    assert rc == 0, out + err
    wanted = canonical_of_bundle(farm, rep)
    assert canonical(farm) == wanted
    watch.stop()
    assert watch.violations == []


def canonical_of_bundle(farm, outdir):  # type: ignore[no-untyped-def]
    out = {}
    for name, sw in farm.switches.items():
        fam = FAMILIES[sw.platform.family]
        text = (outdir / "switches" / f"{name}.cfg").read_text()
        cfg = fam.parse_running(sw.running_config() + "\n" + "\n".join(fam.config_commands(text)),
                                switch=name, platform=sw.platform, source=name)
        out[name] = [line.text for line in fam.canonical_lines(cfg)]
    return out
