"""`vlanroute emulate OUTDIR --transition-to NEWDIR`: the change from one bundle to another
(another engine, a repair, the return from a repair) on the kernel's own bridges, step by
step as the loop-free transition plans it (vlanroute.transition), with traffic running.

The switches' state is the plan's (what each bridge port carries); a switch's change is
one `bridge vlan` command per line, in a push's order: VLANs onto inter-switch ports,
the host ports, VLANs off inter-switch ports. The planner orders the switches (and splits a
change into removals first where it must) so that no state holds a loop, and declares the
host pairs each step cuts. Then:

1. healthy: OUTDIR's checks (build, learning, storm, MAC tables);
2. transition: a prober sends one UDP datagram per sampled host pair every round while the
   steps run, one `bridge` process per command; after each step the hosts of the VLANs it
   changed send their learning frames (one process: relearn.py), and the prober pauses for a
   storm check (a broadcast on every switch, then the counters must stand still);
3. after: NEWDIR's MAC tables, storm check, and every ordered pair delivered exactly once
   over NEWDIR's routes.

A pair the transition does not declare cut, and whose route does not change (its VLAN's path
between its two switches is the same in both bundles), must get every datagram of every
round. A pair whose route changes may lose datagrams while the switches still point the old
way, until its hosts re-learn (docs/method.md, "MAC tables after a repair"); a declared pair
may lose them during its steps. Both must be delivered again by the end.
"""

from __future__ import annotations

import copy
import random
import socket
import threading
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vlanroute.emulate import netns, run
from vlanroute.emulate.relearn import relearn_frames
from vlanroute.emulate.run import (Check, Emulation, Options, Report, remove_stale_namespaces, run_phases,
                                   traffic_again)
from vlanroute.emulate.spec import EmulationSpec, load
from vlanroute.errors import UserError
from vlanroute.transition.fabric import End, Fabric, HostAt, SwitchView, Wire
from vlanroute.transition.planner import Transition, plan
from vlanroute.transition.program import Program

PROBE_PORT = 47011
MIN_PAIRS = 1000          # probe at least this many pairs (all of them on a smaller cluster)
DRAIN_QUIET_S = 0.3       # a pause or stop: no datagram for this long means the last round is in
DRAIN_MAX_S = 10.0        # ... or this long at most (a cut pair's never come)


# -- the bridges' state, as the plan gives it --------------------------------------------------

@dataclass
class PortState:
    tagged: set[int]
    untagged: set[int]
    pvid: int


def bridge_ports(spec: EmulationSpec, switch: str, cabled: EmulationSpec) -> dict[str, PortState]:
    """What each bridge port of `switch` carries under `spec`: an uplink (its bond, or its
    single cable) its tree VLANs tagged, nothing on a cable `spec` does not use (a repair's
    dead cable, still plugged in here); a host port as its attachment says. The bridge ports
    are those of `cabled`, the bundle the emulation was built from."""
    out: dict[str, PortState] = {}
    for (s, n), up in cabled.uplinks.items():
        if s != switch:
            continue
        vlans = {v for v, adj in spec.tree.items() if n in adj.get(s, ())}
        out[up.lag_name or up.members[0]] = PortState(vlans, set(), 0)
    routing = set(spec.vlan_ids)
    for h in spec.hosts.values():
        if h.switch != switch:
            continue
        if h.attachment == "trunk":
            out[h.port] = PortState(routing - {h.vlan}, {h.vlan}, h.vlan)
        else:
            out[h.port] = PortState(set(), set(routing), h.vlan)
    return out


def _view(spec: EmulationSpec, switch: str, ports: dict[str, PortState]) -> SwitchView:
    """The transition's view: every cable end (a LAG member by its bond) and host port."""
    view: dict[str, End] = {}
    for (s, _n), up in spec.uplinks.items():
        if s != switch:
            continue
        name = up.lag_name or up.members[0]
        st = ports[name]
        end = End(port=name, tagged=frozenset(st.tagged), untagged=frozenset(st.untagged), pvid=st.pvid)
        for member in up.members:
            view[member] = end
    for h in spec.hosts.values():
        if h.switch == switch:
            st = ports[h.port]
            view[h.port] = End(port=h.port, tagged=frozenset(st.tagged), untagged=frozenset(st.untagged),
                               pvid=st.pvid)
    return view


@dataclass(frozen=True)
class BridgeCommand:
    """One `bridge vlan` line in one switch's namespace."""

    verb: str                 # add | del
    port: str
    vlan: int
    flags: str = ""           # "pvid untagged" | "untagged" | ""

    def argv(self) -> list[str]:
        return ["vlan", self.verb, "dev", self.port, "vid", str(self.vlan), *self.flags.split()]

    def __str__(self) -> str:
        return "bridge " + " ".join(self.argv())


def _apply(ports: dict[str, PortState], cmd: BridgeCommand) -> None:
    st = ports[cmd.port]
    if cmd.verb == "del":
        st.tagged.discard(cmd.vlan)
        st.untagged.discard(cmd.vlan)
        if st.pvid == cmd.vlan:
            st.pvid = 0
        return
    if "untagged" in cmd.flags:
        st.untagged.add(cmd.vlan)
        st.tagged.discard(cmd.vlan)
    else:
        st.tagged.add(cmd.vlan)
        st.untagged.discard(cmd.vlan)
    if "pvid" in cmd.flags:
        st.pvid = cmd.vlan


def _commands(old: dict[str, PortState], new: dict[str, PortState], hosts: set[str],
              part: str) -> list[BridgeCommand]:
    """A push's order: additions on inter-switch ports, host ports, removals from
    inter-switch ports. `part`: all | remove (the removals only) | rest (all but them)."""
    add, host, remove = [], [], []
    for port in sorted(new):
        o, n = old[port], new[port]
        if port in hosts:
            for v in sorted(n.untagged - o.untagged):
                host.append(BridgeCommand("add", port, v, "pvid untagged" if v == n.pvid else "untagged"))
            if n.pvid != o.pvid and n.pvid in o.untagged and n.pvid in n.untagged:
                host.append(BridgeCommand("add", port, n.pvid, "pvid untagged"))
            for v in sorted(n.tagged - o.tagged):
                host.append(BridgeCommand("add", port, v))
            for v in sorted((o.tagged | o.untagged) - (n.tagged | n.untagged)):
                host.append(BridgeCommand("del", port, v))
        else:
            add += [BridgeCommand("add", port, v) for v in sorted(n.tagged - o.tagged)]
            remove += [BridgeCommand("del", port, v) for v in sorted(o.tagged - n.tagged)]
    if part == "remove":
        return remove
    if part == "rest":
        return add + host
    return add + host + remove


@dataclass
class BridgeTransition:
    transition: Transition
    commands: dict[tuple[str, str], list[BridgeCommand]]     # (switch, step kind) -> its lines
    rerouted: set[tuple[str, str]]                           # host pairs whose route changes
    relearn: dict[int, list[int]] = field(default_factory=dict)   # step -> VLANs to re-learn after it


def _program(cabled: EmulationSpec, switch: str, start: dict[str, PortState], cmds: list[BridgeCommand]) -> Program:
    ports = copy.deepcopy(start)
    views: list[tuple[int, SwitchView]] = [(0, _view(cabled, switch, ports))]
    for i, cmd in enumerate(cmds, start=1):
        _apply(ports, cmd)
        views.append((i, _view(cabled, switch, ports)))
    if len(views) == 1:
        views.append((0, views[0][1]))
    return Program(switch, tuple(str(c) for c in cmds), tuple(views), atomic=False)


def plan_bridges(old: EmulationSpec, new: EmulationSpec, cabled: EmulationSpec, workers: int = 4,
                 dead: frozenset[str] = frozenset()) -> BridgeTransition:
    """The transition from `old` to `new` on linux bridges built from `cabled` (module
    docstring). `dead`: switches that stopped (the failure scenario): nothing reaches them,
    so they count as the worst case, as push counts a switch it cannot read."""
    check_same_fabric(cabled, new, dead)
    wires = tuple(sorted({Wire(c.a, c.a_port, c.b, c.b_port) for c in cabled.cables if c.kind != "host"}))
    fabric = Fabric(wires, tuple(HostAt(h.name, h.switch, h.port) for h in old.hosts.values()
                                 if h.switch not in dead))
    start: dict[str, SwitchView | None] = {}
    whole: dict[str, Program] = {}
    commands: dict[tuple[str, str], list[BridgeCommand]] = {}
    states: dict[str, tuple[dict[str, PortState], dict[str, PortState]]] = {}
    for s in old.switches:
        if s in dead:
            start[s] = None
            continue
        a, b = bridge_ports(old, s, cabled), bridge_ports(new, s, cabled)
        states[s] = (a, b)
        hosts = {h.port for h in old.hosts.values() if h.switch == s}
        start[s] = _view(cabled, s, a)
        cmds = _commands(a, b, hosts, "all")
        if cmds:
            commands[(s, "change")] = cmds
            whole[s] = _program(cabled, s, a, cmds)

    def split(s: str) -> tuple[Program, Program] | None:
        a, b = states[s]
        hosts = {h.port for h in old.hosts.values() if h.switch == s}
        first = _commands(a, b, hosts, "remove")
        if not first:
            return None
        mid = copy.deepcopy(a)
        for c in first:
            _apply(mid, c)
        rest = _commands(mid, b, hosts, "rest")
        commands[(s, "remove")], commands[(s, "add")] = first, rest
        return _program(cabled, s, a, first), _program(cabled, s, mid, rest)

    tr = plan(fabric, start, whole, split, old.switches, workers)
    changed = {v for v in old.vlan_ids if old.tree.get(v) != new.tree.get(v)}
    alive = {h: hh for h, hh in old.hosts.items() if hh.switch not in dead}
    moved = {h for h, hh in alive.items() if new.hosts[h].vlan != hh.vlan}
    rerouted = {(a, b) for a, ha in alive.items() for b, hb in alive.items()
                if a != b and (a in moved or old.path(ha.vlan, ha.switch, hb.switch)
                               != new.path(new.hosts[a].vlan, ha.switch, hb.switch))}
    relearn: dict[int, list[int]] = {}
    for i, (step, proof) in enumerate(zip(tr.steps, tr.proofs), start=1):
        here = {new.hosts[h].vlan for h in moved if new.hosts[h].switch == step.switch}
        vlans = sorted((set(proof.vlans) & changed) | here)
        if vlans:
            relearn[i] = vlans
    return BridgeTransition(tr, commands, rerouted, relearn)


def _cables(spec: EmulationSpec) -> set[frozenset[tuple[str, str]]]:
    return {frozenset({(c.a, c.a_port), (c.b, c.b_port)}) for c in spec.cables}


def check_same_fabric(old: EmulationSpec, new: EmulationSpec, dead: frozenset[str] = frozenset()) -> None:
    """A transition changes what the bridges carry, not the cables or the hosts: `new` may
    leave cables of `old` out (a repair routes around them; here they stay plugged in), not
    add any; `dead` switches and their hosts may be gone from `new`."""
    where = str(new.outdir / "plan.json")
    if sorted(s for s in old.switches if s not in dead) != sorted(new.switches):
        raise UserError("the two bundles have other switches", file=where,
                        fix="give a bundle of the same fabric (another engine or setting, or a repair of it)")
    extra = _cables(new) - _cables(old)
    if extra:
        raise UserError(f"{len(extra)} cables of this bundle are not in OUTDIR's cabling, which the emulation is "
                        "built from", file=where,
                        fix="emulate from the bundle with every cable (the plan, not its repair), then "
                            "--transition-to the repair and back")
    if {h: (x.switch, x.port, new.plan_macs.get(h)) for h, x in new.hosts.items()} != \
            {h: (x.switch, x.port, old.plan_macs.get(h)) for h, x in old.hosts.items() if x.switch not in dead}:
        raise UserError("the two bundles have other hosts (names, ports or MACs)", file=where,
                        fix="give a bundle of the same inventory's hosts")
    if sorted(old.vlan_ids) != sorted(new.vlan_ids):
        raise UserError("the two bundles have other VLAN ids (the hosts' learning sub-interfaces would change)",
                        file=where, fix="give a bundle with the same VLANs (max_vlans, the same engine family)")


# -- the prober ---------------------------------------------------------------------------------

class Prober:
    """One UDP datagram per sampled pair per round, from one thread; receivers drained by
    another. `lost()` names, per pair, the rounds whose datagram never came."""

    def __init__(self, emu: Emulation, pairs: list[tuple[str, str]], gap_s: float) -> None:
        self.emu, self.pairs, self.gap_s = emu, pairs, gap_s
        self.socks: dict[str, socket.socket] = {}
        for h in sorted({x for p in pairs for x in p}):
            with netns.inside(emu.host_ns(h)):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            s.setsockopt(socket.SOL_SOCKET, run.SO_RCVBUFFORCE, 4 << 20)
            s.bind((emu.plan.hosts[h].address, PROBE_PORT))
            s.settimeout(0.05)
            emu.sockets.append(s)
            self.socks[h] = s
        self.by_addr = {emu.plan.hosts[h].address: h for h in self.socks}
        self.got: Counter[tuple[str, str, int]] = Counter()      # (src, dst, round)
        self.arrived = 0        # datagrams received; increments may race, it only shows that some came
        self.rounds = 0
        self.times: list[float] = []                             # when each round was sent
        self._run = threading.Event()
        self._stop = threading.Event()
        self._idle = threading.Event()                           # the sender is between rounds
        self._idle.set()
        self._threads: list[threading.Thread] = []

    def start(self) -> None:
        self._run.set()
        self._threads = [threading.Thread(target=self._send, daemon=True),
                         *[threading.Thread(target=self._receive, args=(h,), daemon=True) for h in self.socks]]
        for t in self._threads:
            t.start()

    def pause(self) -> None:
        self._run.clear()
        self._drain()

    def resume(self) -> None:
        self._run.set()

    def stop(self) -> None:
        self._run.clear()
        self._drain()
        self._stop.set()
        for t in self._threads:
            t.join(timeout=5)
        for s in self.socks.values():          # the next transition binds the same port
            s.close()
            if s in self.emu.sockets:
                self.emu.sockets.remove(s)

    def _send(self) -> None:
        while not self._stop.is_set():
            if not self._run.wait(0.05):
                continue
            self._idle.clear()
            if not self._run.is_set():      # paused between the wait and here
                self._idle.set()
                continue
            r = self.rounds
            self.times.append(time.monotonic())
            for a, b in self.pairs:
                try:
                    self.socks[a].sendto(r.to_bytes(4, "big"), (self.emu.plan.hosts[b].address, PROBE_PORT))
                except OSError:
                    pass                    # counted as lost
            self.rounds += 1
            self._idle.set()
            time.sleep(self.gap_s)

    def _drain(self) -> None:
        """Until the round being sent is out and its datagrams have arrived: the sender
        checks for a pause between rounds only, and a round takes longer than any fixed
        sleep on a loaded machine (a VM under TCG lost the last round of 36 pairs that way).
        Arrived means none came for DRAIN_QUIET_S; a cut pair's never come, so the wait is
        bounded (DRAIN_MAX_S)."""
        deadline = time.monotonic() + DRAIN_MAX_S
        self._idle.wait(DRAIN_MAX_S)
        seen = -1
        while seen != self.arrived and time.monotonic() < deadline:
            seen = self.arrived
            time.sleep(DRAIN_QUIET_S)

    def _receive(self, host: str) -> None:
        s = self.socks[host]
        while not self._stop.is_set():
            try:
                data, (src, _port) = s.recvfrom(64)
            except (TimeoutError, OSError):
                continue
            if len(data) == 4 and src in self.by_addr:
                self.got[(self.by_addr[src], host, int.from_bytes(data, "big"))] += 1
                self.arrived += 1

    def lost(self) -> dict[tuple[str, str], list[int]]:
        out: dict[tuple[str, str], list[int]] = {}
        for a, b in self.pairs:
            missing = [r for r in range(self.rounds) if self.got[(a, b, r)] == 0]
            if missing:
                out[(a, b)] = missing
        return out

    def duplicates(self) -> int:
        return sum(n - 1 for n in self.got.values() if n > 1)


def sample_pairs(spec: EmulationSpec, seed: int = 1) -> list[tuple[str, str]]:
    pairs = [(a, b) for a in sorted(spec.hosts) for b in sorted(spec.hosts) if a != b]
    if len(pairs) <= MIN_PAIRS:
        return pairs
    return sorted(random.Random(seed).sample(pairs, MIN_PAIRS))


# -- the scenario ---------------------------------------------------------------------------------

def run_here(outdir: Path, newdirs: list[Path], options: Options, kernel: str,
             log: Callable[[str], None] = print) -> Report:
    """The whole transition scenario in this kernel (needs root): OUTDIR, then each of
    `newdirs` in turn. Always tears down."""
    first = load(outdir)
    bundles = [load(d) for d in newdirs]
    remove_stale_namespaces(log)
    emu = Emulation(first, options, log)
    pairs = sample_pairs(first)
    report = Report(outdir=str(outdir), plan=first.name, kernel=kernel,
                    size=f"{len(first.switches)} switches, {len(first.hosts)} hosts, {len(first.cables)} cables, "
                         f"{len(first.vlan_ids)} VLANs; transitions to " + ", then ".join(map(str, newdirs)))
    phases: list[tuple[str, Callable[[], list[Check]]]] = [
        ("build", lambda: [emu.build()]),
        ("learn", lambda: [emu.learn()]),
        ("checks", lambda: [emu.storm_check("after the learning broadcasts and VLAN-1 probes", probe=True),
                            emu.fdb_check()])]
    current = [first]
    for n, (newdir, new) in enumerate(zip(newdirs, bundles), start=1):
        label = f"transition {n} to {newdir.name}"

        def step_phase(new: EmulationSpec = new, label: str = label) -> list[Check]:
            return transition_checks(emu, current, new, first, pairs, options, report, label)
        phases.append((label, step_phase))
        phases.append((f"after {label}", lambda: [emu.fdb_check(),
                                                  emu.storm_check("after the transition", probe=True),
                                                  *traffic_again(emu)]))
    return run_phases(emu, report, log, phases)


def transition_checks(emu: Emulation, current: list[EmulationSpec], new: EmulationSpec, cabled: EmulationSpec,
                      pairs: list[tuple[str, str]], options: Options, report: Report, label: str) -> list[Check]:
    """Plan from where the bridges are (`current[0]`) to `new`, run it with the prober on."""
    old = current[0]
    bt = plan_bridges(old, new, cabled)
    tr = bt.transition
    declared = {p for c in tr.cuts for p in c.pairs}
    target = dataclasses_replace_hosts(old, new)
    p = Prober(emu, pairs, gap_s=0.02)
    emu.rate_limit("change", options.traffic_rate_kbit)
    p.start()
    time.sleep(0.5)
    problems: list[str] = []
    storms: list[Check] = []
    start = time.monotonic()
    for i, step in enumerate(tr.steps, start=1):
        for cmd in bt.commands[(step.switch, step.kind)]:
            r = netns.run(["bridge", "-n", emu.sw_ns(step.switch), *cmd.argv()])
            if r.returncode != 0:
                problems.append(f"step {i} {step.switch}: {cmd}: {r.stderr.strip()}")
        if i in bt.relearn:
            learned = relearn_frames(emu, bt.relearn[i])
            if not learned.ok:
                problems += learned.problems
        p.pause()
        emu.rate_limit("change", options.rate_kbit)
        storms.append(emu.storm_check(f"after step {i} ({step.label()})", probe=True))
        emu.rate_limit("change", options.traffic_rate_kbit)
        p.resume()
    emu.plan = target
    current[0] = target
    learned = relearn_frames(emu, sorted({v for vs in bt.relearn.values() for v in vs}) or list(new.vlan_ids))
    time.sleep(1.0)
    p.stop()
    emu.rate_limit("change", options.rate_kbit)
    report.phases[f"{label}: steps"] = time.monotonic() - start
    lost = p.lost()
    bad = sorted(f"{a} -> {b}: {len(r)} of {p.rounds} rounds lost (first {r[0]})" for (a, b), r in lost.items()
                 if (a, b) not in declared and (a, b) not in bt.rerouted)
    gone = sorted(f"{a} -> {b}: still lost at the end (rounds {r[-3:]})" for (a, b), r in lost.items()
                  if r and r[-1] >= p.rounds - 3)
    steps = Check(f"{label}: steps (linux-bridge)", not problems,
                  f"{len(tr.steps)} steps ({', '.join(s.label() for s in tr.steps)}), "
                  f"{sum(len(bt.commands[(s.switch, s.kind)]) for s in tr.steps)} `bridge vlan` commands, "
                  f"{sum(pr.states for pr in tr.proofs)} states proven loop-free", problems)
    delivery = Check(
        f"{label}: delivery during the transition", not bad and not gone,
        f"{len(pairs)} pairs probed in {p.rounds} rounds: {len(pairs) - len(lost)} lost nothing; "
        f"{len([x for x in lost if x in declared])} declared cut, "
        f"{len([x for x in lost if x in bt.rerouted and x not in declared])} re-routed (until re-learned) "
        f"lost some; {len(bad)} others lost some; {p.duplicates()} duplicates", bad + gone)
    return [steps, *storms, learned, delivery]


def dataclasses_replace_hosts(old: EmulationSpec, new: EmulationSpec) -> EmulationSpec:
    """NEWDIR's spec with OUTDIR's emulated hosts (same names and ports, checked): their MACs
    and plain addresses must not change mid-run; their VLANs are NEWDIR's."""
    import dataclasses
    hosts = {h: dataclasses.replace(old.hosts[h], vlan=new.hosts[h].vlan) for h in new.hosts}
    return dataclasses.replace(new, hosts=hosts, _paths={})


def run_in_vm(outdir: Path, newdirs: list[Path], options: Options, timeout_s: float, json_report: Path | None,
              log: Callable[[str], None]) -> tuple[int, float]:
    """The scenario inside the emulation VM, the bundles copied in (each once)."""
    names = {d: f"new{i}" for i, d in enumerate(dict.fromkeys(newdirs))}

    def args(copies: dict[str, Path]) -> list[str]:
        return [a for d in newdirs for a in ("--transition-to", str(copies[names[d]]))]
    return run.run_in_vm(outdir, options, timeout_s, json_report, log,
                         extra_dirs={name: d for d, name in names.items()}, extra_args=args)
