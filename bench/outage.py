"""Benchmark: the outage of host pairs when every cable of a neighbour pair loses carrier,
or a whole switch dies, or one failure follows another once it is healed, on vlanroute's
plan (nobody acting, or a watcher's heal) and, on the same cables and hosts, Open vSwitch's
RSTP and the kernel's 802.1D (issue 39's yardsticks; docs/emulate.md, "Outage: a cut pair
against RSTP and 802.1D").

Run (as root):
  python bench/outage.py [OUTDIR | --hosts-per-switch N] [--fail sw1:sw2 [--fail sw3 ...]] [--against rstp,stp]
                         [--no-vlanroute] [--pairs 1000] [--interval-ms 10] [--timeout 60]
                         [--unhealed-timeout 10] [--stp-timers default|fastest] [--throughput RATE_MBIT]
                         [--heal MODULE:FUNCTION | --repair NEWDIR|auto | --failover [--no-repair]]
                         [--kernel auto|host|vm] [--json FILE]
--fail: a neighbour pair (A:B: every cable of it) or a switch (S: every cable of
it); given again, the next failure happens once the previous one is healed
(vlanroute: its heal returned and every probed pair delivers; spanning trees: settled), and
its own probed pairs are measured (default: --fail sw1:sw2). --fail-pair A:B is --fail A:B.
Without OUTDIR: the seed torus (inventories/seed-torus.yaml, its 225 hosts, 2 cables per
pair as bonds) rendered for platform=linux-bridge (with --failover, and
routing.protection=links: backup VLANs); --hosts-per-switch N renders N per switch
instead. --failover heals with emulate/failoverheal.py: the dead pair found by rtnetlink,
the PVIDs moved onto the backups, then (unless --no-repair) the balanced repair; a dead
switch, or a pair no backup covers, is healed by the repair straight away (the watcher's
failover does not apply), each line by rtnetlink, then learning frames; each later failure
is healed from the repair of the one before (`vlanroute repair` of that bundle). The VM is used when this kernel has no bridge VLAN filtering or no bonding (as here
and on CI). Prints one table (and JSON with --json).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from vlanroute.emulate.outagerun import (  # noqa: E402
    METHODS,
    ProbeSettings,
    prepare,
    run_here,
    run_in_vm,
)
from vlanroute.emulate.failplan import Failure, parse_pair, parse_switch  # noqa: E402
from vlanroute.emulate.spec import load  # noqa: E402
from vlanroute.errors import UserError  # noqa: E402


def parse_failure(text: str) -> Failure:
    """`A:B` a neighbour pair, `S` a switch."""
    return Failure(pair=parse_pair(text)) if ":" in text else Failure(switch=parse_switch(text))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("outdir", nargs="?", type=Path, help="a bundle rendered for platform=linux-bridge")
    ap.add_argument("--hosts-per-switch", type=int, default=None)
    ap.add_argument("--fail", action="append", default=None, metavar="A:B|S",
                    help="a neighbour pair or a switch; again: the next failure, once the previous is healed")
    ap.add_argument("--fail-pair", default=None, help="the same as --fail A:B")
    ap.add_argument("--against", default="rstp,stp", help="spanning trees to compare with: rstp, stp (or none)")
    ap.add_argument("--no-vlanroute", action="store_true", help="skip the plan's own run")
    ap.add_argument("--pairs", type=int, default=1000, help="probe at most this many pairs (a seeded sample)")
    ap.add_argument("--interval-ms", type=float, default=10.0)
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--timeout", type=float, default=60.0, help="seconds after the cut before a pair counts as never restored")
    ap.add_argument("--unhealed-timeout", type=float, default=10.0,
                    help="the same for the plan with nobody acting (it never heals)")
    ap.add_argument("--stp-timers", choices=["default", "fastest"], default="default")
    ap.add_argument("--ovs-datapath", choices=["auto", "system", "netdev"], default="auto",
                    help="RSTP's datapath: the kernel's (system, where the openvswitch module loads) or userspace")
    ap.add_argument("--throughput", type=float, default=1.0, metavar="RATE_MBIT",
                    help="after the cut, emulate --traffic's measurement on the spanning trees at this rate (0: skip)")
    ap.add_argument("--throughput-seconds", type=float, default=6.0)
    ap.add_argument("--heal", default=None, help="module:function called with the cut (the watcher's hook)")
    ap.add_argument("--repair", default=None, metavar="NEWDIR|auto",
                    help="heal with `vlanroute repair`'s bundle for the pair (auto: make it), applied at the cut "
                         "(failoverheal.apply_failover without the failover: found by rtnetlink, the repair's lines, "
                         "then learning frames)")
    ap.add_argument("--failover", action="store_true",
                    help="heal with the fast failover (emulate/failoverheal.apply_failover), then the repair")
    ap.add_argument("--no-repair", action="store_true", help="with --failover: no balanced repair after it")
    ap.add_argument("--kernel", choices=["auto", "host", "vm"], default="auto")
    ap.add_argument("--vm-timeout", type=float, default=3600)
    ap.add_argument("--json", type=Path, default=None)
    args = ap.parse_args()

    methods = ([] if args.no_vlanroute else ["vlanroute"]) + [m for m in args.against.split(",") if m and m != "none"]
    if any(m not in METHODS for m in methods):
        ap.error(f"--against takes {', '.join(METHODS[1:])}")
    try:
        stages = [parse_failure(x) for x in (args.fail or []) + ([args.fail_pair] if args.fail_pair else [])]
    except UserError as exc:
        ap.error(f"{exc.message} ({exc.fix})")
    stages = stages or [Failure(pair=("sw1", "sw2"))]
    if len(stages) > 1 and not args.no_vlanroute and not args.failover:
        ap.error("a second --fail needs --failover (vlanroute's fabric must heal the first failure)")
    if args.repair and (len(stages) > 1 or stages[0].switch):
        ap.error("--repair takes one dead pair; use --failover (it repairs whatever failed)")
    settings = ProbeSettings(interval_s=args.interval_ms / 1000, warmup_s=args.warmup, timeout_s=args.timeout)
    throughput = None if not args.throughput else {
        "patterns": ["all-to-all", "permutation"], "rate_mbit": args.throughput, "warmup_s": 3.0,
        "seconds": args.throughput_seconds, "seed": 1}
    with tempfile.TemporaryDirectory(prefix="bench-outage-") as tmp:
        outdir = args.outdir or render(Path(tmp) / "torus", args.hosts_per_switch, args.failover)
        spec = load(outdir)
        heal, context = args.heal, {}
        contexts: list[dict] = []
        running = [spec]
        a, b = stages[0].pair or ("", "")
        if args.repair:
            newdir = Path(tmp) / "repaired" if args.repair == "auto" else Path(args.repair)
            if args.repair == "auto":
                from vlanroute.cli import main as cli
                if cli(["repair", str(outdir), "--failed-pair", f"{a}:{b}", "-o", str(newdir), "-q"]) != 0:
                    return 2
            from vlanroute.emulate.failoverheal import stage_context
            heal = "vlanroute.emulate.failoverheal:apply_failover"
            context = stage_context(outdir, stages[0], newdir, outdir, throughput, failover=False)
        if args.failover:
            from vlanroute.cli import main as cli
            from vlanroute.emulate.failoverheal import stage_context
            heal = "vlanroute.emulate.failoverheal:apply_failover"
            active = outdir
            for i, failure in enumerate(stages):
                # Each failure healed from the bundle the fabric runs then: the plan, then
                # each repair (`vlanroute repair` of it, the earlier failures gone from it).
                newdir = Path(tmp) / f"repaired-{i + 1}"
                dead = (["--failed-pair", ":".join(failure.pair)] if failure.pair
                        else ["--failed-switch", str(failure.switch)])
                repaired = None if args.no_repair and failure.pair else newdir
                if repaired is not None and cli(["repair", str(active), *dead, "-o", str(newdir), "-q"]) != 0:
                    return 2
                last = i == len(stages) - 1
                contexts.append(stage_context(active, failure, repaired, outdir, throughput if last else None))
                if i + 1 < len(stages):
                    if repaired is None:
                        ap.error("--no-repair leaves nothing for a second failure to start from")
                    active = newdir
                    running.append(load(newdir))
        setup = prepare(spec, stages, methods, settings, max_pairs=args.pairs, stp_timers=args.stp_timers,
                        unhealed_timeout_s=args.unhealed_timeout, throughput=throughput, heal=heal,
                        ovs_datapath=args.ovs_datapath, running=running)
        if contexts:
            for stage, ctx in zip(setup.stages, contexts):
                stage.heal_context = ctx
        else:
            setup.heal_context = context
        where = args.kernel
        if where == "auto":
            from vlanroute.emulate.run import host_kernel_capable
            capable, _why = host_kernel_capable()
            where = "host" if capable and Path("/sys/module/bonding").exists() else "vm"
        load_before = os.getloadavg()
        start = time.monotonic()
        if where == "host":
            report = run_here(outdir, setup, "this host's kernel", log=lambda line: print(line, file=sys.stderr))
            report.analyse()
        else:
            report = run_in_vm(outdir, setup, args.vm_timeout, log=lambda line: print(line, file=sys.stderr))
        wall = time.monotonic() - start
    print(report.text())
    print(f"load average before {load_before[0]:.1f}, after {os.getloadavg()[0]:.1f} (1 min; "
          f"{os.cpu_count()} cores); wall {wall:.0f} s")
    if args.json is not None:
        args.json.write_text(json.dumps({**report.to_json(), "wall_s": round(wall, 1),
                                         "load_before": load_before[0]}, indent=1) + "\n")
    return 0 if report.ok else 1


def render(outdir: Path, per_switch: int | None, protect: bool = False) -> Path:
    from vlanroute.plan.build import plan_from_file
    from vlanroute.render.write import RenderOptions, render_to_dir
    sets = ["platform=linux-bridge"] + (["routing.protection=links"] if protect else [])
    if per_switch is not None:
        sets += ["hosts.count=null", f"hosts.per_switch={per_switch}"]
    plan = plan_from_file(str(ROOT / "inventories" / "seed-torus.yaml"), sets)
    render_to_dir(plan.to_document(), outdir, RenderOptions())
    return outdir


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UserError as exc:            # a switch or pair the plan does not have, say
        print(f"error: {exc.render()}", file=sys.stderr)
        sys.exit(2)
