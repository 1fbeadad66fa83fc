"""The watcher against emulated switches (vlanroute.lab, in this process), every line any of
them executes watched for loops (tests/loopwatch.py: the tests' own loop check on the
switches' own running configs): a dead pair detected within the interval and the debounce,
healed through a loop-free transition, audited, and the fabric back on the plan after the
hold-down; a flapping link and a short return trigger nothing; `propose` writes the bundle
and calls the hook; a dead switch; an action a killed watcher left before its push."""

from __future__ import annotations

import json
import time
from pathlib import Path

import jsonschema
import pytest

from loopwatch import LoopWatch
from push_support import build_cluster, correct_tables, run, set_ssh_env
from vlanroute import schemas
from vlanroute.cli import main
from vlanroute.device.statedir import FabricState
from vlanroute.operate.journal import WatchJournal
from vlanroute.transition.fabric import Wire
from watch_support import FAST, canonical, pair_ends, start, unplug

pytestmark = pytest.mark.timeout(600)


def _push_plan(cluster, capsys) -> dict[str, list[str]]:  # type: ignore[no-untyped-def]
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--yes", "--known-hosts", str(cluster.known_hosts),
                       "--workers", "4", "-q")
    assert rc == 0, out + err
    return canonical(cluster.farm)


def _wires(cluster) -> list[Wire]:  # type: ignore[no-untyped-def]
    return [Wire(c["a"], c["a_port"], c["b"], c["b_port"]) for c in cluster.plan["cabling"]]


def _nothing_to_push(cluster, bundle: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    """The switches run `bundle`: a dry run of it finds no switch to change."""
    rc, out, err = run(capsys, "push", str(bundle), "--dry-run", "--json", "--known-hosts", str(cluster.known_hosts))
    assert rc == 0, out + err
    assert [s["switch"] for s in json.loads(out)["switches"] if s["diff"]] == []


def _expected_repair(cluster, tmp_path: Path, capsys, *failure: str) -> Path:  # type: ignore[no-untyped-def]
    """The repair `vlanroute repair` writes for the same failure: the watcher must make this one."""
    expected = tmp_path / "expected"
    rc, out, err = run(capsys, "repair", str(cluster.outdir), *failure, "-o", str(expected), "--no-compare", "-q")
    assert rc == 0, out + err
    return expected


def _learned(farm, plan: dict) -> None:  # type: ignore[no-untyped-def,type-arg]
    """The fake switches' MAC tables as the hosts' learning frames leave them under `plan`."""
    for name, entries in correct_tables(plan).items():
        for vlan, mac, port in entries:
            farm.switches[name].seed_mac(vlan, mac, port)


def _rounds(running, n: int) -> None:  # type: ignore[no-untyped-def]
    target = running.watcher.rounds_seen + n
    deadline = time.monotonic() + 60
    while running.watcher.rounds_seen < target and time.monotonic() < deadline:
        time.sleep(0.05)
    assert running.watcher.rounds_seen >= target


def test_auto_heals_a_dead_pair_audits_and_returns_after_the_hold_down(farm, tmp_path, monkeypatch, capsys) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    plan_state = _push_plan(cluster, capsys)
    expected = _expected_repair(cluster, tmp_path, capsys, "--failed-pair", "core1:leaf1")
    record = json.loads((expected / "repair.json").read_text())
    assert record["changes"], "the pair must carry a tree, or there is nothing to heal"
    # The hosts have learned where the repaired plan wants them (the audit after the heal).
    _learned(farm, json.loads((expected / "plan.json").read_text()))
    watch = LoopWatch(farm, _wires(cluster))
    running = start(cluster, policy="auto")
    try:
        _rounds(running, 3)
        assert not running.events("deciding")          # a healthy fabric: nothing to do
        at_cut = running.watcher.rounds_seen
        unplug(cluster, pair_ends(cluster.outdir, "core1", "leaf1"))
        failed = running.wait("failures", where=lambda e: bool(e["failures"]["pairs"]))
        assert failed["failures"] == {"cables": [], "pairs": ["core1:leaf1"], "switches": []}
        # Detected within the interval and the debounce: the round in flight at the cut, then
        # `debounce_polls` rounds (and `debounce_s`, which two rounds of 0.3 s do not reach).
        assert failed["round"] <= at_cut + 1 + FAST["debounce_polls"] + 1
        assert all(e["after_s"] >= FAST["debounce_s"] for e in running.events("link"))
        healed = running.wait("healed")
        assert healed["failures"] == failed["failures"]
        assert healed["audit"]["ok"] is True and healed["audit"]["checked"] > 0
        bundle = Path(healed["bundle"])
        assert json.loads((bundle / "plan.json").read_text()) == json.loads((expected / "plan.json").read_text())
        assert "relearn.sh" in healed["relearn"]
        _nothing_to_push(cluster, bundle, capsys)
        # A return shorter than the hold-down is no return.
        unplug(cluster, set())
        _rounds(running, 2)
        unplug(cluster, pair_ends(cluster.outdir, "core1", "leaf1"))
        _rounds(running, 2 + int(FAST["hold_down_s"] / FAST["interval_s"]))
        assert not running.events("returned") and not [e for e in running.events("link") if e["up"]]
        # Back for good: after the hold-down, the published plan again.
        unplug(cluster, set())
        returned = running.wait("returned")
        ups = [e for e in running.events("link") if e["up"]]
        assert ups and all(e["after_s"] >= FAST["hold_down_s"] for e in ups)
        assert returned["bundle"] == str(cluster.outdir.resolve())
    finally:
        running.finish()
        watch.stop()
    assert watch.violations == [] and watch.states > 20
    # Back on the plan: nothing to push (a VLAN the repair created on a switch stays in its
    # VLAN table, as push never deletes VLANs; no port carries it).
    _nothing_to_push(cluster, cluster.outdir, capsys)
    def managed(state: dict[str, list[str]]) -> dict[str, list[str]]:
        return {sw: [line for line in lines if not line.startswith("vlan database")] for sw, lines in state.items()}
    assert managed(canonical(farm)) == managed(plan_state)
    # Every change is in the journals: two pushes, each with its states, so rollback --to works.
    journal = [r for r in WatchJournal.of(FabricState(cluster.state)).records() if r["event"] == "done"]
    assert [r["outcome"] for r in journal] == ["healed", "returned"]
    rc, out, err = run(capsys, "rollback", str(cluster.outdir), "--list")
    assert rc == 0 and out.count("push") >= 6, out + err


def test_a_flapping_link_triggers_nothing(farm, tmp_path, monkeypatch, capsys) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    _push_plan(cluster, capsys)
    # The debounce wants 2 rounds and 1.5 s down; the link is never down for more than 0.4 s.
    running = start(cluster, policy="auto", debounce_s=1.5)
    ends = pair_ends(cluster.outdir, "core1", "leaf1")
    try:
        _rounds(running, 2)
        deadline = time.monotonic() + 8
        while time.monotonic() < deadline:
            unplug(cluster, ends)
            time.sleep(0.4)
            unplug(cluster, set())
            time.sleep(0.6)
        _rounds(running, 3)
        flapping = running.wait("flapping")
        assert {flapping["switch"], flapping["port"]} <= {"core1", "leaf1", *[p for _, p in ends]}
    finally:
        running.finish()
    assert not running.events("failures") and not running.events("deciding") and not running.events("link")
    assert not (cluster.state / "watch" / "bundles").exists() or not any((cluster.state / "watch" / "bundles").iterdir())


def test_propose_writes_the_bundle_calls_the_hook_and_changes_nothing(farm, tmp_path, monkeypatch, capsys) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    before = _push_plan(cluster, capsys)
    pushes = sorted((cluster.state / "pushes").glob("*.jsonl"))
    got = tmp_path / "hook.jsonl"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ncat >> {got}\n")
    hook.chmod(0o755)
    running = start(cluster, policy="propose", notify=str(hook))
    try:
        _rounds(running, 2)
        unplug(cluster, pair_ends(cluster.outdir, "core1", "leaf1"))
        proposed = running.wait("proposed")
        unplug(cluster, set())
        back = running.wait("proposed", count=2)
    finally:
        running.finish()
    bundle = Path(proposed["bundle"] if "bundle" in proposed else proposed["bundles"][0])
    assert (bundle / "repair.json").is_file() and (bundle / "manifest.json").is_file()
    assert proposed["commands"][:2] == [f"vlanroute push {bundle} --dry-run --state-dir {cluster.state}",
                                        f"vlanroute push {bundle} --state-dir {cluster.state}"]
    assert any("relearn.sh" in c for c in proposed["commands"]) and proposed["commands"][-1].startswith("vlanroute audit")
    # The way back is proposed too: the published plan, and the hosts re-learn as after the repair.
    assert back["bundles"] == [str(cluster.outdir.resolve())] and any("relearn.sh" in c for c in back["commands"])
    events = [json.loads(line) for line in got.read_text().splitlines()]
    assert [e["event"] for e in events] == ["proposed", "proposed"]
    assert canonical(farm) == before and sorted((cluster.state / "pushes").glob("*.jsonl")) == pushes
    # What was proposed is what `vlanroute repair` writes, and pushing it by hand works.
    rc, out, err = run(capsys, "push", str(bundle), "--dry-run", "--known-hosts", str(cluster.known_hosts), "-q")
    assert rc == 0, out + err


def test_a_dead_switch_is_healed_only_where_the_site_allows(farm, tmp_path, monkeypatch, capsys) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    _push_plan(cluster, capsys)
    dead = pair_ends(cluster.outdir, "leaf3", "core2") | pair_ends(cluster.outdir, "leaf3", "leaf1")
    watch = LoopWatch(farm, _wires(cluster))
    # The site heals dead pairs by itself, not dead switches: proposed.
    running = start(cluster, policy="auto", heal=["pair"])
    try:
        _rounds(running, 2)
        unplug(cluster, dead)
        proposed = running.wait("proposed")
        assert proposed["failures"]["switches"] == ["leaf3"]
        assert "not ['switch']" in running.wait("deciding")["why"]
    finally:
        running.finish()
    # Allowed: healed around it (its host lost), loop-free.
    running = start(cluster, policy="auto")
    try:
        # The journal says the fabric was told to be set up for the dead switch (proposed):
        # nothing to do until the links change. Push it as a person would, then the return.
        _rounds(running, 3)
        assert not running.events("deciding")
    finally:
        running.finish()
    (cluster.state / "watch" / "journal.jsonl").unlink()      # a new watcher that never saw it
    running = start(cluster, policy="auto")
    try:
        healed = running.wait("healed")
        assert healed["failures"]["switches"] == ["leaf3"]
        record = json.loads((Path(healed["bundle"]) / "repair.json").read_text())
        assert record["hosts_lost"] == ["gpu04"]
        unplug(cluster, set())
        running.wait("returned")
    finally:
        running.finish()
        watch.stop()
    assert watch.violations == []


def test_once_finishes_an_action_killed_before_its_push_and_heals(farm, tmp_path, monkeypatch, capsys) -> None:
    """A watcher killed after it wrote its intent, before its push: nothing was sent. The
    next one says so, decides again from the links, heals, and `--once --json` reports it."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    plan_state = _push_plan(cluster, capsys)
    journal = WatchJournal.of(FabricState(cluster.state))
    journal.append("start", pid=1)
    failures = {"cables": [], "pairs": ["core1:leaf1"], "switches": []}
    journal.append("intent", action="20261201T000000.000000Z", mode="auto", kind="heal", failures=failures,
                   previous={"cables": [], "pairs": [], "switches": []})
    unplug(cluster, pair_ends(cluster.outdir, "core1", "leaf1"))
    rc = main(["watch", str(cluster.outdir), "--once", "--json", "--policy", "auto", "--interval", "0.3",
               "--debounce", "0.5", "--hold-down", "1", "--known-hosts", str(cluster.known_hosts)])
    out, err = capsys.readouterr()
    assert rc == 0, out + err
    summary = json.loads(out)
    jsonschema.validate(summary, schemas.load("watch"))
    assert summary["schema"] == "vlanroute-watch/1" and summary["exit_code"] == 0
    assert [(a["action"], a["outcome"]) for a in summary["actions"]][0] == ("20261201T000000.000000Z", "abandoned")
    assert [a["outcome"] for a in summary["actions"]][1:] == ["healed"]
    assert summary["acted"] == failures == summary["observed"]
    events = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert [e for e in events if e["event"] == "recovered"][0]["outcome"] == "abandoned"
    # Run again: the fabric is set up for what the links show; nothing to do, exit 0.
    rc = main(["watch", str(cluster.outdir), "--once", "--json", "-q", "--interval", "0.3", "--debounce", "0.5",
               "--known-hosts", str(cluster.known_hosts)])
    out, err = capsys.readouterr()
    assert rc == 0 and json.loads(out)["actions"] == [] and err == "", out + err
    # The watcher's push is a push like any other: `vlanroute rollback` undoes it.
    rc, out, err = run(capsys, "rollback", str(cluster.outdir), "--yes", "--known-hosts", str(cluster.known_hosts))
    assert rc == 0, out + err
    assert canonical(farm) == plan_state


def test_a_syslog_hint_starts_the_reads_at_once(farm, tmp_path, monkeypatch, capsys) -> None:
    """A link-down message (the FASTPATH form assumed for the 62xx) makes the watcher read at
    once and then at the debounce's pace: the failure counts long before the next regular
    read (every 30 s here) would even have seen it."""
    import socket
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    _push_plan(cluster, capsys)
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    running = start(cluster, policy="propose", interval_s=30.0, debounce_s=1.0, syslog_listen=f"127.0.0.1:{port}")
    try:
        _rounds(running, 1)
        running.wait("syslog")
        ends = pair_ends(cluster.outdir, "core1", "leaf1")
        unplug(cluster, ends)
        sw, p = sorted(ends)[0]
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.sendto(f"<13> DEC 01 03:12:09 {sw} TRAPMGR[1]: traputil.c(636) 7 %% Link Down: {p}".encode(),
                     ("127.0.0.1", port))
        hint = running.wait("hint")
        failed = running.wait("failures", timeout=25)
    finally:
        running.finish()
    assert hint["port"] == p and hint["up"] is False
    assert failed["failures"]["pairs"] == ["core1:leaf1"]
    # Two reads after the hint, 1 s apart (the debounce's pace), not 30 s.
    assert failed["round"] <= 1 + 1 + 2


def test_a_second_failure_while_the_first_is_healed(farm, tmp_path, monkeypatch, capsys) -> None:
    """A second pair dies while the fabric runs the first repair: the repair for both is made
    from the published plan and pushed from where the switches stand (loop-free); when the
    first comes back, the repair around the second alone; then the plan."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    _push_plan(cluster, capsys)
    watch = LoopWatch(farm, _wires(cluster))
    first, second = pair_ends(cluster.outdir, "core1", "leaf1"), pair_ends(cluster.outdir, "core2", "leaf2")
    running = start(cluster, policy="auto")
    try:
        _rounds(running, 2)
        unplug(cluster, first)
        running.wait("healed")
        unplug(cluster, first | second)
        both = running.wait("healed", count=2)
        assert both["failures"]["pairs"] == ["core1:leaf1", "core2:leaf2"]
        _nothing_to_push(cluster, Path(both["bundle"]), capsys)
        unplug(cluster, second)
        one = running.wait("healed", count=3)           # the repair around the one still dead
        assert one["failures"]["pairs"] == ["core2:leaf2"]
        unplug(cluster, set())
        running.wait("returned")
    finally:
        running.finish()
        watch.stop()
    assert watch.violations == []
    _nothing_to_push(cluster, cluster.outdir, capsys)


def test_a_protected_plan_fails_over_by_pvids_first_then_repairs_then_returns(farm, tmp_path, monkeypatch,
                                                                             capsys) -> None:
    """With backup VLANs (routing.protection: links) the default strategies push the fast
    failover first: a change of host ports' PVIDs alone on the hit VLANs' source switches
    (no inter-switch port changes); then the repair's trees with the hosts still failed
    over, then the balanced repair (the PVIDs back), then the plan after the hold-down;
    every line of every switch loop-free."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml", extra_sets=("routing.protection=links",))
    _push_plan(cluster, capsys)
    expected = _expected_repair(cluster, tmp_path, capsys, "--failed-pair", "core1:leaf1")
    # The hosts have learned in the repaired trees (the audit before the PVIDs move back).
    _learned(farm, json.loads((expected / "plan.json").read_text()))
    watch = LoopWatch(farm, _wires(cluster))
    running = start(cluster, policy="auto")
    try:
        _rounds(running, 2)
        unplug(cluster, pair_ends(cluster.outdir, "core1", "leaf1"))
        healed = running.wait("healed")
        assert not running.events("holding")
        pushed = running.events("pushed")
        assert [Path(e["bundle"]).name.rsplit("-", 1)[1] for e in pushed] == ["failover", "retree", "repair"]
        assert all(e["exit_code"] == 0 for e in pushed)
        failover = Path(pushed[0]["bundle"])
        record = json.loads((failover / "repair.json").read_text())
        assert record["failover"] and record["changes"] == []
        # The failed-over plan differs from the published one in host ports' PVIDs alone.
        before, after = cluster.plan, json.loads((failover / "plan.json").read_text())
        for s, rec in before["switches"].items():
            for name, port in rec["ports"].items():
                new = after["switches"][s]["ports"][name]
                assert {k: v for k, v in new.items() if k != "pvid"} == {k: v for k, v in port.items() if k != "pvid"}
                assert new["pvid"] == port["pvid"] or port["role"] == "host"
        assert [v["links"] for v in after["vlans"]] == [v["links"] for v in before["vlans"]]
        # Then the repair's trees with the hosts still failed over, then the balanced repair,
        # the one `vlanroute repair` writes; the switches run it.
        retree = json.loads((Path(pushed[1]["bundle"]) / "plan.json").read_text())
        assert [v["links"] for v in retree["vlans"]] == \
            [v["links"] for v in json.loads((expected / "plan.json").read_text())["vlans"]]
        assert {h: r["vlan"] for h, r in retree["hosts"].items()} == {h: r["vlan"] for h, r in after["hosts"].items()}
        assert healed["bundle"] == pushed[2]["bundle"] and len(healed["summary"]) == 3
        assert "fast failover" in healed["summary"][0]
        assert json.loads((Path(healed["bundle"]) / "plan.json").read_text()) == \
            json.loads((expected / "plan.json").read_text())
        _nothing_to_push(cluster, Path(healed["bundle"]), capsys)
        unplug(cluster, set())
        running.wait("returned")
    finally:
        running.finish()
        watch.stop()
    assert watch.violations == [] and watch.states > 20
    _nothing_to_push(cluster, cluster.outdir, capsys)


def test_a_dead_leaf_skips_the_failover_and_says_why(farm, tmp_path, monkeypatch, capsys) -> None:
    """A dead leaf switch carries no other switch's traffic: no tree needs it to join the
    live switches with hosts, so the failover has nothing to move (a dead switch that
    others' traffic crossed fails over: tests/test_failover.py). The watcher logs `skipped`
    with the reason and the repair heals it (the trees and ports leave it)."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml", extra_sets=("routing.protection=links",))
    _push_plan(cluster, capsys)
    running = start(cluster, policy="auto")
    try:
        _rounds(running, 2)
        dead = {(r["a"], r["a_port"]) for r in cluster.plan["cabling"] if r["a"] == "leaf3" or r["b"] == "leaf3"} | \
               {(r["b"], r["b_port"]) for r in cluster.plan["cabling"] if r["a"] == "leaf3" or r["b"] == "leaf3"}
        unplug(cluster, dead)
        healed = running.wait("healed")
        skipped = running.events("skipped")
        assert [(e["strategy"], "nothing to fail over" in e["why"]) for e in skipped] == [("failover", True)], skipped
        assert [Path(e["bundle"]).name.rsplit("-", 1)[1] for e in running.events("pushed")] == ["repair"]
        assert healed["failures"]["switches"] == ["leaf3"]
    finally:
        running.finish()


def test_a_dead_core_switch_fails_over_then_its_repair_s_trees(farm, tmp_path, monkeypatch, capsys) -> None:
    """core2 dies (every cable of it dark): the trees it carried through fail over onto
    backups that avoid it, by PVIDs on the source switches (its neighbours' ports towards it
    lose their VLANs), then the repair's trees; the hosts hold on the backups until they
    have learned the repaired trees. No VLAN has a loop at any moment."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml", extra_sets=("routing.protection=links",))
    _push_plan(cluster, capsys)
    _learned(farm, cluster.plan)
    watch = LoopWatch(farm, _wires(cluster))
    running = start(cluster, policy="auto")
    try:
        _rounds(running, 2)
        rows = [r for r in cluster.plan["cabling"] if "core2" in (r["a"], r["b"])]
        unplug(cluster, {(r["a"], r["a_port"]) for r in rows} | {(r["b"], r["b_port"]) for r in rows})
        healed = running.wait("healed")
        assert running.events("skipped") == []
        pushed = [Path(e["bundle"]).name.rsplit("-", 1)[1] for e in running.events("pushed")]
        assert pushed == ["failover", "retree"], pushed
        assert healed["failures"]["switches"] == ["core2"]
        record = json.loads((Path(running.events("pushed")[0]["bundle"]) / "repair.json").read_text())
        assert record["failover"] and "core2" not in record["switches_touched"]
        assert not (Path(running.events("pushed")[0]["bundle"]) / "switches" / "core2.cfg").exists()
    finally:
        running.finish()
        watch.stop()
    assert watch.violations == []


def test_the_hosts_stay_failed_over_until_they_have_learned_the_repaired_trees(farm, tmp_path, monkeypatch,
                                                                              capsys) -> None:
    """The switches have not learned the hosts in the repaired trees (nobody ran relearn.sh):
    after the failover and the repair's trees the watcher holds the PVIDs on the backups
    (an entry pointing the old way would black-hole unicast) and says what finishes it."""
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml", extra_sets=("routing.protection=links",))
    _push_plan(cluster, capsys)
    _learned(farm, cluster.plan)                                      # learned as planned, before the cut
    watch = LoopWatch(farm, _wires(cluster))
    running = start(cluster, policy="auto")
    try:
        _rounds(running, 2)
        unplug(cluster, pair_ends(cluster.outdir, "core1", "leaf1"))
        healed = running.wait("healed")
        holding = running.events("holding")
        assert len(holding) == 1 and holding[0]["audit"]["ok"] is False and "relearn" in holding[0]["relearn"]
        assert holding[0]["bundle"].endswith("-repair") and "vlanroute push" in holding[0]["note"]
        pushed = [Path(e["bundle"]).name.rsplit("-", 1)[1] for e in running.events("pushed")]
        assert pushed == ["failover", "retree"]
        assert healed["bundle"].endswith("-retree")
        _nothing_to_push(cluster, Path(healed["bundle"]), capsys)
        unplug(cluster, set())
        running.wait("returned")
    finally:
        running.finish()
        watch.stop()
    assert watch.violations == []
    _nothing_to_push(cluster, cluster.outdir, capsys)
