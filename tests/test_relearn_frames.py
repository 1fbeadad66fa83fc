"""`vlanroute emulate --relearn-with frames` (vlanroute/emulate/relearn.py): one process sends
every host's learning frame from inside its namespace. Here two hosts in their own network
namespaces on this kernel (no bridge needed), each frame caught at the other end of the
host's veth: one tagged broadcast per host and VLAN, from the host's own MAC, and a host
whose interface is missing is named, not skipped."""

from __future__ import annotations

import os
import socket
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from vlanroute.emulate import netns
from vlanroute.emulate.relearn import relearn_frames
from vlanroute.emulate.run import Options

PREFIX = f"vrtest{os.getpid()}-"


def _can_make_namespaces() -> bool:
    if os.geteuid() != 0 or not Path("/usr/sbin/ip").exists() and not Path("/sbin/ip").exists():
        return False
    probe = f"{PREFIX}probe"
    try:
        netns.batch("ip", [f"netns add {probe}"])
    except (netns.NetnsError, OSError, subprocess.SubprocessError):
        return False
    netns.delete_all([probe])
    return True


@dataclass
class _Host:
    name: str
    interface: str
    mac: str


@dataclass
class _Plan:
    hosts: dict[str, _Host]


@dataclass
class _Emulation:
    """What relearn_frames uses of an Emulation: the plan's hosts, their namespaces, the options."""
    plan: _Plan
    options: Options = field(default_factory=Options)
    learn_drops: dict[tuple[str, str], int] = field(default_factory=dict)

    def host_ns(self, host: str) -> str:
        return f"{PREFIX}h-{host}"

    def rate_limit_drops(self) -> dict[tuple[str, str], int]:
        return {}


def _tagged(s: socket.socket) -> bytes:
    """The next frame with its 802.1Q tag in place (a veth hands it over stripped, in the
    packet's auxiliary data, as tests/test_render_learn.py reads it)."""
    data, anc, _, _ = s.recvmsg(2048, socket.CMSG_SPACE(64))
    for level, typ, cdata in anc:
        if level == 263 and typ == 8:
            status, _, _, _, _, tci, tpid = struct.unpack("IIIHHHH", cdata[:20])
            if status & 0x10:                # TP_STATUS_VLAN_VALID
                return data[:12] + struct.pack("!HH", tpid or 0x8100, tci) + data[12:]
    return data


def _learning_frames(s: socket.socket) -> list[bytes]:
    """Every frame of the learning EtherType (tagged, 0x88B5) until the link is quiet for
    half a second; others (IPv6 neighbour discovery of a link coming up) are not ours."""
    s.settimeout(0.5)
    out = []
    with s:
        while True:
            try:
                frame = _tagged(s)
            except TimeoutError:
                return out
            if frame[12:14] == b"\x81\x00" and frame[16:18] == b"\x88\xb5":
                out.append(frame)


@pytest.mark.root
@pytest.mark.skipif(not _can_make_namespaces(), reason="needs root and network namespaces")
def test_one_tagged_frame_per_host_and_vlan_from_its_own_mac() -> None:
    hosts = {"n1": _Host("n1", "eth0", "02:00:00:00:00:01"), "n2": _Host("n2", "eth0", "02:00:00:00:00:02"),
             "n3": _Host("n3", "eth9", "02:00:00:00:00:03")}        # n3: no such interface
    emu = _Emulation(_Plan(hosts))
    sw = f"{PREFIX}sw"
    names = [sw, *(emu.host_ns(h) for h in hosts)]
    try:
        netns.batch("ip", [f"netns add {n}" for n in names])
        netns.batch("ip", [f"link add eth0 address {h.mac} netns {emu.host_ns(h.name)} type veth "
                           f"peer name p{h.name} netns {sw}" for h in hosts.values() if h.name != "n3"])
        netns.batch("ip", ["link set eth0 up"], netns=emu.host_ns("n1"))
        netns.batch("ip", ["link set eth0 up"], netns=emu.host_ns("n2"))
        netns.batch("ip", ["link set pn1 up", "link set pn2 up"], netns=sw)
        catch = {}
        with netns.inside(sw):
            for h in ("n1", "n2"):
                s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(0x0003))
                s.setsockopt(263, 8, 1)      # SOL_PACKET, PACKET_AUXDATA: the tag may be stripped
                s.bind((f"p{h}", 0))
                s.settimeout(5)
                catch[h] = s
        check = relearn_frames(emu, [101, 103])     # type: ignore[arg-type]
        frames = {h: _learning_frames(s) for h, s in catch.items()}
    finally:
        netns.delete_all(names)
    for h, got in frames.items():
        src = bytes.fromhex(hosts[h].mac.replace(":", ""))
        assert len(got) == 2, (h, got)               # one per VLAN, nothing more
        for frame, vid in zip(got, (101, 103)):
            assert frame[:12] == b"\xff" * 6 + src
            assert struct.unpack("!HHH", frame[12:18]) == (0x8100, vid, 0x88B5)
            assert frame[18:].startswith(b"vlanroute MAC learning")
    assert not check.ok
    assert check.problems and check.problems[0].startswith("n3: ")
    assert check.detail.startswith("2/3 hosts sent 4 tagged learning frames")
    assert check.name == "re-learning in VLANs 101,103 (learning frames from one process)"
