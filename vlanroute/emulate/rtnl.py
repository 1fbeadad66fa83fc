"""The rtnetlink requests the emulated heals need, without a process per command: every
link's carrier in a namespace, and a bridge port's VLAN memberships and PVID.

Why not `ip` and `bridge`: under the emulation VM's TCG each process start costs 0.1 to
0.3 s (emulate/outagerun.py `cut_now`), which would measure QEMU, not the failover. The
messages are those iproute2 sends (linux/rtnetlink.h, linux/if_bridge.h):

- `links`: RTM_GETLINK with NLM_F_DUMP; per link its name (IFLA_IFNAME), index and whether
  its carrier is up (IFF_LOWER_UP in ifi_flags), as `ip link` shows LOWER_UP;
- `link_events`: the RTM_NEWLINK notifications the kernel queued on a socket subscribed to
  RTMGRP_LINK (`ip monitor link`): a carrier change is there the moment it happens;
- `set_pvids`: per port one RTM_SETLINK of family AF_BRIDGE with IFLA_AF_SPEC holding
  IFLA_BRIDGE_VLAN_INFO {flags PVID | UNTAGGED, vid}, which is what `bridge vlan add dev
  PORT vid VID pvid untagged` sends: the port's PVID moves to VID (a port has one), its
  other memberships stay. Sent in one buffer, each acknowledged (NLM_F_ACK);
- `bridge_vlans`: any `bridge vlan {add|del} dev PORT vid VID [pvid] [untagged]` line, as
  iproute2's bridge/vlan.c sends it: RTM_SETLINK to add, RTM_DELLINK to delete, the same
  IFLA_AF_SPEC, one message per line, each acknowledged before the next is sent (a
  transition's order is the point of its lines).

A socket is made in a namespace (`open_in`) and acts there for its whole life.
"""

from __future__ import annotations

import os
import socket
import struct
from dataclasses import dataclass

from vlanroute.emulate import netns

NETLINK_ROUTE = 0
RTM_NEWLINK, RTM_DELLINK, RTM_GETLINK, RTM_SETLINK = 16, 17, 18, 19
NLMSG_ERROR, NLMSG_DONE = 2, 3
NLM_F_REQUEST, NLM_F_ACK, NLM_F_DUMP = 0x1, 0x4, 0x300
AF_UNSPEC, AF_BRIDGE = 0, 7
IFLA_IFNAME, IFLA_AF_SPEC = 3, 26
IFLA_BRIDGE_VLAN_INFO = 2
BRIDGE_VLAN_INFO_PVID, BRIDGE_VLAN_INFO_UNTAGGED = 0x2, 0x4
IFF_LOWER_UP = 0x10000

_NLMSG = struct.Struct("=IHHII")        # len, type, flags, seq, pid
_IFINFO = struct.Struct("=BxHiII")      # family, type, index, flags, change
_RTA = struct.Struct("=HH")             # len, type


class RtnlError(OSError):
    """The kernel refused a request (its errno and what was asked)."""


@dataclass(frozen=True)
class Link:
    index: int
    name: str
    carrier: bool


def _align(n: int) -> int:
    return (n + 3) & ~3


def _attr(kind: int, payload: bytes) -> bytes:
    body = _RTA.pack(_RTA.size + len(payload), kind) + payload
    return body + b"\0" * (_align(len(body)) - len(body))


RTMGRP_LINK = 0x1


def open_in(namespace: str, events: bool = False) -> socket.socket:
    """A NETLINK_ROUTE socket made inside `namespace` (it acts there from then on);
    `events`: subscribed to the link notifications (RTMGRP_LINK), which the kernel queues
    on it as links change, for `link_events` to read."""
    with netns.inside(namespace):
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, NETLINK_ROUTE)
    sock.bind((0, RTMGRP_LINK if events else 0))
    return sock


def _message(kind: int, flags: int, seq: int, body: bytes) -> bytes:
    return _NLMSG.pack(_NLMSG.size + len(body), kind, flags, seq, 0) + body


def _replies(sock: socket.socket, seqs: set[int], dump: bool) -> list[tuple[int, bytes]]:
    """(type, payload) of every reply to `seqs`, until each is acknowledged (or the dump is done)."""
    out: list[tuple[int, bytes]] = []
    waiting = set(seqs)
    while waiting:
        data = sock.recv(1 << 20)
        at = 0
        while at + _NLMSG.size <= len(data):
            length, kind, _flags, seq, _pid = _NLMSG.unpack_from(data, at)
            if length < _NLMSG.size:
                break
            payload = data[at + _NLMSG.size: at + length]
            at += _align(length)
            if seq not in waiting:
                continue
            if kind == NLMSG_ERROR:
                (err,) = struct.unpack_from("=i", payload)
                if err:
                    raise RtnlError(-err, f"{os.strerror(-err)} (netlink request {seq})")
                waiting.discard(seq)          # an ACK
            elif kind == NLMSG_DONE:
                waiting.discard(seq)
            else:
                out.append((kind, payload))
                if not dump:
                    waiting.discard(seq)
    return out


def _link(payload: bytes) -> Link:
    _family, _type, index, flags, _change = _IFINFO.unpack_from(payload)
    at, name = _IFINFO.size, ""
    while at + _RTA.size <= len(payload):
        length, rta = _RTA.unpack_from(payload, at)
        if length < _RTA.size:
            break
        if rta == IFLA_IFNAME:
            name = payload[at + _RTA.size: at + length].split(b"\0", 1)[0].decode()
        at += _align(length)
    return Link(index, name, bool(flags & IFF_LOWER_UP))


def link_events(sock: socket.socket) -> list[Link]:
    """The link notifications queued on an `events` socket since the last read, in order
    (what `ip monitor link` prints), without waiting."""
    out: list[Link] = []
    while True:
        try:
            data = sock.recv(1 << 20, socket.MSG_DONTWAIT)
        except BlockingIOError:
            return out
        at = 0
        while at + _NLMSG.size <= len(data):
            length, kind, _flags, _seq, _pid = _NLMSG.unpack_from(data, at)
            if length < _NLMSG.size:
                break
            if kind == RTM_NEWLINK:
                out.append(_link(data[at + _NLMSG.size: at + length]))
            at += _align(length)


def links(sock: socket.socket) -> dict[str, Link]:
    """Every link of the socket's namespace by name: its index and carrier."""
    request = _message(RTM_GETLINK, NLM_F_REQUEST | NLM_F_DUMP, 1, _IFINFO.pack(AF_UNSPEC, 0, 0, 0, 0))
    sock.send(request)
    out: dict[str, Link] = {}
    for kind, payload in _replies(sock, {1}, dump=True):
        if kind == RTM_NEWLINK:
            link = _link(payload)
            out[link.name] = link
    return out


def _vlan_message(verb: str, index: int, vid: int, flags: int, seq: int) -> bytes:
    spec = _attr(IFLA_BRIDGE_VLAN_INFO, struct.pack("=HH", flags, vid))
    body = _IFINFO.pack(AF_BRIDGE, 0, index, 0, 0) + _attr(IFLA_AF_SPEC, spec)
    return _message(RTM_SETLINK if verb == "add" else RTM_DELLINK, NLM_F_REQUEST | NLM_F_ACK, seq, body)


def set_pvids(sock: socket.socket, ports: list[tuple[int, int]]) -> None:
    """`bridge vlan add dev PORT vid VID pvid untagged` for every (port index, VID), in one
    buffer; RtnlError if the kernel refuses one."""
    if not ports:
        return
    flags = BRIDGE_VLAN_INFO_PVID | BRIDGE_VLAN_INFO_UNTAGGED
    sock.send(b"".join(_vlan_message("add", index, vid, flags, seq) for seq, (index, vid) in enumerate(ports, start=2)))
    _replies(sock, set(range(2, 2 + len(ports))), dump=False)


def bridge_vlan(sock: socket.socket, index: int, argv: list[str]) -> None:
    """One `bridge vlan` line, `argv` as emulate/transition.py's BridgeCommand.argv() writes
    it (`vlan add|del dev PORT vid VID [pvid] [untagged]`; PORT is the link `index`), sent
    and acknowledged; RtnlError if the kernel refuses it, ValueError for another line."""
    if len(argv) < 6 or argv[0] != "vlan" or argv[1] not in ("add", "del") or argv[2] != "dev" or argv[4] != "vid":
        raise ValueError(f"not a bridge vlan line: {' '.join(argv)}")
    extra = set(argv[6:])
    if extra - {"pvid", "untagged"}:
        raise ValueError(f"unknown flags in: {' '.join(argv)}")
    flags = (BRIDGE_VLAN_INFO_PVID if "pvid" in extra else 0) | (BRIDGE_VLAN_INFO_UNTAGGED if "untagged" in extra else 0)
    sock.send(_vlan_message(argv[1], index, int(argv[5]), flags, 1))
    _replies(sock, {1}, dump=False)
