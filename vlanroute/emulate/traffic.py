"""`vlanroute emulate --traffic`: the flow model's prediction measured with real TCP.

Two networks on the same cables, one after the other, in this kernel's namespaces:
1. the plan (its linux-bridge scripts and host programs, as `vlanroute emulate` runs them);
2. plain Ethernet: one Linux bridge per switch with the kernel's 802.1D spanning tree on
   (`stp_state 1`), bridge priorities ascending in switch order (so the root and every tie
   are the flow model's, vlanroute.perf.stp), parallel cables as separate ports (STP blocks
   all but one), waited on until every port is forwarding or blocking.
Every switch port and every host interface is shaped to the same rate (tc tbf, egress:
each direction of a cable and of a host link is one resource, as in the model). For each
pattern, every host runs emulate/flowagent.py: TCP flows to its destinations, the bytes
received counted over a steady window after a warm-up. Measured aggregate next to the
max-min prediction (vlanroute.perf) times the TCP goodput per frame (GOODPUT).
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
from typing import Any

from vlanroute.emulate import netns
from vlanroute.emulate.run import (
    Emulation,
    Options,
    load_modules,
    remove_stale_namespaces,
)
from vlanroute.emulate.spec import EmulationSpec, load
from vlanroute.natural import natsorted
from vlanroute.perf.evaluate import evaluate
from vlanroute.perf.fabric import Fabric, from_trees
from vlanroute.perf.patterns import Demand, demands
from vlanroute.perf.stp import spanning_tree, stp_fabric
from vlanroute.routing.trees import tree_parents

AGENT = Path(__file__).with_name("flowagent.py")
FLOW_PORT = 7079
# TCP payload per frame as tbf counts it: MSS 1448 (MTU 1500 less IP, TCP and timestamp
# headers) in 1514 bytes (with the Ethernet header; tbf sees no preamble or FCS). The
# 802.1Q tag on trunk ports adds 4 bytes more (0.3 %, left out).
GOODPUT = 1448 / 1514
# tbf's bucket holds at least this long at the rate: its timer that releases the next frame
# fires late when the emulating CPU is not scheduled (a loaded VM), and tokens beyond the
# bucket are lost for good, so a bucket of a few ms (16 KiB at 10 Mbit/s) turned every late
# timer into lost capacity. A saturated link never refills its bucket, so in the steady
# window a deeper one adds nothing above the rate.
BURST_S = 0.25
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

    @property
    def ratio(self) -> float:
        return self.measured_mbit / self.predicted_mbit if self.predicted_mbit else 0.0


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
                  f"{self.queue} queues; predicted = max-min x TCP goodput {GOODPUT:.3f}"), *self.notes]
        head = f"{'pattern':28} {'fabric':14} {'flows':>6} {'predicted':>10} {'measured':>10} {'meas/pred':>9} " \
               f"{'x STP pred':>10} {'x STP meas':>10}"
        lines += [head, "-" * len(head)]
        stp = {r.pattern: r for r in self.rows if r.fabric == "spanning tree"}
        for r in self.rows:
            base = stp.get(r.pattern)
            vs = (f"{r.predicted_mbit / base.predicted_mbit:10.2f} {r.measured_mbit / base.measured_mbit:10.2f}"
                  if base is not None and r is not base and base.measured_mbit else f"{'-':>10} {'-':>10}")
            lines.append(f"{r.pattern:28} {r.fabric:14} {r.flows:6d} {r.predicted_mbit:10.1f} {r.measured_mbit:10.1f} "
                         f"{r.ratio:9.3f} {vs}")
        if self.aborted:
            lines.append(f"aborted: {self.aborted}")
        return "\n".join(lines)

    def to_json(self) -> dict[str, object]:
        return {"outdir": self.outdir, "rate_mbit": self.rate_mbit, "queue": self.queue, "goodput": GOODPUT, "notes": self.notes,
                "aborted": self.aborted,
                "rows": [{**r.__dict__, "ratio": round(r.ratio, 4)} for r in self.rows]}


def switch_order(spec: EmulationSpec) -> list[str]:
    return natsorted(spec.switches)


def vlan_fabric(spec: EmulationSpec, gbps: float) -> Fabric:
    """The plan as the model sees it: a source switch's tree is the tree of its hosts' VLAN."""
    hosts = [(h.name, h.switch) for h in spec.hosts.values()]
    vlan_of = {h.switch: h.vlan for h in spec.hosts.values()}
    trees = {}
    for s in switch_order(spec):
        vlan = vlan_of.get(s, spec.vlan_ids[0])
        links = {(a, b) if a < b else (b, a) for a, ns in spec.tree[vlan].items() for b in ns}
        trees[s] = tree_parents(links, s)
    cables = Counter((u.switch, u.neighbor) for u in spec.uplinks.values() for _ in u.members)
    return from_trees("VLAN routing", switch_order(spec), hosts, trees, cables, speed=gbps)


def cable_pairs(spec: EmulationSpec) -> dict[tuple[str, str], int]:
    order = {s: i for i, s in enumerate(switch_order(spec))}
    return dict(Counter(tuple(sorted((c.a, c.b), key=order.__getitem__)) for c in spec.cables))  # type: ignore[misc]


def host_flows(spec: EmulationSpec, fabric: Fabric, demand: Demand) -> list[tuple[str, str]]:
    """The demand as (source host, destination host) pairs, one per flow."""
    if demand.name == "all-to-all":
        return [(a, b) for a in fabric.hosts for b in fabric.hosts if a != b]
    return [(fabric.hosts[s], fabric.hosts[d]) for s, d, w in zip(demand.src.tolist(), demand.dst.tolist(),
                                                                   demand.weight.tolist()) for _ in range(int(w))]


def measure(emu: Emulation, flows: Sequence[tuple[str, str]], opt: TrafficOptions) -> dict[tuple[str, str], float]:
    """Run the flows; Mbit/s each delivered in the window."""
    spec = emu.plan
    to: dict[str, list[str]] = {h: [] for h in spec.hosts}
    for a, b in flows:
        to[a].append(spec.hosts[b].address)
    procs = {h: subprocess.Popen(["ip", "netns", "exec", emu.host_ns(h), sys.executable, "-S", str(AGENT),
                                  "--listen", spec.hosts[h].address, "--port", str(FLOW_PORT),
                                  "--to", ",".join(to[h]),
                                  "--warmup", str(opt.warmup_s), "--seconds", str(opt.seconds)],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for h in spec.hosts}
    for h, p in procs.items():          # every agent listening before any connects
        assert p.stdout is not None
        if p.stdout.readline().strip() != "ready":
            raise netns.NetnsError(f"the flow agent of {h} did not start: {p.stderr.read() if p.stderr else ''}")
    start = time.time() + 0.5
    for p in procs.values():
        assert p.stdin is not None
        p.stdin.write(f"{start:.3f}\n")
        p.stdin.flush()
    by_address = {h.address: h.name for h in spec.hosts.values()}
    got: dict[tuple[str, str], float] = {f: 0.0 for f in flows}
    deadline = start + opt.warmup_s + opt.seconds + 30
    for h, p in procs.items():
        try:
            out, err = p.communicate(timeout=max(1.0, deadline - time.time()))
        except subprocess.TimeoutExpired:
            p.kill()
            raise netns.NetnsError(f"the flow agent of {h} did not finish") from None
        if p.returncode != 0:
            raise netns.NetnsError(f"the flow agent of {h} failed: {err.strip()[-300:]}")
        for address, count in json.loads(out).items():
            key = (by_address[address], h)
            if key in got:
                got[key] = count * 8 / opt.seconds / 1e6
    return got


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


def run_patterns(emu: Emulation, fabric: Fabric, label: str, opt: TrafficOptions,
                 report: TrafficReport, log: Callable[[str], None]) -> None:
    for pattern in opt.patterns:
        for demand in demands(fabric, pattern, (opt.seed,)):
            predicted = evaluate(fabric, demand)
            flows = host_flows(emu.plan, fabric, demand)
            log(f"[traffic] {label}: {demand.name}, {len(flows)} TCP flows ...")
            got = measure(emu, flows, opt)
            row = Measured(demand.name, label, len(flows), predicted.aggregate * 1000 * GOODPUT, sum(got.values()),
                           predicted.slowest * 1000 * GOODPUT, min(got.values()) if got else 0.0)
            log(f"[traffic] {label}: {demand.name}: predicted {row.predicted_mbit:.1f} Mbit/s, "
                f"measured {row.measured_mbit:.1f} ({row.ratio:.3f})")
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


def run_traffic(outdir: Path, opt: TrafficOptions, log: Callable[[str], None] = print) -> TrafficReport:
    """Both networks, one after the other; always torn down."""
    spec = load(outdir)
    remove_stale_namespaces(log)
    load_modules()
    # The VM's kernel cannot autoload modules (emulate/run.py load_modules): sfq explicitly.
    modprobe = shutil.which("modprobe") or "/usr/sbin/modprobe"
    if opt.queue == "sfq" and Path(modprobe).exists():
        subprocess.run([modprobe, "sch_sfq"], check=False, capture_output=True)
    report = TrafficReport(str(outdir), opt.rate_mbit, opt.queue)
    gbps = opt.rate_mbit / 1000
    emu = Emulation(spec, Options(), log, prefix=f"vt{os.getpid()}-")
    try:
        check = emu.build()
        if not check.ok:
            raise netns.NetnsError(f"{check.name}: {check.detail}: " + "; ".join(check.problems[:3]))
        check = emu.learn()
        if not check.ok:
            raise netns.NetnsError(f"{check.name}: {check.detail}: " + "; ".join(check.problems[:3]))
        shape(emu, opt)
        run_patterns(emu, vlan_fabric(spec, gbps), "VLAN routing", opt, report, log)
    except (netns.NetnsError, OSError) as exc:
        report.aborted = f"VLAN routing: {exc}"
    finally:
        emu.teardown()
    if not opt.stp or report.aborted:
        return report
    hosts = [(h.name, h.switch) for h in spec.hosts.values()]
    model = spanning_tree(switch_order(spec), cable_pairs(spec), lag=False)
    stp = Emulation(spec, Options(), log, prefix=f"vs{os.getpid()}-")
    try:
        blocked = build_stp(stp, log)
        same = Counter(tuple(sorted(b)) for b in blocked) == Counter(tuple(sorted(b)) for b in model.blocked)
        report.notes.append(f"spanning tree: root {model.root}; the kernel blocked {len(blocked)} cables, the model "
                            f"{len(model.blocked)}" + (" (the same ones)" if same else " (different ones!)"))
        shape(stp, opt)
        run_patterns(stp, stp_fabric(switch_order(spec), hosts, cable_pairs(spec), speed=gbps, lag=False),
                     "spanning tree", opt, report, log)
    except (netns.NetnsError, OSError) as exc:
        report.aborted = f"spanning tree: {exc}"
    finally:
        stp.teardown()
    return report


def report_from_json(data: dict[str, Any]) -> TrafficReport:
    report = TrafficReport(str(data["outdir"]), float(data["rate_mbit"]), str(data["queue"]), notes=list(data["notes"]),
                           aborted=str(data["aborted"]))
    for r in data["rows"]:
        report.rows.append(Measured(**{k: v for k, v in r.items() if k != "ratio"}))
    return report


def traffic_args(opt: TrafficOptions) -> list[str]:
    """The command-line options that give `opt` (to run the same inside the VM)."""
    return ["--traffic", ",".join(opt.patterns), "--traffic-rate", f"{opt.rate_mbit:g}",
            "--traffic-seconds", f"{opt.seconds:g}", "--traffic-warmup", f"{opt.warmup_s:g}",
            "--traffic-seed", str(opt.seed), "--traffic-queue", opt.queue, *([] if opt.stp else ["--traffic-no-stp"])]


def run_traffic_in_vm(outdir: Path, opt: TrafficOptions, timeout_s: float,
                      log: Callable[[str], None]) -> TrafficReport:
    """The same inside the QEMU VM (a kernel with bridges, 802.1Q and tbf)."""
    import shlex
    import tempfile

    from vlanroute.emulate import vm
    from vlanroute.emulate.run import lean_python
    with tempfile.TemporaryDirectory(prefix="vlanroute-traffic-") as tmp:
        work = Path(tmp)
        shutil.copytree(outdir, work / "outdir")
        python, py_env = lean_python()
        args = [*python, "-m", "vlanroute.commands.emulate", "--kernel", "host", "--skip-manifest-check",
                "--json-report", str(work / "report.json"), *traffic_args(opt), str(work / "outdir")]
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
