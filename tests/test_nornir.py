"""The Nornir task (vlanroute.nornir_task) and examples/nornir_push.py against fake switches
on loopback; skipped when nornir is not installed (the `nornir` extra)."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from push_support import PASSWORD, USER, build_cluster, set_ssh_env
from vlanroute.lab import Faults

nornir = pytest.importorskip("nornir")
REPO = Path(__file__).resolve().parent.parent


def example():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("nornir_push", REPO / "examples" / "nornir_push.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_nornir_task_previews_then_pushes_through_the_safety_steps(farm, tmp_path: Path, monkeypatch,  # type: ignore[no-untyped-def]
                                                                  capsys) -> None:
    set_ssh_env(monkeypatch)
    # leaf2 refuses one command of the last phase: it must be rolled back.
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml", {"leaf2": Faults(reject=r"^spanning-tree disable$")})
    targets = {n: {"host": sw.host, "port": sw.port} for n, sw in farm.switches.items()}
    (tmp_path / "targets.json").write_text(json.dumps({"format": "vlanroute-targets/1", "switches": targets}))
    mod = example()
    from vlanroute.nornir_task import vlanroute_push

    nr = mod.nornir_for(targets, USER, PASSWORD)
    preview = nr.run(task=vlanroute_push, outdir=cluster.outdir, known_hosts=cluster.known_hosts)
    assert not preview.failed
    assert {m[0].result["result"] for m in preview.values()} == {"dry-run"}
    assert all(m[0].diff and not m[0].changed for m in preview.values())
    assert all(sw.config_commands == 0 for sw in farm.switches.values())

    # The switch that rejects a command is rolled back and its task fails; with keep_going the
    # steps left are planned again around it and the others apply; one journal for all.
    pushed = nr.run(task=vlanroute_push, outdir=cluster.outdir, dry_run=False, known_hosts=cluster.known_hosts,
                    keep_going=True)
    assert set(pushed.failed_hosts) == {"leaf2"}
    assert pushed["leaf2"][0].result["result"] == "rolled-back"
    for name in set(targets) - {"leaf2"}:
        assert pushed[name][0].changed and farm.switches[name].saved
    assert len({m[0].result["journal"] for m in pushed.values()}) == 1
    assert len(list((cluster.state / "pushes").glob("*.jsonl"))) == 1

    # The example script, as a user runs it (a dry run): the others are now as rendered.
    rc = mod.main([str(cluster.outdir), str(cluster.known_hosts), str(tmp_path / "targets.json")])
    out = capsys.readouterr().out
    assert rc == 0 and "leaf2: dry-run" in out and out.count(": unchanged:") == len(targets) - 1


def test_the_example_prints_switches_in_natural_order(tmp_path: Path, monkeypatch, capsys) -> None:  # type: ignore[no-untyped-def]
    from types import SimpleNamespace
    mod = example()
    names = ["sw10", "sw2", "sw1"]

    class Results(dict):  # type: ignore[type-arg]
        failed = False

    ran = Results({n: [SimpleNamespace(result={"result": "dry-run", "message": "m"})] for n in names})
    monkeypatch.setattr(mod, "nornir_for", lambda *a: SimpleNamespace(run=lambda **k: ran))
    monkeypatch.setenv("VLANROUTE_SSH_USER", USER)
    monkeypatch.setenv("VLANROUTE_SSH_PASSWORD", PASSWORD)
    (tmp_path / "t.json").write_text(json.dumps({"switches": {}}))
    assert mod.main([str(tmp_path), str(tmp_path / "kh"), str(tmp_path / "t.json")]) == 0
    assert [line.split(":")[0] for line in capsys.readouterr().out.splitlines()] == ["sw1", "sw2", "sw10"]


def test_nornir_pushes_a_repair_in_its_order_and_rollback_restores_every_switch(farm, tmp_path: Path,  # type: ignore[no-untyped-def]
                                                                                monkeypatch, capsys) -> None:
    """The drill's hazard through Nornir: the repair and the return to the plan are one push
    each, steps in the transition's order (the lab watch sees every line: no loop), one
    journal; `vlanroute rollback` then restores every switch the return changed."""
    from loopwatch import LoopWatch
    from push_support import run, wire_as_planned
    from vlanroute.nornir_task import vlanroute_push
    from vlanroute.transition.fabric import Wire

    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "seed-ring.yaml")
    targets = {n: {"host": sw.host, "port": sw.port} for n, sw in farm.switches.items()}
    nr = example().nornir_for(targets, USER, PASSWORD)
    known = cluster.known_hosts
    watch = LoopWatch(farm, [Wire(c["a"], c["a_port"], c["b"], c["b_port"]) for c in cluster.plan["cabling"]])
    assert not nr.run(task=vlanroute_push, outdir=cluster.outdir, dry_run=False, known_hosts=known).failed
    plan_state = {n: sw.running_config() for n, sw in farm.switches.items()}
    rep = tmp_path / "rep"
    rc, out, err = run(capsys, "repair", str(cluster.outdir), "--failed-pair", "sw1:sw2", "-o", str(rep))
    assert rc == 0, out + err
    wire_as_planned(farm, rep)
    pushed = nr.run(task=vlanroute_push, outdir=rep, dry_run=False, known_hosts=known)
    assert not pushed.failed
    repaired = {n: sw.running_config() for n, sw in farm.switches.items()}
    journal = {m[0].result["journal"] for m in pushed.values()}
    assert len(journal) == 1 and None not in journal
    # The steps ran wave by wave in the planned order: no switch of a wave began before
    # every switch of the wave before had ended (the journal's records, in order).
    records = [json.loads(line) for line in Path(journal.pop()).read_text().splitlines()]
    wave = {s[0]: s[3] for s in records[0]["steps"]}
    assert {r["switch"] for r in records if r["event"] == "applying"} == set(wave)
    ended: set[str] = set()
    for r in records[1:]:
        if r["event"] == "applying":
            assert all(s in ended for s, w in wave.items() if w < wave[r["switch"]]), r
        elif r["event"] in ("saved", "rolled-back", "rollback-failed", "save-uncertain"):
            ended.add(r["switch"])
    # Back to the plan, then rollback: every switch the return changed gets its repaired config.
    wire_as_planned(farm, cluster.outdir)
    assert not nr.run(task=vlanroute_push, outdir=cluster.outdir, dry_run=False, known_hosts=known).failed
    assert {n: sw.running_config() for n, sw in farm.switches.items()} == plan_state
    rc, out, err = run(capsys, "rollback", str(cluster.outdir), "--known-hosts", str(known), "--yes")
    assert rc == 0, out + err
    assert {n: sw.running_config() for n, sw in farm.switches.items()} == repaired
    watch.stop()
    assert watch.violations == []

