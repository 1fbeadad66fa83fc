"""`vlanroute emulate OUTDIR`: run the rendered network on the kernel's own 802.1Q bridge.

One network namespace per switch runs its rendered linux-bridge script; one per host runs
its rendered host script; a veth pair stands for every cable of cabling.csv (loops
included) and every host link. Then, in order:
1. learning: every host script runs exactly as the refresh job runs it;
2. storm check: one broadcast from every switch's own bridge interface in its default
   VLAN (a switch CPU in VLAN 1, as on real switches), then the port counters must stand
   still; every egress port is rate-limited (tbf), so a storm is bounded in frames and
   cannot starve the (emulated) CPU before it is detected;
3. learning check: `bridge fdb show` in every switch: every host MAC in every VLAN of the
   switch, on the port towards that host in that VLAN's tree, and nowhere else;
4. traffic: UDP datagrams between every ordered pair of hosts on the plain interface:
   all delivered exactly once, and the per-port counters show that each cable carried
   exactly the frames the plan routes over it;
5. storm check again; teardown of every namespace, also on error or interrupt.

Where the host kernel lacks bridge VLAN filtering or 802.1Q, the same command runs inside a
QEMU VM (vlanroute.emulate.vm) with `--kernel host`.
"""

from __future__ import annotations

import json
import os
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import sysconfig
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path

from vlanroute.emulate import netns
from vlanroute.emulate.spec import EmulationSpec, load

UDP_PORT = 7077
PROBE_ETHERTYPE = 0x88B5          # IEEE local experimental: no protocol stack answers it
MODULES = ("bridge", "8021q", "veth", "sch_tbf")


@dataclass(frozen=True)
class Options:
    frames_per_pair: int = 3          # measured datagrams per ordered host pair
    rate_kbit: int = 200              # egress limit of every switch port (tbf)
    burst_bytes: int = 16384
    storm_window_s: float = 1.0       # counters must stand still this long
    storm_bound: int = 8              # frames tolerated in that window (stragglers)
    jobs: int = 4                     # scripts run at once
    script_timeout_s: float = 300.0

    @property
    def rate_fps(self) -> float:
        """Frames per second one port passes, counting 100 bytes per small frame."""
        return self.rate_kbit * 1000 / 8 / 100


@dataclass
class Check:
    name: str
    ok: bool
    detail: str
    problems: list[str] = field(default_factory=list)


@dataclass
class Report:
    outdir: str
    plan: str
    kernel: str
    size: str = ""
    checks: list[Check] = field(default_factory=list)
    phases: dict[str, float] = field(default_factory=dict)
    storm_frames: int = 0             # frames counted in the storm windows
    teardown: str = ""
    teardown_clean: bool = False
    aborted: str = ""

    @property
    def ok(self) -> bool:
        return (not self.aborted and self.teardown_clean and bool(self.checks)
                and all(c.ok for c in self.checks))

    def text(self) -> str:
        lines = [f"emulate {self.outdir} (plan {self.plan}) on {self.kernel}", f"network: {self.size}"]
        for c in self.checks:
            lines.append(f"[{'ok' if c.ok else 'FAIL'}] {c.name}: {c.detail}")
            lines += [f"       {p}" for p in c.problems[:12]]
            if len(c.problems) > 12:
                lines.append(f"       ... and {len(c.problems) - 12} more")
        if self.aborted:
            lines.append(f"aborted: {self.aborted}")
        lines.append(f"teardown: {self.teardown}")
        lines.append("time: " + ", ".join(f"{k} {v:.1f} s" for k, v in self.phases.items()))
        lines.append("RESULT: " + ("PASS" if self.ok else "FAIL"))
        return "\n".join(lines)

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["ok"] = self.ok
        return data


class Abort(Exception):
    """Stop the emulation early (a step failed so that later checks mean nothing)."""


class _Interrupted(BaseException):
    pass


def _on_signal(signum: int, _frame: object) -> None:
    raise _Interrupted(signal.Signals(signum).name)


class Emulation:
    """The namespaces of one run; every name starts with `prefix` so teardown finds them all."""

    def __init__(self, plan: EmulationSpec, options: Options, log: Callable[[str], None],
                 prefix: str | None = None) -> None:
        self.plan = plan
        self.options = options
        self.log = log
        self.prefix = prefix or f"vr{os.getpid()}-"
        self.sockets: list[socket.socket] = []
        self.storm_frames = 0

    # -- names ---------------------------------------------------------------------------
    def sw_ns(self, switch: str) -> str:
        return f"{self.prefix}sw-{switch}"

    def host_ns(self, host: str) -> str:
        return f"{self.prefix}h-{host}"

    def all_ns(self) -> list[str]:
        return ([self.sw_ns(s) for s in self.plan.switches]
                + [self.host_ns(h) for h in self.plan.hosts])

    @contextmanager
    def step(self, what: str) -> Iterator[None]:
        start = time.monotonic()
        yield
        self.log(f"    {what}: {time.monotonic() - start:.1f} s")

    # -- build ---------------------------------------------------------------------------
    def build(self) -> Check:
        plan, opt = self.plan, self.options
        with self.step("kernel modules"):
            load_modules()
        with self.step("namespaces"):
            self.make_namespaces()
        with self.step("veth pairs"):
            self.make_links()
        with self.step("rate limits"):
            # Every switch port's egress: a storm stays bounded in frames and CPU.
            self.parallel_batches("tc", {self.sw_ns(s): [
                f"qdisc add dev {p} root tbf rate {opt.rate_kbit}kbit burst {opt.burst_bytes} latency 400ms"
                for p in self.switch_ports(s)] for s in plan.switches})
        with self.step("switch scripts"):
            failures = self.run_scripts(
                {s: ["ip", "netns", "exec", self.sw_ns(s), "sh", str(plan.outdir / "switches" / f"{s}.cfg")]
                 for s in plan.switches})
        with self.step("host plain interfaces"):
            # The plain interface is the host OS's business, not the host script's.
            self.parallel_batches("ip", {self.host_ns(h.name): [
                "link set lo up", f"addr add {h.address}/{plan.plain_prefix} dev {h.interface}",
                f"link set {h.interface} up"] for h in plan.hosts.values()})
        return Check("switch scripts", not failures,
                     f"{len(plan.switches) - len(failures)}/{len(plan.switches)} switches/*.cfg ran",
                     failures)

    def make_namespaces(self) -> None:
        netns.batch("ip", (f"netns add {n}" for n in self.all_ns()))
        for n in self.all_ns():
            with netns.inside(n):
                # No IPv6: router solicitations and DAD would teach the bridges the host MACs
                # and add frames to the counters, hiding what the learning procedure does.
                _try_sysctl("net.ipv6.conf.all.disable_ipv6", "1")
                _try_sysctl("net.ipv6.conf.default.disable_ipv6", "1")

    def make_links(self) -> None:
        plan = self.plan
        links = [f"link add {c.a_port} netns {self.sw_ns(c.a)} type veth "
                 f"peer name {c.b_port} netns {self.sw_ns(c.b)}" for c in plan.cables]
        links += [f"link add {h.interface} address {h.mac} netns {self.host_ns(h.name)} type veth "
                  f"peer name {h.port} netns {self.sw_ns(h.switch)}" for h in plan.hosts.values()]
        netns.batch("ip", links)
        for h in plan.hosts.values():
            with netns.inside(self.host_ns(h.name)):
                # ARP entries stay valid for the whole run (no re-probes while counting);
                # the first probe of an entry left stale comes after 1 s, inside the warm-up.
                # Per device: the `default` neighbour parameters are global, not per namespace.
                netns.write_sysctl(f"net.ipv4.neigh.{h.interface}.base_reachable_time_ms", "600000")
                netns.write_sysctl(f"net.ipv4.neigh.{h.interface}.delay_first_probe_time", "1")

    def parallel_batches(self, tool: str, per_ns: dict[str, list[str]]) -> None:
        """`tool -n NS -batch FILE` for every namespace, `jobs` at a time."""
        with tempfile.TemporaryDirectory(prefix="vlanroute-batch-") as tmp:
            commands = {}
            for i, (ns, lines) in enumerate(per_ns.items()):
                path = Path(tmp) / f"{i}.{tool}"
                path.write_text("".join(line + "\n" for line in lines))
                commands[ns] = [tool, "-n", ns, "-batch", str(path)]
            failures = self.run_scripts(commands)
        if failures:
            raise netns.NetnsError(f"{tool} -batch failed: " + "; ".join(failures[:3]))

    def switch_ports(self, switch: str) -> list[str]:
        ports = [c.a_port for c in self.plan.cables if c.a == switch]
        ports += [c.b_port for c in self.plan.cables if c.b == switch]
        ports += [h.port for h in self.plan.hosts.values() if h.switch == switch]
        return ports

    def run_scripts(self, commands: dict[str, list[str]], env: dict[str, str] | None = None) -> list[str]:
        """Run commands, `jobs` at a time; return one line per failure."""
        todo = list(commands.items())
        running: list[tuple[str, subprocess.Popen[str], float]] = []
        failures: list[str] = []
        full_env = {**os.environ, **(env or {})}
        try:
            self._run_all(todo, running, failures, full_env)
        finally:
            # Interrupted: no script may go on configuring a namespace being torn down.
            for _name, proc, _started in running:
                _kill_group(proc)
        return failures

    def _run_all(self, todo: list[tuple[str, list[str]]],
                 running: list[tuple[str, subprocess.Popen[str], float]],
                 failures: list[str], full_env: dict[str, str]) -> None:
        while todo or running:
            while todo and len(running) < self.options.jobs:
                name, argv = todo.pop(0)
                proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT, text=True, env=full_env,
                                        start_new_session=True)   # killable as a group
                running.append((name, proc, time.monotonic()))
            name, proc, started = running[0]
            try:
                out, _ = proc.communicate(timeout=max(0.1, started + self.options.script_timeout_s
                                                      - time.monotonic()))
            except subprocess.TimeoutExpired:
                _kill_group(proc)
                out, _ = proc.communicate()
                failures.append(f"{name}: timed out after {self.options.script_timeout_s:.0f} s")
            else:
                if proc.returncode != 0:
                    last = " | ".join(out.strip().splitlines()[-3:])
                    failures.append(f"{name}: exit {proc.returncode}: {last}")
            running.pop(0)

    # -- learning ------------------------------------------------------------------------
    def learn(self) -> Check:
        # The refresh job runs the installed host script; `vlanroute` there is this same code.
        python, py_env = lean_python()
        env = {"VLANROUTE": " ".join(python + ["-m", "vlanroute.commands.learn"]), **py_env}
        failures = self.run_scripts(
            {h: ["ip", "netns", "exec", self.host_ns(h), "sh", str(self.plan.outdir / "hosts" / f"{h}.sh")]
             for h in self.plan.hosts}, env)
        return Check("host scripts (learning broadcasts)", not failures,
                     f"{len(self.plan.hosts) - len(failures)}/{len(self.plan.hosts)} hosts/*.sh ran",
                     failures)

    # -- counters ------------------------------------------------------------------------
    def counters(self) -> dict[tuple[str, str], tuple[int, int]]:
        """(switch, port) -> (rx, tx) packets, for every switch port."""
        snap: dict[tuple[str, str], tuple[int, int]] = {}
        for s in self.plan.switches:
            with netns.inside(self.sw_ns(s)):
                all_ifaces = netns.interface_counters()
            for p in self.switch_ports(s):
                snap[(s, p)] = all_ifaces.get(p, (0, 0))
        return snap

    def storm_check(self, label: str, probe: bool) -> Check:
        """Counters must stand still once the broadcasts have died out."""
        if probe:
            for s in self.plan.switches:
                with netns.inside(self.sw_ns(s)):
                    _send_bridge_broadcast("br0")
        time.sleep(0.5)
        before = self.counters()
        time.sleep(self.options.storm_window_s)
        after = self.counters()
        moved = {k: after[k][1] - before[k][1] for k in after if after[k][1] != before[k][1]}
        total = sum(moved.values())
        self.storm_frames += total
        busiest = sorted(moved.items(), key=lambda kv: -kv[1])[:6]
        ok = total <= self.options.storm_bound
        detail = (f"{total} frames sent by switch ports in {self.options.storm_window_s:.1f} s "
                  f"(bound {self.options.storm_bound})")
        problems = [] if ok else [f"broadcast storm: {s} {p} sent {n} frames" for (s, p), n in busiest]
        return Check(f"no storm {label}", ok, detail, problems)

    # -- fdb -----------------------------------------------------------------------------
    def fdb_check(self) -> Check:
        want = self.plan.expected_fdb()
        macs = {h.mac: h.name for h in self.plan.hosts.values()}
        seen: dict[tuple[str, int, str], set[str]] = {}
        for s in self.plan.switches:
            out = netns.run(["bridge", "-n", self.sw_ns(s), "-j", "fdb", "show", "br", "br0"]).stdout
            for entry in json.loads(out or "[]"):
                mac = str(entry.get("mac", "")).lower()
                if mac in macs and "vlan" in entry:
                    seen.setdefault((s, int(entry["vlan"]), mac), set()).add(str(entry.get("ifname")))
        problems = []
        right = 0
        for key, ports in sorted(want.items()):
            s, vlan, mac = key
            got = seen.get(key, set())
            if not got:
                problems.append(f"{s} VLAN {vlan}: {macs[mac]} ({mac}) not learned; "
                                f"expected on {'/'.join(sorted(ports))}")
            elif not got <= ports:
                problems.append(f"{s} VLAN {vlan}: {macs[mac]} learned on {','.join(sorted(got))}, "
                                f"expected {'/'.join(sorted(ports))}")
            else:
                right += 1
        for key in sorted(set(seen) - set(want)):
            s, vlan, mac = key
            problems.append(f"{s} VLAN {vlan}: {macs[mac]} learned where the plan has no such VLAN")
        return Check("MAC learning (bridge fdb)", not problems,
                     f"{right}/{len(want)} (switch, VLAN, host MAC) entries on the planned port",
                     problems)

    # -- traffic -------------------------------------------------------------------------
    def traffic(self) -> list[Check]:
        plan, opt = self.plan, self.options
        hosts = sorted(plan.hosts)
        socks: dict[str, socket.socket] = {}
        for h in hosts:
            with netns.inside(self.host_ns(h)):
                s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            self.sockets.append(s)
            s.bind((plan.hosts[h].address, UDP_PORT))
            s.setblocking(False)
            socks[h] = s
        by_addr = {plan.hosts[h].address: h for h in hosts}
        pairs = [(a, b) for a in hosts for b in hosts if a != b]
        received: Counter[tuple[str, str]] = Counter()
        per_round, _, _ = plan.expected_tx(pairs, 1)
        busiest = max([*per_round.values(), len(hosts)])
        # Pace the rounds so that no port goes over half its tbf rate: nothing legitimate dropped.
        gap = max(0.05, busiest / (0.5 * opt.rate_fps))

        unsent: Counter[tuple[str, str]] = Counter()

        def send_round() -> None:
            for a, b in pairs:
                try:
                    socks[a].sendto(f"{a}>{b}".encode(), (plan.hosts[b].address, UDP_PORT))
                except OSError:
                    unsent[(a, b)] += 1       # e.g. a full send buffer: shows up as not delivered
            time.sleep(gap)

        def drain(expected_total: int, wait_s: float) -> None:
            deadline = time.monotonic() + wait_s
            while sum(received.values()) < expected_total and time.monotonic() < deadline:
                ready, _, _ = select.select(list(socks.values()), [], [], 0.2)
                for s in ready:
                    while True:
                        try:
                            data, (src, _port) = s.recvfrom(2048)
                        except BlockingIOError:
                            break
                        dst = next(h for h, sk in socks.items() if sk is s)
                        received[(dst, by_addr.get(src, src))] += 1
            # Stragglers (duplicates from a loop) arrive a little later: collect them too.
            time.sleep(0.3)
            for s in socks.values():
                dst = next(h for h, sk in socks.items() if sk is s)
                while True:
                    try:
                        data, (src, _port) = s.recvfrom(2048)
                    except BlockingIOError:
                        break
                    received[(dst, by_addr.get(src, src))] += 1

        # Warm-up round: resolves ARP (broadcast requests over VLAN(a)'s tree, replies in
        # VLAN(b)), then waits out the first probe of the entries that ARP left stale.
        send_round()
        drain(len(pairs), 30)
        time.sleep(2.5)
        drain(len(pairs), 0)
        before = self.counters()
        for _ in range(opt.frames_per_pair):
            send_round()
        total = (1 + opt.frames_per_pair) * len(pairs)
        drain(total, 60)
        after = self.counters()

        want = 1 + opt.frames_per_pair
        lost = [f"{a} -> {b}: {received[(b, a)]} of {want} datagrams"
                + (f" ({unsent[(a, b)]} could not be sent)" if unsent[(a, b)] else "")
                for a, b in pairs if received[(b, a)] != want]
        strangers = [f"{dst} got {n} datagrams from unknown {src}" for (dst, src), n in received.items()
                     if src not in plan.hosts]
        delivery = Check("delivery on the plain interface", not lost and not strangers,
                         f"{len(pairs) - len(lost)}/{len(pairs)} ordered pairs got exactly {want} UDP datagrams",
                         lost + strangers)

        uplink_tx, host_tx, host_rx = plan.expected_tx(pairs, opt.frames_per_pair)
        delta = {k: (after[k][0] - before[k][0], after[k][1] - before[k][1]) for k in after}
        problems = []
        for (s, n), expected in sorted(uplink_tx.items()):
            up = plan.uplinks[(s, n)]
            got = sum(delta[(s, p)][1] for p in up.members)
            if got != expected:
                where = "an unplanned cable" if expected == 0 else "a planned cable"
                problems.append(f"{s} -> {n} ({'+'.join(up.members)}): {got} frames, plan {expected} "
                                f"({where})")
        for h, expected in sorted(host_tx.items()):
            hh = plan.hosts[h]
            got = delta[(hh.switch, hh.port)][1]
            if got != expected:
                problems.append(f"{hh.switch} {hh.port} -> {h}: {got} frames, plan {expected}")
        for h, expected in sorted(host_rx.items()):
            hh = plan.hosts[h]
            got = delta[(hh.switch, hh.port)][0]
            if got != expected:
                problems.append(f"{h} -> {hh.switch} {hh.port}: {got} frames, plan {expected}")
        checked = len(uplink_tx) + 2 * len(host_tx)
        cables = Check("frames crossed exactly the planned cables", not problems,
                       f"{checked - len(problems)}/{checked} port directions carried exactly the routed "
                       f"frames ({opt.frames_per_pair} per pair)", problems)
        return [delivery, cables]

    # -- teardown ------------------------------------------------------------------------
    def teardown(self) -> tuple[bool, str]:
        for s in self.sockets:
            s.close()
        self.sockets.clear()
        names = netns.existing(self.prefix)
        netns.delete_all(names)
        left = netns.existing(self.prefix)
        if left:
            return False, f"{len(left)} namespaces could not be removed: {' '.join(left[:5])}"
        return True, f"{len(names)} namespaces removed, none left"


def _kill_group(proc: subprocess.Popen[str]) -> None:
    """Kill a script and everything it started (it leads its own process group)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _try_sysctl(key: str, value: str) -> None:
    try:
        netns.write_sysctl(key, value)
    except FileNotFoundError:
        pass                                # kernel without IPv6: nothing to switch off


def _send_bridge_broadcast(device: str) -> None:
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
        s.bind((device, 0))
        src = s.getsockname()[4]
        s.send((b"\xff" * 6 + src + PROBE_ETHERTYPE.to_bytes(2, "big") + b"vlanroute storm probe")
               .ljust(60, b"\0"))


def load_modules() -> None:
    """Load what the scripts need. In the VM the kernel cannot autoload modules (its
    modprobe helper path points into the initramfs), so load them explicitly."""
    modprobe = shutil.which("modprobe") or "/usr/sbin/modprobe"
    if not Path(modprobe).exists():
        return
    subprocess.run([modprobe, "-a", *MODULES], capture_output=True)
    if not Path("/sys/module/bonding").exists():
        # max_bonds=0: do not create a stray bond0 in the root namespace.
        subprocess.run([modprobe, "bonding", "max_bonds=0"], capture_output=True)


@contextmanager
def _signals_raise() -> Iterator[None]:
    """SIGTERM/SIGHUP end the run like Ctrl-C does: through the teardown."""
    old = {s: signal.signal(s, _on_signal) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for s, h in old.items():
            signal.signal(s, h)


def remove_stale_namespaces(log: Callable[[str], None]) -> None:
    """Namespaces of an earlier run that was killed (SIGKILL skips every teardown)."""
    stale = []
    for name in netns.existing("vr"):
        m = re.match(r"^vr(\d+)-", name)
        if m and not Path(f"/proc/{m.group(1)}").exists():
            stale.append(name)
    if stale:
        log(f"removing {len(stale)} namespaces left by a killed earlier run")
        netns.delete_all(stale)


def run_here(outdir: Path, options: Options, kernel: str,
             log: Callable[[str], None] = print) -> Report:
    """The whole emulation in this kernel (needs root). Always tears down."""
    plan = load(outdir)
    remove_stale_namespaces(log)
    emu = Emulation(plan, options, log)
    lags = sum(1 for c in plan.cables if c.a_lag is not None)
    report = Report(outdir=str(outdir), plan=plan.name, kernel=kernel,
                    size=f"{len(plan.switches)} switches, {len(plan.hosts)} hosts, "
                         f"{len(plan.cables)} cables ({lags} in LAGs), {len(plan.vlan_ids)} VLANs")

    def phase(name: str, fn: Callable[[], list[Check]]) -> None:
        start = time.monotonic()
        log(f"[{name}] ...")
        checks = fn()
        report.phases[name] = report.phases.get(name, 0.0) + time.monotonic() - start
        for c in checks:
            report.checks.append(c)
            log(f"[{name}] {'ok' if c.ok else 'FAIL'}: {c.name}: {c.detail}")
            if not c.ok:
                raise Abort(f"{c.name} failed")

    try:
        with _signals_raise():
            try:
                phase("build", lambda: [emu.build()])
                phase("learn", lambda: [emu.learn()])
                phase("checks", lambda: [emu.storm_check("after the learning broadcasts and VLAN-1 probes",
                                                         probe=True), emu.fdb_check()])
                phase("traffic", lambda: [*emu.traffic(), emu.storm_check("after the traffic", probe=False)])
            except Abort as exc:
                report.aborted = f"{exc}; later checks skipped"
            except (netns.NetnsError, OSError) as exc:
                report.aborted = f"kernel or iproute2 refused: {exc}"
            except (KeyboardInterrupt, _Interrupted) as exc:
                report.aborted = f"interrupted ({exc or 'SIGINT'})"
    finally:
        start = time.monotonic()
        report.teardown_clean, report.teardown = emu.teardown()
        report.phases["teardown"] = time.monotonic() - start
        report.storm_frames = emu.storm_frames
    return report


# -- where to run ----------------------------------------------------------------------------
def host_kernel_capable() -> tuple[bool, str]:
    """Can this kernel run the emulation? Tries it in a throw-away namespace."""
    if os.geteuid() != 0:
        return False, "not root"
    if shutil.which("ip") is None or shutil.which("bridge") is None:
        return False, "iproute2 missing"
    name = f"vrprobe{os.getpid()}"
    try:
        netns.batch("ip", [f"netns add {name}"])
    except netns.NetnsError as exc:
        return False, f"no network namespaces ({exc})"
    try:
        load_modules()
        netns.batch("ip", ["link add br0 type bridge vlan_filtering 1",
                           "link add v0 type veth peer name v1",
                           "link add link v0 name v0.5 type vlan id 5"], netns=name)
        netns.batch("tc", ["qdisc add dev v1 root tbf rate 200kbit burst 16384 latency 400ms"], netns=name)
        return True, "bridge VLAN filtering, 802.1Q and tbf available"
    except netns.NetnsError as exc:
        lines = [line for line in str(exc).splitlines() if "answers" in line or "Error" in line]
        reason = (lines or str(exc).splitlines())[0].strip()
        return False, f"no bridge VLAN filtering / 802.1Q / tbf: {reason[:120]}"
    finally:
        netns.delete_all([name])


def run_in_vm(outdir: Path, options: Options, timeout_s: float, json_report: Path | None,
              log: Callable[[str], None]) -> tuple[int, float]:
    """Run `vlanroute emulate --kernel host` inside the VM; returns (status, boot seconds)."""
    from vlanroute.emulate import vm
    with tempfile.TemporaryDirectory(prefix="vlanroute-emulate-") as tmp:
        work = Path(tmp)
        # A copy inside the shared directory: OUTDIR may sit where the guest mounts tmpfs.
        shutil.copytree(outdir, work / "outdir")
        python, py_env = lean_python()
        args = [*python, "-m", "vlanroute.commands.emulate", "--kernel", "host",
                "--json-report", str(work / "report.json"),
                "--frames-per-pair", str(options.frames_per_pair),
                "--vm-kernel-label", f"a VM (Debian kernel {vm.find_kernel().name.removeprefix('vmlinuz-')} "
                                     "under QEMU TCG)",
                str(work / "outdir")]
        script = " ".join(shlex.quote(a) for a in args)
        result = vm.run_in_vm(script, work, vm.VmConfig(timeout_s=timeout_s, extra_env=py_env),
                              on_line=lambda line: log(line.rstrip("\n")))
        if json_report is not None and (work / "report.json").exists():
            data = json.loads((work / "report.json").read_text())
            data["outdir"] = str(outdir)
            data["phases"] = {"vm boot": round(result.boot_seconds, 2), **data["phases"],
                              "vm total": round(result.total_seconds, 2)}
            json_report.write_text(json.dumps(data, indent=1) + "\n")
        return result.returncode, result.boot_seconds


def lean_python() -> tuple[list[str], dict[str, str]]:
    """This interpreter without `site` (its .pth files cost seconds per start under TCG),
    and a PYTHONPATH with what `site` would have added: this vlanroute and site-packages."""
    paths = [str(Path(__file__).resolve().parents[2])]
    # Every site directory this interpreter uses (a venv may add the system's too).
    candidates = [sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"], *sys.path]
    for path in candidates:
        if path and Path(path).name in ("site-packages", "dist-packages") and path not in paths:
            paths.append(path)
    return [sys.executable, "-S"], {"PYTHONPATH": os.pathsep.join(paths)}

