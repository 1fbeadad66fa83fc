"""The fast failover on the emulated linux-bridge fabric: the outage bench's heal for a
protected plan (routing.protection: links), and the balanced repair after it.

What a watcher on Linux switches does, as fast as the family allows (docs/failures.md,
"Fast failover"; docs/emulate.md, "Outage"):

1. **Detect.** Before anything fails, an agent (`prepare`, called by the bench before the
   probes start) opens one rtnetlink socket per switch namespace subscribed to its link
   notifications (emulate/rtnl.py) and reads every link once. At the cut it reads the
   RTM_NEWLINK notifications the kernel queued (no process started, no dump); a neighbour
   pair is dead when no cable between the two has carrier at either end. The pair that was
   cut is not given to it: it finds it.
2. **Fail over.** The table made before the cut (`failover_context`, from the published
   plan, for every neighbour pair: what `vlanroute repair --failover` changes) gives the
   host ports whose PVID moves onto a backup VLAN; each switch's are set by rtnetlink, one
   buffer per switch. No inter-switch port changes, so no VLAN can get a loop; the backups
   were learned before the cut, so nothing floods and no host acts.
3. **Then the balanced repair** (when the context carries one), as the watcher pushes it:
   the repair's trees with the hosts still failed over (bundle/failedover.py
   `retreed_document`: no host pair cut on the way), one learning frame per host in the
   repaired VLANs (what relearn.sh sends; the watcher waits for its audit to pass), then
   the PVIDs back, each by the loop-free transition (emulate/transition.py
   `plan_bridges`), one `bridge vlan` line at a time in its order.
   The probes keep running: a loss it caused would show as a later loss in the report.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlanroute.emulate import netns, rtnl

if TYPE_CHECKING:
    from vlanroute.emulate.outagerun import CutEvent


def _key(a: str, b: str) -> str:
    return f"{a}:{b}" if a <= b else f"{b}:{a}"


def failover_table(outdir: Path) -> dict[str, list[list[Any]]]:
    """For every neighbour pair of OUTDIR's fabric whose death the backups cover: the host
    ports whose PVID the failover moves, as [switch, port, new PVID] (bundle/failedover.py,
    what `vlanroute repair --failover --failed-pair A:B` writes)."""
    from vlanroute.bundle.failedover import failover_document
    from vlanroute.bundle.failures import Failures
    from vlanroute.bundle.reader import read_plan
    from vlanroute.errors import PlanError
    doc = read_plan(outdir)
    pairs = sorted({tuple(sorted((c.a, c.b))) for c in doc.cabling if c.b in doc.switches and c.a != c.b})
    table: dict[str, list[list[Any]]] = {}
    for a, b in pairs:
        try:
            moved = failover_document(doc, Failures(pairs=((a, b),))).doc
        except PlanError:
            continue                        # nothing to fail over (no tree uses the pair), or no backup
        table[_key(a, b)] = [[s, port, new.pvid] for s, rec in moved.switches.items()
                             for port, new in rec.ports.items()
                             if new.role == "host" and new.pvid != doc.switches[s].ports[port].pvid]
    return table


def predict_healed(repaired: Any, opt: dict[str, Any]) -> dict[str, Any]:
    """emulate --traffic's TCP model on the repaired plan's VLAN routes, between the
    outage bench's throughput hosts (one per switch): what the healed fabric should carry."""
    from dataclasses import replace
    from vlanroute.emulate.outagerun import predicted, throughput_hosts
    from vlanroute.emulate.traffic import vlan_fabric
    small = replace(repaired, hosts={h: repaired.hosts[h] for h in throughput_hosts(repaired)})
    return predicted(small, vlan_fabric(small, float(opt["rate_mbit"]) / 1000), opt, "the healed plan")


def failover_context(outdir: Path, repaired: Path | None = None, pair: tuple[str, str] | None = None,
                     throughput: dict[str, Any] | None = None) -> dict[str, Any]:
    """apply_failover's context: the failover table, each switch's uplink members by
    neighbour (what detection reads), and, with `repaired` (`vlanroute repair`'s bundle for
    `pair`), the repair's lines from the failed-over state in the loop-free transition's
    order and its VLANs to re-learn; with `throughput` (the bench's options), the healed
    plan's predicted throughput, measured after the heal as on the spanning trees."""
    from dataclasses import replace
    from vlanroute.emulate.failplan import repair_record
    from vlanroute.emulate.spec import load
    from vlanroute.emulate.transition import plan_bridges
    spec = load(outdir)
    uplinks: dict[str, dict[str, list[str]]] = {}
    for (s, n), up in spec.uplinks.items():
        uplinks.setdefault(s, {})[n] = list(up.members)
    table = failover_table(outdir)
    context: dict[str, Any] = {"table": table, "uplinks": uplinks, "repair": None}
    if repaired is not None and pair is not None:
        # The failed-over fabric: the published one with the moved hosts' PVIDs (its VLANs'
        # trees unchanged, the dead pair's ports still carrying them).
        # The failed-over fabric: the published one with the moved hosts' PVIDs (its VLANs'
        # trees unchanged, the dead pair's ports still carrying them); then the repair's
        # trees with those PVIDs (bundle/failedover.py retreed_document: the changed VLANs
        # are idle, no host pair is cut), then the repair (the PVIDs back).
        moved = {(s, port): int(vid) for s, port, vid in table[_key(*pair)]}
        target = load(repaired)
        failed_over, retree = (replace(x, hosts={n: replace(h, vlan=moved.get((h.switch, h.port), h.vlan))
                                                 for n, h in x.hosts.items()}) for x in (spec, target))
        phases: list[list[list[str]]] = []
        cuts = 0
        for a, b in ((failed_over, retree), (retree, target)):
            planned = plan_bridges(a, b, spec)
            phases.append([[step.switch, *cmd.argv()] for step in planned.transition.steps
                           for cmd in planned.commands[(step.switch, step.kind)]])
            cuts += sum(len(c.pairs) for c in planned.transition.cuts)
        record = repair_record(repaired)
        context["repair"] = {"trees": phases[0], "back": phases[1], "cut_pairs": cuts, "bundle": str(repaired),
                             "relearn": sorted(record["affected_vlans"]) if record else []}
        if throughput is not None:
            context["throughput"] = predict_healed(target, throughput)
    json.dumps(context)                     # it crosses into the VM as JSON
    return context


class Agent:
    """What runs on the fabric before anything fails: one rtnetlink socket per switch
    namespace, subscribed to its link notifications, and the carrier and index of every
    link as it stood then."""

    def __init__(self, emu: Any) -> None:
        self.socks = {s: rtnl.open_in(emu.sw_ns(s), events=True) for s in emu.plan.switches}
        self.state = {s: rtnl.links(sock) for s, sock in self.socks.items()}

    def update(self) -> int:
        """Apply the notifications queued since; how many there were."""
        n = 0
        for s, sock in self.socks.items():
            for link in rtnl.link_events(sock):
                self.state[s][link.name] = link
                n += 1
        return n

    def close(self) -> None:
        for sock in self.socks.values():
            sock.close()


def prepare(emu: Any, context: dict[str, Any]) -> Agent:
    """apply_failover's set-up before the cut (outagerun.measure calls it)."""
    return Agent(emu)


def dead_pairs(state: dict[str, dict[str, rtnl.Link]], uplinks: dict[str, dict[str, list[str]]]) -> list[str]:
    """The neighbour pairs none of whose cables has carrier at either end in `state`."""
    dead = []
    for s, by_neighbour in uplinks.items():
        for n, members in by_neighbour.items():
            if s >= n:
                continue
            theirs = uplinks.get(n, {}).get(s, [])
            ends = [(s, m) for m in members] + [(n, m) for m in theirs]
            if all(not (state[x].get(m) and state[x][m].carrier) for x, m in ends):
                dead.append(_key(s, n))
    return dead


def apply_failover(event: CutEvent) -> None:
    """The heal for outagerun.measure (module docstring): detect, fail over, then repair."""
    emu, ctx = event.emu, event.context
    t0 = time.monotonic()
    agent = event.armed if isinstance(event.armed, Agent) else Agent(emu)
    try:
        events = agent.update()
        dead = dead_pairs(agent.state, ctx["uplinks"])
        t_detect = time.monotonic()
        if len(dead) != 1 or dead[0] not in ctx["table"]:
            raise netns.NetnsError(f"the failover expected one dead pair its table covers, found {dead or 'none'}")
        by_switch: dict[str, list[tuple[str, int]]] = {}
        for s, port, vid in ctx["table"][dead[0]]:
            by_switch.setdefault(s, []).append((port, int(vid)))
        for s, moves in by_switch.items():
            index = {name: link.index for name, link in agent.state[s].items()}
            rtnl.set_pvids(agent.socks[s], [(index[p], v) for p, v in moves])
        t_done = time.monotonic()
    finally:
        if agent is not event.armed:
            agent.close()
    moved = sum(len(m) for m in by_switch.values())
    emu.log(f"[heal] failover: {dead[0]} found dead {1000 * (t_detect - t0):.1f} ms into the heal ({events} link "
            f"notifications read from the {len(agent.socks)} switches' rtnetlink sockets), {moved} host ports' "
            f"PVIDs moved on {len(by_switch)} switches ({', '.join(sorted(by_switch))}) "
            f"{1000 * (t_done - t_detect):.1f} ms later")
    if dead[0] != _key(*event.pair):
        raise netns.NetnsError(f"the failover found {dead[0]} dead, the bench cut {_key(*event.pair)}")
    repair = ctx.get("repair")
    if repair:
        _repair(event, repair)


apply_failover.prepare = prepare        # type: ignore[attr-defined]


def _repair(event: CutEvent, repair: dict[str, Any]) -> None:
    """The balanced repair from the failed-over state (module docstring, 3): the repair's
    trees, the hosts' learning frames in them, then the PVIDs back."""
    from vlanroute.emulate.relearn import relearn_frames
    emu = event.emu
    time.sleep(1.0)                     # delivery is back: the repair follows, as the watcher's does
    t0 = time.monotonic()
    problems = _bridge_lines(emu, repair["trees"])
    learned = relearn_frames(emu, [int(v) for v in repair["relearn"]])
    problems += learned.problems + _bridge_lines(emu, repair["back"])
    emu.log(f"[heal] repair after the failover: {len(repair['trees'])} `bridge vlan` lines of the repair's trees, "
            f"{learned.detail}, then {len(repair['back'])} lines moving the PVIDs back, each in its loop-free "
            f"transition's order ({repair['cut_pairs']} host pairs cut on the way), {time.monotonic() - t0:.1f} s")
    if problems:
        raise netns.NetnsError("the repair after the failover failed: " + "; ".join(problems[:3]))


def _bridge_lines(emu: Any, lines: list[list[str]]) -> list[str]:
    problems = []
    for switch, *argv in lines:
        r = netns.run(["bridge", "-n", emu.sw_ns(switch), *argv], check=False)
        if r.returncode != 0:
            problems.append(f"{switch}: bridge {' '.join(argv)}: {r.stderr.strip()}")
    return problems
