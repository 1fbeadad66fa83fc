"""traffic()'s sender waits for the kernel's input backlog before each step; a failed traffic
check says where frames were dropped and in which steps."""
from __future__ import annotations

import errno
import json
import os
import socket
from collections import Counter
from collections.abc import Iterator, Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from vlanroute.emulate import netns, run
from vlanroute.emulate.failure import predicted_loss_check
from vlanroute.emulate.kmsg import KernelLog

KERNEL_6_1_ROW = ("0001a2b3 {dropped} 00000005 00000000 00000000 00000000 00000000 00000000 "
                  "00000000 00000000 00000000 {backlog} 00000000\n")


def test_backlog_drops_and_length_sum_their_columns_over_every_cpu(tmp_path: Path) -> None:
    # softnet_seq_show in kernel 6.1 (net/core/net-procfs.c), one row per CPU: processed,
    # dropped, time_squeeze, five zeros, cpu_collision 0, received_rps, flow_limit_count,
    # softnet_backlog_len, the CPU's index.
    stat = tmp_path / "softnet_stat"
    stat.write_text(KERNEL_6_1_ROW.format(dropped="00000000", backlog="000003e8")
                    + KERNEL_6_1_ROW.format(dropped="0000001f", backlog="00000011"))
    assert netns.backlog_drops(stat) == 31
    assert netns.backlog_length(stat) == 1000 + 17


def test_backlog_length_is_unknown_where_the_kernel_does_not_print_it(tmp_path: Path) -> None:
    stat = tmp_path / "softnet_stat"
    stat.write_text("0001a2b3 00000000 00000005 00000000 00000000 00000000 00000000 00000000 "
                    "00000000 00000000 00000000\n")        # 11 columns: before the backlog's length
    assert netns.backlog_length(stat) is None


def test_this_kernel_prints_the_backlog_length() -> None:
    assert netns.backlog_length() is not None


@pytest.fixture
def loopback_pair() -> Iterator[tuple[dict[str, socket.socket], dict[str, tuple[str, int]], socket.socket]]:
    """Hosts a and b sending from loopback sockets to one receiving socket."""
    rx = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    rx.bind(("127.0.0.1", 0))
    socks = {h: socket.socket(socket.AF_INET, socket.SOCK_DGRAM) for h in ("a", "b")}
    to = {h: rx.getsockname() for h in ("a", "b")}
    yield socks, to, rx
    for s in (rx, *socks.values()):
        s.close()


def _run_sender(socks: dict[str, socket.socket], to: dict[str, tuple[str, int]],
                backlog_values: Sequence[int | None], steps: int) -> dict[str, Any]:
    values = iter(backlog_values)

    def backlog() -> int | None:              # runs in the child: its own copy of `values`
        return next(values, 0)

    plan = [[("a", "b"), ("b", "a")] for _ in range(steps)]
    pid, fd = run._fork_sender(plan, [0.0] * steps, socks, to, 1, backlog)
    report = b""
    while chunk := os.read(fd, 65536):
        report += chunk
    os.close(fd)
    _pid, status = os.waitpid(pid, 0)
    assert status == 0
    return json.loads(report)


def _received(rx: socket.socket) -> list[bytes]:
    rx.settimeout(1.0)
    got = []
    try:
        while True:
            got.append(rx.recv(100))
            rx.settimeout(0.1)
    except TimeoutError:
        return got


def test_the_sender_waits_while_the_backlog_is_full_then_sends_everything(loopback_pair) -> None:
    socks, to, rx = loopback_pair
    high = run.SENDER_BACKLOG_HIGH
    # Step 1 finds the backlog full twice before it drains; step 2 finds it just at the limit.
    report = _run_sender(socks, to, [high + 500, high + 7000, high - 1, high, 0], steps=3)
    assert report["backlog_peak"] == high + 7000
    assert report["unsent"] == [] and report["send_errors"] == {} and report["send_retries"] == 0
    assert report["backlog_waits"] == 1
    assert report["backlog_peak"] == high + 7000
    assert sorted(_received(rx)) == sorted([b"a>b", b"b>a"] * 3)


def test_the_sender_gives_up_waiting_after_the_stall_time(loopback_pair, monkeypatch) -> None:
    socks, to, rx = loopback_pair
    monkeypatch.setattr(run, "SENDER_BACKLOG_STALL_S", 0.05)
    stuck = [run.SENDER_BACKLOG_HIGH + 1] * 100_000        # never drains
    report = _run_sender(socks, to, stuck, steps=2)
    assert report["backlog_waits"] == 2
    assert 0.1 <= report["backlog_wait_s"] < 1.0
    assert len(_received(rx)) == 4                          # sent anyway: a loss shows in the checks


def test_no_backlog_length_means_no_wait(loopback_pair) -> None:
    socks, to, rx = loopback_pair
    report = _run_sender(socks, to, [None] * 10, steps=2)
    assert report["backlog_waits"] == 0 and report["backlog_peak"] is None
    assert len(_received(rx)) == 4


# /proc/net/dev as kernel 6.1 prints it (net/core/net-procfs.c, dev_seq_printf_stats).
NET_DEV = """Inter-|   Receive                                                |  Transmit
 face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier compressed
    lo:       0       0    0    0    0     0          0         0        0       0    0    0    0     0       0          0
  eth0: 5218030   62170    0    3    0     0          0         0  4982311   60011    0   41    0     0       0          0
"""


def test_interface_drops_read_the_receive_and_transmit_drop_columns(tmp_path: Path) -> None:
    dev = tmp_path / "dev"
    dev.write_text(NET_DEV)
    assert netns.interface_drops(dev) == {"lo": (0, 0), "eth0": (3, 41)}


def test_udp_receive_errors_read_the_udp_in_errors(tmp_path: Path) -> None:
    snmp = tmp_path / "snmp"
    snmp.write_text("Ip: Forwarding DefaultTTL\nIp: 2 64\n"
                    "Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors "
                    "IgnoredMulti MemErrors\nUdp: 50176 0 224 50400 224 0 0 0 0\n"
                    "UdpLite: InDatagrams NoPorts InErrors\nUdpLite: 0 0 7\n")
    assert netns.udp_receive_errors(snmp) == 224


def test_this_kernel_answers_both_readers() -> None:
    assert "lo" in netns.interface_drops()
    assert netns.udp_receive_errors() >= 0


HOSTS = [f"h{i}" for i in range(10)]


def test_lost_pairs_in_consecutive_steps_show_as_one_band() -> None:
    # Steps 3 to 5 lost for every host (a stall), and one pair of step 8.
    lost = [(HOSTS[i], HOSTS[(i + k) % 10]) for k in (3, 4, 5) for i in range(10)] + [("h2", "h0")]
    assert run.lost_by_step(HOSTS, lost).endswith("3-5 (30), 8 (1)")


def _emulation_after_traffic(received: Counter, drops: list[str]) -> SimpleNamespace:
    return SimpleNamespace(plan=SimpleNamespace(hosts={h: None for h in HOSTS[:4]}),
                           received=received, traffic_drops=drops, unsent=Counter())


def test_the_cut_check_puts_the_drops_and_the_steps_of_the_unpredicted_losses_first() -> None:
    hosts = HOSTS[:4]
    predicted = {("h0", "h1"), ("h1", "h0")}
    received = Counter({(b, a): 1 for a in hosts for b in hosts if a != b and (a, b) not in predicted})
    del received[("h3", "h2")]                                # h2 -> h3 lost, step 1
    emu = _emulation_after_traffic(received, ["the kernel dropped 9 frames at a full input backlog"])
    check = predicted_loss_check(emu, predicted, 1)
    assert not check.ok
    assert check.problems == ["the kernel dropped 9 frames at a full input backlog",
                              "pairs not delivered by step (of 3; step k sends host i -> host i+k): 1 (1)",
                              "h2 -> h3: 0 of 1 datagrams"]
    assert check.detail.startswith("2/2 predicted pairs cut, 9/10 other pairs")


def test_a_cut_check_that_passes_carries_no_drop_lines() -> None:
    hosts = HOSTS[:4]
    predicted = {("h0", "h1")}
    received = Counter({(b, a): 1 for a in hosts for b in hosts if a != b and (a, b) not in predicted})
    check = predicted_loss_check(_emulation_after_traffic(received, []), predicted, 1)
    assert check.ok and check.problems == []


class _RefusingSocket:
    """A socket whose sendto raises the errors given, one per call, then sends."""

    def __init__(self, real: socket.socket, errors: list[int]) -> None:
        self.real, self.errors = real, errors
        self.sent: list[bytes] = []

    def fileno(self) -> int:                   # select() waits on the real, writable socket
        return self.real.fileno()

    def sendto(self, payload: bytes, to: tuple[str, int]) -> int:
        if self.errors:
            code = self.errors.pop(0)
            raise (BlockingIOError if code == errno.EAGAIN else OSError)(code, os.strerror(code))
        self.sent.append(payload)
        return len(payload)


def test_a_send_refused_for_a_moment_is_retried(loopback_pair) -> None:
    socks, to, _rx = loopback_pair
    sock = _RefusingSocket(socks["a"], [errno.EAGAIN, errno.ENOBUFS, errno.EAGAIN])
    retried = [0]
    assert run._send(sock, b"a>b", to["b"], retried) is None   # type: ignore[arg-type]
    assert sock.sent == [b"a>b"] and retried == [3]


def test_a_send_refused_for_good_is_given_up_with_its_error(loopback_pair, monkeypatch) -> None:
    socks, to, _rx = loopback_pair
    monkeypatch.setattr(run, "SEND_RETRY_S", 0.05)
    sock = _RefusingSocket(socks["a"], [errno.ENOBUFS] * 100_000)
    assert run._send(sock, b"a>b", to["b"], [0]) == "ENOBUFS"   # type: ignore[arg-type]
    other = _RefusingSocket(socks["a"], [errno.EHOSTUNREACH])     # not retried
    retried = [0]
    assert run._send(other, b"a>b", to["b"], retried) == "EHOSTUNREACH" and retried == [0]   # type: ignore[arg-type]
    assert sock.sent == [] and other.sent == []


def test_the_kernel_log_returns_what_was_logged_since_it_was_opened() -> None:
    if not os.access("/dev/kmsg", os.R_OK | os.W_OK):
        pytest.skip("/dev/kmsg not readable and writable (not root)")
    token = f"vlanroute test {os.getpid()} {os.urandom(4).hex()}"   # other tests log too
    with open("/dev/kmsg", "w") as out:
        out.write(f"{token}: before\n")
    log = KernelLog()
    try:
        with open("/dev/kmsg", "w") as out:
            out.write(f"{token}: after\n")
        ours = [line for line in log.new(limit=1000) if token in line]
        assert len(ours) == 1 and ours[0].startswith("[") and ours[0].endswith(f"] {token}: after")
        assert not [line for line in log.new(limit=1000) if token in line]     # each message once
    finally:
        log.close()


def test_no_kernel_log_device_means_no_lines(tmp_path: Path) -> None:
    log = KernelLog(str(tmp_path / "no-such-kmsg"))
    assert log.new() == []
    log.close()
