"""Old push backups are pruned by the rule of vlanroute/device/backups.py (docs/push.md):
the last journal's backups always stay, the newest 10 pushed and 2 dry-run backups per
switch stay, anything younger than an hour stays, the rest goes."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from push_support import build_cluster, run, set_ssh_env

from vlanroute.device.backups import KEEP_PUSHED, KEEP_UNREFERENCED, prune_backups
from vlanroute.device.statedir import FabricState

DAY = 86400.0


def _state(tmp_path: Path) -> FabricState:
    state = FabricState(tmp_path / "state")
    state.ensure()
    return state


def _backup(state: FabricState, switch: str, day: int, now: float) -> Path:
    path = state.backups / f"{switch}-202611{day:02d}T120000.000000Z.cfg"
    path.write_text(f"config of {switch} on day {day}\n")
    os.utime(path, (now - (40 - day) * DAY, now - (40 - day) * DAY))
    return path


def _journal(state: FabricState, stamp: str, backups: list[Path]) -> None:
    records = [{"journal": "vlanroute-push-journal/1", "switches": ["sw1"]}]
    records += [{"event": "applying", "switch": "sw1", "backup": str(b)} for b in backups]
    (state.pushes / f"{stamp}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))


def test_the_rule_keeps_exactly_what_it_states(tmp_path):
    now = 1_800_000_000.0
    state = _state(tmp_path)
    days = {d: _backup(state, "sw1", d, now) for d in range(1, 31)}     # 30 old backups of sw1
    other = _backup(state, "sw10", 1, now)                              # another switch: untouched
    pushed = [days[d] for d in range(1, 25)]                            # days 1-24 were real pushes
    _journal(state, "20261101T000000.000000Z", pushed[:20])
    _journal(state, "20261125T000000.000000Z", [days[2], *pushed[20:]])   # the last journal: day 2, 21-24
    young = state.backups / "sw1-20261130T235959.000000Z.cfg"
    young.write_text("a dry run of a push under way\n")                 # mtime now: younger than an hour
    deleted = {p.name for p in prune_backups(state, "sw1", now=now)}
    kept = {p.name for p in state.backups.iterdir()}
    # Written by hand from the rule: pushed days 1-24, newest 10 = 15-24; the last journal
    # adds day 2; unreferenced days 25-30 and the young file: newest 2 = the young file and 30.
    want = {days[d].name for d in [*range(15, 25), 2, 30]} | {young.name, other.name}
    assert kept == want
    assert deleted == {days[d].name for d in range(1, 31)} - {days[d].name for d in [*range(15, 25), 2, 30]}
    assert KEEP_PUSHED == 10 and KEEP_UNREFERENCED == 2


def test_a_backup_younger_than_an_hour_is_never_deleted(tmp_path):
    now = 1_800_000_000.0
    state = _state(tmp_path)
    for d in range(1, 6):
        path = _backup(state, "sw1", d, now)
        os.utime(path, (now - 60, now - 60))
    assert prune_backups(state, "sw1", now=now) == []


@pytest.mark.timeout(300)
def test_repeated_dry_runs_leave_two_backups_per_switch(farm, tmp_path, monkeypatch, capsys):
    set_ssh_env(monkeypatch)
    cluster = build_cluster(farm, tmp_path, "custom-lab.yaml")
    for _ in range(4):
        rc, out, err = run(capsys, "push", str(cluster.outdir), "--dry-run", "--known-hosts", str(cluster.known_hosts),
                           "--switch", "leaf1", "--skip-cabling-check")
        assert rc == 0, out + err
        for backup in cluster.state.joinpath("backups").iterdir():
            os.utime(backup, (0, 0))            # as if written long ago: only the count rule applies
    left = sorted(p.name for p in cluster.state.joinpath("backups").iterdir() if p.name.startswith("leaf1-"))
    # After the fourth run: its own backup and the newest old one (no journal: dry runs).
    assert len(left) == KEEP_UNREFERENCED
    assert all((cluster.state / "backups" / name).stat().st_mode & 0o777 == 0o600 for name in left)
