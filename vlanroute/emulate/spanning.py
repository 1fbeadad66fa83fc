"""Plain Ethernet with a spanning tree on the emulation's own cables and hosts: the switches
the outage measurement compares vlanroute with (emulate/outagerun.py).

The namespaces, veth pairs, host addresses and rate limits are the Emulation's (run.py), so
the cables and hosts are those the plan runs on; parallel cables become the same bonds the
plan's switch scripts make (their `link add bondN type bond ...` line, read from the
script). Only the switches' loop prevention differs:

- `stp`: the kernel bridge's IEEE 802.1D spanning tree (`stp_state 1`), one bridge per
  switch, no VLAN filtering, with the timers a site sets (`StpTimers`);
- `rstp`: Open vSwitch's RSTP (IEEE 802.1D-2004), OVS from Debian's `openvswitch-switch`,
  one ovsdb-server and one ovs-vswitchd per switch, the daemon started inside the switch's
  namespace so that it sees exactly that switch's ports; every file and socket under a
  private directory. Its datapath (`ovs_datapath`): the kernel's (`system`, the
  `openvswitch` module, which the VM's Debian kernel has: frames are forwarded in the
  kernel as the bridges of the other two fabrics forward them, and only BPDUs and the first
  frame of each flow go to the daemon) or the userspace one (`netdev`: no module, every
  frame through the daemon, which under QEMU TCG costs the daemon's CPU: on the seed
  cluster 800 probes a second already lost a quarter of them before the cut).
  Host ports are RSTP edge ports (what a site sets towards compute nodes). OVS's QoS is
  `linux-noop` on every port, so it keeps the emulation's tbf rate limits (it would
  otherwise replace a port's queueing discipline by its own default).

Both get the same bridge ids, so that they elect the same root and tree as the model
(vlanroute.perf.stp: priority 32768 everywhere, MAC addresses ascending in switch order,
equal path costs on every inter-switch port), and each its default MAC ageing time (300 s),
as a site running spanning tree keeps it. Not the plan's (its script sets the longest the
platform takes, 1,000,000 s, since its hosts re-learn only periodically): with it, the
kernel's 802.1D never aged out an entry that pointed the old way after the cut, and every
pair whose destination sent nothing stayed cut for the whole run (measured, 30 s; why the
shortened ageing of a topology change did not apply was not traced).

The hosts' veths send with transmit checksum offload off (SIOCETHTOOL): a UDP or TCP frame
from a veth carries a partial checksum that the kernel completes on the way out, but OVS's
userspace datapath reads it from a packet socket and sends it on as it is, so the receiver
drops it as corrupt (seen on this machine: every UDP probe lost through OVS until it was
off). All three fabrics get the same hosts, so the plan's run turns it off too.
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import re
import shlex
import shutil
import signal
import socket
import struct
import subprocess
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from vlanroute.emulate import netns
from vlanroute.emulate.run import PROBE_ETHERTYPE, Emulation, load_modules
from vlanroute.natural import natsorted

SIOCETHTOOL, ETHTOOL_STXCSUM = 0x8946, 0x17
PATH_COST = 2000                # every inter-switch port, both protocols (equal costs: the model's tree)
BRIDGE_PRIORITY = 32768
OVS_SCHEMA = Path("/usr/share/openvswitch/vswitch.ovsschema")
OVS_PACKAGE = "openvswitch-switch"


@dataclass(frozen=True)
class StpTimers:
    """The kernel bridge's 802.1D timers, seconds."""
    forward_delay_s: float
    hello_s: float
    max_age_s: float
    label: str

    def ip_args(self) -> str:
        """`ip link add br0 type bridge` takes centiseconds."""
        return (f"forward_delay {round(self.forward_delay_s * 100)} hello_time {round(self.hello_s * 100)} "
                f"max_age {round(self.max_age_s * 100)}")


# IEEE 802.1D's defaults (a switch's factory setting, and the Linux bridge's), and the
# fastest the standard allows (forward delay 4 s, hello 1 s, max age 6 s: 2 x (4 - 1) >= 6).
STP_TIMERS = {
    "default": StpTimers(15.0, 2.0, 20.0, "IEEE 802.1D defaults: forward delay 15 s, hello 2 s, max age 20 s"),
    "fastest": StpTimers(4.0, 1.0, 6.0, "the fastest IEEE 802.1D allows: forward delay 4 s, hello 1 s, max age 6 s"),
}


def bridge_mac(index: int) -> str:
    """A locally administered MAC per switch, ascending in switch order (the bridge id's tie-break)."""
    return f"02:00:00:00:{index >> 8 & 0xFF:02x}:{index & 0xFF:02x}"


def switch_order(emu: Emulation) -> list[str]:
    return natsorted(emu.plan.switches)


# -- what both share: cables, bonds, hosts --------------------------------------------------

def bond_lines(emu: Emulation, switch: str) -> list[str]:
    """The bonds of the plan's switch script for this switch, as `ip -batch` lines: the
    same devices, mode, hash and link monitoring the plan's LAGs have."""
    script = (emu.plan.outdir / "switches" / f"{switch}.cfg").read_text()
    params = dict(re.findall(r"^link add (\S+) type bond (.*)$", script, flags=re.M))
    lines: list[str] = []
    for (s, _n), up in sorted(emu.plan.uplinks.items()):
        if s != switch or up.lag_name is None:
            continue
        lines.append(f"link add {up.lag_name} type bond {params.get(up.lag_name, 'mode balance-xor miimon 100')}")
        for m in up.members:
            lines += [f"link set {m} down", f"link set {m} master {up.lag_name}"]
    return lines


def bridge_ports(emu: Emulation, switch: str) -> tuple[list[str], list[str]]:
    """(inter-switch bridge ports: a bond or the one cable; host ports)."""
    uplinks = [up.lag_name or up.members[0] for (s, _n), up in sorted(emu.plan.uplinks.items()) if s == switch]
    hosts = sorted(h.port for h in emu.plan.hosts.values() if h.switch == switch)
    return uplinks, hosts


def build_cables_and_hosts(emu: Emulation) -> None:
    """The Emulation's namespaces, veth pairs, rate limits and plain host interfaces, as
    run.Emulation.build makes them, without the switch scripts."""
    plan = emu.plan
    load_modules()
    with emu.step("namespaces"):
        emu.make_namespaces()
    with emu.step("veth pairs"):
        emu.make_links()
    with emu.step("rate limits"):
        emu.rate_limit("add", emu.options.rate_kbit)
    with emu.step("host plain interfaces and ARP"):
        arp = {(i, o.address): netns.arp_request(i, o.address, o.mac)
               for i in {h.interface for h in plan.hosts.values()} for o in plan.hosts.values()}
        for h in plan.hosts.values():
            with netns.inside(emu.host_ns(h.name)):
                netns.configure_ipv4("lo", "", 8)
                netns.configure_ipv4(h.interface, h.address, plan.plain_prefix)
                netns.static_arp(arp[(h.interface, o.address)] for o in plan.hosts.values() if o is not h)
    hosts_checksum_off(emu)


def hosts_checksum_off(emu: Emulation) -> None:
    """Transmit checksum offload off on every host's interface (module docstring)."""
    for h in emu.plan.hosts.values():
        with netns.inside(emu.host_ns(h.name)):
            tx_checksum_off(h.interface)


def tx_checksum_off(interface: str) -> None:
    """`ethtool -K IF tx off` by ioctl (struct ethtool_value), in this thread's namespace."""
    value = bytearray(struct.pack("=II", ETHTOOL_STXCSUM, 0))
    buf = (ctypes.c_char * len(value)).from_buffer(value)
    ifr = interface.encode().ljust(16, b"\0") + struct.pack("P", ctypes.addressof(buf)).ljust(24, b"\0")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        fcntl.ioctl(s, SIOCETHTOOL, ifr)


SIOCDARP = 0x8953
NEIGH_DEFAULTS = {"base_reachable_time_ms": "30000", "delay_first_probe_time": "5"}   # the kernel's


def warm_arp(emu: Emulation, peers: dict[str, set[str]]) -> None:
    """Each host's ARP entries for its probe peers as a running Linux host has them: learned
    (stale: the first datagram confirms them by a unicast ARP probe, and they are confirmed
    again every reachable time), with the kernel's default timers, instead of the
    emulation's permanent entries. A host whose peer went silent then asks again, by
    unicast and at last by broadcast: the frames that let a plain-Ethernet bridge that
    points the old way learn the host's new direction."""
    for host, others in peers.items():
        h = emu.plan.hosts[host]
        with netns.inside(emu.host_ns(host)):
            for key, value in NEIGH_DEFAULTS.items():
                netns.write_sysctl(f"net.ipv4.neigh.{h.interface}.{key}", value)
            with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
                for o in sorted(others):
                    peer = emu.plan.hosts[o]
                    req = bytearray(netns.arp_request(h.interface, peer.address, peer.mac))
                    try:
                        fcntl.ioctl(s, SIOCDARP, bytes(req))
                    except OSError:
                        pass                          # no entry yet
                    struct.pack_into("=i", req, 32, netns.ATF_COM)   # arpreq.arp_flags: not ATF_PERM
                    fcntl.ioctl(s, netns.SIOCSARP, bytes(req))


def permanent_arp(emu: Emulation, peers: dict[str, set[str]]) -> None:
    """The emulation's permanent entries back (after the probes): no more ARP from the hosts,
    whose requests for peers the cut had silenced are broadcasts a storm check would count."""
    for host, others in peers.items():
        h = emu.plan.hosts[host]
        with netns.inside(emu.host_ns(host)):
            netns.static_arp(netns.arp_request(h.interface, emu.plan.hosts[o].address, emu.plan.hosts[o].mac)
                             for o in sorted(others))


def announce_hosts(emu: Emulation) -> int:
    """One untagged broadcast from every host's MAC (what any host sends, an ARP or a DHCP
    request, does the same): every bridge learns every host. Paced at half the ports' rate
    limit, as the plan's learning frames are (emulate/relearn.py)."""
    gap = 1 / (0.5 * emu.options.rate_fps)
    for name in sorted(emu.plan.hosts):
        start = time.monotonic()
        h = emu.plan.hosts[name]
        with netns.inside(emu.host_ns(name)):
            with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
                s.bind((h.interface, 0))
                src = bytes.fromhex(h.mac.replace(":", ""))
                s.send((b"\xff" * 6 + src + PROBE_ETHERTYPE.to_bytes(2, "big") + b"vlanroute host announce")
                       .ljust(60, b"\0"))
        rest = gap - (time.monotonic() - start)
        if rest > 0:
            time.sleep(rest)
    return len(emu.plan.hosts)


# -- the kernel's 802.1D --------------------------------------------------------------------

def build_kernel_stp(emu: Emulation, timers: StpTimers) -> None:
    """One 802.1D bridge per switch on the Emulation's cables (build_cables_and_hosts first)."""
    per_ns: dict[str, list[str]] = {}
    for i, s in enumerate(switch_order(emu), start=1):
        uplinks, hosts = bridge_ports(emu, s)
        lines = [f"link add br0 address {bridge_mac(i)} type bridge stp_state 1 {timers.ip_args()} "
                 f"priority {BRIDGE_PRIORITY}", *bond_lines(emu, s)]
        for p in uplinks + hosts:
            lines += [f"link set {p} down", f"link set {p} master br0"]
        lines += [f"link set dev {p} type bridge_slave cost {PATH_COST}" for p in uplinks]
        members = [m for (sw, _n), up in emu.plan.uplinks.items() if sw == s and up.lag_name for m in up.members]
        lines += [f"link set {p} up" for p in [*members, *uplinks, *hosts, "br0"]]
        per_ns[emu.sw_ns(s)] = lines
    emu.parallel_batches("ip", per_ns)


def kernel_stp_states(emu: Emulation) -> dict[tuple[str, str], str]:
    """(switch, bridge port) -> disabled, listening, learning, forwarding or blocking."""
    states: dict[tuple[str, str], str] = {}
    for s in emu.plan.switches:
        out = netns.run(["bridge", "-n", emu.sw_ns(s), "-j", "link", "show"]).stdout
        states.update({(s, str(x.get("ifname"))): str(x.get("state")) for x in json.loads(out or "[]")
                       if x.get("master") == "br0"})
    return states


def kernel_stp_changing(emu: Emulation) -> list[str]:
    """Switches whose bridge is still in a topology change (802.1D: it ages its MAC table in
    forward-delay time meanwhile, so unicast is flooded more than in a settled tree)."""
    out = []
    for s in emu.plan.switches:
        data = json.loads(netns.run(["ip", "-n", emu.sw_ns(s), "-d", "-j", "link", "show", "br0"]).stdout or "[]")
        info = (data[0].get("linkinfo", {}).get("info_data", {}) if data else {})
        if info.get("topology_change") or info.get("topology_change_detected"):
            out.append(s)
    return out


def wait_stp_quiet(emu: Emulation, timers: StpTimers) -> float:
    """Wait until no bridge is in a topology change (at most max age + forward delay + 10 s);
    the seconds waited."""
    start = time.monotonic()
    deadline = start + timers.max_age_s + timers.forward_delay_s + 10
    while kernel_stp_changing(emu) and time.monotonic() < deadline:
        time.sleep(0.5)
    return time.monotonic() - start


# -- Open vSwitch's RSTP --------------------------------------------------------------------

def ovs_missing() -> list[str]:
    """What must be installed for the RSTP switches; empty when all is there."""
    missing = [tool for tool in ("ovs-vswitchd", "ovsdb-server", "ovsdb-tool", "ovs-vsctl")
               if shutil.which(tool) is None and not Path("/usr/sbin", tool).exists()]
    if not OVS_SCHEMA.exists():
        missing.append(str(OVS_SCHEMA))
    return missing


class OvsRstp:
    """One ovsdb-server and ovs-vswitchd per switch; stop() (registered as the Emulation's
    cleanup) ends them all, also after a failure."""

    def __init__(self, emu: Emulation, datapath: str = "auto") -> None:
        self.emu = emu
        self.datapath = datapath
        self.root = Path(tempfile.mkdtemp(prefix="vlanroute-ovs-", dir=memory_dir()))
        emu.cleanups.insert(0, self.stop)

    def dir(self, switch: str) -> Path:
        return self.root / switch

    def vsctl(self, switch: str) -> list[str]:
        return [_tool("ovs-vsctl"), f"--db=unix:{self.dir(switch) / 'db.sock'}", "--timeout=120"]

    def build(self) -> None:
        emu = self.emu
        missing = ovs_missing()
        if missing:
            raise netns.NetnsError(f"Open vSwitch missing ({', '.join(missing)}): apt-get install {OVS_PACKAGE}")
        modprobe = shutil.which("modprobe") or "/usr/sbin/modprobe"
        if self.datapath in ("auto", "system"):
            # The kernel datapath where the module loads (the VM's kernel has it, the host may not).
            loaded = subprocess.run([modprobe, "openvswitch"], capture_output=True, check=False).returncode == 0
            if not loaded and self.datapath == "system":
                raise netns.NetnsError("the openvswitch kernel module does not load here: --ovs-datapath netdev")
            self.datapath = "system" if loaded or Path("/sys/module/openvswitch").exists() else "netdev"
        # The userspace datapath makes a tap device per bridge (its internal port).
        subprocess.run([modprobe, "tun"], capture_output=True, check=False)
        emu.parallel_batches("ip", {emu.sw_ns(s): [*bond_lines(emu, s),
                                                    *[f"link set {m} up" for (sw, _n), up in emu.plan.uplinks.items()
                                                      if sw == s for m in up.members],
                                                    *[f"link set {p} up" for ps in bridge_ports(emu, s) for p in ps]]
                                    for s in emu.plan.switches})
        scripts = {s: ["sh", "-c", self._script(s, i)] for i, s in enumerate(switch_order(emu), start=1)}
        failures = emu.run_scripts(scripts)
        if failures:
            raise netns.NetnsError("Open vSwitch did not start: " + "; ".join(failures[:3]))

    def _script(self, switch: str, index: int) -> str:
        d = self.dir(switch)
        d.mkdir(parents=True)
        q = shlex.quote
        env = " ".join(f"{k}={q(str(d))}" for k in ("OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR", "OVS_SYSCONFDIR"))
        server = [_tool("ovsdb-server"), str(d / "conf.db"), f"--remote=punix:{d / 'db.sock'}",
                  f"--pidfile={d / 'ovsdb.pid'}", f"--unixctl={d / 'ovsdb.ctl'}", "--detach", "--no-chdir",
                  f"--log-file={d / 'ovsdb.log'}"]
        if not os.access("/tmp", os.W_OK):
            # ovsdb-server makes a temporary file in /tmp whatever TMPDIR says; the VM's /tmp
            # is the host's, read-only: a private tmpfs for it alone.
            server = ["unshare", "-m", "sh", "-c", 'mount -t tmpfs tmpfs /tmp && exec "$0" "$@"', *server]
        switchd = ["ip", "netns", "exec", self.emu.sw_ns(switch), _tool("ovs-vswitchd"), f"unix:{d / 'db.sock'}",
                   f"--pidfile={d / 'vswitchd.pid'}", f"--unixctl={d / 'vswitchd.ctl'}", "--detach", "--no-chdir",
                   f"--log-file={d / 'vswitchd.log'}"]
        uplinks, hosts = bridge_ports(self.emu, switch)
        config = ["--", "add-br", "br0", "--", "set", "bridge", "br0", f"datapath_type={self.datapath}",
                  "rstp_enable=true",
                  f"other_config:rstp-priority={BRIDGE_PRIORITY}", f"other_config:rstp-address={bridge_mac(index)}",
                  "--", "--id=@noop", "create", "qos", "type=linux-noop"]
        for p in uplinks:
            config += ["--", "add-port", "br0", p, "--", "set", "port", p, "qos=@noop",
                       f"other_config:rstp-path-cost={PATH_COST}"]
        for p in hosts:
            config += ["--", "add-port", "br0", p, "--", "set", "port", p, "qos=@noop",
                       "other_config:rstp-port-admin-edge=true", "other_config:rstp-port-auto-edge=false"]
        lines = ["set -e", f"export {env}",
                 " ".join(map(q, [_tool("ovsdb-tool"), "create", str(d / "conf.db"), str(OVS_SCHEMA)])),
                 " ".join(map(q, server)),
                 " ".join(map(q, [*self.vsctl(switch), "--no-wait", "init"])),
                 " ".join(map(q, switchd)),
                 " ".join(map(q, [*self.vsctl(switch), *config])),
                 # The bridge's internal port: up, so that the storm check's broadcast leaves it.
                 f"ip -n {q(self.emu.sw_ns(switch))} link set br0 up"]
        return "\n".join(lines)

    def states(self) -> dict[tuple[str, str], str]:
        """(switch, port) -> the kernel bridge's words: forwarding, blocking (an alternate or
        backup port discarding), learning, discarding (a root or designated port not yet
        forwarding) or disabled."""
        states: dict[tuple[str, str], str] = {}
        for s in self.emu.plan.switches:
            out = netns.run([*self.vsctl(s), "--format=json", "--columns=name,rstp_status", "list", "port"]).stdout
            for name, status in json.loads(out or "{}").get("data", []):
                st = dict(status[1]) if isinstance(status, list) and status[0] == "map" else {}
                role, state = st.get("rstp_port_role", ""), st.get("rstp_port_state", "")
                if name == "br0":
                    continue
                if state == "Forwarding":
                    word = "forwarding"
                elif state == "Discarding" and role in ("Alternate", "Backup"):
                    word = "blocking"
                elif state == "Disabled" or role == "Disabled":
                    word = "disabled"
                else:
                    word = (state or "unknown").lower()
                states[(s, str(name))] = word
        return states

    def stop(self) -> None:
        for pidfile in sorted(self.root.glob("*/*.pid")):
            try:
                os.kill(int(pidfile.read_text().strip()), signal.SIGTERM)
            except (OSError, ValueError):
                pass
        deadline = time.monotonic() + 5
        for pidfile in sorted(self.root.glob("*/*.pid")):
            try:
                pid = int(pidfile.read_text().strip())
            except (OSError, ValueError):
                continue
            while time.monotonic() < deadline and Path(f"/proc/{pid}").exists():
                time.sleep(0.05)
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        shutil.rmtree(self.root, ignore_errors=True)


# -- waiting for a tree ---------------------------------------------------------------------

def blocked_pairs(emu: Emulation, states: dict[tuple[str, str], str]) -> list[tuple[str, str]]:
    """Neighbour pairs (in switch order) whose bridge port is blocking at either end."""
    order = {s: i for i, s in enumerate(switch_order(emu))}
    out = set()
    for (s, n), up in emu.plan.uplinks.items():
        port = up.lag_name or up.members[0]
        if states.get((s, port)) == "blocking":
            out.add((s, n) if order[s] < order[n] else (n, s))
    return sorted(out, key=lambda p: (order[p[0]], order[p[1]]))


def wait_settled(read: Callable[[], dict[tuple[str, str], str]], timeout_s: float, stable_s: float = 3.0,
                 ignore: frozenset[tuple[str, str]] = frozenset()) -> dict[tuple[str, str], str]:
    """Poll the port states until every port (but `ignore`, the dead ones) is forwarding or
    blocking and nothing changed for `stable_s`; the states, or NetnsError at the timeout."""
    deadline = time.monotonic() + timeout_s
    stable_since, last = time.monotonic(), None
    while True:
        states = read()
        live = {k: v for k, v in states.items() if k not in ignore}
        if live != last:
            stable_since, last = time.monotonic(), live
        settled = all(v in ("forwarding", "blocking") for v in live.values())
        if settled and time.monotonic() - stable_since >= stable_s:
            return states
        if time.monotonic() > deadline:
            waiting = sorted(f"{s} {p} {v}" for (s, p), v in live.items() if v not in ("forwarding", "blocking"))
            raise netns.NetnsError(f"the spanning tree did not settle in {timeout_s:g} s: " + ", ".join(waiting[:8]))
        time.sleep(0.5)


def _tool(name: str) -> str:
    return shutil.which(name) or str(Path("/usr/sbin") / name)


def memory_dir() -> str | None:
    from vlanroute.emulate.run import memory_dir as memory
    return memory()
