"""Benchmark: `vlanroute emulate` of the seed 4x2 torus, split into VM boot, network build,
learning, checks (storm + fdb) and traffic (delivery + per-cable counters).

Run (as root): python bench/emulate.py [--hosts-per-switch N] [--kernel auto|host|vm]
Default: 2 hosts per switch (16 hosts), linux-bridge platform, 2 cables per switch pair.
The VM is used when this kernel has no bridge VLAN filtering (as here and on CI).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hosts-per-switch", type=int, default=2)
    ap.add_argument("--kernel", choices=["auto", "host", "vm"], default="auto")
    args = ap.parse_args()
    sets = ["hosts.count=null", f"hosts.per_switch={args.hosts_per_switch}", "platform=linux-bridge"]
    with tempfile.TemporaryDirectory(prefix="bench-emulate-") as tmp:
        outdir, report = Path(tmp) / "torus", Path(tmp) / "report.json"
        render = [sys.executable, "-m", "vlanroute.cli", "render", str(ROOT / "inventories" / "seed-torus.yaml"),
                  "-o", str(outdir), *[a for s in sets for a in ("--set", s)]]
        subprocess.run(render, check=True, capture_output=True)
        start = time.monotonic()
        proc = subprocess.run([sys.executable, "-m", "vlanroute.cli", "emulate", "--kernel", args.kernel,
                               "--json-report", str(report), str(outdir)],
                              capture_output=True, text=True)
        wall = time.monotonic() - start
        if not report.exists():
            print(proc.stdout[-3000:], proc.stderr[-3000:], sep="\n")
            return 1
        data = json.loads(report.read_text())
    phases = data["phases"]
    print(f"seed 4x2 torus, {data['size']}")
    print(f"kernel: {data['kernel']}")
    print(f"{'phase':<12}{'seconds':>9}")
    for name in ("vm boot", "build", "learn", "checks", "traffic", "teardown"):
        if name in phases:
            print(f"{name:<12}{phases[name]:>9.1f}")
    print(f"{'wall':<12}{wall:>9.1f}   (render excluded; includes Python start on the host)")
    print("result:", "PASS" if data["ok"] else "FAIL")
    return 0 if data["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
