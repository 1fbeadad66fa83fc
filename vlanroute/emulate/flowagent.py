"""The TCP flows of `vlanroute emulate --traffic`, all in this one process.

Every socket is made inside its host's network namespace (netns.inside: a socket stays in
the namespace it was made in), so one selector loop drives every flow of a pattern: no
interpreter per host to start (each cost seconds under TCG) and no clocks to agree on.

What counts is what the kernel counted: each receiving socket's tcpi_bytes_received
(TCP_INFO, Linux 4.1+), read for every flow at the start and at the end of the window,
over the time the two readings really were apart. Bytes a starved process has not read
yet are still counted when they arrived, so a late loop does not move bytes from one side
of the window to the other, and a late reading only moves the window, not its length.
"""

from __future__ import annotations

import selectors
import socket
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from vlanroute.emulate import netns

CHUNK = bytes(65536)
SNDBUF = 1 << 19
# A full TCP segment's frame as tbf counts it (no preamble or FCS; a trunk's 802.1Q tag adds
# 4 bytes, 0.3 %, left out): MSS 1448 (MTU 1500 less IP 20 and TCP with timestamps 32) +
# 32 + 20 + Ethernet 14; a pure ACK is 32 + 20 + 14.
FRAME, PAYLOAD, ACK = 1514, 1448, 66
GOODPUT = PAYLOAD / FRAME
# struct tcp_info (include/uapi/linux/tcp.h): tcpi_total_retrans is the u32 at 100,
# tcpi_bytes_acked the u64 at 120, tcpi_bytes_received the u64 at 128.
TCP_INFO_LEN = 136
RETRANS_AT, ACKED_AT, RECEIVED_AT = 100, 120, 128


@dataclass(frozen=True)
class Flow:
    src_ns: str
    src_address: str
    dst_ns: str
    dst_address: str


@dataclass
class FlowCounts:
    window_s: float                                   # how long the two readings were apart
    received: list[int] = field(default_factory=list)  # payload bytes per flow in the window
    retransmitted: list[int] = field(default_factory=list)  # segments per flow, whole run
    host_bytes: dict[str, tuple[int, int]] = field(default_factory=dict)  # ns -> (rx, tx) bytes in the window


def _tcp_info(sock: socket.socket) -> bytes:
    return sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_INFO, TCP_INFO_LEN)


def received_bytes(sock: socket.socket) -> int:
    return int(struct.unpack_from("Q", _tcp_info(sock), RECEIVED_AT)[0])


def retransmits(sock: socket.socket) -> int:
    return int(struct.unpack_from("I", _tcp_info(sock), RETRANS_AT)[0])


def _device_bytes(ns: str, device: str) -> tuple[int, int]:
    """(rx, tx) bytes of `device` in namespace `ns` (frames as the veth counts them)."""
    with netns.inside(ns), open("/proc/thread-self/net/dev") as fh:
        for line in fh.readlines()[2:]:
            name, _, rest = line.partition(":")
            if name.strip() == device:
                fields = rest.split()
                return int(fields[0]), int(fields[8])
    return 0, 0


def run_flows(flows: Sequence[Flow], port: int, warmup_s: float, seconds: float,
              devices: dict[str, str] | None = None, connect_timeout_s: float = 30.0) -> FlowCounts:
    """Send as fast as TCP lets every flow for warmup + seconds; count the last `seconds`.
    `devices` (namespace -> interface) adds each host interface's bytes in the window."""
    sel = selectors.DefaultSelector()
    listeners: dict[tuple[str, str], socket.socket] = {}
    senders: list[socket.socket] = []
    accepted: dict[tuple[str, str], list[socket.socket]] = {}
    try:
        for f in flows:
            if (f.dst_ns, f.dst_address) in listeners:
                continue
            with netns.inside(f.dst_ns):
                server = socket.socket()
            server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            server.bind((f.dst_address, port))
            server.listen(512)
            server.setblocking(False)
            listeners[(f.dst_ns, f.dst_address)] = server
            sel.register(server, selectors.EVENT_READ, ("accept", f.dst_address))
        for f in flows:
            with netns.inside(f.src_ns):
                c = socket.socket()
            c.bind((f.src_address, 0))     # the receiver tells its peers apart by source address
            # Seconds of data queued in the kernel (not the autotuned ~2 congestion windows):
            # a sender this process is too starved to refill would leave its link idle.
            c.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, SNDBUF)
            c.setblocking(False)
            c.connect_ex((f.dst_address, port))
            senders.append(c)
            sel.register(c, selectors.EVENT_WRITE, ("send", ""))
        start = time.monotonic()
        begin = start + warmup_s
        first: list[int] = []
        t_first = t_last = 0.0
        dev_first: dict[str, tuple[int, int]] = {}
        counts = FlowCounts(0.0)

        def pump(until: float) -> None:
            while time.monotonic() < until:
                for key, _events in sel.select(timeout=0.05):
                    sock = key.fileobj
                    assert isinstance(sock, socket.socket)
                    kind, address = key.data
                    if kind == "accept":
                        try:
                            conn, peer = sock.accept()
                        except BlockingIOError:
                            continue
                        conn.setblocking(False)
                        accepted.setdefault((peer[0], address), []).append(conn)
                        sel.register(conn, selectors.EVENT_READ, ("recv", ""))
                    elif kind == "send":
                        try:
                            sock.send(CHUNK)
                        except (BlockingIOError, InterruptedError):
                            pass
                        except OSError:
                            sel.unregister(sock)
                    else:
                        try:
                            data = sock.recv(262144)
                        except (BlockingIOError, InterruptedError):
                            continue
                        except OSError:
                            data = b""
                        if not data:
                            sel.unregister(sock)

        def receivers() -> list[socket.socket | None]:
            """The accepted socket of every flow, in the order of `flows` (None: never connected)."""
            pool = {k: list(v) for k, v in accepted.items()}
            return [pool[(f.src_address, f.dst_address)].pop(0) if pool.get((f.src_address, f.dst_address))
                    else None for f in flows]

        pump(begin)
        deadline = begin + connect_timeout_s
        while sum(len(v) for v in accepted.values()) < len(flows) and time.monotonic() < deadline:
            pump(time.monotonic() + 0.5)
        socks = receivers()
        t_first = time.monotonic()
        first = [received_bytes(s) if s is not None else 0 for s in socks]
        dev_first = {ns: _device_bytes(ns, dev) for ns, dev in (devices or {}).items()}
        pump(t_first + seconds)
        t_last = time.monotonic()
        last = [received_bytes(s) if s is not None else 0 for s in socks]
        dev_last = {ns: _device_bytes(ns, dev) for ns, dev in (devices or {}).items()}
        counts.window_s = t_last - t_first
        counts.received = [b - a for a, b in zip(first, last)]
        counts.retransmitted = [retransmits(s) for s in senders]
        counts.host_bytes = {ns: (dev_last[ns][0] - dev_first[ns][0], dev_last[ns][1] - dev_first[ns][1])
                             for ns in dev_last}
        return counts
    finally:
        for s in [*senders, *listeners.values(), *(c for v in accepted.values() for c in v)]:
            s.close()
        sel.close()
