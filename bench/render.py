"""Benchmark: `vlanroute render` as a user runs it, against `vlanroute plan --json` of the
same fabric, both timed whole in a subprocess (wall time, CPU time and peak RSS of the
child), so the ratio covers planning, rendering, verification and writing alike.

    python bench/render.py [--quick | --all]

Prints per case: the bundle's size and file count, plan --json and render (with its
verification) time and peak memory, and render / plan --json. The target (issue 15) is a
ratio of at most 3 and, for the 32x32 torus with 16 hosts per switch, a bundle under 60 MB
and a render under 60 s and 1.5 GB. Wall time depends on what else runs on the machine
(the load average is printed); CPU time much less so.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BIG_PC = ["platforms={pc-bigmac: {base: powerconnect-6248, mac_capacity: 100000000}}",
          "platform=pc-bigmac", "switches={}", "settings.learning.pool=10.0.0.0/8"]
CASES = [
    ("seed cluster: 4x2 torus, 225 hosts", "inventories/seed-torus.yaml", []),
    ("16x16 hyper-crossbar, 10 hosts/switch", "inventories/hyper-crossbar-16x16.yaml", []),
    ("32x32 torus, 16 hosts/switch", "inventories/seed-torus.yaml",
     ["topology.dims=[32,32]", "topology.links_per_pair=1", "hosts={per_switch: 16}", *BIG_PC]),
]


def timed(args: list[str]) -> tuple[float, float, float, int, str]:
    """Run a child to the end: (wall s, CPU s, peak RSS MiB, exit code, last stderr line),
    its own resource usage from wait4."""
    t0 = time.perf_counter()
    with tempfile.TemporaryFile() as err, open(os.devnull, "wb") as null:
        child = subprocess.Popen(args, cwd=ROOT, stdout=null, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t0
        err.seek(0)
        last = (err.read().decode(errors="replace").strip().splitlines() or [""])[-1]
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, child.returncode, last


def bundle_size(outdir: Path) -> tuple[int, int]:
    files = [p for p in outdir.rglob("*") if p.is_file()]
    return len(files), sum(p.stat().st_size for p in files)


def main() -> int:
    cases = CASES[:1] if "--quick" in sys.argv else CASES if "--all" in sys.argv else CASES[:2]
    cli = [sys.executable, "-m", "vlanroute.cli"]
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'case':<40} {'files':>6} {'MB':>7} {'plan --json s':>13} {'cpu':>6} {'MiB':>6} "
          f"{'render s':>9} {'cpu':>6} {'MiB':>6} {'ratio':>6}")
    with tempfile.TemporaryDirectory() as tmp:
        for i, (title, inv, sets) in enumerate(cases):
            flags = [x for s in sets for x in ("--set", s)]
            pw, pc, pm, prc, perr = timed([*cli, "plan", inv, "--json", *flags])
            outdir = Path(tmp) / f"case{i}"
            rw, rc, rm, rrc, rerr = timed([*cli, "render", inv, "-o", str(outdir), *flags])
            if prc or rrc:
                print(f"{title:<40} FAILED: {perr if prc else rerr}")
                continue
            n, size = bundle_size(outdir)
            print(f"{title:<40} {n:>6} {size / 1e6:>7.1f} {pw:>13.2f} {pc:>6.1f} {pm:>6.0f} "
                  f"{rw:>9.2f} {rc:>6.1f} {rm:>6.0f} {rw / pw:>6.2f}", flush=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
