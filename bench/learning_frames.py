"""Benchmark: the learning frames of hosts/vlanroute-host on a real 802.1Q bridge.

For each way of sending them (iputils ping -b, busybox ping, the ARP announcement of
iproute2's neighbour probe) it counts, on the switch port of the sending host during its
first run plus 3.5 s: the tagged frames the host sends per VLAN (frames/VLAN), its other
frames (other out, untagged: e.g. ARP replies), and every frame sent towards it (in:
replies, and broadcasts its frames provoked elsewhere); it times the host program's first
run (sub-interfaces + frames) and a refresh run (frames only, the fastest of --runs), and
counts the runs in which ping got an echo reply (replied).
The other two hosts on the bridge have addresses in every learning subnet (the worst case);
the ping rows are repeated with net.ipv4.icmp_echo_ignore_broadcasts=0 on them, the only
way a broadcast echo request gets answered (the kernel default is 1).

Run (as root): python bench/learning_frames.py [--runs N]
It boots the emulation VM (vlanroute.emulate.vm) when this kernel has no 802.1Q.
"""

from __future__ import annotations

import argparse
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VLANS = (101, 102, 103, 104)
ETH_P_ALL = 0x0003
SOL_PACKET, PACKET_AUXDATA = 263, 8
TP_STATUS_VLAN_VALID = 0x10


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3, help="refresh runs timed per row")
    ap.add_argument("--inside", metavar="OUTDIR", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.inside:
        return inside(Path(args.inside), args.runs)
    with tempfile.TemporaryDirectory(prefix="bench-learning-") as tmp:
        out = Path(tmp) / "out"
        subprocess.run([sys.executable, "-m", "vlanroute.cli", "render", "inventories/seed-torus.yaml", "-o",
                        str(out), "--set", "platform=linux-bridge", "--set", "hosts.count=null",
                        "--set", "hosts.per_switch=1"], check=True, capture_output=True, cwd=ROOT)
        sys.path.insert(0, str(ROOT))
        from vlanroute.emulate import vm
        from vlanroute.emulate.run import host_kernel_capable, lean_python
        capable, _why = host_kernel_capable()
        python, env = lean_python()
        command = [*python, str(Path(__file__).resolve()), "--inside", str(out), "--runs", str(args.runs)]
        if capable:
            return subprocess.run(command, env={**os.environ, **env}).returncode
        shutil.copytree(out, Path(tmp) / "work" / "out")
        command[-3] = str(Path(tmp) / "work" / "out")
        result = vm.run_in_vm(" ".join(command), Path(tmp) / "work", vm.VmConfig(timeout_s=900, extra_env=env),
                              on_line=lambda line: sys.stdout.write(line))
        return result.returncode


def sh(command: str) -> None:
    subprocess.run(command, shell=True, check=True)


def inside(out: Path, runs: int) -> int:
    from vlanroute.emulate import netns
    sh("modprobe -a bridge 8021q veth")
    ns = ["vrbf-sw", "vrbf-a", "vrbf-b", "vrbf-c"]
    hosts = {"vrbf-a": ("node001", "p1", 101), "vrbf-b": ("node002", "p2", 102), "vrbf-c": ("node003", "p3", 103)}
    for n in ns:
        sh(f"ip netns add {n}")
        for key in ("all", "default"):
            sh(f"ip netns exec {n} sh -c 'echo 1 > /proc/sys/net/ipv6/conf/{key}/disable_ipv6'")
    sh("ip -n vrbf-sw link add br0 type bridge vlan_filtering 1 stp_state 0")
    for n, (_host, port, pvid) in hosts.items():
        sh(f"ip link add eth0 netns {n} type veth peer name {port} netns vrbf-sw")
        sh(f"ip -n vrbf-sw link set {port} master br0")
        sh(f"bridge -n vrbf-sw vlan del dev {port} vid 1")
        for v in VLANS:
            sh(f"bridge -n vrbf-sw vlan add dev {port} vid {v} untagged" + (" pvid" if v == pvid else ""))
        sh(f"ip -n vrbf-sw link set {port} up && ip -n {n} link set eth0 up && ip -n {n} link set lo up")
    sh("ip -n vrbf-sw link set br0 up")
    from vlanroute.emulate.run import memory_dir
    # From memory: in the VM, OUTDIR is on 9p without a cache (sh reads a table byte by byte).
    tools = Path(tempfile.mkdtemp(prefix="vlanroute-bb-", dir=memory_dir()))
    for f in ("vlanroute-host", "hosts.tsv", "vlans.tsv"):
        shutil.copy2(out / "hosts" / f, tools / f)
    program = str(tools / "vlanroute-host")
    (tools / "bin").mkdir()
    (tools / "bin" / "ping").symlink_to(shutil.which("busybox") or "/bin/busybox")
    for n in ("vrbf-b", "vrbf-c"):            # the others: learning addresses in every VLAN
        sh(f"ip netns exec {n} sh {program} --host {hosts[n][0]} --no-learn >/dev/null")
    mac = subprocess.run(["ip", "-n", "vrbf-a", "-o", "link", "show", "eth0"], capture_output=True,
                         text=True).stdout.split("link/ether ")[1].split()[0]
    busybox_ping = {"PATH": f"{tools / 'bin'}:{os.environ['PATH']}"}
    # The last field: net.ipv4.icmp_echo_ignore_broadcasts on the other hosts (1 = the default).
    ping, arp = ["--frame", "ping"], ["--frame", "arp"]
    rows = [("iputils ping -b", ping, {}, "1"), ("busybox ping", ping, busybox_ping, "1"),
            ("ARP announcement", arp, {}, "1"),
            ("iputils ping -b, ignore=0", ping, {}, "0"), ("busybox ping, ignore=0", ping, busybox_ping, "0"),
            ("ARP announcement, ignore=0", arp, {}, "0")]
    print(f"{'frame':<28}{'frames/VLAN':>12}{'other out':>10}{'in':>5}{'first run s':>13}{'refresh s':>11}"
          f"{'replied':>9}")
    for label, extra, env, ignore in rows:
        time.sleep(3.5)                 # let the ARP retries of the row before die out
        for n in ("vrbf-a", "vrbf-b", "vrbf-c"):
            if n != "vrbf-a":                 # the sender keeps the default (else it answers itself)
                sh(f"ip netns exec {n} sh -c 'echo {ignore} > /proc/sys/net/ipv4/icmp_echo_ignore_broadcasts'")
            sh(f"ip -n {n} neigh flush all")  # each row starts from empty neighbour tables
        sh(f"ip netns exec vrbf-a sh {program} --host node001 --remove >/dev/null")
        argv = ["sh", program, "--host", "node001", *extra]
        full_env = {**os.environ, **env}
        enter = netns.enter_in_child("vrbf-a")       # as the emulation starts it
        warned = 0
        with Capture("vrbf-sw", "p1", mac) as cap:
            start = time.monotonic()
            r = subprocess.run(argv, env=full_env, check=True, capture_output=True, text=True, preexec_fn=enter)
            first = time.monotonic() - start
            warned += "answered" in r.stderr
            time.sleep(3.5)                       # late replies, and ARP retries (3, 1 s apart)
        per_vlan, other, towards = cap.result()
        refresh = []
        for _ in range(runs):
            start = time.monotonic()
            r = subprocess.run(argv, env=full_env, check=True, capture_output=True, text=True, preexec_fn=enter)
            refresh.append(time.monotonic() - start)
            warned += "answered" in r.stderr
        counts = sorted(set(per_vlan.get(v, 0) for v in VLANS))
        shown = "/".join(str(c) for c in counts)
        print(f"{label:<28}{shown:>12}{other:>10}{towards:>5}{first:>13.2f}{min(refresh):>11.2f}"
              f"{f'{warned}/{runs + 1}':>9}", flush=True)
    sh("for n in vrbf-sw vrbf-a vrbf-b vrbf-c; do ip netns del $n; done")
    shutil.rmtree(tools)
    return 0


class Capture:
    """Frames on a bridge port: from `mac` (counted per VLAN tag) and to it (replies)."""

    def __init__(self, netns_name: str, port: str, mac: str) -> None:
        from vlanroute.emulate import netns
        with netns.inside(netns_name):
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.sock.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        self.sock.bind((port, 0))
        self.sock.setblocking(False)
        self.mac = bytes.fromhex(mac.replace(":", ""))

    def __enter__(self) -> Capture:
        while self._read() is not None:           # what was queued before
            pass
        return self

    def __exit__(self, *exc: object) -> None:
        pass

    def _read(self) -> tuple[bytes, int | None] | None:
        try:
            data, anc, _flags, _addr = self.sock.recvmsg(4096, socket.CMSG_SPACE(64))
        except BlockingIOError:
            return None
        vid = None
        for level, kind, cdata in anc:
            if level == SOL_PACKET and kind == PACKET_AUXDATA:
                status, _len, _snap, _mac, _net, tci = struct.unpack("IIIHHH", cdata[:18])
                if status & TP_STATUS_VLAN_VALID:
                    vid = tci & 0xFFF
        if data[12:14] == b"\x81\x00":
            vid = int.from_bytes(data[14:16], "big") & 0xFFF
        return data, vid

    def result(self) -> tuple[dict[int, int], int, int]:
        """(tagged frames from the host per VLAN, its other frames, frames sent towards it)."""
        per_vlan: dict[int, int] = {}
        other = towards = 0
        while (got := self._read()) is not None:
            data, vid = got
            if data[6:12] == self.mac:
                if vid is None:
                    other += 1
                else:
                    per_vlan[vid] = per_vlan.get(vid, 0) + 1
            else:
                towards += 1            # replies, or what the frames provoked (e.g. ARP requests)
        self.sock.close()
        return per_vlan, other, towards


if __name__ == "__main__":
    sys.exit(main())
