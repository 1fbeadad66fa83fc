"""The MAC-learning broadcast (seed 001, section 3.2.2): one frame per routing VLAN that
no host answers, so that every switch of that VLAN's tree learns this host's MAC address
on the port towards it.

Two ways to send it:
- `udp` (default): a UDP datagram to 255.255.255.255, port 9 (discard), from each VLAN
  sub-interface (vr101, or IF.V), pinned to it with SO_BINDTODEVICE; the kernel tags it with V.
  Hosts send no ICMP error for a datagram to a broadcast address (RFC 1122 3.2.2), so
  nothing comes back.
- `raw`: no sub-interfaces at all; an 802.1Q-tagged Ethernet frame with the IEEE local
  experimental EtherType 0x88B5 per VLAN, written to an AF_PACKET socket on IF. No
  protocol stack answers that EtherType.
Both need root (CAP_NET_RAW). No dependence on which arping a host has.
"""

from __future__ import annotations

import random
import socket
import struct
import time
from collections.abc import Iterable

from vlanroute.errors import UserError

BROADCAST_MAC = b"\xff" * 6
TPID_8021Q = 0x8100
ETHERTYPE_LOCAL_EXPERIMENTAL = 0x88B5
DISCARD_PORT = 9
PAYLOAD = b"vlanroute MAC learning"
# Minimum Ethernet frame without FCS is 60 bytes; 64 once it carries a 4-byte 802.1Q tag.
MIN_TAGGED_FRAME = 64


def tagged_frame(src_mac: bytes, vid: int, payload: bytes = PAYLOAD) -> bytes:
    """Broadcast 802.1Q frame (priority 0) in VLAN vid from src_mac, padded to the minimum size."""
    if len(src_mac) != 6:
        raise ValueError("a MAC address has 6 bytes")
    if not 1 <= vid <= 4094:
        raise ValueError(f"VLAN id {vid} outside 1..4094")
    frame = (BROADCAST_MAC + src_mac + struct.pack("!HHH", TPID_8021Q, vid, ETHERTYPE_LOCAL_EXPERIMENTAL)
             + payload)
    return frame.ljust(MIN_TAGGED_FRAME, b"\x00")


def send_udp(devices: Iterable[str], port: int = DISCARD_PORT) -> list[str]:
    """One UDP broadcast out of each named device. Returns the devices used."""
    sent: list[str] = []
    for dev in devices:
        with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_BROADCAST, 1)
            try:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_BINDTODEVICE, dev.encode())
            except PermissionError:
                raise UserError("binding to a device needs root (CAP_NET_RAW)",
                                fix="run the host script or `vlanroute learn` as root") from None
            except OSError:
                raise UserError(f"interface {dev} does not exist",
                                fix="run the host script first (it creates the VLAN sub-interfaces), "
                                    "or use --raw") from None
            try:
                s.sendto(PAYLOAD, ("255.255.255.255", port))
            except OSError as exc:
                raise UserError(f"cannot send the learning broadcast on {dev}: {exc.strerror}",
                                fix=f"check that {dev} is up and has an IPv4 address") from None
        sent.append(dev)
    return sent


def send_raw(interface: str, vids: Iterable[int]) -> list[int]:
    """One tagged broadcast frame per VLAN id out of interface, from its own MAC address."""
    try:
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    except PermissionError:
        raise UserError("a raw socket needs root (CAP_NET_RAW)", fix="run it as root") from None
    with s:
        try:
            s.bind((interface, 0))
        except OSError:
            raise UserError(f"interface {interface} does not exist", fix="check --interface") from None
        src_mac = s.getsockname()[4]
        sent = []
        for vid in vids:
            s.send(tagged_frame(src_mac, vid))
            sent.append(vid)
    return sent


def learn(interface: str, vids: list[int], raw: bool = False, splay_s: int = 0,
          sleep=time.sleep, prefix: str | None = None) -> None:
    """Wait a random 0..splay_s seconds, then send one learning frame per VLAN, from the
    sub-interfaces PREFIX+V (vr101) or, without a prefix, INTERFACE.V (eth0.101)."""
    if splay_s > 0:
        sleep(random.SystemRandom().uniform(0, splay_s))
    if raw:
        send_raw(interface, vids)
    else:
        send_udp(f"{prefix}{v}" if prefix else f"{interface}.{v}" for v in vids)
