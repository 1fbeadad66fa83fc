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
2. **Fail over.** The table made before the cut (`stage_context`, from the running
   bundle, for every neighbour pair and switch: what `vlanroute repair --failover` changes) gives the
   host ports whose PVID moves onto a backup VLAN; each switch's are set by rtnetlink, one
   buffer per switch. No inter-switch port changes, so no VLAN can get a loop; the backups
   were learned before the cut, so nothing floods and no host acts.
3. **Then the balanced repair** (when the context carries one), as the watcher pushes it:
   the repair's trees with the hosts still failed over (bundle/failedover.py
   `retreed_document`: no host pair cut on the way), one learning frame per host in the
   repaired VLANs (what relearn.sh sends; the watcher waits for its audit to pass), then
   the PVIDs back, each by the loop-free transition (emulate/transition.py
   `plan_bridges`), one `bridge vlan` line at a time in its order, by rtnetlink.
   The probes keep running: a loss it caused would show as a later loss in the report.

A dead switch is found the same way (every neighbour pair of it dead) and fails over the
same way when the backups cover it: the VLANs its death splits move onto backups that avoid
it, its own hosts are lost. A failure no backup covers is healed by the repair straight
away: its lines by rtnetlink in the loop-free order, then the learning frames. Each failure
is healed from the bundle the fabric runs when it happens (`stage_context`: the plan, or
the repair of an earlier failure), so a second failure follows the first.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlanroute.emulate import netns, rtnl

if TYPE_CHECKING:
    from vlanroute.emulate.failplan import Failure
    from vlanroute.emulate.outagerun import CutEvent


def _key(a: str, b: str) -> str:
    return f"{a}:{b}" if a <= b else f"{b}:{a}"


def failover_table(outdir: Path) -> dict[str, list[list[Any]]]:
    """For every neighbour pair ("a:b") and every switch of OUTDIR's fabric whose death the
    backups cover: the host ports whose PVID the failover moves, as [switch, port, new PVID]
    (bundle/failedover.py, what `vlanroute repair --failover --failed-pair A:B` or
    `--failed-switch S` writes)."""
    from vlanroute.bundle.failedover import failover_document
    from vlanroute.bundle.failures import Failures
    from vlanroute.bundle.reader import read_plan
    from vlanroute.errors import PlanError
    doc = read_plan(outdir)
    pairs = sorted({tuple(sorted((c.a, c.b))) for c in doc.cabling if c.b in doc.switches and c.a != c.b})
    table: dict[str, list[list[Any]]] = {}
    cases = [(_key(a, b), Failures(pairs=((a, b),))) for a, b in pairs]
    cases += [(s, Failures(switches=(s,))) for s in doc.switches]
    for key, failures in cases:
        try:
            moved = failover_document(doc, failures).doc
        except PlanError:
            continue                        # nothing to fail over (no tree needs it), or no backup
        table[key] = [[s, port, new.pvid] for s, rec in moved.switches.items()
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


def stage_context(active: Path, failure: Failure | None, repaired: Path | None, cabled: Path,
                  throughput: dict[str, Any] | None = None, *, failover: bool = True) -> dict[str, Any]:
    """apply_failover's context for one failure on the fabric running bundle `active` (the
    published plan, or the repair of an earlier failure), cabled as bundle `cabled` (the
    published plan: every cable, dead or alive): the failover table of `active`, each
    switch's uplink members by neighbour (what detection reads), and with `repaired`
    (`vlanroute repair ACTIVE`'s bundle for `failure`) how the heal reaches it:
    - a dead pair or switch that `active`'s backups cover (`repair`): the repair's lines
      from the failed-over state in the loop-free transition's order and its VLANs to
      re-learn;
    - anything else (the watcher's failover does not apply: no backup covers it, docs/
      watch.md), (`delta`): the repair's lines from `active` in the loop-free transition's
      order, then its VLANs to re-learn.
    With `failover=False` every failure takes the second way (`bench/outage.py --repair`:
    today's repair path alone, its floor once the failure is found). With `throughput`
    (the bench's options), the healed plan's predicted throughput, measured after the heal
    as on the spanning trees. A `repaired` bundle that is not `active`'s repair for
    `failure` is refused (UserError, failplan.repair_delta)."""
    from dataclasses import replace
    from vlanroute.emulate.failplan import repair_delta, repair_record
    from vlanroute.emulate.spec import load
    from vlanroute.emulate.transition import plan_bridges
    spec, cables = load(active), load(cabled)
    uplinks: dict[str, dict[str, list[str]]] = {}
    for (s, n), up in spec.uplinks.items():
        uplinks.setdefault(s, {})[n] = list(up.members)
    table = failover_table(active) if failover else {}
    context: dict[str, Any] = {"table": table, "uplinks": uplinks, "repair": None, "delta": None}
    if repaired is not None and failure is not None:
        target = load(repaired)
        # Dead: this failure's switch, and those an earlier failure took out of the running bundle.
        gone = failure.dead() | (frozenset(cables.switches) - frozenset(spec.switches))
        repair_delta(spec, target, None, failure.dead())       # refuses a bundle that is not its repair
        record = repair_record(repaired)
        relearn = sorted(record["affected_vlans"]) if record else failure.broken_vlans(spec)
        key = _key(*failure.pair) if failure.pair else str(failure.switch)
        if key in table:
            # The failed-over fabric: the running one with the moved hosts' PVIDs (its VLANs'
            # trees unchanged, the dead pair's ports still carrying them); then the repair's
            # trees with those PVIDs (bundle/failedover.py retreed_document: the changed VLANs
            # are idle, no host pair is cut), then the repair (the PVIDs back).
            moved = {(s, port): int(vid) for s, port, vid in table[key]}
            failed_over, retree = (replace(x, hosts={n: replace(h, vlan=moved.get((h.switch, h.port), h.vlan))
                                                     for n, h in x.hosts.items()}) for x in (spec, target))
            phases: list[list[list[str]]] = []
            cuts = 0
            for a, b in ((failed_over, retree), (retree, target)):
                planned = plan_bridges(a, b, cables, dead=gone)
                phases.append(_lines(planned))
                cuts += sum(len(c.pairs) for c in planned.transition.cuts)
            context["repair"] = {"trees": phases[0], "back": phases[1], "cut_pairs": cuts, "bundle": str(repaired),
                                 "relearn": relearn, "dead": sorted(gone)}
        else:
            planned = plan_bridges(spec, target, cables, dead=gone)
            context["delta"] = {"lines": _lines(planned), "bundle": str(repaired), "relearn": relearn,
                                "dead": sorted(gone),
                                "cut_pairs": sum(len(c.pairs) for c in planned.transition.cuts)}
        if throughput is not None:
            context["throughput"] = predict_healed(target, throughput)
    json.dumps(context)                     # it crosses into the VM as JSON
    return context


def _lines(planned: Any) -> list[list[str]]:
    """A planned bridge transition's lines, [switch, *bridge argv], in its order."""
    return [[step.switch, *cmd.argv()] for step in planned.transition.steps
            for cmd in planned.commands[(step.switch, step.kind)]]


class Agent:
    """What runs on the fabric before anything fails: one rtnetlink socket per switch
    namespace, subscribed to its link notifications, the carrier and index of every link as
    it stood then, and the neighbour pairs already dead then (an earlier failure's, which
    the running bundle may still name: not this heal's)."""

    def __init__(self, emu: Any, uplinks: dict[str, dict[str, list[str]]] | None = None) -> None:
        self.socks = {s: rtnl.open_in(emu.sw_ns(s), events=True) for s in emu.plan.switches}
        self.state = {s: rtnl.links(sock) for s, sock in self.socks.items()}
        self.dead_before = frozenset(dead_pairs(self.state, uplinks or {}))

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
    return Agent(emu, context.get("uplinks"))


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


def what_died(dead: list[str], uplinks: dict[str, dict[str, list[str]]]) -> tuple[str, str]:
    """("pair", "a:b") for one dead neighbour pair, ("switch", s) when the dead pairs are
    every pair of switch s (two or more: a switch with one neighbour is a dead pair to its
    neighbours); ValueError for anything else (nothing, or failures this heal does not take)."""
    if len(dead) == 1:
        return "pair", dead[0]
    for s, by_neighbour in sorted(uplinks.items()):
        if len(by_neighbour) > 1 and sorted(dead) == sorted(_key(s, n) for n in by_neighbour):
            return "switch", s
    raise ValueError(f"expected one dead pair or one dead switch, found {', '.join(dead) or 'none'} dead")


def apply_failover(event: CutEvent) -> None:
    """The heal for outagerun.measure (module docstring): detect, then fail over and repair
    (a dead pair the backups cover) or repair (anything else, a dead switch for one)."""
    emu, ctx = event.emu, event.context
    t0 = time.monotonic()
    agent = event.armed if isinstance(event.armed, Agent) else Agent(emu, ctx["uplinks"])
    try:
        events = agent.update()
        dead = [p for p in dead_pairs(agent.state, ctx["uplinks"]) if p not in agent.dead_before]
        t_detect = time.monotonic()
        try:
            kind, name = what_died(dead, ctx["uplinks"])
        except ValueError as exc:
            raise netns.NetnsError(f"the heal: {exc}") from None
        found = (f"{name} found dead {1000 * (t_detect - t0):.1f} ms into the heal ({events} link notifications "
                 f"read from the {len(agent.socks)} switches' rtnetlink sockets)")
        expected = _key(*event.failure.pair) if event.failure.pair else event.failure.switch
        if name != expected:
            raise netns.NetnsError(f"the heal found {kind} {name} dead, the bench failed {expected}")
        if name in ctx["table"]:
            _failover(event, agent, ctx["table"][name], found, t_detect)
            if ctx.get("repair"):
                _repair(event, agent, ctx["repair"])
        elif ctx.get("delta"):
            _delta(event, agent, ctx["delta"], found, t_detect)
        else:
            raise netns.NetnsError(f"the heal has no failover and no repair for {kind} {name}")
    finally:
        if agent is not event.armed:
            agent.close()


apply_failover.prepare = prepare        # type: ignore[attr-defined]


def _failover(event: CutEvent, agent: Agent, moves_of: list[list[Any]], found: str, t_detect: float) -> None:
    """The PVIDs of the failover table's host ports onto their backups, one rtnetlink buffer per switch."""
    by_switch: dict[str, list[tuple[str, int]]] = {}
    for s, port, vid in moves_of:
        by_switch.setdefault(s, []).append((port, int(vid)))
    for s, moves in by_switch.items():
        index = {name: link.index for name, link in agent.state[s].items()}
        rtnl.set_pvids(agent.socks[s], [(index[p], v) for p, v in moves])
    t_done = time.monotonic()
    moved = sum(len(m) for m in by_switch.values())
    event.emu.log(f"[heal] failover: {found}, {moved} host ports' PVIDs moved on {len(by_switch)} switches "
                  f"({', '.join(sorted(by_switch))}) {1000 * (t_done - t_detect):.1f} ms later")


def _delta(event: CutEvent, agent: Agent, delta: dict[str, Any], found: str, t_detect: float) -> None:
    """The repair straight from the running bundle (no backup covers the failure): its
    lines in the loop-free transition's order, each by rtnetlink and acknowledged before
    the next, then the learning frames in its VLANs (the dead switches' hosts send none)."""
    from vlanroute.emulate.relearn import relearn_frames
    emu = event.emu
    problems = _bridge_lines(agent, delta["lines"])
    t_lines = time.monotonic()
    learned = relearn_frames(emu, [int(v) for v in delta["relearn"]], frozenset(delta["dead"]))
    emu.log(f"[heal] repair: {found}, {len(delta['lines'])} `bridge vlan` lines of the repair by rtnetlink in "
            f"the loop-free transition's order ({delta['cut_pairs']} host pairs cut on the way) "
            f"{1000 * (t_lines - t_detect):.1f} ms later, then {learned.detail} "
            f"({time.monotonic() - t_lines:.1f} s)")
    problems += learned.problems
    if problems:
        raise netns.NetnsError("the repair failed: " + "; ".join(problems[:3]))


def _repair(event: CutEvent, agent: Agent, repair: dict[str, Any]) -> None:
    """The balanced repair from the failed-over state (module docstring, 3): the repair's
    trees, the hosts' learning frames in them, then the PVIDs back."""
    from vlanroute.emulate.relearn import relearn_frames
    emu = event.emu
    time.sleep(1.0)                     # delivery is back: the repair follows, as the watcher's does
    t0 = time.monotonic()
    problems = _bridge_lines(agent, repair["trees"])
    learned = relearn_frames(emu, [int(v) for v in repair["relearn"]], frozenset(repair.get("dead", [])))
    problems += learned.problems + _bridge_lines(agent, repair["back"])
    emu.log(f"[heal] repair after the failover: {len(repair['trees'])} `bridge vlan` lines of the repair's trees, "
            f"{learned.detail}, then {len(repair['back'])} lines moving the PVIDs back, each in its loop-free "
            f"transition's order ({repair['cut_pairs']} host pairs cut on the way), {time.monotonic() - t0:.1f} s")
    if problems:
        raise netns.NetnsError("the repair after the failover failed: " + "; ".join(problems[:3]))


def _bridge_lines(agent: Agent, lines: list[list[str]]) -> list[str]:
    """[switch, *`bridge vlan` argv] lines in order, each by rtnetlink on the agent's socket
    of its switch and acknowledged before the next (no process each: emulate/rtnl.py);
    the lines the kernel refused."""
    problems = []
    for switch, *argv in lines:
        link = agent.state[switch].get(argv[3])
        try:
            if link is None:
                raise rtnl.RtnlError(0, f"no link {argv[3]}")
            rtnl.bridge_vlan(agent.socks[switch], link.index, argv)
        except OSError as exc:
            problems.append(f"{switch}: bridge {' '.join(argv)}: {exc}")
    return problems
