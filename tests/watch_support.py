"""Helpers for the watcher's lab tests: a watcher (vlanroute.operate.watcher) on a fabric of
emulated switches, cables taken down and up as the lab daemon does for `vlanroute lab
cable-down` / `cable-up`, and waiting for the watcher's events."""

from __future__ import annotations

import csv
import io
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from push_support import PASSWORD, USER, Cluster

from vlanroute.bundle.reader import host_macs, read_all_cables, read_plan
from vlanroute.device.credentials import Credentials
from vlanroute.device.journal import sha256_text
from vlanroute.device.statedir import FabricState
from vlanroute.device.targets import select_targets
from vlanroute.drivers import FAMILIES
from vlanroute.lab import linkdown
from vlanroute.operate.events import EventLog
from vlanroute.operate.policy import WatchPolicy
from vlanroute.operate.watcher import Connection, Watcher

FAST = {"interval_s": 0.3, "debounce_polls": 2, "debounce_s": 0.5, "hold_down_s": 1.5, "retry_s": 1.0}


def pair_ends(outdir: Path, a: str, b: str) -> set[tuple[str, str]]:
    with open(outdir / "cabling.csv", newline="") as fh:
        rows = [r for r in csv.DictReader(fh) if r["kind"] == "inter-switch" and {r["a"], r["b"]} == {a, b}]
    return {(r[s], r[f"{s}_port"]) for r in rows for s in ("a", "b")}


def unplug(cluster: Cluster, ends: set[tuple[str, str]]) -> None:
    """What the lab daemon does when `lab cable-down` asks: LLDP and link gone at both ends
    of every cable with an end in `ends` (an empty set: every cable plugged in)."""
    doc = read_plan(cluster.outdir)
    cables = read_all_cables(cluster.outdir, doc.switches, hosts=doc.hosts)
    cluster.farm.wire(linkdown.plugged(cables, ends), host_macs(doc))


@dataclass
class Running:
    watcher: Watcher
    thread: threading.Thread
    stop: threading.Event
    log: EventLog
    stream: io.StringIO

    def events(self, name: str | None = None) -> list[dict[str, Any]]:
        return [e for e in list(self.log.seen) if name is None or e["event"] == name]

    def wait(self, name: str, timeout: float = 120.0, count: int = 1,
             where: Callable[[dict[str, Any]], bool] = lambda e: True) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = [e for e in self.events(name) if where(e)]
            if len(found) >= count:
                return found[count - 1]
            if not self.thread.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"no {name} event within {timeout} s; events: "
                             + "\n".join(f"{e['event']}: {e}" for e in self.events())[-6000:])

    def finish(self) -> None:
        self.stop.set()
        self.thread.join(timeout=60)
        assert not self.thread.is_alive()


def watcher_for(cluster: Cluster, **policy: Any) -> tuple[Watcher, EventLog, io.StringIO]:
    doc = read_plan(cluster.outdir)
    chosen = WatchPolicy.of(doc, {**FAST, **policy})
    targets = select_targets(cluster.outdir, doc, (), action="push").targets
    stream = io.StringIO()
    log = EventLog(doc.name or "lab", stream=stream)
    conn = Connection(Credentials(USER, PASSWORD), known_hosts=cluster.known_hosts, workers=4)
    state = FabricState.choose(None, doc.name, cluster.outdir)
    plan_sha = sha256_text((cluster.outdir / "plan.json").read_text())
    return Watcher(cluster.outdir, doc, plan_sha, state, chosen, conn, targets, log), log, stream


def start(cluster: Cluster, **policy: Any) -> Running:
    watcher, log, stream = watcher_for(cluster, **policy)
    stop = threading.Event()
    thread = threading.Thread(target=watcher.run, args=(stop,), name="test-watcher", daemon=True)
    thread.start()
    return Running(watcher, thread, stop, log, stream)


def canonical(farm: Any) -> dict[str, list[str]]:
    out = {}
    for name, sw in farm.switches.items():
        fam = FAMILIES[sw.platform.family]
        cfg = fam.parse_running(sw.running_config(), switch=name, platform=sw.platform, source=name)
        out[name] = [line.text for line in fam.canonical_lines(cfg)]
    return out
