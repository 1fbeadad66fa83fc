"""A watcher killed with SIGKILL in the middle of a heal, and started again: it finds the
push it was killed in (its own journal, then the push journal), finishes it (`push
--resume`), and the fabric ends on the repaired bundle, every switch saved, every step
journaled, and no VLAN ever held a loop, across both processes (tests/loopwatch.py on the
emulated switches, which run in this process; the watchers are subprocesses)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from loopwatch import LoopWatch
from push_support import PASSWORD, USER, build_cluster, run, set_ssh_env
from vlanroute.device.journal import read_journal
from vlanroute.transition.fabric import Wire
from watch_support import pair_ends, unplug

pytestmark = pytest.mark.timeout(900)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(VLANROUTE_SSH_USER=USER, VLANROUTE_SSH_PASSWORD=PASSWORD, VLANROUTE_LOOPBACK_ONLY="1")
    return env


def _watch(cluster, events: Path, *extra: str) -> list[str]:  # type: ignore[no-untyped-def]
    return [sys.executable, "-m", "vlanroute.cli", "watch", str(cluster.outdir), "--policy", "auto",
            "--interval", "0.3", "--debounce", "0.5", "--hold-down", "1", "--known-hosts", str(cluster.known_hosts),
            "--events", str(events), *extra]


def _heal_push(state: Path) -> Path | None:
    """The newest push journal, if it is a push of a watcher bundle that has begun changing a switch."""
    found = sorted((state / "pushes").glob("*.jsonl"))
    if not found:
        return None
    text = found[-1].read_text()
    return found[-1] if "/watch/bundles/" in text.splitlines()[0] and '"event": "applying"' in text else None


def test_a_watcher_killed_mid_heal_finishes_the_push_when_started_again(farm, tmp_path, monkeypatch, capsys) -> None:
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    rc, out, err = run(capsys, "push", str(cluster.outdir), "--yes", "--known-hosts", str(cluster.known_hosts), "-q")
    assert rc == 0, out + err
    watch = LoopWatch(farm, [Wire(c["a"], c["a_port"], c["b"], c["b_port"]) for c in cluster.plan["cabling"]])
    for sw in farm.switches.values():
        sw.faults.delay_s = 0.15            # slow switches: the heal takes seconds, time to kill it
    events = tmp_path / "events.jsonl"
    first = subprocess.Popen(_watch(cluster, events), env=_env(), stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 120
        while '"event": "started"' not in (events.read_text() if events.exists() else ""):
            assert time.monotonic() < deadline and first.poll() is None
            time.sleep(0.1)
        unplug(cluster, pair_ends(cluster.outdir, "core1", "leaf1"))
        while (journal := _heal_push(cluster.state)) is None:
            assert time.monotonic() < deadline and first.poll() is None, events.read_text()
            time.sleep(0.02)
        first.send_signal(signal.SIGKILL)
        first.wait(30)
    finally:
        if first.poll() is None:
            first.kill()
    # Killed half way: its journal has a push under way, the push journal no end.
    actions = [json.loads(line) for line in (cluster.state / "watch" / "journal.jsonl").read_text().splitlines()]
    assert actions[-1]["event"] == "pushing" and not [a for a in actions if a["event"] == "done"]
    view = read_journal(journal)
    assert not view.ended and view.touched
    bundle = Path(actions[-1]["bundle"])

    for sw in farm.switches.values():
        sw.faults.delay_s = 0.0
    again = subprocess.run(_watch(cluster, events, "--once", "--json"), env=_env(), capture_output=True, text=True,
                           timeout=600, check=False)
    watch.stop()
    assert again.returncode == 0, again.stdout + again.stderr
    summary = json.loads(again.stdout)
    assert [(a["outcome"], a["bundle"]) for a in summary["actions"]] == [("healed", str(bundle))]
    assert summary["acted"]["pairs"] == ["core1:leaf1"] == summary["observed"]["pairs"]
    logged = [json.loads(line) for line in again.stderr.splitlines() if line.startswith("{")]
    assert [e for e in logged if e["event"] == "resuming"] and [e for e in logged if e["event"] == "recovered"]
    # The push the first watcher started was finished in the same journal (push --resume).
    view = read_journal(journal)
    assert view.ended and {h.state for h in view.switches.values()} <= {"saved", "unchanged"}
    # The switches run the repaired bundle; no VLAN ever held a loop, in either process's turn.
    assert watch.violations == [] and watch.states > 20
    rc, out, err = run(capsys, "push", str(bundle), "--dry-run", "--json", "--known-hosts", str(cluster.known_hosts))
    assert rc == 0 and [s["switch"] for s in json.loads(out)["switches"] if s["diff"]] == [], out + err
    done = [json.loads(line) for line in (cluster.state / "watch" / "journal.jsonl").read_text().splitlines()]
    closed = [r for r in done if r["event"] == "done"]
    assert [r["outcome"] for r in closed] == ["healed"] and closed[0]["note"] == "resumed after a restart"
