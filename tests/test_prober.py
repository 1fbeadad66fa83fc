"""The transition prober (vlanroute/emulate/transition.py's Prober) on loopback sockets.

A pause or a stop must count a round only once it has been sent and has arrived: the sender
looks for a pause between rounds only, and on a loaded machine a round outlasts any fixed
sleep. CI lost the last round of 36 pairs that way in a VM under TCG, and the check called it
loss during the transition. Here a round is made slow on purpose (each datagram delayed), and
the prober is paused and stopped in the middle of one.
"""

from __future__ import annotations

import contextlib
import os
import socket
import time
from types import SimpleNamespace

import pytest

from vlanroute.emulate import transition
from vlanroute.emulate.transition import Prober

pytestmark = [pytest.mark.root, pytest.mark.skipif(os.geteuid() != 0, reason="SO_RCVBUFFORCE needs root")]

HOSTS = [f"h{i}" for i in range(1, 7)]
PAIRS = [(a, b) for a in HOSTS for b in HOSTS if a != b]          # 30 pairs


class SlowSocket:
    """A host's socket whose datagrams leave 25 ms apart: a round of 30 takes 0.75 s, longer
    than the prober's quiet time and than the fixed sleeps it once had (0.3 s to pause, 0.5 s
    to stop). A datagram to an address in `cut` is dropped (a cut pair)."""

    def __init__(self, sock, cut: set[str]) -> None:  # type: ignore[no-untyped-def]
        self.sock, self.cut = sock, cut

    def sendto(self, data: bytes, to: tuple[str, int]) -> int:
        time.sleep(0.025)
        return len(data) if to[0] in self.cut else self.sock.sendto(data, to)

    def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
        return getattr(self.sock, name)


def slow_prober(emu, cut: frozenset[str] = frozenset()) -> Prober:  # type: ignore[no-untyped-def]
    """A prober whose hosts send slowly; h1's datagrams to the addresses in `cut` are lost."""
    p = Prober(emu, PAIRS, gap_s=0.0)
    p.socks = {h: SlowSocket(s, set(cut) if h == "h1" else set()) for h, s in p.socks.items()}  # type: ignore[misc]
    return p


@pytest.fixture
def emu(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(transition.netns, "inside", lambda ns: contextlib.nullcontext())
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as free:       # xdist workers run side by side
        free.bind(("127.0.0.1", 0))
        monkeypatch.setattr(transition, "PROBE_PORT", free.getsockname()[1])
    fake = SimpleNamespace(host_ns=lambda h: h, sockets=[],
                           plan=SimpleNamespace(hosts={h: SimpleNamespace(address=f"127.0.0.{i + 2}")
                                                       for i, h in enumerate(HOSTS)}))
    yield fake
    for s in fake.sockets:
        s.close()


def test_a_stop_in_the_middle_of_a_round_waits_for_it(emu) -> None:  # type: ignore[no-untyped-def]
    p = slow_prober(emu)
    p.start()
    time.sleep(0.2)                      # in the middle of round 0
    p.stop()
    assert p.rounds >= 1
    assert p.lost() == {}, "the last round was counted before it had arrived"


def test_a_pause_in_the_middle_of_a_round_waits_for_it(emu) -> None:  # type: ignore[no-untyped-def]
    p = slow_prober(emu)
    p.start()
    time.sleep(0.2)
    p.pause()
    sent = p.rounds
    time.sleep(0.3)
    assert p.rounds == sent, "a paused prober sends nothing"
    assert all(p.got[(a, b, r)] == 1 for a, b in PAIRS for r in range(sent))
    p.resume()
    time.sleep(0.2)
    p.stop()
    assert p.rounds > sent and p.lost() == {}


def test_a_cut_pair_is_lost_in_every_round_and_the_stop_still_ends(emu) -> None:  # type: ignore[no-untyped-def]
    p = slow_prober(emu, cut=frozenset({emu.plan.hosts["h2"].address}))
    p.start()
    time.sleep(0.2)
    began = time.monotonic()
    p.stop()
    assert time.monotonic() - began < transition.DRAIN_MAX_S
    assert p.lost() == {("h1", "h2"): list(range(p.rounds))}
