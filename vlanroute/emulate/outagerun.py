"""The outage bench (issue 39's yardsticks): a neighbour pair's cables cut under continuous
probe traffic, on vlanroute's plan and, on the same cables and hosts, on spanning-tree
switches (Open vSwitch's RSTP, the kernel's 802.1D), each reported as emulate/outage.py
computes it; `bench/outage.py` drives it, docs/emulate.md ("Outage: ...") has the figures.

Per method, one after the other, each on fresh namespaces of the same spec:
1. build: `vlanroute` runs the plan as `vlanroute emulate` does (switch scripts, host
   programs, storm and MAC-table checks); `rstp` and `stp` build the same namespaces, veth
   pairs, bonds, rate limits and hosts with spanning-tree switches (emulate/spanning.py),
   wait until the tree has settled, compare its blocked cables with the model's, and let
   every host send one broadcast (the bridges learn the hosts);
2. measure(): probes run (emulate/probes.py), then every cable of the pair loses carrier at
   both ends (as failure.cut, by ioctl so that all ends go within a millisecond), `heal`
   is called if given, and the probes run until every pair delivers again (for `settle_s`,
   and at least `min_after_s` after the cut) or the timeout; a storm check follows;
3. spanning trees: the tree after the cut (against the model's), then the throughput of
   `emulate --traffic`'s patterns between one host per switch (emulate/traffic.py), against
   the TCP model of that degraded tree.

The watcher's hook is `measure(emu, failure, pairs, heal=...)` (and `heal` in the setup, a
`module:function` the VM imports): see docs/emulate.md.
"""

from __future__ import annotations

import dataclasses
import fcntl
import importlib
import json
import math
import os
import random
import socket
import struct
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vlanroute.emulate import netns, spanning
from vlanroute.emulate.failplan import Failure
from vlanroute.emulate.outage import OutageSummary, PairOutage, ProbeRecord, fmt_s, pair_outages, summarize
from vlanroute.emulate.probes import Probes, make_sockets
from vlanroute.emulate.run import (
    Check,
    Emulation,
    Options,
    _check_interrupted,
    _signals_raise,
    remove_stale_namespaces,
)
from vlanroute.emulate.spec import EmulationSpec, load, preload

METHODS = ("vlanroute", "rstp", "stp")
METHOD_LABEL = {"vlanroute": "vlanroute plan", "rstp": "RSTP (Open vSwitch 3.1)", "stp": "802.1D (kernel bridge)"}
FRAME_BYTES = 100                       # a small frame, as Options.rate_fps counts it


@dataclass(frozen=True)
class CutEvent:
    """What `heal` is given: the failure (a neighbour pair or a switch), the ends taken down
    ("switch port"), when (CLOCK_REALTIME ns, the probes' clock), and the running emulation
    (its namespaces: emu.sw_ns(switch), emu.host_ns(host); its plan: emu.plan, the
    published one: the cabling)."""
    failure: Failure
    ports: list[str]
    cut_ns: int
    cut_end_ns: int
    emu: Emulation
    context: dict[str, Any] = field(default_factory=dict)   # the setup's heal_context, as given
    armed: Any = None               # what the heal's `prepare(emu, context)` made before the probes, if it has one

    @property
    def pair(self) -> tuple[str, str] | None:
        """The dead neighbour pair (None when a switch died)."""
        return self.failure.pair


@dataclass(frozen=True)
class ProbeSettings:
    interval_s: float = 0.01            # one probe per pair per interval
    warmup_s: float = 2.0               # probes before the cut, once every pair delivers
    prime_s: float = 30.0               # at most this long for every pair to deliver first
    timeout_s: float = 60.0             # the longest wait for every pair after the cut
    settle_s: float = 1.0               # every pair delivering this long ends the wait
    min_after_s: float = 2.0            # the wait lasts at least this long (a later loss shows)
    fresh_s: float = 0.5                # a pair delivers when a probe sent this recently arrived (at least 2.5 intervals)
    guard_s: float = 0.2                # probes sent this long before the cut count as the cut's
    sample_s: float = 0.5               # switch-port frame counters read this often


@dataclass
class Measurement:
    method: str
    record: ProbeRecord
    checks: list[Check] = field(default_factory=list)
    heal_s: float | None = None         # how long heal() ran
    waited_s: float = 0.0               # the cut to the end of the probes
    frames: list[tuple[float, int, int]] = field(default_factory=list)   # (s since the cut, switch tx frames, probes sent)
    timeout_s: float = 0.0


Heal = Callable[[CutEvent], None]


def cut_now(emu: Emulation, failure: Failure) -> tuple[list[str], int, int]:
    """Every cable of the failure's neighbour pairs down at both ends (failure.cut's ports),
    by SIOCSIFFLAGS from this process: all ends within a millisecond, no process start
    between them (each `ip` costs 0.1 to 0.3 s under TCG). Returns the ports and the first
    and last instant.

    A dead switch's host links stay up: its hosts are cut off with it and no probed pair
    has one, and taking 28 more links down made the emulating kernel process their carrier
    changes for seconds (each holds the one rtnl lock every namespace shares, which the
    heal's rtnetlink requests wait for: 85 PVIDs took 4.8 s instead of about 0.1 s), a
    cost no real fabric has, where every switch has a control plane of its own."""
    dead = {frozenset(p) for p in failure.pairs(emu.plan)}
    cables = [c for c in emu.plan.cables if c.kind != "host" and frozenset((c.a, c.b)) in dead]
    # One end of every cable first: a veth end set down takes the carrier off both ends, so
    # every cable is dark after len(cables) writes (each can take a few hundred ms under TCG:
    # the kernel waits for an RCU grace period); then the other ends, as failure.cut does.
    ends = [(c.a, c.a_port) for c in cables] + [(c.b, c.b_port) for c in cables]
    # A socket per switch, made in its namespace beforehand (an ioctl acts in the namespace
    # of the socket it is made on), and each port's flags read: then only the writes remain.
    socks: dict[str, socket.socket] = {}
    for switch in sorted({s for s, _p in ends}):
        with netns.inside(emu.sw_ns(switch)):
            socks[switch] = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        down = [(socks[s], netns._ifreq(p, struct.pack("=H", _flags(socks[s], p) & ~netns.IFF_UP))) for s, p in ends]
        start = time.time_ns()
        for i, (sock, request) in enumerate(down, start=1):
            fcntl.ioctl(sock, netns.SIOCSIFFLAGS, request)
            if i == len(cables):
                emu.log(f"    every cable of {failure.label()} dark {(time.time_ns() - start) / 1e6:.1f} ms after "
                        "the first write")
        end = time.time_ns()
    finally:
        for sock in socks.values():
            sock.close()
    return [f"{s} {p}" for s, p in ends], start, end


def _flags(sock: socket.socket, interface: str) -> int:
    return int(struct.unpack_from("=H", fcntl.ioctl(sock, netns.SIOCGIFFLAGS, netns._ifreq(interface)), 16)[0])


def set_down(interface: str) -> None:
    """`ip link set IF down` in this thread's namespace, by ioctl."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s, netns.SIOCSIFFLAGS, netns._ifreq(interface, struct.pack("=H", _flags(s, interface) & ~netns.IFF_UP)))


def probe_rate_kbit(emu: Emulation, pairs: int, interval_s: float) -> int:
    """Every switch port's tbf rate while the probes run: twice what the busiest port can
    carry if every probe crossed it, at least the traffic check's rate. A storm stays
    bounded by it; the probes are never dropped by it."""
    fps = pairs / interval_s
    return max(emu.options.traffic_rate_kbit, math.ceil(2 * fps * FRAME_BYTES * 8 / 1000))


def measure(emu: Emulation, failure: Failure | tuple[str, str], pairs: Sequence[tuple[str, str]], *,
            method: str = "vlanroute",
            heal: Heal | None = None, settings: ProbeSettings = ProbeSettings(),
            log: Callable[[str], None] = print, context: dict[str, Any] | None = None,
            after_probes: Callable[[], None] | None = None) -> Measurement:
    """The hook: probes over `pairs`, the failure's cables cut (a neighbour pair's, or a
    switch's and its host links), `heal(event)` called at once (it may act and return, or
    start something that acts on its own and return), probes until every pair delivers
    again or settings.timeout_s; then `after_probes` (if given) and the storm check. The
    emulation is built and learned by the caller (any fabric on emu's namespaces) and stays
    as it is; a second call measures a second failure on what the first left."""
    if isinstance(failure, tuple):
        failure = Failure(pair=failure)
    plan = emu.plan
    pairs = list(pairs)
    hosts = sorted({h for p in pairs for h in p})
    socks = make_sockets({h: (emu.host_ns(h), plan.hosts[h].address) for h in hosts})
    emu.sockets.extend(socks.values())
    # The sender's own bound (probes.stop() ends it): every phase may take its longest, and a
    # heal that repairs after its failover returns minutes later under TCG.
    max_s = settings.prime_s + settings.warmup_s + settings.timeout_s + 300
    probes = Probes(pairs, socks, {h: plan.hosts[h].address for h in hosts}, settings.interval_s, max_s)
    kbit = probe_rate_kbit(emu, len(pairs), settings.interval_s)
    with emu.step(f"rate limits up ({kbit} kbit/s)"):
        emu.rate_limit("change", kbit)
    out = Measurement(method, ProbeRecord(pairs, settings.interval_s, [], [], 0), timeout_s=settings.timeout_s)
    # A heal may set itself up before the cut, as an agent running on the fabric is (its
    # sockets open, subscribed to the kernel's link events): `heal.prepare(emu, context)`.
    prepare = getattr(heal, "prepare", None)
    armed = prepare(emu, dict(context or {})) if prepare is not None else None
    try:
        probes.start()
        # First every pair delivering (the switches set up their flows: OVS's first packet of
        # each goes to its userspace; the hosts' ARP), then the warm-up whose losses count.
        primed = _wait_delivering(probes, settings, time.monotonic() + settings.prime_s)
        if not primed:
            log(f"[{method}] not every pair delivered within {settings.prime_s:g} s of probes: cutting anyway")
        start_ns = time.time_ns()
        time.sleep(settings.warmup_s)
        _check_interrupted()
        base_tx = _tx(emu)
        ports, cut_ns, cut_end_ns = cut_now(emu, failure)
        log(f"[{method}] {failure.label()}: {', '.join(ports)} down "
            f"({(cut_end_ns - cut_ns) / 1e6:.1f} ms for all ends), {probes.rounds()} rounds sent")
        if heal is not None:
            started = time.monotonic()
            heal(CutEvent(failure, ports, cut_ns, cut_end_ns, emu, dict(context or {}), armed))
            out.heal_s = time.monotonic() - started
        cut_mono = time.monotonic() - (time.time_ns() - cut_ns) / 1e9
        all_since: float | None = None
        next_sample = 0.0
        while True:
            _check_interrupted()
            now = time.monotonic()
            since_cut = now - cut_mono
            if now >= next_sample:
                out.frames.append((since_cut, _tx(emu) - base_tx, probes.rounds() * len(pairs)))
                next_sample = now + settings.sample_s
            # A probe sent after the cut, and recently: an old one in flight is no restoration.
            fresh = probes.delivering(max(cut_ns, time.time_ns() - _fresh_ns(settings)))
            if all(fresh):
                all_since = all_since if all_since is not None else now
            else:
                all_since = None
            if (all_since is not None and now - all_since >= settings.settle_s
                    and since_cut >= settings.min_after_s):
                break
            # A pair not restored timeout_s after the cut is never restored; a heal that went
            # on (its repair) is watched for min_after_s after it returned, for later losses.
            if since_cut >= max(settings.timeout_s, (out.heal_s or 0.0) + settings.min_after_s):
                log(f"[{method}] timeout: {fresh.count(False)} of {len(pairs)} pairs not delivering "
                    f"{settings.timeout_s:g} s after the cut")
                break
            time.sleep(0.05)
        out.waited_s = time.monotonic() - cut_mono
        rounds, deliveries = probes.stop()
    except BaseException:
        probes.kill()
        raise
    finally:
        for s in socks.values():
            s.close()
            if s in emu.sockets:
                emu.sockets.remove(s)
        if armed is not None and hasattr(armed, "close"):
            armed.close()
    out.record = ProbeRecord(pairs, settings.interval_s, rounds, deliveries, cut_ns, cut_end_ns, 0, start_ns)
    with emu.step("rate limits down"):
        emu.rate_limit("change", emu.options.rate_kbit)
    if after_probes is not None:
        after_probes()
    out.checks.append(emu.storm_check(f"after the cut ({failure.label()}, {METHOD_LABEL.get(method, method)})",
                                      probe=True))
    return out


def _fresh_ns(settings: ProbeSettings) -> int:
    return int(max(settings.fresh_s, 2.5 * settings.interval_s) * 1e9)


def _wait_delivering(probes: Probes, settings: ProbeSettings, deadline: float) -> bool:
    """Until every pair has delivered for settle_s (True), or the deadline (False)."""
    since: float | None = None
    while time.monotonic() < deadline:
        _check_interrupted()
        if all(probes.delivering(time.time_ns() - _fresh_ns(settings))):
            since = since if since is not None else time.monotonic()
            if time.monotonic() - since >= settings.settle_s:
                return True
        else:
            since = None
        time.sleep(0.05)
    return False


def _tx(emu: Emulation) -> int:
    return sum(tx for _rx, tx in emu.counters().values())


# -- the setup: what the host computes before the VM ----------------------------------------------

def failure_json(failure: Failure) -> dict[str, Any]:
    return {"pair": list(failure.pair)} if failure.pair else {"switch": failure.switch}


def failure_from_json(d: dict[str, Any]) -> Failure:
    return Failure(pair=(d["pair"][0], d["pair"][1])) if d.get("pair") else Failure(switch=str(d["switch"]))


@dataclass
class Stage:
    """One failure of the bench, measured once the previous one is healed (or settled)."""
    failure: Failure
    pairs: list[tuple[str, str]]              # probed, the same in every method
    candidates: int                           # ordered pairs this failure breaks (plan or spanning tree), or their reverse
    model_blocked_after: list[tuple[str, str]] = field(default_factory=list)
    heal_context: dict[str, Any] = field(default_factory=dict)   # handed to the heal in CutEvent.context
    methods: list[str] | None = None          # measured on these only (and no later stage on the others); None: all

    def to_json(self) -> dict[str, Any]:
        return {"failure": failure_json(self.failure), "pairs": [list(p) for p in self.pairs],
                "candidates": self.candidates, "model_blocked_after": [list(p) for p in self.model_blocked_after],
                "heal_context": self.heal_context, "methods": self.methods}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Stage:
        return Stage(failure_from_json(d["failure"]), [(a, b) for a, b in d["pairs"]], int(d["candidates"]),
                     [(a, b) for a, b in d["model_blocked_after"]], dict(d["heal_context"]), d.get("methods"))


@dataclass
class Setup:
    stages: list[Stage]
    methods: list[str]
    settings: ProbeSettings
    unhealed_timeout_s: float = 10.0          # the plan with nobody acting never heals: wait this long
    stp_timers: str = "default"
    model_root: str = ""
    model_blocked: list[tuple[str, str]] = field(default_factory=list)
    throughput: dict[str, Any] | None = None  # options and the model's prediction after the last failure (traffic.Prediction)
    ovs_datapath: str = "auto"                # system (the kernel module), netdev (userspace), auto: system where it loads
    heal: str | None = None                   # module:function, imported where the emulation runs

    @property
    def pairs(self) -> list[tuple[str, str]]:
        """The first failure's probed pairs."""
        return self.stages[0].pairs

    @property
    def heal_context(self) -> dict[str, Any]:
        """The first failure's heal context."""
        return self.stages[0].heal_context

    @heal_context.setter
    def heal_context(self, value: dict[str, Any]) -> None:
        self.stages[0].heal_context = value

    def to_json(self) -> dict[str, Any]:
        return {"stages": [st.to_json() for st in self.stages], "methods": self.methods,
                "settings": dataclasses.asdict(self.settings), "unhealed_timeout_s": self.unhealed_timeout_s,
                "stp_timers": self.stp_timers, "model_root": self.model_root,
                "model_blocked": [list(p) for p in self.model_blocked], "throughput": self.throughput,
                "ovs_datapath": self.ovs_datapath, "heal": self.heal}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Setup:
        return Setup([Stage.from_json(x) for x in d["stages"]], list(d["methods"]), ProbeSettings(**d["settings"]),
                     float(d["unhealed_timeout_s"]), str(d["stp_timers"]), str(d["model_root"]),
                     [(a, b) for a, b in d["model_blocked"]], d["throughput"], str(d["ovs_datapath"]), d["heal"])


def tree_cut_pairs(spec: EmulationSpec, parent: dict[str, str], pair: tuple[str, str]) -> set[tuple[str, str]]:
    """Ordered host pairs whose path in the spanning tree (`parent`: switch -> its root
    port's neighbour) crosses the pair."""
    if parent.get(pair[1]) == pair[0]:
        child = pair[1]
    elif parent.get(pair[0]) == pair[1]:
        child = pair[0]
    else:
        return set()                      # a blocked pair: cutting it breaks no path

    def under(s: str) -> bool:
        while s in parent:
            if s == child:
                return True
            s = parent[s]
        return s == child
    side = {s for s in spec.switches if under(s)}
    return {(a, b) for a, ha in spec.hosts.items() for b, hb in spec.hosts.items()
            if a != b and (ha.switch in side) != (hb.switch in side)}


def tree_path(parent: dict[str, str], a: str, b: str) -> list[str]:
    """The switches on the spanning tree's path from a to b (`parent`: switch -> its root
    port's neighbour), both ends included."""
    up_a = [a]
    while up_a[-1] in parent:
        up_a.append(parent[up_a[-1]])
    seen = {s: i for i, s in enumerate(up_a)}
    up_b = [b]
    while up_b[-1] not in seen:
        up_b.append(parent[up_b[-1]])
    return up_a[:seen[up_b[-1]] + 1] + up_b[-2::-1]


def tree_switch_pairs(spec: EmulationSpec, parent: dict[str, str], switch: str) -> set[tuple[str, str]]:
    """Ordered host pairs whose path in the spanning tree passes through `switch` (its own
    hosts' pairs included)."""
    return {(a, b) for a, ha in spec.hosts.items() for b, hb in spec.hosts.items()
            if a != b and switch in tree_path(parent, ha.switch, hb.switch)}


def prepare(spec: EmulationSpec, failures: tuple[str, str] | Failure | Sequence[Failure], methods: Sequence[str],
            settings: ProbeSettings, *, max_pairs: int = 1000, seed: int = 1, stp_timers: str = "default",
            unhealed_timeout_s: float = 10.0, throughput: dict[str, Any] | None = None, heal: str | None = None,
            ovs_datapath: str = "auto", running: Sequence[EmulationSpec] | None = None) -> Setup:
    """The probed pairs of each failure, the model's trees and the throughput prediction
    after the last failure (numpy: here, not in the VM). `failures`: one neighbour pair, or
    failures in the order they happen, each once the previous one is healed; `running`: the
    bundle vlanroute's fabric runs when each happens (the published plan first, then each
    repair; default: the published plan for the first). Probed for each failure: the host
    pairs it breaks on the running plan (failplan's cut pairs) or on the spanning tree of
    the cables still alive, each both ways, none with a host on a dead switch; all of them
    up to `max_pairs`, else a seeded sample of that many."""
    from vlanroute.emulate.traffic import cable_pairs, switch_order
    from vlanroute.perf.stp import spanning_tree
    if isinstance(failures, Failure):
        failures = [failures]
    elif isinstance(failures, tuple) and len(failures) == 2 and all(isinstance(x, str) for x in failures):
        failures = [Failure(pair=(str(failures[0]), str(failures[1])))]
    failures = list(failures)                 # type: ignore[arg-type]
    plans = list(running or [spec])
    if len(plans) < len(failures):
        raise ValueError(f"{len(failures)} failures need the running bundle of each, {len(plans)} given")
    order = switch_order(spec)
    cables = cable_pairs(spec)

    def key(p: tuple[str, str]) -> tuple[str, str]:
        return (p[0], p[1]) if order.index(p[0]) < order.index(p[1]) else (p[1], p[0])

    def tree_of(dead_switches: set[str], dead_pairs: set[tuple[str, str]]) -> Any:
        alive = [s for s in order if s not in dead_switches]
        return spanning_tree(alive, {k: v for k, v in cables.items()
                                     if k not in dead_pairs and not (set(k) & dead_switches)}, lag=True)

    def in_order(blocked: list[tuple[str, str]]) -> list[tuple[str, str]]:
        return sorted(set(blocked), key=lambda p: (order.index(p[0]), order.index(p[1])))

    first = tree_of(set(), set())
    dead_switches: set[str] = set()
    dead_pairs: set[tuple[str, str]] = set()
    stages: list[Stage] = []
    for i, (failure, plan) in enumerate(zip(failures, plans)):
        failure.check(spec)
        before = tree_of(dead_switches, dead_pairs)
        dead_switches |= set(failure.dead())
        dead_pairs |= {key(p) for p in failure.pairs(spec)}
        after = tree_of(dead_switches, dead_pairs)
        on_plan = failure.cut_pairs(plan)
        on_tree = (tree_cut_pairs(spec, before.parent, failure.pair) if failure.pair
                   else tree_switch_pairs(spec, before.parent, str(failure.switch)))
        broken = {(a, b) for a, b in on_plan | on_tree
                  if spec.hosts[a].switch not in dead_switches and spec.hosts[b].switch not in dead_switches}
        # Both ways, as an application's traffic goes (requests and replies, TCP's ACKs): every
        # destination also sends, so that a bridge that lost its entry for it learns it again.
        ends = sorted({(a, b) if a < b else (b, a) for a, b in broken})
        if 2 * len(ends) > max_pairs:
            ends = sorted(random.Random(seed + i).sample(ends, max(1, max_pairs // 2)))
        probed = sorted({p for a, b in ends for p in ((a, b), (b, a))})
        every = {p for a, b in broken for p in ((a, b), (b, a))}
        stages.append(Stage(failure, probed, len(every), in_order(after.blocked)))
    prediction = None
    if throughput is not None and any(m in methods for m in ("rstp", "stp")):
        prediction = predict_after(spec, {k: v for k, v in cables.items()
                                          if k not in dead_pairs and not (set(k) & dead_switches)},
                                   throughput, dead_switches)
    return Setup(stages, list(methods), settings, unhealed_timeout_s, stp_timers, first.root,
                 in_order(first.blocked), prediction, ovs_datapath, heal)


def throughput_hosts(spec: EmulationSpec, dead: set[str] | frozenset[str] = frozenset()) -> list[str]:
    """One host per switch (its first, natural order) but the `dead` ones: the traffic
    check's measurable size under TCG."""
    from vlanroute.natural import natsorted
    first: dict[str, str] = {}
    for h in natsorted(h for h, x in spec.hosts.items() if x.switch not in dead):
        first.setdefault(spec.hosts[h].switch, h)
    return [first[s] for s in natsorted(first)]


def predict_after(spec: EmulationSpec, cables: dict[tuple[str, str], int], opt: dict[str, Any],
                  dead: set[str] | frozenset[str] = frozenset()) -> dict[str, Any]:
    """emulate --traffic's TCP model on the spanning tree of the cables left (LAGs: each
    bond one port) among the switches alive, between throughput_hosts."""
    from vlanroute.emulate.traffic import switch_order
    from vlanroute.perf.stp import stp_fabric
    hosts = [(h, spec.hosts[h].switch) for h in throughput_hosts(spec, dead)]
    alive = [s for s in switch_order(spec) if s not in dead]
    fabric = stp_fabric(alive, hosts, cables, speed=float(opt["rate_mbit"]) / 1000, lag=True)
    small = dataclasses.replace(spec, hosts={h: spec.hosts[h] for h, _s in hosts})
    return predicted(small, fabric, opt, "spanning tree")


def predicted(small: EmulationSpec, fabric: Any, opt: dict[str, Any], label: str) -> dict[str, Any]:
    """The TCP model's prediction of each of the options' patterns on `fabric` between the
    hosts of `small` (throughput_hosts), as measure_throughput takes it."""
    from vlanroute.emulate.tcpmodel import predict
    from vlanroute.emulate.traffic import Prepared, host_flows
    from vlanroute.perf.patterns import demands
    rows = []
    for pattern in opt["patterns"]:
        for demand in demands(fabric, pattern, (int(opt.get("seed", 1)),)):
            p = predict(fabric, demand)
            rows.append(Prepared(label, demand.name, host_flows(small, fabric, demand), p.maxmin_mbit,
                                 p.maxmin_slowest_mbit, p.max_mbit, p.aggregate_mbit, p.slowest_mbit).__dict__)
    return {**opt, "patterns": list(opt["patterns"]), "prepared": rows}


# -- one method --------------------------------------------------------------------------------

@dataclass
class MethodRun:
    method: str
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)
    measurements: list[Measurement] = field(default_factory=list)    # one per stage measured
    throughput: list[dict[str, Any]] = field(default_factory=list)
    aborted: str = ""

    @property
    def measurement(self) -> Measurement | None:
        """The first failure's measurement."""
        return self.measurements[0] if self.measurements else None


def run_method(spec: EmulationSpec, setup: Setup, method: str, log: Callable[[str], None],
               heal: Heal | None = None) -> MethodRun:
    """Build one fabric, measure, tear down (always)."""
    out = MethodRun(method)
    # The learning broadcasts of 24 hosts at once in 4 VLANs fit the VM's input backlog; a
    # plan with backup VLANs (30 on the seed torus) sends 7 times as many per host: fewer
    # hosts at once, the same frames per second (82,834 backlog drops with 24 at once).
    options = Options(host_jobs=max(2, min(24, 96 // max(1, len(spec.vlan_ids)))))
    emu = Emulation(spec, options, log, prefix=f"vo{os.getpid()}{method[0]}-")
    settings = setup.settings
    if method == "vlanroute" and heal is None:
        settings = dataclasses.replace(settings, timeout_s=setup.unhealed_timeout_s)
    started = time.monotonic()

    def phase(name: str) -> None:
        nonlocal started
        out.phases[name] = round(time.monotonic() - started, 2)
        started = time.monotonic()

    def need(*checks: Check) -> None:
        out.checks.extend(checks)
        for c in checks:
            log(f"[{method}] {'ok' if c.ok else 'FAIL'}: {c.name}: {c.detail}")
        bad = [c.name for c in checks if not c.ok]
        if bad:
            raise netns.NetnsError(" and ".join(bad) + " failed")
    ovs: spanning.OvsRstp | None = None
    try:
        if method == "vlanroute":
            need(emu.build())
            phase("build")
            need(emu.learn())
            phase("learn")
            spanning.hosts_checksum_off(emu)
            need(emu.storm_check("after the learning broadcasts and VLAN-1 probes", probe=True), emu.fdb_check())
            phase("checks")
        else:
            spanning.build_cables_and_hosts(emu)
            timers = spanning.STP_TIMERS[setup.stp_timers]
            if method == "rstp":
                ovs = spanning.OvsRstp(emu, setup.ovs_datapath)
                ovs.build()
                read = ovs.states
                where = "the kernel datapath" if ovs.datapath == "system" else "the userspace datapath"
                out.notes.append(f"RSTP: Open vSwitch {ovs_version()}, {where} (datapath_type={ovs.datapath}), one "
                                 "ovs-vswitchd per switch; default RSTP timers (hello 2 s, forward delay 15 s, max "
                                 "age 20 s, transmit hold count 6); host ports admin edge")
            else:
                spanning.build_kernel_stp(emu, timers)
                read = lambda: spanning.kernel_stp_states(emu)   # noqa: E731
                out.notes.append(f"802.1D: the kernel bridge's STP, {timers.label}")
            phase("build")
            # BPDUs: at most one per port per hello time in a settled tree, which the storm
            # check's counters count; a loop sends hundreds per port.
            hello = 2.0 if method == "rstp" else timers.hello_s
            ports = sum(len(spanning.bridge_ports(emu, s)[0]) + len(spanning.bridge_ports(emu, s)[1])
                        for s in spec.switches)
            emu.options = dataclasses.replace(options, storm_bound=options.storm_bound
                                              + ports * math.ceil(options.storm_window_s / hello + 1))
            settle = 4 * timers.forward_delay_s + 30 if method == "stp" else 60.0
            states = spanning.wait_settled(read, settle)
            blocked = spanning.blocked_pairs(emu, states)
            need(_tree_check("before the cut", blocked, setup.model_blocked))
            phase("tree settled")
            spanning.announce_hosts(emu)
            need(emu.storm_check("after every host's broadcast", probe=True))
            phase("checks")
        dead: set[tuple[str, str]] = set()
        for i, stage in enumerate(setup.stages):
            if i and method == "vlanroute" and heal is None:
                out.notes.append(f"{stage.failure.label()} not measured: nobody healed the failure before it")
                break
            if stage.methods is not None and method not in stage.methods:
                break
            peers: dict[str, set[str]] = {}
            for a, b in stage.pairs:
                peers.setdefault(a, set()).add(b)
            spanning.warm_arp(emu, peers)
            m = measure(emu, stage.failure, stage.pairs, method=method, heal=heal if method == "vlanroute" else None,
                        settings=settings, log=log, context=stage.heal_context,
                        after_probes=lambda: spanning.permanent_arp(emu, peers))
            out.measurements.append(m)
            phase("probes" if len(setup.stages) == 1 else f"probes {i + 1}")
            need(*m.checks)
            dead |= _dead_ports(emu, stage.failure)
            if method != "vlanroute":
                states = spanning.wait_settled(read, 60.0 + 2 * spanning.STP_TIMERS[setup.stp_timers].forward_delay_s,
                                               ignore=frozenset(dead))
                need(_tree_check(f"after the cut ({stage.failure.label()})", spanning.blocked_pairs(emu, states),
                                 stage.model_blocked_after))
        last = setup.stages[len(out.measurements) - 1].heal_context if out.measurements else {}
        if method == "vlanroute" and "throughput" in last:
            out.throughput = measure_throughput(emu, last["throughput"], log, "the healed plan")
            phase("throughput")
        if method != "vlanroute":
            if setup.throughput is not None:
                if method == "stp":
                    waited = spanning.wait_stp_quiet(emu, spanning.STP_TIMERS[setup.stp_timers])
                    out.notes.append(f"802.1D: the topology change ended {waited:.1f} s after the tree settled "
                                     "(the throughput is measured after it: unicast is flooded more during it)")
                out.throughput = measure_throughput(emu, setup.throughput, log)
            phase("throughput")
    except (netns.NetnsError, OSError) as exc:
        out.aborted = str(exc)
        log(f"[{method}] aborted: {exc}")
    finally:
        start = time.monotonic()
        emu.teardown()
        out.phases["teardown"] = round(time.monotonic() - start, 2)
    return out


def _dead_ports(emu: Emulation, failure: Failure) -> set[tuple[str, str]]:
    """The bridge ports a failure leaves without carrier or cut off: both ends of its pairs'
    uplinks, and a dead switch's host ports (up, but cut off with it)."""
    ports = {(s, up.lag_name or up.members[0]) for a, b in failure.pairs(emu.plan) for s, n in ((a, b), (b, a))
             for up in [emu.plan.uplinks[(s, n)]]}
    return ports | {(h.switch, h.port) for h in emu.plan.hosts.values() if h.switch == failure.switch}


def _tree_check(when: str, blocked: list[tuple[str, str]], model: list[tuple[str, str]]) -> Check:
    return Check(f"spanning tree {when}", blocked == model,
                 f"blocked pairs {', '.join(f'{a}-{b}' for a, b in blocked) or 'none'} "
                 f"({'as the model' if blocked == model else 'the model: ' + ', '.join(f'{a}-{b}' for a, b in model)})",
                 [] if blocked == model else [f"blocked {blocked}, the model {model}"])


def ovs_version() -> str:
    try:
        out = netns.run([spanning._tool("ovs-vswitchd"), "--version"]).stdout
    except (netns.NetnsError, OSError):
        return "?"
    return out.split()[-1] if out.split() else "?"


def measure_throughput(emu: Emulation, opt: dict[str, Any], log: Callable[[str], None],
                       label: str = "spanning tree after the cut") -> list[dict[str, Any]]:
    """emulate --traffic's measurement (traffic.shape, traffic.measure) of each prepared
    pattern on the running fabric; rows as traffic.Measured's fields."""
    from vlanroute.emulate.traffic import Measured, TrafficOptions, measure as measure_flows, shape
    topt = TrafficOptions(patterns=tuple(opt["patterns"]), rate_mbit=float(opt["rate_mbit"]),
                          warmup_s=float(opt["warmup_s"]), seconds=float(opt["seconds"]), seed=int(opt.get("seed", 1)))
    shape(emu, topt)
    rows = []
    for p in opt["prepared"]:
        flows = [(a, b) for a, b in p["flows"]]
        log(f"[traffic] {p['pattern']}: {len(flows)} TCP flows ...")
        got, window_s = measure_flows(emu, flows, topt, log)
        row = Measured(p["pattern"], label, len(flows), p["predicted_mbit"],
                       sum(got.values()), p["slowest_predicted_mbit"], min(got.values()) if got else 0.0,
                       p["max_mbit"], p["tcp_mbit"], p["tcp_slowest_mbit"])
        log(f"[traffic] {p['pattern']}: predicted {row.tcp_mbit:.2f} Mbit/s, measured {row.measured_mbit:.2f} "
            f"({row.tcp_ratio:.3f}), window {window_s:.1f} s")
        rows.append({**row.__dict__, "tcp_ratio": round(row.tcp_ratio, 4), "window_s": round(window_s, 2)})
    return rows


# -- the whole bench ---------------------------------------------------------------------------

@dataclass
class OutageReport:
    outdir: str
    kernel: str
    setup: Setup
    runs: list[MethodRun] = field(default_factory=list)
    summaries: list[OutageSummary] = field(default_factory=list)
    outages: dict[str, list[PairOutage]] = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return bool(self.runs) and all(not r.aborted and all(c.ok for c in r.checks) for r in self.runs)

    def analyse(self) -> None:
        """The outages from the probe records (the VM records, this computes), per method
        and failure, the failures in order."""
        self.summaries, self.outages = [], {}
        for i, stage in enumerate(self.setup.stages):
            for r in self.runs:
                if i >= len(r.measurements):
                    continue
                m = r.measurements[i]
                outs = pair_outages(m.record, self.setup.settings.guard_s)
                self.outages[stage_key(r.method, i)] = outs
                s = summarize(r.method, m.record, outs, m.timeout_s, self.setup.settings.guard_s)
                s.notes, s.stage, s.failure = list(r.notes), i, stage.failure.label()
                self.summaries.append(s)

    def label(self, method: str) -> str:
        if method == "vlanroute" and self.setup.heal:
            return f"vlanroute + {self.setup.heal.rpartition(':')[2]}"
        return METHOD_LABEL.get(method, method)

    def text(self) -> str:
        st = self.setup
        what = ", then once healed ".join(
            f"{x.failure.label()} ({'every cable of the pair' if x.failure.pair else 'every cable of the switch'}"
            ", carrier lost at both ends)" for x in st.stages)
        lines = [f"outage of {what}, nobody acting unless a heal is given, on {self.outdir}, {self.kernel}"]
        for x in st.stages:
            lines.append(f"probes of {x.failure.label()}: {len(x.pairs)} ordered host pairs (of {x.candidates}: the "
                         "pairs it breaks on the running plan or on the spanning tree, both ways, none with a host on "
                         f"a dead switch{'' if len(x.pairs) == x.candidates else ', a seeded sample'})")
        lines.append(f"one UDP datagram each every {st.settings.interval_s * 1000:g} ms asked; outage = last delivery "
                     "before the loss to the first after it (arrival times, kernel-stamped); percentiles nearest-rank "
                     "over the interrupted pairs, a pair never restored counts as infinite")
        several = len(st.stages) > 1
        head = (f"{'method':26} {'failure' if several else '':{13 if several else 0}}{' ' if several else ''}"
                f"{'pairs':>5} {'hit':>5} {'median':>8} {'p90':>8} {'p99':>8} {'max':>8} "
                f"{'never':>5} {'lost':>7} {'dups':>5} {'storm':>5} {'interval':>13}")
        lines += [head, "-" * len(head)]
        by = {r.method: r for r in self.runs}
        for s in self.summaries:
            run = by[s.method]
            m = run.measurements[s.stage]
            storm = "yes" if any(not c.ok and c.name.startswith("no storm") for c in m.checks) else "no"
            cell = fmt_s if s.interrupted else (lambda v: "-")
            failure = f"{s.failure:13} " if several else ""
            lines.append(f"{self.label(s.method):26} {failure}{s.pairs:5d} {s.interrupted:5d} "
                         f"{cell(s.median_s):>8} {cell(s.p90_s):>8} {cell(s.p99_s):>8} {cell(s.max_s):>8} "
                         f"{s.never_restored:5d} {s.lost:7d} {s.duplicates:5d} {storm:>5} "
                         f"{s.achieved_interval_s * 1000:5.1f}/{s.achieved_interval_p99_s * 1000:5.1f} ms")
        for s in self.summaries:
            if s.overloaded:
                lines.append(f"{s.method}{' (' + s.failure + ')' if several else ''}: OVERLOADED: {s.lost_before_share:.1%} of the probes lost before the cut, "
                             f"rounds {s.achieved_interval_s * 1000:.1f} ms apart for {s.interval_s * 1000:g} asked: "
                             "these figures measure the emulator's CPU more than the fabric (fewer pairs or a "
                             "longer interval)")
        lines.append("(hit: pairs that lost a probe; never: not restored within the timeout "
                     f"({', '.join(f'{self.label(s.method)} {s.timeout_s:g} s' for s in self.summaries)}); "
                     "interval: the sender's median / p99 time between rounds)")
        for r in self.runs:
            for note in r.notes:
                lines.append(f"{r.method}: {note}")
            for i, m in enumerate(r.measurements):
                which = f" ({st.stages[i].failure.label()})" if several else ""
                if m.heal_s is not None:
                    lines.append(f"{r.method}{which}: heal() returned after {m.heal_s:.2f} s")
                lines.append(f"{r.method}{which}: {frames_note(m)}")
            for c in r.checks:
                if not c.ok:
                    lines.append(f"{r.method}: FAIL: {c.name}: {c.detail}")
                    lines += [f"    {p}" for p in c.problems[:6]]
            if r.aborted:
                lines.append(f"{r.method}: aborted: {r.aborted}")
            lines.append(f"{r.method}: time: " + ", ".join(f"{k} {v:.1f} s" for k, v in r.phases.items()))
        rows = [(r.method, t) for r in self.runs for t in r.throughput]
        if rows:
            lines.append(f"throughput after {'the last failure' if several else 'the cut'} (emulate --traffic's TCP measurement, one host per switch, "
                         f"every cable and host link at {_rate(rows[0][1], st)} "
                         "Mbit/s; predicted: the TCP model on the spanning tree of the cables left, LAGs as one port, "
                         "or on the healed plan's VLAN routes)")
            lines.append(f"{'method':26} {'pattern':22} {'flows':>5} {'predicted':>9} {'measured':>8} {'meas/pred':>9}")
            for method, t in rows:
                lines.append(f"{self.label(method):26} {t['pattern']:22} {t['flows']:5d} "
                             f"{t['tcp_mbit']:9.2f} {t['measured_mbit']:8.2f} {t['tcp_ratio']:9.3f}")
        lines.append("RESULT: " + ("PASS" if self.ok else "FAIL"))
        return "\n".join(lines)

    def to_json(self) -> dict[str, Any]:
        runs = []
        for r in self.runs:
            runs.append({"method": r.method, "aborted": r.aborted, "notes": r.notes, "phases": r.phases,
                         "checks": [dataclasses.asdict(c) for c in r.checks], "throughput": r.throughput,
                         "failures": [{"heal_s": m.heal_s, "waited_s": m.waited_s, "frames": m.frames}
                                      for m in r.measurements]})
        return {"outdir": self.outdir, "kernel": self.kernel,
                "failures": [x.failure.label() for x in self.setup.stages], "ok": self.ok,
                "setup": {k: v for k, v in self.setup.to_json().items() if k != "throughput"},
                "summaries": [dataclasses.asdict(s) for s in self.summaries],
                "pairs": {method: [dataclasses.asdict(o) for o in outs] for method, outs in self.outages.items()},
                "runs": runs}


def stage_key(method: str, stage: int) -> str:
    """OutageReport.outages' key: the method for the first failure, `method:N` for the Nth."""
    return method if stage == 0 else f"{method}:{stage + 1}"


def _rate(row: dict[str, Any], setup: Setup) -> Any:
    """The throughput rows' link rate (Mbit/s): the spanning trees' options, or the heal's."""
    heals = [x.heal_context.get("throughput") for x in setup.stages]
    opt = setup.throughput or next((h for h in heals if h), None) or {}
    return row.get("rate_mbit", opt.get("rate_mbit"))


def frames_note(m: Measurement) -> str:
    """Switch-port frames per probe sent, at worst after the cut and at the end: a flooded
    probe crosses every port of the tree (tens), a loop without bound. Samples in which the
    sender sent nothing (it was not scheduled) are left out."""
    steps = [(t1, (f1 - f0) / (p1 - p0)) for (_t0, f0, p0), (t1, f1, p1) in zip(m.frames, m.frames[1:]) if p1 > p0]
    if not steps:
        return "no frame counts sampled"
    worst = max(steps, key=lambda s: s[1])
    settled = steps[-1][1]
    return (f"switch-port frames per probe: worst {worst[1]:.1f} ({worst[0]:.1f} s after the cut), "
            f"{settled:.1f} at the end")


def resolve_heal(spec: str | None) -> Heal | None:
    """`module:function` -> the function (the watcher's hook, imported where the emulation runs)."""
    if not spec:
        return None
    module, _, name = spec.partition(":")
    fn = getattr(importlib.import_module(module), name)
    if not callable(fn):
        raise TypeError(f"{spec} is not callable")
    return fn    # type: ignore[no-any-return]


def run_here(outdir: Path, setup: Setup, kernel: str, log: Callable[[str], None] = print,
             heal: Heal | None = None) -> OutageReport:
    """Every method of the setup, one after the other, in this kernel (needs root)."""
    spec = load(outdir)
    remove_stale_namespaces(log)
    report = OutageReport(str(outdir), kernel, setup)
    heal = heal or resolve_heal(setup.heal)
    with _signals_raise():
        for method in setup.methods:
            log(f"[{method}] ...")
            report.runs.append(run_method(spec, setup, method, log, heal))
    return report


def run_in_vm(outdir: Path, setup: Setup, timeout_s: float, log: Callable[[str], None]) -> OutageReport:
    """The same inside the emulation VM; the VM records, this side computes the outages."""
    import shlex
    import shutil
    import tempfile

    from vlanroute.emulate import vm
    from vlanroute.emulate.run import lean_python
    from vlanroute.emulate.spec import save_specs
    with tempfile.TemporaryDirectory(prefix="vlanroute-outage-") as tmp:
        work = Path(tmp)
        shutil.copytree(outdir, work / "outdir")
        (work / "setup.json").write_text(json.dumps(setup.to_json()))
        save_specs([work / "outdir"], work / "specs.pickle")
        python, py_env = lean_python()
        args = [*python, "-m", "vlanroute.emulate.outagerun", str(work / "setup.json"), str(work / "outdir"),
                str(work / "result"), str(work / "specs.pickle"), f"QEMU {vm.ACCEL_TOKEN}"]
        result = vm.run_in_vm(" ".join(shlex.quote(a) for a in args), work,
                              vm.VmConfig(timeout_s=timeout_s, extra_env=py_env),
                              on_line=lambda line: log(line.rstrip("\n")))
        kernel = (f"the emulation VM (Debian kernel {vm.find_kernel().name.removeprefix('vmlinuz-')} under QEMU "
                  f"{result.accel.upper()}, {vm.VmConfig().cpus} vCPUs)")
        report = OutageReport(str(outdir), kernel, setup)
        if not (work / "result" / "runs.json").exists():
            report.runs.append(MethodRun("vm", aborted=f"the VM wrote no result (exit {result.returncode})"))
            return report
        report.runs = read_runs(work / "result", setup)
    report.analyse()
    return report


def write_runs(runs: list[MethodRun], folder: Path) -> None:
    """The VM's side: every run's plain fields, each probe record in a file of its own."""
    from vlanroute.emulate.probes import save
    folder.mkdir(parents=True, exist_ok=True)
    plain = []
    for r in runs:
        for i, m in enumerate(r.measurements):
            save(m.record, folder / f"{r.method}.{i}.probes.json")
        plain.append({"method": r.method, "aborted": r.aborted, "notes": r.notes, "phases": r.phases,
                      "checks": [dataclasses.asdict(c) for c in r.checks], "throughput": r.throughput,
                      "measurements": [{
                          "heal_s": m.heal_s, "waited_s": m.waited_s, "frames": m.frames, "timeout_s": m.timeout_s,
                          "checks": [dataclasses.asdict(c) for c in m.checks]} for m in r.measurements]})
    (folder / "runs.json").write_text(json.dumps(plain))


def read_runs(folder: Path, setup: Setup) -> list[MethodRun]:
    from vlanroute.emulate.probes import load as load_record
    runs = []
    for d in json.loads((folder / "runs.json").read_text()):
        r = MethodRun(d["method"], [Check(**c) for c in d["checks"]], d["notes"], d["phases"], [], d["throughput"],
                      d["aborted"])
        for i, md in enumerate(d["measurements"]):
            r.measurements.append(Measurement(r.method, load_record(folder / f"{r.method}.{i}.probes.json"),
                                              [Check(**c) for c in md["checks"]], md["heal_s"], md["waited_s"],
                                              [tuple(x) for x in md["frames"]], md["timeout_s"]))   # type: ignore[misc]
        runs.append(r)
    return runs


def main(argv: list[str]) -> int:
    """In the VM: `python -m vlanroute.emulate.outagerun SETUP OUTDIR RESULT_DIR SPECS LABEL`."""
    setup = Setup.from_json(json.loads(Path(argv[0]).read_text()))
    preload(Path(argv[3]))

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)
    report = run_here(Path(argv[1]), setup, argv[4] if len(argv) > 4 else "this kernel", log)
    write_runs(report.runs, Path(argv[2]))
    return 0 if report.ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
