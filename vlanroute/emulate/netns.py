"""Network-namespace mechanics for the emulation: create, enter, read counters, delete.

Why setns from Python instead of `ip netns exec` for everything: under QEMU TCG every
process start costs 55-150 ms, so sysctls, counters and test sockets are handled in this
one process by entering each namespace with setns(2); only configuration goes through
`ip -batch` / `bridge -batch` files, one process per namespace.
A socket stays in the namespace it was created in, so one process can hold a socket in
every host namespace at once.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import socket
import struct
import subprocess
import tempfile
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

NETNS_DIR = Path("/run/netns")
CLONE_NEWNET = 0x40000000

_libc = ctypes.CDLL(None, use_errno=True)


class NetnsError(Exception):
    """A namespace operation failed: the kernel or iproute2 refused it."""


def _setns(fd: int) -> None:
    if _libc.setns(fd, CLONE_NEWNET) != 0:
        err = ctypes.get_errno()
        raise NetnsError(f"setns failed: {os.strerror(err)}")


@contextmanager
def inside(name: str) -> Iterator[None]:
    """Run the body (this thread, and processes it starts) in namespace `name`."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    try:
        target = os.open(NETNS_DIR / name, os.O_RDONLY)
    except OSError:
        os.close(own)
        raise NetnsError(f"network namespace {name} does not exist") from None
    try:
        _setns(target)
        try:
            yield
        finally:
            _setns(own)
    finally:
        os.close(target)
        os.close(own)


def enter_in_child(name: str) -> Callable[[], None]:
    """A subprocess preexec_fn that moves the child into namespace `name` before it execs.
    What `ip netns exec` does, minus the mount namespace and /sys remount (the host program
    reads nothing from /sys) and minus starting `ip` itself, ~0.2 s per host under TCG."""
    path = str(NETNS_DIR / name)

    def enter() -> None:
        fd = os.open(path, os.O_RDONLY)
        try:
            _setns(fd)
        finally:
            os.close(fd)
    return enter


def run(argv: list[str], *, input_text: str | None = None, timeout: float = 120,
        check: bool = True) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(argv, input=input_text, capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise NetnsError(f"{' '.join(argv[:4])} ... failed ({proc.returncode}): "
                         f"{(proc.stderr or proc.stdout).strip()[:2000]}")
    return proc


def batch(tool: str, lines: Iterable[str], *, netns: str | None = None, force: bool = False,
          timeout: float = 120) -> None:
    """Run `tool -batch` (tool = ip, bridge or tc) over `lines`, optionally in a namespace."""
    text = "".join(line + "\n" for line in lines)
    if not text:
        return
    argv = [tool]
    if netns is not None:
        argv += ["-n", netns]
    if force:
        argv.append("-force")
    # A file, not stdin: `tc -batch -` is not accepted by every iproute2 version.
    with tempfile.NamedTemporaryFile("w", suffix=f".{tool}", delete=True) as fh:
        fh.write(text)
        fh.flush()
        run(argv + ["-batch", fh.name], timeout=timeout, check=not force)


def write_sysctl(key: str, value: str) -> None:
    """Write a net.* sysctl of the namespace this thread is in (see `inside`)."""
    path = Path("/proc/sys") / key.replace(".", "/")
    path.write_text(value)


def read_sysctl(key: str) -> str:
    return (Path("/proc/sys") / key.replace(".", "/")).read_text().strip()


NET_DEV = Path("/proc/thread-self/net/dev")


def _net_dev(net_dev: Path) -> dict[str, list[int]]:
    """{interface: its 16 numbers} from /proc/net/dev: rx bytes, packets, errs, drop, fifo,
    frame, compressed, multicast, then tx bytes, packets, errs, drop, fifo, colls, carrier,
    compressed."""
    rows: dict[str, list[int]] = {}
    with open(net_dev) as fh:
        for line in fh.readlines()[2:]:
            name, _, rest = line.partition(":")
            rows[name.strip()] = [int(x) for x in rest.split()]
    return rows


def interface_counters(net_dev: Path = NET_DEV) -> dict[str, tuple[int, int]]:
    """{interface: (rx_packets, tx_packets)} of the namespace this thread is in.

    /proc/thread-self/net/dev follows the thread's own namespace (/proc/net would follow
    the whole process's first thread, which is the same here but less obviously so).
    """
    return {name: (n[1], n[9]) for name, n in _net_dev(net_dev).items()}


def interface_drops(net_dev: Path = NET_DEV) -> dict[str, tuple[int, int]]:
    """{interface: (rx_dropped, tx_dropped)} of the namespace this thread is in. A veth
    counts a frame its peer's input backlog refused as tx_dropped; a bond counts frames it
    had no member up for."""
    return {name: (n[3], n[11]) for name, n in _net_dev(net_dev).items()}


def udp_receive_errors(snmp: Path = Path("/proc/thread-self/net/snmp")) -> int:
    """UDP datagrams this thread's namespace failed to deliver to a socket (the Udp line's
    InErrors: a full receive buffer or a bad checksum)."""
    with open(snmp) as fh:
        rows = [line.split() for line in fh if line.startswith("Udp:")]
    if len(rows) < 2:
        return 0
    return int(dict(zip(rows[0][1:], rows[1][1:])).get("InErrors", 0))


# ioctl numbers of include/uapi/linux/sockios.h and flags of if.h / if_arp.h.
SIOCGIFFLAGS, SIOCSIFFLAGS, SIOCSIFADDR, SIOCSIFNETMASK, SIOCSARP = 0x8913, 0x8914, 0x8916, 0x891C, 0x8955
IFF_UP = 0x1
IFF_RUNNING = 0x40      # operstate up: set by the kernel's linkwatch once carrier is on
ARPHRD_ETHER = 1
ATF_COM, ATF_PERM = 0x02, 0x04


def _ifreq(name: str, payload: bytes = b"") -> bytes:
    """struct ifreq: 16 bytes of name, then a 24-byte union (an address or the flags)."""
    return name.encode().ljust(16, b"\0") + payload.ljust(24, b"\0")


def _sockaddr_in(address: str) -> bytes:
    return struct.pack("=H2x4s8x", socket.AF_INET, socket.inet_aton(address))


def configure_ipv4(interface: str, address: str, prefix_len: int) -> None:
    """`ip addr add ADDRESS/PREFIX dev IF` + `ip link set IF up` in the namespace this thread
    is in, by ioctl: no process per namespace (hundreds of hosts under TCG)."""
    mask = socket.inet_ntoa(struct.pack("!I", (0xFFFFFFFF << (32 - prefix_len)) & 0xFFFFFFFF))
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        if address:
            fcntl.ioctl(s, SIOCSIFADDR, _ifreq(interface, _sockaddr_in(address)))
            fcntl.ioctl(s, SIOCSIFNETMASK, _ifreq(interface, _sockaddr_in(mask)))
        flags = struct.unpack_from("=H", fcntl.ioctl(s, SIOCGIFFLAGS, _ifreq(interface)), 16)[0]
        fcntl.ioctl(s, SIOCSIFFLAGS, _ifreq(interface, struct.pack("=H", flags | IFF_UP)))


SOFTNET_STAT = Path("/proc/net/softnet_stat")


def _softnet_sum(softnet_stat: Path, column: int) -> int | None:
    """One column of /proc/net/softnet_stat (hex, one row per CPU; global, not per
    namespace) summed over the CPUs, or None where a row is too short to have it."""
    total = 0
    with open(softnet_stat) as fh:
        for line in fh:
            fields = line.split()
            if len(fields) <= column:
                return None
            total += int(fields[column], 16)
    return total


def backlog_drops(softnet_stat: Path = SOFTNET_STAT) -> int:
    """Frames the kernel dropped because a CPU's input backlog was full, since boot (the
    second column of /proc/net/softnet_stat). A veth hands each frame to its peer through
    that backlog (net.core.netdev_max_backlog, 1000 by default), and a bridge floods each
    broadcast to every port of its VLAN at once."""
    return _softnet_sum(softnet_stat, 1) or 0


def backlog_length(softnet_stat: Path = SOFTNET_STAT) -> int | None:
    """Frames waiting in every CPU's input backlog now (the twelfth column of
    /proc/net/softnet_stat, softnet_backlog_len in net/core/net-procfs.c; kernel 6.1 prints
    13 columns, later ones more, that one kept in place), or None where the kernel does not
    print it. A sender that outruns the kernel's forwarding fills this queue, and past
    net.core.netdev_max_backlog the kernel drops frames (backlog_drops)."""
    return _softnet_sum(softnet_stat, 11)


def not_running(interfaces: Iterable[str]) -> list[str]:
    """The interfaces of this thread's namespace without IFF_RUNNING (SIOCGIFFLAGS).

    A veth end brought up reports carrier at once, but the kernel acts on it later, in its
    linkwatch work (up to a second when the event is not urgent): the queueing discipline
    is activated and the bridge port leaves the "disabled" state only then, and frames sent
    before are dropped. IFF_RUNNING is set in that same work."""
    down = []
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for name in interfaces:
            flags = struct.unpack_from("=H", fcntl.ioctl(s, SIOCGIFFLAGS, _ifreq(name)), 16)[0]
            if not flags & IFF_RUNNING:
                down.append(name)
    return down


def bond_members_down(bonding: Path = Path("/proc/thread-self/net/bonding")) -> list[str]:
    """Members of this thread's namespace's bonds whose MII status the bond sees as down
    (/proc/thread-self/net/bonding/*): a bond sends only on members it has seen up, and
    sees a member come up only at its next miimon poll."""
    down = []
    for bond in sorted(bonding.iterdir()) if bonding.is_dir() else []:
        member = ""
        for line in bond.read_text().splitlines():
            key, _, value = line.partition(":")
            if key == "Slave Interface":
                member = value.strip()
            elif key == "MII Status" and member and value.strip() != "up":
                down.append(member)
    return down


def arp_request(interface: str, address: str, mac: str) -> bytes:
    """struct arpreq for a permanent entry (ATF_PERM, as `arp -s` sets): protocol address,
    hardware address, flags, netmask, device."""
    hw = struct.pack("=H", ARPHRD_ETHER) + bytes.fromhex(mac.replace(":", "")).ljust(14, b"\0")
    return (_sockaddr_in(address) + hw + struct.pack("=i", ATF_PERM | ATF_COM) + b"\0" * 16
            + interface.encode().ljust(16, b"\0"))


def static_arp(requests: Iterable[bytes]) -> None:
    """Add the arpreqs (arp_request) in this thread's namespace by SIOCSARP. Permanent
    entries are not counted against the neighbour table's garbage-collection thresholds."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        for req in requests:
            fcntl.ioctl(s, SIOCSARP, req)


def existing(prefix: str) -> list[str]:
    """Names of the namespaces that start with `prefix`."""
    if not NETNS_DIR.is_dir():
        return []
    return sorted(p.name for p in NETNS_DIR.iterdir() if p.name.startswith(prefix))


def delete_all(names: Iterable[str]) -> None:
    """Delete namespaces (and with them every veth end in them); tolerant of missing ones."""
    batch("ip", (f"netns del {n}" for n in names), force=True)
