"""Shared fixtures and the test tiers.

Helper modules beside this file (plancheck, topologies, render_fixtures, push_support,
emulate_support, import_blocker) hold shared functions; no test module imports another test module.

Markers, registered in pyproject.toml and enforced with --strict-markers:
- `vm`: boots the Debian kernel under QEMU (tens of seconds per test);
- `browser`: runs headless Chromium;
- `root`: needs root (network namespaces); skipped when not root;
- `pip_install`: creates a virtual environment and pip-installs the project into it;
- `slow`: takes more than about 10 s. Every `vm`, `browser` and `pip_install` test is
  `slow` as well (added below), so `python -m pytest -q -m "not slow"` is the fast tier
  for development, and `python -m pytest -q` (what .ci/run does) runs everything.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from vlanroute.lab import FakeSwitchFarm

# The emulation VM (vlanroute/emulate/vm.py) with 1 vCPU in the suite: QEMU's TCG runs a
# host thread per vCPU, and the suite's four workers already share the 2 cores. Side by side on
# the 2-core machine, test_a_small_cluster_loses_switch_sw1_and_recovers took 60 s of CPU with
# 2 vCPUs and 27 s with 1 (and less wall time); the checks do not depend on the count.
os.environ.setdefault("VLANROUTE_VM_CPUS", "1")

# pytest keeps each test module's assert-rewritten bytecode in __pycache__, unless the
# interpreter writes no bytecode (PYTHONDONTWRITEBYTECODE, set on some machines and
# images): then every xdist worker rewrites all 300 test modules on every run, 17 s of the
# fast tier's collection per worker on the 2-core machine (28 s against 11 s, 2026-12-02).
# The test run writes it anyway: __pycache__ is git-ignored, and a failed write is ignored.
sys.dont_write_bytecode = False

SLOW_KINDS = ("vm", "browser", "pip_install")
SLOW_LIST = Path(__file__).with_name("slow_tests.txt")


# Seconds a test of each kind takes when tests/slow_tests.txt gives no figure (for the order
# below only): a guess that puts the VMs before the pip installs, those before the rest.
KIND_SECONDS = (("vm", 120.0), ("pip_install", 90.0), ("browser", 30.0), ("slow", 10.0))


def slow_list() -> dict[str, float]:
    """Node id -> the seconds its comment gives ("# 12.3 s"; 10 without one), for every id in
    tests/slow_tests.txt."""
    out: dict[str, float] = {}
    for line in SLOW_LIST.read_text().splitlines():
        node, _, comment = line.partition("#")
        if node.strip():
            figure = comment.strip().split(" ", 1)[0]
            out[node.strip()] = float(figure) if figure.replace(".", "", 1).isdigit() else 10.0
    return out


def slow_node_ids() -> set[str]:
    """The node ids tests/slow_tests.txt marks slow (profiled; comments after #)."""
    return set(slow_list())


@pytest.hookimpl(hookwrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Iterator[None]:
    """Mark slow before `-m` deselects anything; order what is left after."""
    listed = slow_node_ids()
    for item in items:
        if any(item.get_closest_marker(kind) for kind in SLOW_KINDS) or item.nodeid in listed:
            item.add_marker(pytest.mark.slow)
    yield
    longest_first(config, items)


def expected_seconds(item: pytest.Item, listed: dict[str, float]) -> float:
    if item.nodeid in listed:
        return listed[item.nodeid]
    return next((s for kind, s in KIND_SECONDS if item.get_closest_marker(kind)), 0.0)


def longest_first(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Longest first, for pytest-xdist's work stealing (`--dist worksteal`, addopts): it gives
    worker 1 the first 1/n of the list and worker k the k-th, then lets an idle worker take
    the second half of a busy one's queue. The suite lasts at least as long as its longest
    test (the 225-host failure scenario in the VM), so that test heads worker 1's share,
    followed by the quick ones in file order (a worker keeps 2 queued tests that no one
    steals: quick ones); the next-longest head the other workers' shares, longest first.
    Reordering changes no result: every test is independent (tmp_path, own ports)."""
    workers = int(getattr(config, "workerinput", {}).get("workercount", 1))
    if workers < 2 or len(items) < 2 * workers:
        return
    listed = slow_list()
    rank = sorted(range(len(items)), key=lambda i: -expected_seconds(items[i], listed))   # stable
    share = len(items) // workers          # worksteal's first share (the others take the rest)
    others = rank[1:1 + len(items) - share]
    first = sorted(set(range(len(items))) - set(others))
    first.remove(rank[0])
    items[:] = [items[rank[0]]] + [items[i] for i in first] + [items[i] for i in others]


@pytest.fixture(scope="session")
def torus_bundles(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """The seed torus rendered (OUTDIR) and that bundle repaired around the pair sw1:sw2
    (NEWDIR), for the commands that take a rendered bundle; tests copy them before any edit."""
    from vlanroute import api
    from vlanroute.cli import main
    tmp = tmp_path_factory.mktemp("bundles")
    out, new = tmp / "out", tmp / "repaired"
    api.render(Path(__file__).resolve().parent.parent / "inventories" / "seed-torus.yaml", out)
    assert main(["repair", str(out), "--failed-pair", "sw1:sw2", "-o", str(new), "-q", "--no-compare"]) == 0
    return out, new


@pytest.fixture
def farm() -> Iterator[FakeSwitchFarm]:
    """Emulated PowerConnect 6248 switches (vlanroute.lab), each on its own 127.0.0.x
    address; all are stopped when the test ends."""
    from vlanroute.lab import FakeSwitchFarm
    with FakeSwitchFarm() as f:
        yield f


@pytest.fixture(autouse=True)
def no_terminal_size(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tables fit $COLUMNS when it is set (commands/tables.py); a test sees no terminal
    width unless it sets one, whoever runs it (a terminal, CI, a pytest-xdist worker)."""
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.delenv("LINES", raising=False)


@pytest.fixture(autouse=True)
def private_state_dir(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """push keeps backups and journals under $XDG_STATE_HOME/vlanroute/<plan>: never the
    user's own state directory during tests."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("xdg-state")))


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Stop the Nautobot server the tests shared (tests/nautobot_server.py, test_nautobot.py):
    once, in the process that ran the whole session (pytest-xdist's controller, or pytest
    itself), after every worker is done with it."""
    if hasattr(session.config, "workerinput"):
        return
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None or getattr(factory, "_basetemp", None) is None:
        return
    shared = Path(factory.getbasetemp()) / "nautobot"
    if (shared / "nautobot-server.json").exists():
        import nautobot_server
        nautobot_server.stop(shared)
