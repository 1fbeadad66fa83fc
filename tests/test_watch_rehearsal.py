"""The rehearsal of issue 39 item 5, with the real commands as a site runs them: `vlanroute lab
up` (emulated switches in their own process), `vlanroute watch` as a service would run it
(another process, policy auto), `vlanroute lab cable-down`: detected, healed, reported;
`vlanroute lab cable-up`: back on the published plan; `systemctl stop` (SIGTERM): exit 0 and
the summary."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VLANROUTE_", "XDG_", "PYTEST_"))}
    env.update(HOME=str(tmp_path), VLANROUTE_LOOPBACK_ONLY="1", PYTHONPATH=str(REPO),
               VLANROUTE_SSH_PASSWORD="Pw-watch-rehearsal", VLANROUTE_SSH_USER="netops", COLUMNS="300")
    return env


def _events(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def _wait(path: Path, event: str, proc: subprocess.Popen[str], timeout: float = 300) -> dict[str, object]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [e for e in _events(path) if e["event"] == event]
        if found:
            return found[0]
        assert proc.poll() is None, f"the watcher ended ({proc.returncode}): {path.read_text()[-3000:]}"
        time.sleep(0.2)
    raise AssertionError(f"no {event}: {[e['event'] for e in _events(path)]}")


@pytest.mark.slow
def test_lab_cable_down_is_healed_and_cable_up_returns_to_the_plan(tmp_path: Path) -> None:
    env = _env(tmp_path)
    outdir, lab, events = tmp_path / "out", tmp_path / "lab", tmp_path / "events.jsonl"

    def vr(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "vlanroute.cli", *args], env=env, capture_output=True,
                              check=False, text=True, timeout=600, cwd=tmp_path)

    assert vr("render", str(REPO / "inventories" / "seed-torus.yaml"), "-o", str(outdir), "-q").returncode == 0
    up = vr("lab", "up", str(outdir), "--state-dir", str(lab), "-q")
    assert up.returncode == 0, up.stderr
    for line in up.stdout.splitlines():                  # eval "$(vlanroute lab up out)"
        key, _, value = line.removeprefix("export ").partition("=")
        env[key] = value.strip("'")
    watcher = None
    try:
        first = vr("push", str(outdir), "--yes", "--workers", "8", "-q")
        assert first.returncode == 0, first.stdout + first.stderr
        watcher = subprocess.Popen([sys.executable, "-m", "vlanroute.cli", "watch", str(outdir), "--policy", "auto",
                                    "--interval", "0.5", "--debounce", "1", "--hold-down", "3", "--events", str(events),
                                    "--json", "-q"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, cwd=tmp_path)
        started = _wait(events, "started", watcher)
        assert started["switches"] == 8 and started["detection_bound_s"] == 1.5
        down = vr("lab", "cable-down", "--pair", "sw1:sw2", "--state-dir", str(lab))
        assert down.returncode == 0, down.stderr
        failed = _wait(events, "failures", watcher)
        assert failed["failures"] == {"cables": [], "pairs": ["sw1:sw2"], "switches": []}
        healed = _wait(events, "healed", watcher)
        record = json.loads((Path(str(healed["bundle"])) / "repair.json").read_text())
        assert record["switches_touched"] == ["sw1", "sw2", "sw3", "sw4"]
        back = vr("lab", "cable-up", "--pair", "sw1:sw2", "--state-dir", str(lab))
        assert back.returncode == 0, back.stderr
        returned = _wait(events, "returned", watcher)
        assert returned["bundle"] == str(outdir.resolve())
        watcher.send_signal(signal.SIGTERM)                  # systemctl stop
        stdout, stderr = watcher.communicate(timeout=120)
        assert watcher.returncode == 0, stderr
        assert stderr == ""                                  # -q: nothing went wrong
        summary = json.loads(stdout)
        assert [(a["kind"], a["outcome"]) for a in summary["actions"]] == [("heal", "healed"), ("return", "returned")]
        assert summary["acted"] == summary["observed"] == {"cables": [], "pairs": [], "switches": []}
        # The fabric runs the plan: push has nothing to change, the cabling check is clean.
        dry = vr("push", str(outdir), "--dry-run", "--json")
        assert dry.returncode == 0 and not [s for s in json.loads(dry.stdout)["switches"] if s["diff"]], dry.stdout
        assert vr("cabling", "check", str(outdir), "-q").returncode == 0
    finally:
        if watcher is not None and watcher.poll() is None:
            watcher.kill()
            watcher.wait(30)
        vr("lab", "down", "--state-dir", str(lab))
