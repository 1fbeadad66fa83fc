"""Benchmark: push a rendered 64-switch cluster to 64 emulated switches with 1, 4, 16 workers.

Run: python bench/push.py [--quick]      (--quick: 16 switches)
The fake switches run in a child process (so the client is measured, not the emulator
competing with it for the GIL) on 127.0.2.x. The loopback guard is switched on here, so
nothing can leave the machine whatever the plan says. Between runs every fake switch is
reset to its factory config, so each run pushes the full config.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
import subprocess
import sys
import tempfile
import time

ROOT = Path(__file__).resolve().parent.parent
USER, PASSWORD = "bench", "bench-password"

CHILD = r"""
import json, sys
from vlanroute.lab import FakeSwitchFarm
n = int(sys.argv[1])
with FakeSwitchFarm() as farm:
    for i in range(1, n + 1):
        farm.add(f"sw{i}", host=f"127.0.2.{i}", username=sys.argv[2], password=sys.argv[3])
    wired = None
    print(json.dumps({name: [sw.host, sw.port, sw.known_hosts_line()]
                      for name, sw in farm.switches.items()}), flush=True)
    for line in sys.stdin:
        if line.strip() == "reset":
            for sw in farm.switches.values():
                sw.state = sw.factory_state()
                sw.saved.clear()
            if wired:
                farm.wire(*wired)       # the factory state has no LLDP neighbours
            print("ok", flush=True)
        elif line.startswith("wire "):
            # The rendered cabling plugged in: the inter-switch links are up (push reads the
            # spanning-tree state of every inter-switch port after every step, and a port
            # whose link is down does not forward).
            from pathlib import Path
            from vlanroute.bundle.reader import read_all_cables, read_plan, host_macs
            out = Path(line.split(" ", 1)[1].strip())
            doc = read_plan(out)
            wired = (read_all_cables(out, list(doc.switches)), host_macs(doc))
            farm.wire(*wired)
            print("ok", flush=True)
        elif line.strip() == "count":
            print(json.dumps({n: len(sw.saved) for n, sw in farm.switches.items()}), flush=True)
"""


def main() -> int:
    os.environ["VLANROUTE_LOOPBACK_ONLY"] = "1"
    sys.path.insert(0, str(ROOT))
    from vlanroute.device.credentials import Credentials
    from vlanroute.plan.build import plan_from_file
    from vlanroute.device.push import APPLIED, PushOptions, PushUI, Pusher
    from vlanroute.device.statedir import FabricState
    from vlanroute.bundle.reader import read_plan
    from vlanroute.render.write import RenderOptions, render_to_dir
    from vlanroute.device.session import HostKeyPolicy
    from vlanroute.device.targets import check_loopback, select_targets

    quick = "--quick" in sys.argv
    n, dims = (16, "[4,4]") if quick else (64, "[8,8]")
    child = subprocess.Popen([sys.executable, "-c", CHILD, str(n), USER, PASSWORD],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=ROOT)
    assert child.stdin and child.stdout
    try:
        fakes = json.loads(child.stdout.readline())
        tmp = Path(tempfile.mkdtemp(prefix="vlanroute-bench-push-"))
        (tmp / "state").mkdir(mode=0o700)       # push refuses a state directory others can read
        sets = [f"topology.dims={dims}", "topology.links_per_pair=1", f"hosts.count={3 * n}"]
        for name, (host, port, _) in fakes.items():
            sets += [f"switches.{name}.mgmt={host}", f"switches.{name}.ssh_port={port}"]
        doc = plan_from_file(ROOT / "inventories" / "seed-torus.yaml", sets).to_document()
        outdir = tmp / "out"
        render_to_dir(doc, outdir, RenderOptions(verify=False))
        child.stdin.write(f"wire {outdir}\n")
        child.stdin.flush()
        assert child.stdout.readline().strip() == "ok"
        known = tmp / "known_hosts"
        known.write_text("".join(line + "\n" for _, _, line in fakes.values()))
        targets = select_targets(outdir, read_plan(outdir), (), action="push").targets
        check_loopback(targets)
        creds = Credentials(USER, PASSWORD)
        print(f"{n} switches, {len(doc.vlans)} VLANs, {len(doc.hosts)} hosts; "
              f"{os.cpu_count()} CPUs")
        print(f"{'workers':>8} {'wall s':>8} {'switches/s':>11} {'commands':>9} "
              f"{'cmd/s':>8} {'applied':>8}")
        for workers in (1, 4, 16):
            child.stdin.write("reset\n")
            child.stdin.flush()
            assert child.stdout.readline().strip() == "ok"
            pusher = Pusher(outdir, FabricState(tmp / "state"), creds, PushOptions(workers=workers,
                                                       host_keys=HostKeyPolicy(known_hosts=known)),
                            PushUI())
            t0 = time.perf_counter()
            results = pusher.run(targets)
            wall = time.perf_counter() - t0
            commands = sum(r.commands_sent for r in results)
            applied = sum(r.result == APPLIED for r in results)
            print(f"{workers:>8} {wall:>8.2f} {n / wall:>11.1f} {commands:>9} "
                  f"{commands / wall:>8.0f} {applied:>5}/{n}")
            bad = [r for r in results if r.result != APPLIED]
            for r in bad[:3]:
                print(f"    {r.switch}: {r.result}: {r.message}")
    finally:
        child.stdin.close()
        child.wait(timeout=30)
    return 0


if __name__ == "__main__":
    sys.exit(main())
