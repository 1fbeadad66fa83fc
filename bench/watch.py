"""Benchmark: how long `vlanroute watch` takes, on the lab's emulated switches, from a dead
neighbour pair to the failure counted, to the repair pushed, and from the cable's return to
the plan pushed again.

Run: python bench/watch.py [--quick]     (--quick: the 4x2 seed torus only, one setting)

Each run: render a torus, `vlanroute lab up` (its own process), push the plan, start
`vlanroute watch --policy auto` (another process, events to a file), `vlanroute lab
cable-down --pair sw1:sw2`, wait for `healed`, `lab cable-up`, wait for `returned`. The
times come from the events' own time stamps against the moment `lab cable-down` / `cable-up`
returned (the lab answers once its switches show the change). With `hint`, the bench sends
the link-down syslog line itself right after the cut, as a switch configured to log to the
watcher would. The loopback guard is on: nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
import signal
import socket
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parent.parent


def _ts(event: dict[str, object]) -> float:
    return datetime.fromisoformat(str(event["time"])).timestamp()


def run_one(tmp: Path, inventory: str, interval: float, debounce: float, hold_down: float, hint: bool) -> dict[str, float]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("VLANROUTE_", "XDG_"))}
    env.update(HOME=str(tmp), VLANROUTE_LOOPBACK_ONLY="1", VLANROUTE_SSH_USER="bench",
               VLANROUTE_SSH_PASSWORD="bench-password", PYTHONPATH=str(ROOT))

    def vr(*args: str) -> subprocess.CompletedProcess[str]:
        done = subprocess.run([sys.executable, "-m", "vlanroute.cli", *args], env=env, capture_output=True, text=True,
                              check=False, cwd=tmp)
        if done.returncode:
            raise SystemExit(f"vlanroute {' '.join(args)}: {done.returncode}\n{done.stderr}")
        return done

    out, lab, events = tmp / "out", tmp / "lab", tmp / "events.jsonl"
    if inventory.startswith("torus:"):
        dims = inventory.split(":", 1)[1]
        inv = tmp / "inv.yaml"
        inv.write_text(f"name: bench\ntopology: {{kind: torus, dims: [{dims}], links_per_pair: 2}}\n"
                       "hosts: {per_switch: 16}\n")
    else:
        inv = ROOT / "inventories" / inventory
    vr("render", str(inv), "-o", str(out), "-q")
    for line in vr("lab", "up", str(out), "--state-dir", str(lab), "-q").stdout.splitlines():
        key, _, value = line.removeprefix("export ").partition("=")
        env[key] = value.strip("'")
    port = 0
    if hint:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
    watcher = None
    try:
        vr("push", str(out), "--yes", "--workers", "8", "-q")
        args = [sys.executable, "-m", "vlanroute.cli", "watch", str(out), "--policy", "auto", "--interval", str(interval),
                "--debounce", str(debounce), "--hold-down", str(hold_down), "--events", str(events), "-q",
                "--workers", "8", *(["--syslog-listen", f"127.0.0.1:{port}"] if hint else [])]
        watcher = subprocess.Popen(args, env=env, cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def wait(name: str, after: float) -> dict[str, object]:
            deadline = time.time() + 600
            while time.time() < deadline:
                if events.exists():
                    for line in events.read_text().splitlines():
                        e = json.loads(line)
                        if e["event"] == name and _ts(e) >= after:
                            return e
                assert watcher is not None and watcher.poll() is None, events.read_text()[-2000:]
                time.sleep(0.05)
            raise SystemExit(f"no {name}")
        wait("started", 0)
        time.sleep(2 * interval + 1)                      # a few rounds on the healthy fabric
        vr("lab", "cable-down", "--pair", "sw1:sw2", "--state-dir", str(lab))
        cut = time.time()
        if hint:
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                s.sendto(b"<13> DEC 01 03:12:09 sw1 TRAPMGR[1]: traputil.c(636) 7 %% Link Down: 1/g47",
                         ("127.0.0.1", port))
        failed = wait("failures", cut)
        healed = wait("healed", cut)
        time.sleep(1)
        vr("lab", "cable-up", "--pair", "sw1:sw2", "--state-dir", str(lab))
        back = time.time()
        seen_back = wait("failures", back)
        returned = wait("returned", back)
        return {"detect": _ts(failed) - cut, "heal": _ts(healed) - _ts(failed),
                "back_seen": _ts(seen_back) - back, "return": _ts(returned) - _ts(seen_back)}
    finally:
        if watcher is not None:
            watcher.send_signal(signal.SIGTERM)
            watcher.wait(120)
        subprocess.run([sys.executable, "-m", "vlanroute.cli", "lab", "down", "--state-dir", str(lab), "-q"],
                       env=env, cwd=tmp, check=False, capture_output=True)


def main() -> int:
    quick = "--quick" in sys.argv
    fabrics = ["seed-torus.yaml"] if quick else ["seed-torus.yaml", "torus:4,4"]
    settings = [(1.0, 1.0, 3.0, False)] if quick else [(1.0, 1.0, 3.0, False), (5.0, 5.0, 10.0, False),
                                                      (5.0, 5.0, 10.0, True)]
    print("| fabric | interval s | debounce s (2 reads) | hold-down s | syslog hint | bound s | counted after s "
          "| repair pushed after s | return seen after s | plan pushed after s |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for fabric in fabrics:
        for interval, debounce, hold, hint in settings:
            with tempfile.TemporaryDirectory(prefix="vr-bench-watch-") as tmp:
                r = run_one(Path(tmp), fabric, interval, debounce, hold, hint)
            bound = (0 if hint else interval) + max(debounce, min(interval, debounce))
            name = fabric.removesuffix(".yaml").replace("torus:4,4", "4x4 torus")
            print(f"| {name} | {interval:g} | {debounce:g} | {hold:g} | {'yes' if hint else 'no'} | {bound:.1f} "
                  f"| {r['detect']:.2f} | {r['heal']:.2f} | {r['back_seen']:.2f} | {r['return']:.2f} |", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
