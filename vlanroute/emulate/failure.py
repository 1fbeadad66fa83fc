"""`vlanroute emulate OUTDIR --fail-pair sw1:sw2 --repair NEWDIR` (or `--fail-switch sw1`): a
dead neighbour pair (or switch) and its repair on the kernel's own bridges (docs/emulate.md,
"A failure and its repair").

The same namespaces, scripts and checks as the healthy run (vlanroute.emulate.run), then:
1. healthy: learning, storm check, MAC tables, UDP between every ordered host pair;
2. cut: every cable of the pair is taken down at both ends (a carrier loss, as a pulled
   cable or a dead LAG), or, for a dead switch, every cable and host link of it; the bridges must forget what they learned on those ports, and the
   UDP traffic must lose exactly the pairs the plan predicts (vlanroute.emulate.failplan)
   and deliver every other pair exactly once;
3. repair: the linux-bridge delta from OUTDIR to NEWDIR (`bridge vlan del|add`, in the
   order the loop-free transition plans, as push does: emulate/transition.py), then NEWDIR's
   host program on every host with
   `--vlans` = the repaired VLANs (what NEWDIR's relearn.sh runs);
4. recovered: MAC tables of NEWDIR's plan, storm check, UDP between every ordered host pair
   delivered exactly once over exactly NEWDIR's routes (the per-cable counters: no flooding);
5. last, the healthy run's TCP exchange (vlanroute.emulate.run, step 4) over the repaired
   routes and its final storm check: so the scenario covers every check of the healthy run.
The time from the first repair command to the end of that delivery check is the recovery time.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable
from pathlib import Path

from vlanroute.emulate import netns, run
from vlanroute.emulate.failplan import (
    BridgeStep,
    Failure,
    cut_tx,
    keep_running_hosts,
    repair_delta,
    repair_record,
)
from vlanroute.emulate.relearn import relearn_frames
from vlanroute.emulate.run import (
    Check,
    Emulation,
    Options,
    Report,
    lost_by_step,
    remove_stale_namespaces,
    run_phases,
    traffic_again,
)
from vlanroute.emulate.spec import Counts, EmulationSpec, load

RECOVERY = "repair to all pairs delivered"


def cut(emu: Emulation, pair: tuple[str, str]) -> list[str]:
    """Take every cable of the pair down at both ends: `ip link set down` on a veth end
    turns the carrier off on its peer too, and a bond without a member up loses its own."""
    a, b = pair
    ports: list[str] = []
    for c in emu.plan.cables:
        if {c.a, c.b} == {a, b}:
            netns.batch("ip", [f"link set dev {c.a_port} down"], netns=emu.sw_ns(c.a))
            netns.batch("ip", [f"link set dev {c.b_port} down"], netns=emu.sw_ns(c.b))
            ports += [f"{c.a} {c.a_port}", f"{c.b} {c.b_port}"]
    return ports


def stop_host_links(emu: Emulation, switch: str) -> list[str]:
    """A dead switch's host ports, down in one batch: its hosts lose their carrier."""
    ports = [h.port for h in emu.plan.hosts.values() if h.switch == switch]
    netns.batch("ip", [f"link set dev {p} down" for p in ports], netns=emu.sw_ns(switch))
    return ports


def _bridge_ports_state(emu: Emulation, switch: str) -> dict[str, str]:
    out = netns.run(["bridge", "-n", emu.sw_ns(switch), "-j", "link", "show"]).stdout
    return {str(link.get("ifname")): str(link.get("state")) for link in json.loads(out or "[]")
            if link.get("master") == "br0"}


def _fdb_on(emu: Emulation, switch: str, ports: set[str]) -> int:
    """Host MACs the switch has learned on these bridge ports, in any VLAN."""
    macs = {h.mac for h in emu.plan.hosts.values()}
    out = netns.run(["bridge", "-n", emu.sw_ns(switch), "-j", "fdb", "show", "br", "br0"]).stdout
    return sum(1 for e in json.loads(out or "[]")
               if str(e.get("mac", "")).lower() in macs and e.get("ifname") in ports and "vlan" in e)


def dead_bridge_ports(spec: EmulationSpec, failure: Failure) -> dict[str, set[str]]:
    """Switch -> its bridge ports the failure takes down (both ends of every dead pair, and
    a dead switch's host ports)."""
    out: dict[str, set[str]] = {}
    for a, b in failure.pairs(spec):
        for s, n in ((a, b), (b, a)):
            out.setdefault(s, set()).update(spec.uplinks[(s, n)].bridge_ports())
    if failure.switch:
        out.setdefault(failure.switch, set()).update(
            h.port for h in spec.hosts.values() if h.switch == failure.switch)
    return out


def cut_check(emu: Emulation, failure: Failure, timeout_s: float = 10.0) -> Check:
    """Cut the pair (or every link of the switch); the bridge ports it takes down must go to
    `disabled` and lose their entries."""
    dead = dead_bridge_ports(emu.plan, failure)
    before = sum(_fdb_on(emu, s, ports) for s, ports in dead.items())
    cables: list[str] = []
    for pair in failure.pairs(emu.plan):
        cables += cut(emu, pair)
    host_links = stop_host_links(emu, failure.switch) if failure.switch else []
    deadline = time.monotonic() + timeout_s
    while True:
        states = {(s, p): st for s, ports in dead.items() for p, st in _bridge_ports_state(emu, s).items()
                  if p in ports}
        if all(st == "disabled" for st in states.values()) or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    after = sum(_fdb_on(emu, s, ports) for s, ports in dead.items())
    problems = [f"{s} {p} is {st}, not disabled {timeout_s:g} s after the cut"
                for (s, p), st in sorted(states.items()) if st != "disabled"]
    if after:
        problems.append(f"{after} learned host MAC entries are still on the dead bridge ports")
    entries = (f"learned host MAC entries on them: {before} before, {after} after (flushed on link down)")
    if failure.pair:
        return Check(f"cable pair {failure.pair[0]}-{failure.pair[1]} cut", not problems,
                     f"{len(cables) // 2} cables down ({', '.join(cables)}); bridge ports towards it disabled; "
                     + entries, problems)
    return Check(f"switch {failure.switch} stopped", not problems,
                 f"{len(cables) // 2} cables and {len(host_links)} host links down; "
                 f"{len(states)} bridge ports disabled; " + entries, problems)


def predicted_loss_check(emu: Emulation, predicted: set[tuple[str, str]], frames: int) -> Check:
    """After traffic(): exactly the predicted pairs got nothing, every other pair its frames once."""
    pairs = [(a, b) for a in emu.plan.hosts for b in emu.plan.hosts if a != b]
    lost = {(a, b) for a, b in pairs if emu.received[(b, a)] == 0}
    short = [(a, b) for a, b in pairs if (a, b) not in predicted and emu.received[(b, a)] != frames]
    wrong = sorted(f"{a} -> {b}: {emu.received[(b, a)]} of {frames} datagrams"
                   + (f" ({emu.unsent[(a, b)]} could not be sent)" if emu.unsent[(a, b)] else "")
                   for a, b in short)
    delivered_anyway = sorted(f"{a} -> {b}: delivered, but its path crosses the dead part"
                              for a, b in predicted - lost)
    problems = wrong + delivered_anyway
    if problems:
        problems[:0] = emu.traffic_drops
    if short:
        problems.insert(len(emu.traffic_drops), lost_by_step(sorted(emu.plan.hosts), short))
    return Check("pairs cut as the plan predicts", not problems,
                 f"{len(lost & predicted)}/{len(predicted)} predicted pairs cut, "
                 f"{len(pairs) - len(predicted) - len(wrong)}/{len(pairs) - len(predicted)} other pairs got "
                 f"exactly {frames} UDP datagrams", problems)


def apply_delta(emu: Emulation, steps: list[BridgeStep], order: str) -> Check:
    """One `bridge vlan` per step, in order (one process each: the order is the point)."""
    problems: list[str] = []
    for step in steps:
        r = netns.run(["bridge", "-n", emu.sw_ns(step.switch), *step.command().split()])
        if r.returncode != 0:
            problems.append(f"{step.switch}: bridge {step.command()}: {r.stderr.strip()}")
    switches = sorted({s.switch for s in steps})
    return Check("repair delta (linux-bridge)", not problems,
                 f"{len(steps)} `bridge vlan` commands on {len(switches)} switches ({', '.join(switches)}), "
                 f"{order}", problems)


def run_here(outdir: Path, newdir: Path, failure: Failure, options: Options, kernel: str,
             log: Callable[[str], None] = print) -> Report:
    """The whole failure scenario in this kernel (needs root). Always tears down."""
    spec, repaired = load(outdir), load(newdir)
    failure.check(spec)
    predicted = failure.cut_pairs(spec)
    record = repair_record(newdir)       # vlanroute repair's VLANs to re-learn in
    repair_delta(spec, repaired, None, failure.dead())       # checks it is a repair of this bundle
    # The delta in the loop-free transition's order, as `vlanroute push` plans it
    # (vlanroute.transition: every state after every command checked).
    from vlanroute.emulate.transition import plan_bridges
    planned = plan_bridges(spec, repaired, spec, dead=failure.dead())
    steps = [BridgeStep(step.switch, cmd.verb, cmd.port, cmd.vlan)   # type: ignore[arg-type]
             for step in planned.transition.steps for cmd in planned.commands[(step.switch, step.kind)]]
    # The running hosts keep their emulated MACs and addresses (a dead switch's are dropped).
    repaired = keep_running_hosts(spec, repaired)
    relearn = failure.broken_vlans(spec) if record is None else sorted(record["affected_vlans"])
    remove_stale_namespaces(log)
    emu = Emulation(spec, options, log)
    lags = sum(1 for c in spec.cables if c.a_lag is not None)
    report = Report(outdir=str(outdir), plan=spec.name, kernel=kernel,
                    size=f"{len(spec.switches)} switches, {len(spec.hosts)} hosts, {len(spec.cables)} cables "
                         f"({lags} in LAGs), {len(spec.vlan_ids)} VLANs; {failure.label()}, "
                         f"repair {newdir}")
    cut_options = dataclasses.replace(options, traffic_wait_s=5.0)   # the lost datagrams never come

    def while_cut(pairs: list[tuple[str, str]], frames: int) -> Counts:
        return cut_tx(spec, failure, pairs, frames)

    def during_cut() -> list[Check]:
        emu.options = cut_options
        try:
            # Paced and counted with the flood of unknown unicast at the cut's near ends
            # (failplan.cut_tx); the delivery check is replaced by the predicted loss.
            _delivery, cables = traffic_again(
                emu, while_cut, "frames crossed exactly the cables the cut leaves (routes up to the dead "
                                "part, then the near end's flood of unknown unicast)")
        finally:
            emu.options = options
        return [predicted_loss_check(emu, predicted, options.frames_per_pair), cables]

    def repair() -> list[Check]:
        start = time.monotonic()
        delta = apply_delta(emu, steps, f"in the loop-free transition's order ({len(planned.transition.steps)} "
                                        "steps, every state after every command proven a forest)")
        # NEWDIR's trees and host program; a dead switch and its hosts are no longer in it.
        emu.plan = repaired
        applied = time.monotonic()
        if options.relearn == "frames":
            learned = relearn_frames(emu, relearn)
        else:
            learned = emu.learn(("--vlans", ",".join(map(str, relearn))))
            learned.name = f"re-learning in VLANs {','.join(map(str, relearn))} (hosts/vlanroute-host --vlans)"
        relearned = time.monotonic()
        delivery, cables = traffic_again(emu)
        end = time.monotonic()
        report.phases[RECOVERY] = end - start
        report.phases["recovery: delta"] = applied - start
        report.phases["recovery: re-learning"] = relearned - applied
        report.phases["recovery: every pair once"] = end - relearned
        return [delta, learned, delivery, cables]

    return run_phases(emu, report, log, [
        ("build", lambda: [emu.build()]),
        ("learn", lambda: [emu.learn()]),
        ("checks", lambda: [emu.storm_check("after the learning broadcasts and VLAN-1 probes", probe=True),
                            emu.fdb_check()]),
        # The rate limits stay raised through the cut and its traffic (no broadcast there:
        # a tc process per switch each way costs seconds under TCG); lowered before the repair.
        ("traffic", lambda: emu.traffic(restore_rate=False)),
        ("cut", lambda: [cut_check(emu, failure)]),
        ("traffic while cut", during_cut),
        ("repair", repair),
        ("after the repair", lambda: [emu.fdb_check(), emu.storm_check("after the repair", probe=True)]),
        # Last, because on small fabrics it empties the ARP tables (the UDP checks above count
        # every frame per cable): the healthy run's TCP exchange and final storm check, here
        # over the repaired routes, so this scenario checks all that the healthy run does.
        ("tcp", lambda: [emu.tcp_check(), emu.storm_check("after the traffic", probe=False)]),
    ])


def run_in_vm(outdir: Path, newdir: Path, failure: Failure, options: Options, timeout_s: float,
              json_report: Path | None, log: Callable[[str], None]) -> tuple[int, float]:
    """The scenario inside the emulation VM: run.run_in_vm with NEWDIR copied in too."""
    def failure_args(copies: dict[str, Path]) -> list[str]:
        dead = (["--fail-pair", f"{failure.pair[0]}:{failure.pair[1]}"] if failure.pair
                else ["--fail-switch", str(failure.switch)])
        return [*dead, "--repair", str(copies["newdir"])]

    return run.run_in_vm(outdir, options, timeout_s, json_report, log,
                         extra_dirs={"newdir": newdir}, extra_args=failure_args)
