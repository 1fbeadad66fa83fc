"""`vlanroute learn`: the frame format (expected bytes written by hand from IEEE 802.1Q),
and real sends inside a private network namespace (`unshare -n`) over a veth pair:
no traffic leaves this machine."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from vlanroute.cli import main
from vlanroute.hostside.broadcast import learn, tagged_frame


def test_tagged_frame_bytes() -> None:
    frame = tagged_frame(bytes.fromhex("001ec9aabbcc"), 101, payload=b"hi")
    expected = bytes.fromhex(
        "ffffffffffff"      # destination: broadcast
        "001ec9aabbcc"      # source: the host
        "8100"              # TPID 802.1Q
        "0065"              # PCP 0, DEI 0, VID 101
        "88b5"              # IEEE local experimental EtherType: no stack answers it
        "6869"              # payload
    ).ljust(64, b"\x00")    # 64 bytes without FCS for a tagged frame
    assert frame == expected


def test_frame_rejects_bad_vid() -> None:
    with pytest.raises(ValueError):
        tagged_frame(b"\x00" * 6, 4095)


def test_splay_waits_at_most_splay_seconds(monkeypatch) -> None:
    waits: list[float] = []
    sent: list[object] = []
    monkeypatch.setattr("vlanroute.hostside.broadcast.send_udp", lambda devs: sent.append(list(devs)))
    for _ in range(50):
        learn("eth0", [101, 102], splay_s=30, sleep=waits.append)
    assert len(waits) == 50 and all(0 <= w <= 30 for w in waits) and len(set(waits)) > 1
    assert sent[0] == ["eth0.101", "eth0.102"]


def test_learn_cli_rejects_unsafe_interface(capsys) -> None:
    assert main(["learn", "--interface", "eth0;reboot", "101"]) == 2
    assert "not a valid interface name" in capsys.readouterr().err


def test_learn_cli_missing_subinterface_is_a_clear_error(capsys) -> None:
    # Looked up before anything is sent: the error names the missing device and the fix.
    rc = main(["learn", "--interface", "nosuchif0", "101"])
    err = capsys.readouterr().err
    assert rc == 2 and "nosuchif0.101" in err and "Traceback" not in err


NETNS_PROGRAM = textwrap.dedent(r"""
    import json, socket, struct, subprocess, sys
    from vlanroute.hostside.broadcast import send_raw, send_udp

    def sh(*a): subprocess.run(a, check=True)
    sh("ip", "link", "set", "lo", "up")
    # UDP mode: a device named like a VLAN sub-interface (no 8021q module needed for the test).
    sh("ip", "link", "add", "h0.101", "type", "veth", "peer", "name", "sw0")
    # raw mode: a plain parent interface.
    sh("ip", "link", "add", "h1", "type", "veth", "peer", "name", "sw1")
    for d in ("h0.101", "sw0", "h1", "sw1"):
        sh("ip", "link", "set", d, "up")
    sh("ip", "addr", "add", "10.250.0.7/24", "dev", "h0.101")

    def listener(dev):
        s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
        s.setsockopt(263, 8, 1)          # SOL_PACKET, PACKET_AUXDATA: the VLAN tag may be stripped
        s.bind((dev, 0)); s.settimeout(2)
        return s

    def frames(s, want):
        out = []
        while len(out) < want:
            data, anc, _, _ = s.recvmsg(2048, socket.CMSG_SPACE(64))
            vid = None
            for level, typ, cdata in anc:
                if level == 263 and typ == 8:
                    status, _, _, _, _, tci = struct.unpack("IIIHHH", cdata[:18])
                    if status & 0x10:    # TP_STATUS_VLAN_VALID
                        vid = tci & 0xfff
            if data[12:14] == b"\x81\x00":
                vid, data = struct.unpack("!H", data[14:16])[0] & 0xfff, data[:12] + data[16:]
            etype = struct.unpack("!H", data[12:14])[0]
            if etype in (0x0800, 0x88b5):
                out.append({"dst": data[:6].hex(), "src": data[6:12].hex(), "vid": vid, "etype": etype,
                            "data": data[14:].hex()})
        return out

    a, b = listener("sw0"), listener("sw1")
    send_udp(["h0.101"])
    send_raw("h1", [101, 4094])
    udp, raw = frames(a, 1), frames(b, 2)
    link = subprocess.run(["ip", "-o", "link", "show", "h1"], capture_output=True, text=True).stdout
    mac = link.split("link/ether ")[1].split()[0].replace(":", "")
    print(json.dumps({"udp": udp, "raw": raw, "h1": mac}))
""")


def _netns_available() -> bool:
    if not shutil.which("unshare") or not shutil.which("ip"):
        return False
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


@pytest.mark.root
@pytest.mark.skipif(not _netns_available(), reason="needs root and unshare -n")
def test_udp_and_raw_sends_in_a_private_netns() -> None:
    proc = subprocess.run(["unshare", "-n", sys.executable, "-c", NETNS_PROGRAM],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    (udp,) = got["udp"]
    assert udp["dst"] == "ffffffffffff" and udp["etype"] == 0x0800
    ip = bytes.fromhex(udp["data"])
    assert ip[9] == 17 and ip[12:16] == bytes([10, 250, 0, 7]) and ip[16:20] == b"\xff" * 4
    assert int.from_bytes(ip[22:24], "big") == 9                      # UDP to the discard port
    assert [f["vid"] for f in got["raw"]] == [101, 4094]
    assert all(f["dst"] == "ffffffffffff" and f["etype"] == 0x88B5 for f in got["raw"])
    assert all(f["src"] == got["h1"] for f in got["raw"])           # from the interface's own MAC
