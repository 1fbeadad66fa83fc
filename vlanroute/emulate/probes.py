"""Continuous probe traffic for the outage measurement (emulate/outage.py): one UDP datagram
per host pair per round, every `interval_s`, each carrying its pair and round number.

Two forked processes, so that the caller (the cut, a watcher's heal) runs beside them:
- the sender sends round after round, pacing the rounds' starts `interval_s` apart (a
  round late by more than that starts at once; no catch-up burst), each round's probes
  spread over the interval in slices 2 ms apart, and stamps each round's start
  (CLOCK_REALTIME);
- the receiver reads every host's socket and keeps the arrival time the kernel stamped on
  each datagram (SO_TIMESTAMPNS), so a receiver scheduled late still records when the
  datagram arrived, not when it was read.
They share an anonymous memory map with the caller: a stop flag, the rounds sent so far
(the round times), and each pair's last round received, so the caller sees live which
pairs deliver (`delivering`). The sockets are made by the caller, each in its host's
namespace (a socket stays in the namespace it was made in), before the fork.
"""

from __future__ import annotations

import json
import mmap
import os
import select
import signal
import socket
import struct
import tempfile
import time
from array import array
from pathlib import Path

from vlanroute.emulate import netns
from vlanroute.emulate.outage import ProbeRecord

PROBE_PORT = 7081
PAYLOAD = struct.Struct("!II")            # pair index, round
SO_TIMESTAMPNS = 35                        # asm-generic/socket.h; SCM_TIMESTAMPNS is the same
SO_RCVBUFFORCE = 33
TIMESPEC = struct.Struct("=qq")
_CMSG_SPACE = socket.CMSG_SPACE(TIMESPEC.size)
# The shared map, int64 slots: [stop, rounds, sender exit, receiver exit], the round times,
# then each pair's last round received (-1: none yet).
STOP, ROUNDS, HEAD = 0, 1, 4
DRAIN_S = 0.5                              # the receiver reads this long after the last round
SLICE_S = 0.002                            # a round's probes go out in slices this far apart


class Probes:
    def __init__(self, pairs: list[tuple[str, str]], sockets: dict[str, socket.socket],
                 addresses: dict[str, str], interval_s: float, max_s: float) -> None:
        """`sockets`: one per host of `pairs`, bound to (its address, PROBE_PORT) (make_sockets)."""
        self.pairs, self.interval_s = pairs, interval_s
        self.sockets, self.addresses = sockets, addresses
        self.max_rounds = int(max_s / interval_s) + 64
        self.shm = mmap.mmap(-1, 8 * (HEAD + self.max_rounds + len(pairs)))
        self._slots = memoryview(self.shm).cast("q")
        for i in range(len(pairs)):
            self._slots[HEAD + self.max_rounds + i] = -1
        self.sender = self.receiver = 0
        self._out = tempfile.NamedTemporaryFile(prefix="vlanroute-probes-", suffix=".bin",
                                                dir=memory_dir(), delete=False)
        self._out.close()

    # -- the caller's side --------------------------------------------------------------
    def start(self) -> None:
        self.receiver = _fork(self._receive)
        self.sender = _fork(self._send)

    def rounds(self) -> int:
        return int(self._slots[ROUNDS])

    def delivering(self, since: int) -> list[bool]:
        """Per pair: has a probe sent at or after `since` (CLOCK_REALTIME ns, the round's start) arrived?"""
        base, slots = HEAD + self.max_rounds, self._slots
        return [slots[base + i] >= 0 and slots[HEAD + slots[base + i]] >= since for i in range(len(self.pairs))]

    def stop(self) -> tuple[list[int], list[list[tuple[int, int]]]]:
        """Stop sending, let the receiver drain, collect: (round times, per pair (round, arrival))."""
        self._slots[STOP] = 1
        _reap(self.sender, 30)
        self._slots[STOP] = 2
        _reap(self.receiver, 60)
        self.sender = self.receiver = 0
        rounds = [int(self._slots[HEAD + r]) for r in range(self.rounds())]
        raw = Path(self._out.name).read_bytes()
        Path(self._out.name).unlink()
        n = len(raw) // 16
        index, round_, arrival = array("i"), array("i"), array("q")
        index.frombytes(raw[:4 * n])
        round_.frombytes(raw[4 * n:8 * n])
        arrival.frombytes(raw[8 * n:16 * n])
        deliveries: list[list[tuple[int, int]]] = [[] for _ in self.pairs]
        for i, r, t in zip(index, round_, arrival):
            if 0 <= i < len(deliveries):
                deliveries[i].append((r, t))
        return rounds, deliveries

    def kill(self) -> None:
        """Interrupted: end both processes now."""
        for pid in (self.sender, self.receiver):
            if pid:
                try:
                    os.kill(pid, signal.SIGKILL)
                    os.waitpid(pid, 0)
                except (ProcessLookupError, ChildProcessError):
                    pass
        self.sender = self.receiver = 0
        Path(self._out.name).unlink(missing_ok=True)

    # -- the children ---------------------------------------------------------------------
    def _send(self) -> None:
        slots, interval = self._slots, self.interval_s
        targets = [(self.sockets[a], (self.addresses[b], PROBE_PORT), PAYLOAD.pack(i, 0)[:4])
                   for i, (a, b) in enumerate(self.pairs)]
        # A round is spread over its interval in slices at least SLICE_S apart: sent at once,
        # a thousand probes would fill the rate limit's queue of the one cable they all cross.
        slices = max(1, min(len(targets), int(interval / SLICE_S)))
        groups = [targets[k * len(targets) // slices:(k + 1) * len(targets) // slices] for k in range(slices)]
        round_bytes = [struct.pack("!I", r) for r in range(self.max_rounds)]
        next_start = time.monotonic()
        r = 0
        while slots[STOP] == 0 and r < self.max_rounds:
            slots[HEAD + r] = time.time_ns()
            tail = round_bytes[r]
            for k, group in enumerate(groups):
                if k:
                    rest = next_start + k * interval / slices - time.monotonic()
                    if rest > 0:
                        time.sleep(rest)
                for sock, to, head in group:
                    try:
                        sock.sendto(head + tail, to)
                    except OSError:
                        pass                               # counted as lost
            r += 1
            slots[ROUNDS] = r
            next_start += interval
            rest = next_start - time.monotonic()
            if rest > 0:
                time.sleep(rest)
            else:
                # Late: no burst to catch up, and a pause all the same: the kernel forwards
                # each datagram in this process's system call, so a sender that never
                # sleeps starves the receiver and the switches of the CPU, and the probes
                # then measure the emulator (the report flags such a run).
                time.sleep(interval / 4)
                next_start = time.monotonic()

    def _receive(self) -> None:
        slots, base = self._slots, HEAD + self.max_rounds
        ep = select.epoll()
        socks = {}
        for s in set(self.sockets.values()):
            s.setblocking(False)
            ep.register(s.fileno(), select.EPOLLIN)
            socks[s.fileno()] = s
        index, round_, arrival = array("i"), array("i"), array("q")
        drain_until = 0.0
        while True:
            if slots[STOP] == 2 and not drain_until:
                drain_until = time.monotonic() + DRAIN_S
            if drain_until and time.monotonic() > drain_until:
                break
            for fd, _ev in ep.poll(0.05):
                s = socks[fd]
                while True:
                    try:
                        data, anc, _flags, _addr = s.recvmsg(16, _CMSG_SPACE)
                    except BlockingIOError:
                        break
                    if len(data) != PAYLOAD.size:
                        continue
                    i, r = PAYLOAD.unpack(data)
                    t = 0
                    for level, kind, payload in anc:
                        if level == socket.SOL_SOCKET and kind == SO_TIMESTAMPNS:
                            sec, nsec = TIMESPEC.unpack(payload[:TIMESPEC.size])
                            t = sec * 1_000_000_000 + nsec
                    index.append(i)
                    round_.append(r)
                    arrival.append(t or time.time_ns())
                    if i < len(self.pairs) and r > slots[base + i]:
                        slots[base + i] = r
        with open(self._out.name, "wb") as fh:
            fh.write(index.tobytes() + round_.tobytes() + arrival.tobytes())


def make_sockets(hosts: dict[str, tuple[str, str]]) -> dict[str, socket.socket]:
    """host -> (namespace, address): a UDP socket in each, bound to PROBE_PORT, kernel
    arrival stamps on, a receive buffer that holds seconds of probes."""
    out: dict[str, socket.socket] = {}
    for host, (ns, address) in hosts.items():
        with netns.inside(ns):
            s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 8 << 20)
        s.setsockopt(socket.SOL_SOCKET, SO_TIMESTAMPNS, 1)
        s.bind((address, PROBE_PORT))
        out[host] = s
    return out


def record(probes: Probes, rounds: list[int], deliveries: list[list[tuple[int, int]]], cut_ns: int,
           cut_end_ns: int, start_ns: int = 0) -> ProbeRecord:
    return ProbeRecord(probes.pairs, probes.interval_s, rounds, deliveries, cut_ns, cut_end_ns, 0, start_ns)


def save(rec: ProbeRecord, path: Path) -> None:
    """The record as JSON (the VM writes it; the host computes the outages)."""
    path.write_text(json.dumps({"pairs": rec.pairs, "interval_s": rec.interval_s, "round_ns": rec.round_ns,
                                "deliveries": rec.deliveries, "cut_ns": rec.cut_ns, "cut_end_ns": rec.cut_end_ns,
                                "unsent": rec.unsent, "start_ns": rec.start_ns}))


def load(path: Path) -> ProbeRecord:
    d = json.loads(path.read_text())
    return ProbeRecord([(a, b) for a, b in d["pairs"]], float(d["interval_s"]), [int(x) for x in d["round_ns"]],
                       [[(int(r), int(t)) for r, t in p] for p in d["deliveries"]], int(d["cut_ns"]),
                       int(d["cut_end_ns"]), int(d["unsent"]), int(d.get("start_ns", 0)))


def _fork(target: object) -> int:
    pid = os.fork()
    if pid:
        return pid
    status = 1
    try:                                     # the child: never returns
        signal.signal(signal.SIGINT, signal.SIG_IGN)    # the parent ends it (stop or kill)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGHUP, signal.SIG_DFL)
        target()                             # type: ignore[operator]
        status = 0
    finally:
        os._exit(status)


def _reap(pid: int, timeout_s: float) -> None:
    if not pid:
        return
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done, _status = os.waitpid(pid, os.WNOHANG)
        if done:
            return
        time.sleep(0.02)
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)


def memory_dir() -> str | None:
    from vlanroute.emulate.run import memory_dir as memory
    return memory()
