"""`vlanroute emulate --traffic`: the flow model's prediction measured with real TCP.

Two networks on the same cables, one after the other, in this kernel's namespaces:
1. the plan (its linux-bridge scripts and host programs, as `vlanroute emulate` runs them);
2. plain Ethernet: one Linux bridge per switch with the kernel's 802.1D spanning tree on
   (`stp_state 1`), bridge priorities ascending in switch order (so the root and every tie
   are the flow model's, vlanroute.perf.stp), parallel cables as separate ports (STP blocks
   all but one), waited on until every port is forwarding or blocking.
Every switch port and every host interface is shaped to the same rate (tc tbf, egress:
each direction of a cable and of a host link is one resource, as in the model). For each
pattern, emulate/flowagent.py runs every flow in this process (sockets made in the hosts'
namespaces), the payload bytes the kernel received counted over a steady window after a
warm-up. Measured aggregate against the TCP model's prediction over data frames and their
ACKs (proportionally fair, emulate/tcpmodel.py), the max-min one and the largest beside it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from vlanroute.emulate import flowagent, netns
from vlanroute.emulate.flowagent import ACK, GOODPUT
from vlanroute.emulate.run import (
    Emulation,
    Options,
    load_modules,
    remove_stale_namespaces,
)
from vlanroute.emulate.spec import EmulationSpec, load, preload, save_specs
from vlanroute.model.links import link
from vlanroute.natural import natsorted

if TYPE_CHECKING:
    from vlanroute.perf.fabric import Fabric
    from vlanroute.perf.patterns import Demand

# The model (emulate/tcpmodel.py) and vlanroute.perf are imported where they are used: the
# VM, which only measures, never imports numpy and scipy (~20 s under TCG).

FLOW_PORT = 7079
# tbf's bucket holds at least this long at the rate: its timer that releases the next frame
# fires late when the emulating CPU is not scheduled (a loaded VM, TCG on a busy host), and
# tokens beyond the bucket are lost for good. With 250 ms the links that carry one TCP flow
# each (a permutation) were 0.86-0.92 busy at a host load of 11, with several flows 0.96-1.
# A saturated link never refills its bucket, so in the steady window a deeper one adds
# nothing above the rate; it gives back only the time the CPU took from the link.
BURST_S = 1.0
STP_TIMERS = "forward_delay 200 hello_time 100 max_age 600"   # the kernel's minimums (centiseconds)


@dataclass(frozen=True)
class TrafficOptions:
    patterns: tuple[str, ...] = ("all-to-all", "permutation")
    rate_mbit: float = 10.0
    warmup_s: float = 2.0
    seconds: float = 4.0
    seed: int = 1
    stp: bool = True
    burst_bytes: int = 16384
    queue: str = "fifo"             # tbf's own byte FIFO, as a switch port; or sfq (per-flow fair queues)


@dataclass
class Measured:
    pattern: str
    fabric: str
    flows: int
    predicted_mbit: float
    measured_mbit: float
    slowest_predicted_mbit: float
    slowest_measured_mbit: float
    max_mbit: float = 0.0          # the largest aggregate any allocation gives (predicted is max-min)
    # The TCP model (proportionally fair): the prediction the measurement is checked against.
    # `predicted_mbit` keeps its meaning (max-min) for the JSON report's readers.
    tcp_mbit: float = 0.0
    tcp_slowest_mbit: float = 0.0

    @property
    def ratio(self) -> float:
        return self.measured_mbit / self.predicted_mbit if self.predicted_mbit else 0.0

    @property
    def tcp_ratio(self) -> float:
        return self.measured_mbit / self.tcp_mbit if self.tcp_mbit else 0.0


@dataclass
class TrafficReport:
    outdir: str
    rate_mbit: float
    queue: str = "fifo"
    rows: list[Measured] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    aborted: str = ""

    def text(self) -> str:
        lines = [(f"traffic on {self.outdir}: every cable and host link shaped to {self.rate_mbit:g} Mbit/s (tbf); "
                  f"{self.queue} queues; over data frames and their ACKs ({ACK} B per segment, reverse path), "
                  f"payload {GOODPUT:.3f} of a frame: predicted = TCP's rates (proportionally fair), "
                  f"max-min = the model of analyze, max = the largest aggregate any allocation gives; Mbit/s"),
                 *self.notes]
        head = f"{'pattern':28} {'fabric':14} {'flows':>6} {'predicted':>9} {'max-min':>7} {'max':>6} " \
               f"{'measured':>8} {'meas/pred':>9} {'x STP pred':>10} {'x STP meas':>10}"
        lines += [head, "-" * len(head)]
        stp = {r.pattern: r for r in self.rows if r.fabric == "spanning tree"}
        for r in self.rows:
            base = stp.get(r.pattern)
            vs = (f"{r.tcp_mbit / base.tcp_mbit:10.2f} {r.measured_mbit / base.measured_mbit:10.2f}"
                  if base is not None and r is not base and base.measured_mbit and base.tcp_mbit
                  else f"{'-':>10} {'-':>10}")
            lines.append(f"{r.pattern:28} {r.fabric:14} {r.flows:6d} {r.tcp_mbit:9.2f} {r.predicted_mbit:7.2f} "
                         f"{r.max_mbit:6.2f} {r.measured_mbit:8.2f} {r.tcp_ratio:9.3f} {vs}")
        if self.aborted:
            lines.append(f"aborted: {self.aborted}")
        return "\n".join(lines)

    def plain_json(self) -> dict[str, object]:
        """The report's fields, unchecked: what the VM writes (report_from_json reads it back
        on the host), so that pydantic stays out of the VM."""
        return {"outdir": self.outdir, "rate_mbit": self.rate_mbit, "queue": self.queue, "goodput": GOODPUT,
                "notes": self.notes, "aborted": self.aborted,
                "rows": [{**r.__dict__, "ratio": round(r.ratio, 4),
                          "tcp_ratio": round(r.tcp_ratio, 4)} for r in self.rows]}

    def to_json(self) -> dict[str, object]:
        """The --json object (schemas/outputs.py's EmulateTrafficDocument, whose schema is generated)."""
        from vlanroute.schemas.outputs import EmulateTrafficDocument
        return EmulateTrafficDocument.model_validate(self.plain_json()).to_json()


def switch_order(spec: EmulationSpec) -> list[str]:
    return natsorted(spec.switches)


def vlan_fabric(spec: EmulationSpec, gbps: float) -> Fabric:
    """The plan as the model sees it: a source switch's tree is the tree of its hosts' VLAN."""
    from vlanroute.perf.fabric import from_trees
    from vlanroute.routing.trees import tree_parents
    hosts = [(h.name, h.switch) for h in spec.hosts.values()]
    vlan_of: dict[str, int] = {}
    for h in spec.hosts.values():
        vlan_of.setdefault(h.switch, h.vlan)       # its first host's VLAN (the only one unless split)

    def tree(vlan: int, root: str) -> dict[str, str]:
        links = {link(a, b) for a, ns in spec.tree[vlan].items() for b in ns}
        return tree_parents(links, root)

    trees = {s: tree(vlan_of.get(s, spec.vlan_ids[0]), s) for s in switch_order(spec)}
    # routing below the switch: a host whose VLAN is not its switch's first sends on its own tree
    own = {h.name: (f"{h.switch}/{h.vlan}", tree(h.vlan, h.switch)) for h in spec.hosts.values()
           if h.vlan != vlan_of[h.switch]}
    cables = Counter((u.switch, u.neighbor) for u in spec.uplinks.values() for _ in u.members)
    return from_trees("VLAN routing", switch_order(spec), hosts, trees, cables, speed=gbps, host_trees=own)


def cable_pairs(spec: EmulationSpec) -> dict[tuple[str, str], int]:
    order = {s: i for i, s in enumerate(switch_order(spec))}
    return dict(Counter(tuple(sorted((c.a, c.b), key=order.__getitem__)) for c in spec.cables))  # type: ignore[misc]


def host_flows(spec: EmulationSpec, fabric: Fabric, demand: Demand) -> list[tuple[str, str]]:
    """The demand as (source host, destination host) pairs, one per flow."""
    if demand.name == "all-to-all":
        return [(a, b) for a in fabric.hosts for b in fabric.hosts if a != b]
    return [(fabric.hosts[s], fabric.hosts[d]) for s, d, w in zip(demand.src.tolist(), demand.dst.tolist(),
                                                                   demand.weight.tolist()) for _ in range(int(w))]


# A measuring window this much longer than asked means the process that reads the counters
# was not scheduled on time: the emulating CPU, not the links, set that row's figure. In the
# runs of docs/emulate.md the rows 16-29 % off the TCP model had windows of 7.1 and 7.7 s for 6.
STARVED_WINDOW = 1.10


def starved_note(label: str, pattern: str, window_s: float, asked_s: float) -> str:
    """The report's note for a row measured while the emulator was short of CPU, or ''."""
    if window_s <= asked_s * STARVED_WINDOW:
        return ""
    return (f"{label}, {pattern}: the measuring window took {window_s:.1f} s for {asked_s:g} s: the "
            "emulator was short of CPU, so this row measures the machine more than the model")


def measure(emu: Emulation, flows: Sequence[tuple[str, str]], opt: TrafficOptions,
            log: Callable[[str], None] = print) -> tuple[dict[tuple[str, str], float], float]:
    """Run the flows (emulate/flowagent.py, in this process); Mbit/s each delivered in the
    window, and how long the window really was (s)."""
    spec = emu.plan
    counts = flowagent.run_flows(
        [flowagent.Flow(emu.host_ns(a), spec.hosts[a].address, emu.host_ns(b), spec.hosts[b].address)
         for a, b in flows], FLOW_PORT, opt.warmup_s, opt.seconds,
        devices={emu.host_ns(h.name): h.interface for h in spec.hosts.values()})
    got: dict[tuple[str, str], float] = {f: 0.0 for f in flows}
    for f, n in zip(flows, counts.received):
        got[f] += n * 8 / counts.window_s / 1e6
    # Why a figure falls short: idle host links (starved CPU, TCP timeouts) or overhead.
    line = opt.rate_mbit * 1e6 / 8 * counts.window_s
    busy = sorted(tx / line for _rx, tx in counts.host_bytes.values())
    log(f"[traffic]   window {counts.window_s:.2f} s; host links' sending side busy {busy[0]:.2f} to "
        f"{busy[-1]:.2f} of the rate; {sum(counts.retransmitted)} segments retransmitted")
    return got, counts.window_s


def shape(emu: Emulation, opt: TrafficOptions) -> None:
    """tbf at the traffic rate on every switch port and host interface; its FIFO (as on a
    switch port), or with `queue` sfq a per-flow fair queue inside (one queue per flow,
    served round robin: fair queueing on every link is what drives greedy TCP flows to the
    max-min allocation the model computes)."""
    kbit = int(opt.rate_mbit * 1000)
    burst = max(opt.burst_bytes, int(opt.rate_mbit * 1e6 / 8 * BURST_S))

    def lines(dev: str) -> list[str]:
        out = [f"qdisc replace dev {dev} root handle 1: tbf rate {kbit}kbit burst {burst} latency 1000ms"]
        if opt.queue == "sfq":
            out.append(f"qdisc add dev {dev} parent 1:1 handle 10: sfq perturb 0 limit 1000")
        return out
    emu.parallel_batches("tc", {emu.sw_ns(s): [x for p in emu.switch_ports(s) for x in lines(p)]
                                for s in emu.plan.switches})
    emu.parallel_batches("tc", {emu.host_ns(h.name): lines(h.interface) for h in emu.plan.hosts.values()})


@dataclass(frozen=True)
class Prepared:
    """One pattern on one network, as the model sees it: its flows and their prediction."""
    fabric: str
    pattern: str
    flows: list[tuple[str, str]]
    predicted_mbit: float               # max-min
    slowest_predicted_mbit: float
    max_mbit: float
    tcp_mbit: float                     # proportionally fair: what TCP is measured against
    tcp_slowest_mbit: float


@dataclass(frozen=True)
class Prediction:
    patterns: list[Prepared]
    stp_root: str = ""
    stp_blocked: list[tuple[str, str]] = field(default_factory=list)   # the cables the model blocks

    def to_json(self) -> dict[str, Any]:
        return {"patterns": [p.__dict__ for p in self.patterns], "stp_root": self.stp_root,
                "stp_blocked": self.stp_blocked}

    @staticmethod
    def from_json(data: dict[str, Any]) -> Prediction:
        return Prediction([Prepared(p["fabric"], p["pattern"], [(a, b) for a, b in p["flows"]], p["predicted_mbit"],
                                    p["slowest_predicted_mbit"], p["max_mbit"], p["tcp_mbit"], p["tcp_slowest_mbit"])
                           for p in data["patterns"]],
                          str(data["stp_root"]), [(a, b) for a, b in data["stp_blocked"]])


def prepare(spec: EmulationSpec, opt: TrafficOptions) -> Prediction:
    """Every pattern's flows and prediction on both networks, and the model's spanning tree
    (on the caller's side: the VM then only measures)."""
    from vlanroute.emulate.tcpmodel import predict
    from vlanroute.perf.patterns import demands
    from vlanroute.perf.stp import spanning_tree, stp_fabric
    gbps = opt.rate_mbit / 1000
    hosts = [(h.name, h.switch) for h in spec.hosts.values()]
    fabrics = [vlan_fabric(spec, gbps)]
    if opt.stp:
        fabrics.append(stp_fabric(switch_order(spec), hosts, cable_pairs(spec), speed=gbps, lag=False))
    out = []
    for fabric in fabrics:
        for pattern in opt.patterns:
            for demand in demands(fabric, pattern, (opt.seed,)):
                p = predict(fabric, demand)
                out.append(Prepared(fabric.label, demand.name, host_flows(spec, fabric, demand),
                                    p.maxmin_mbit, p.maxmin_slowest_mbit, p.max_mbit, p.aggregate_mbit, p.slowest_mbit))
    if not opt.stp:
        return Prediction(out)
    model = spanning_tree(switch_order(spec), cable_pairs(spec), lag=False)
    return Prediction(out, model.root, [(a, b) for a, b in model.blocked])


def run_patterns(emu: Emulation, label: str, prepared: Sequence[Prepared], opt: TrafficOptions,
                 report: TrafficReport, log: Callable[[str], None]) -> None:
    for p in prepared:
        if p.fabric != label:
            continue
        log(f"[traffic] {label}: {p.pattern}, {len(p.flows)} TCP flows ...")
        got, window_s = measure(emu, p.flows, opt, log)
        if note := starved_note(label, p.pattern, window_s, opt.seconds):
            report.notes.append(note)
            log(f"[traffic] {note}")
        row = Measured(p.pattern, label, len(p.flows), p.predicted_mbit, sum(got.values()),
                       p.slowest_predicted_mbit, min(got.values()) if got else 0.0, p.max_mbit, p.tcp_mbit,
                       p.tcp_slowest_mbit)
        log(f"[traffic] {label}: {p.pattern}: predicted {row.tcp_mbit:.2f} Mbit/s (max-min {row.predicted_mbit:.2f}), "
            f"measured {row.measured_mbit:.2f} ({row.tcp_ratio:.3f})")
        report.rows.append(row)


def build_stp(emu: Emulation, log: Callable[[str], None], timeout_s: float = 60.0) -> list[tuple[str, str]]:
    """Plain Ethernet on the plan's cables: a bridge with 802.1D per switch; returns the
    cables the kernel blocked, once every port has been forwarding or blocking for 3 s."""
    spec = emu.plan
    emu.make_namespaces()
    emu.make_links()
    order = switch_order(spec)
    emu.parallel_batches("ip", {emu.sw_ns(s): [
        f"link add br0 type bridge stp_state 1 {STP_TIMERS} priority {4096 + i}", "link set br0 up",
        *[line for p in emu.switch_ports(s) for line in (f"link set {p} master br0", f"link set {p} up")]]
        for i, s in enumerate(order)})
    for h in spec.hosts.values():
        with netns.inside(emu.host_ns(h.name)):
            netns.configure_ipv4("lo", "", 8)
            netns.configure_ipv4(h.interface, h.address, spec.plain_prefix)
    deadline = time.monotonic() + timeout_s
    stable_since, last = time.monotonic(), None
    while time.monotonic() < deadline:
        states = {}
        for s in order:
            out = netns.run(["bridge", "-n", emu.sw_ns(s), "-j", "link", "show"]).stdout
            states.update({(s, x.get("ifname")): x.get("state") for x in json.loads(out or "[]")
                           if x.get("master") == "br0"})
        if last != states:
            stable_since, last = time.monotonic(), states
        settled = all(v in ("forwarding", "blocking") for v in states.values())
        if settled and time.monotonic() - stable_since >= 3.0:
            log(f"[stp] converged: {sum(v == 'blocking' for v in states.values())} ports blocking")
            return [(c.a, c.b) for c in spec.cables
                    if "blocking" in (states.get((c.a, c.a_port)), states.get((c.b, c.b_port)))]
        time.sleep(0.5)
    raise netns.NetnsError(f"the spanning tree did not settle in {timeout_s:g} s")


def run_traffic(outdir: Path, opt: TrafficOptions, log: Callable[[str], None] = print,
                prediction: Prediction | None = None) -> TrafficReport:
    """Both networks, one after the other; always torn down."""
    spec = load(outdir)
    if prediction is None:
        prediction = prepare(spec, opt)
    remove_stale_namespaces(log)
    load_modules()
    # The VM's kernel cannot autoload modules (emulate/run.py load_modules): sfq explicitly.
    modprobe = shutil.which("modprobe") or "/usr/sbin/modprobe"
    if opt.queue == "sfq" and Path(modprobe).exists():
        subprocess.run([modprobe, "sch_sfq"], check=False, capture_output=True)
    report = TrafficReport(str(outdir), opt.rate_mbit, opt.queue)
    emu = Emulation(spec, Options(), log, prefix=f"vt{os.getpid()}-")
    try:
        check = emu.build()
        if not check.ok:
            raise netns.NetnsError(f"{check.name}: {check.detail}: " + "; ".join(check.problems[:3]))
        check = emu.learn()
        if not check.ok:
            raise netns.NetnsError(f"{check.name}: {check.detail}: " + "; ".join(check.problems[:3]))
        shape(emu, opt)
        run_patterns(emu, "VLAN routing", prediction.patterns, opt, report, log)
    except (netns.NetnsError, OSError) as exc:
        report.aborted = f"VLAN routing: {exc}"
    finally:
        emu.teardown()
    if not opt.stp or report.aborted:
        return report
    stp = Emulation(spec, Options(), log, prefix=f"vs{os.getpid()}-")
    try:
        blocked = build_stp(stp, log)
        model = prediction.stp_blocked
        same = Counter(tuple(sorted(b)) for b in blocked) == Counter(tuple(sorted(b)) for b in model)
        report.notes.append(f"spanning tree: root {prediction.stp_root}; the kernel blocked {len(blocked)} cables, "
                            f"the model {len(model)}" + (" (the same ones)" if same else " (different ones!)"))
        shape(stp, opt)
        run_patterns(stp, "spanning tree", prediction.patterns, opt, report, log)
    except (netns.NetnsError, OSError) as exc:
        report.aborted = f"spanning tree: {exc}"
    finally:
        stp.teardown()
    return report


def report_from_json(data: dict[str, Any]) -> TrafficReport:
    report = TrafficReport(str(data["outdir"]), float(data["rate_mbit"]), str(data["queue"]), notes=list(data["notes"]),
                           aborted=str(data["aborted"]))
    for r in data["rows"]:
        report.rows.append(Measured(**{k: v for k, v in r.items() if k not in ("ratio", "tcp_ratio")}))
    return report


def run_traffic_in_vm(outdir: Path, opt: TrafficOptions, timeout_s: float,
                      log: Callable[[str], None]) -> TrafficReport:
    """The same inside the QEMU VM (a kernel with bridges, 802.1Q and tbf). The model's side
    is computed here; the VM runs `python -m vlanroute.emulate.traffic` (below), which only
    builds, shapes and measures."""
    import dataclasses
    import shlex
    import tempfile

    from vlanroute.emulate import vm
    from vlanroute.emulate.run import lean_python
    prediction = prepare(load(outdir), opt)
    with tempfile.TemporaryDirectory(prefix="vlanroute-traffic-") as tmp:
        work = Path(tmp)
        shutil.copytree(outdir, work / "outdir")
        (work / "traffic.json").write_text(json.dumps({"options": dataclasses.asdict(opt),
                                                       "prediction": prediction.to_json()}))
        save_specs([work / "outdir"], work / "specs.pickle")     # as run.run_in_vm: no pydantic in the VM
        python, py_env = lean_python()
        args = [*python, "-m", "vlanroute.emulate.traffic", str(work / "traffic.json"), str(work / "outdir"),
                str(work / "report.json"), str(work / "specs.pickle")]
        result = vm.run_in_vm(" ".join(shlex.quote(a) for a in args), work,
                              vm.VmConfig(timeout_s=timeout_s, extra_env=py_env),
                              on_line=lambda line: log(line.rstrip("\n")))
        # Under TCG every frame is forwarded by an emulated CPU: the measurement then tells
        # the host's load as much as the network, so the report names the accelerator.
        where = f"measured in the QEMU VM under {result.accel.upper()}, {vm.VmConfig().cpus} vCPUs"
        if not (work / "report.json").exists():
            return TrafficReport(str(outdir), opt.rate_mbit, notes=[where], aborted="the VM wrote no traffic report")
        report = report_from_json(json.loads((work / "report.json").read_text()))
        report.outdir = str(outdir)
        report.notes.insert(0, where)
        return report


def main(argv: list[str]) -> int:
    """In the VM: `python -m vlanroute.emulate.traffic TRAFFIC_JSON OUTDIR REPORT_JSON SPECS`."""
    setup, outdir, report_file = json.loads(Path(argv[0]).read_text()), Path(argv[1]), Path(argv[2])
    preload(Path(argv[3]))
    options = setup["options"]
    opt = TrafficOptions(**{**options, "patterns": tuple(options["patterns"])})

    def log(line: str) -> None:
        print(line, file=sys.stderr, flush=True)
    report = run_traffic(outdir, opt, log, Prediction.from_json(setup["prediction"]))
    report_file.write_text(json.dumps(report.plain_json(), indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
