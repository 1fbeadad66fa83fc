"""The emulation waits until the kernel has acted on every link coming up before the
learning frames go out (emulate/run.py, Emulation.wait_for_links). Without the wait, frames
sent in the first second were dropped (veth carrier is acted on in deferred linkwatch work,
bond members are seen up at the next miimon poll) and MAC-table entries behind inter-switch
links were missing in about one run in two. The VM tests prove the whole; these check the
parts that need no kernel."""

from __future__ import annotations

import shutil
from pathlib import Path

from vlanroute.emulate import netns
from vlanroute.emulate.run import Emulation

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "proc"


def test_bond_member_seen_down_is_reported(tmp_path: Path) -> None:
    # Captured in the emulation VM (Debian 6.1): bond1 balance-xor miimon 100, p47's peer up,
    # p48's peer down. The bond's own "MII Status: up" line is not a member.
    shutil.copy(FIXTURES / "bond1-one-member-down", tmp_path / "bond1")
    assert netns.bond_members_down(tmp_path) == ["p48"]


def test_no_bonding_directory_means_no_bond_members(tmp_path: Path) -> None:
    assert netns.bond_members_down(tmp_path / "absent") == []


def _emulation(answers: list[list[str]]) -> Emulation:
    emu = object.__new__(Emulation)
    emu._links_not_ready = lambda: answers.pop(0) if len(answers) > 1 else answers[0]  # type: ignore[method-assign]
    return emu


def test_wait_returns_once_every_link_is_ready() -> None:
    answers = [["sw1 p511"], ["sw1 p511 (bridge port disabled)"], []]
    assert _emulation(answers).wait_for_links(timeout_s=5) == []
    assert answers == [[]]          # asked until the answer was "nothing waiting"


def test_wait_gives_up_naming_the_links_still_down() -> None:
    problems = _emulation([["sw2 p512 (bond member)"]]).wait_for_links(timeout_s=0.2)
    assert problems == ["sw2 p512 (bond member): not up 0.2 s after the switch scripts ran"]


def test_a_link_ready_at_once_needs_no_wait() -> None:
    assert _emulation([[]]).wait_for_links(timeout_s=0) == []


def test_a_signal_whose_raise_was_swallowed_still_stops_the_run() -> None:
    """SIGTERM landing in a callback whose exceptions Python prints and drops (logging's
    lock release after each fork of a subprocess) used to let the run go on to PASS; the
    next step now stops it."""
    import signal

    from vlanroute.emulate import run as emulate_run

    emu = object.__new__(Emulation)
    emu.options = emulate_run.Options()
    emu.durations, emu.outputs = [], {}
    with emulate_run._signals_raise():
        try:
            emulate_run._on_signal(signal.SIGTERM, None)
        except emulate_run._Interrupted:
            pass                                   # what the at-fork callback's caller does
        try:
            emu.run_scripts({"never": ["true"]})
        except emulate_run._Interrupted as exc:
            assert str(exc) == "SIGTERM"
        else:
            raise AssertionError("the pending SIGTERM did not stop the next step")
    assert emulate_run._PENDING == []              # a later run starts clean
