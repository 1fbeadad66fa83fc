"""Benchmark: `vlanroute emulate` of the seed 4x2 torus on linux-bridge, split into VM boot,
network build, learning (the host program on every host), checks (storm + fdb) and traffic
(delivery + per-cable counters), with the steps inside each phase.

Run (as root): python bench/emulate.py [--full | --hosts-per-switch N] [--kernel auto|host|vm]
               [--host-tools busybox|system] [--host-frame auto|ping|arp] [--frames-per-pair N]
Default: 2 hosts per switch (16 hosts); --full: the seed cluster itself, 225 hosts (seed 001,
section 4; 50,400 ordered pairs). 2 cables per switch pair, 4 VLANs.
The VM is used when this kernel has no bridge VLAN filtering (as here and on CI). Under TCG
every figure scales with what else the machine runs: the load average is printed too.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PHASES = ("vm boot", "build", "learn", "checks", "traffic", "teardown")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    size = ap.add_mutually_exclusive_group()
    size.add_argument("--hosts-per-switch", type=int, default=2)
    size.add_argument("--full", action="store_true", help="the inventory's own 225 hosts")
    ap.add_argument("--kernel", choices=["auto", "host", "vm"], default="auto")
    ap.add_argument("--host-tools", choices=["busybox", "system"], default="busybox")
    ap.add_argument("--host-frame", choices=["auto", "ping", "arp"], default="auto")
    ap.add_argument("--frames-per-pair", type=int, default=1)
    args = ap.parse_args()
    sets = ["platform=linux-bridge"]
    if not args.full:
        sets += ["hosts.count=null", f"hosts.per_switch={args.hosts_per_switch}"]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="bench-emulate-") as tmp:
        outdir, report = Path(tmp) / "torus", Path(tmp) / "report.json"
        render = [sys.executable, "-m", "vlanroute.cli", "render", str(ROOT / "inventories" / "seed-torus.yaml"),
                  "-o", str(outdir), *[a for s in sets for a in ("--set", s)]]
        subprocess.run(render, check=True, capture_output=True, cwd=ROOT)
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "vlanroute.cli", "emulate", "--kernel", args.kernel,
                               "--timeout", "1800", "--host-tools", args.host_tools,
                               "--host-frame", args.host_frame, "--frames-per-pair", str(args.frames_per_pair),
                               "--json-report", str(report), str(outdir)],
                              capture_output=True, text=True, cwd=ROOT)
        wall = time.monotonic() - start
        if not report.exists():
            print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
            return 1
        data = json.loads(report.read_text())
    load_after = os.getloadavg()
    steps = _steps(proc.stdout + proc.stderr)
    phases = data["phases"]
    print(f"seed 4x2 torus, {data['size']}")
    print(f"kernel: {data['kernel']}; hosts: {args.host_tools}, frame {args.host_frame}; "
          f"{args.frames_per_pair} datagram(s) per ordered pair")
    print(f"load average before {load_before[0]:.1f}, after {load_after[0]:.1f} (1 min; 2 cores)")
    print(f"{'phase':<44}{'seconds':>9}")
    for name in PHASES:
        if name in phases:
            print(f"{name:<44}{phases[name]:>9.1f}")
            for step, seconds in steps.get(name, []):
                print(f"  {step:<42}{seconds:>9.1f}")
    print(f"{'wall':<44}{wall:>9.1f}   (render excluded; includes Python start on the host)")
    for check in data["checks"]:
        print(f"[{'ok' if check['ok'] else 'FAIL'}] {check['name']}: {check['detail']}")
        for problem in check["problems"][:12]:
            print(f"       {problem}")
    print("result:", "PASS" if data["ok"] else "FAIL")
    return 0 if data["ok"] else 1


def _steps(log: str) -> dict[str, list[tuple[str, float]]]:
    """The `    step: N s` lines the emulation logs, under the `[phase] ...` line before them."""
    out: dict[str, list[tuple[str, float]]] = {}
    phase = None
    for line in log.splitlines():
        m = re.match(r"^\[(\w+)\] \.\.\.$", line)
        if m:
            phase = m.group(1)
            continue
        m = re.match(r"^    (.+): ([0-9.]+) s$", line)
        if m and phase:
            out.setdefault(phase, []).append((m.group(1), float(m.group(2))))
    return out


if __name__ == "__main__":
    sys.exit(main())
