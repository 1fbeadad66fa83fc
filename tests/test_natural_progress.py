"""Natural order of switch and host names (vlanroute.natural) where people read them, and the
progress display (vlanroute.commands.progress): shown on a terminal, silent elsewhere."""

from __future__ import annotations

import io
import time
from pathlib import Path

from hypothesis import given, strategies as st
from rich.console import Console

from vlanroute.commands import progress
from vlanroute.natural import natsorted, natural_key


def test_numbers_compare_as_numbers() -> None:
    assert natsorted(["sw10", "sw2", "sw1", "leaf1", "sw1a", "node010", "node9"]) == \
        ["leaf1", "node9", "node010", "sw1", "sw1a", "sw2", "sw10"]
    assert natsorted(["1/g10", "1/g9", "2/g1", "1/xg1"]) == ["1/g9", "1/g10", "1/xg1", "2/g1"]
    assert natsorted(["rack2-n10", "rack2-n9", "rack10-n1"]) == ["rack2-n9", "rack2-n10", "rack10-n1"]


@given(st.lists(st.from_regex(r"[a-z]{1,3}[0-9]{0,3}(-[a-z]?[0-9]{0,3})?", fullmatch=True), max_size=30))
def test_natural_order_is_total_and_keeps_plain_numbers_numeric(names: list[str]) -> None:
    ordered = natsorted(names)                  # never compares an int with a str
    assert sorted(ordered) == sorted(names)
    keys = [natural_key(n) for n in ordered]
    assert keys == sorted(keys)


@given(st.text("ab", min_size=1, max_size=3), st.integers(0, 10_000), st.integers(0, 10_000))
def test_same_prefix_orders_by_number(prefix: str, a: int, b: int) -> None:
    assert (natural_key(f"{prefix}{a}") < natural_key(f"{prefix}{b}")) == (a < b)


def test_push_and_audit_visit_switches_in_natural_order(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from vlanroute.device.targets import select_targets
    from vlanroute.plan.build import plan_from_file
    from vlanroute.render.write import RenderOptions, render_to_dir
    inv = tmp_path / "ring12.yaml"
    inv.write_text("name: ring12\nplatform: powerconnect-6248\ntopology: {kind: ring, size: 12}\n"
                   "hosts: {count: 12}\n")
    sets = tuple(f"switches.sw{i}.mgmt=127.0.0.{10 + i}" for i in range(1, 13))
    doc = plan_from_file(inv, sets).to_document()
    out = tmp_path / "out"
    render_to_dir(doc, out, RenderOptions(verify=False))
    names = [t.name for t in select_targets(out, doc, (), action="audit").targets]
    assert names == [f"sw{i}" for i in range(1, 13)]


def test_counts_bar_shows_counts_by_state_on_a_terminal_only() -> None:
    buf = io.StringIO()
    term = Console(file=buf, force_terminal=True, width=120)
    with progress.CountsBar("push", term, progress.wanted(term)) as bar:
        for name in ("sw1", "sw2", "sw10"):
            bar.state(name, "waiting")
        bar.state("sw1", "applied", done=True)
        bar.state("sw2", "applied", done=True)
        bar.state("sw10", "rolled-back", done=True)
    text = buf.getvalue()
    assert "3/3" in text and "2 applied, 1 rolled-back" in text
    pipe = io.StringIO()
    not_term = Console(file=pipe, force_terminal=False)
    assert not progress.wanted(not_term)
    with progress.CountsBar("push", not_term, progress.wanted(not_term)) as bar:
        bar.state("sw1", "applied", done=True)
    assert pipe.getvalue() == ""
    assert not progress.wanted(term, as_json=True) and not progress.wanted(term, quiet=True)


def test_phase_spinner_appears_only_after_a_delay(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(progress, "SPINNER_AFTER_S", 0.2)
    quick, slow = io.StringIO(), io.StringIO()
    with progress.phases("planning", True, Console(file=quick, force_terminal=True)):
        pass
    assert "planning" not in quick.getvalue()
    with progress.phases("planning", True, Console(file=slow, force_terminal=True)) as p:
        time.sleep(0.5)
        p.phase("rendering")
        time.sleep(0.3)
    assert "planning" in slow.getvalue() and "rendering" in slow.getvalue()


def test_push_prints_diffs_and_commands_in_natural_order_not_as_switches_finish(tmp_path: Path) -> None:
    # Workers finish in any order; Pusher.run returns the targets' (natural) order, and the
    # diff and command sections follow it, so two runs print the same page.
    from types import SimpleNamespace

    from vlanroute.commands.push import print_changes
    from vlanroute.device.push import PushOptions, PushUI, Pusher, SwitchResult

    finished: list[str] = []

    def one(self, target, previous):  # type: ignore[no-untyped-def]
        time.sleep({"sw1": 0.3, "sw2": 0.15, "sw10": 0.0}[target.name])      # sw10 first, sw1 last
        finished.append(target.name)
        return SwitchResult(target.name, "dry-run", diff=[f"+{target.name} line"], commands=[f"{target.name} cmd"])

    pusher = Pusher(tmp_path, None, None, PushOptions(workers=3), PushUI())  # type: ignore[arg-type]
    pusher._one = one.__get__(pusher)          # type: ignore[method-assign]
    results = pusher.run([SimpleNamespace(name=n) for n in ("sw1", "sw2", "sw10")])  # type: ignore[misc]
    assert finished == ["sw10", "sw2", "sw1"]
    buf = io.StringIO()
    print_changes(Console(file=buf, width=200), results, show_commands=True)
    headings = [line.split(":")[0] for line in buf.getvalue().splitlines() if ": " in line]
    assert headings == ["sw1", "sw1", "sw2", "sw2", "sw10", "sw10"]
    buf = io.StringIO()
    print_changes(Console(file=buf, width=200), results, show_commands=False)
    assert [line.split(":")[0] for line in buf.getvalue().splitlines()] == ["sw1", "sw2", "sw10"]


def test_discover_lists_switches_links_and_hosts_in_natural_order() -> None:
    # A ring of 12 read over LLDP becomes an inventory fragment whose order is the natural
    # one (it becomes the topology's and the hosts' order when planned): sw9-sw10, not sw10-sw9.
    from vlanroute.device.discover import discover
    from vlanroute.device.lldp import LldpTable
    from vlanroute.drivers.family import LldpNeighbor
    names = [f"sw{i}" for i in range(1, 13)]
    rows: dict[str, list[LldpNeighbor]] = {n: [] for n in names}
    for i, n in enumerate(names):
        m = names[(i + 1) % 12]
        rows[n].append(LldpNeighbor("1/g48", "aa:bb:cc:00:00:01", "1/g47", m))
        rows[m].append(LldpNeighbor("1/g47", "aa:bb:cc:00:00:02", "1/g48", n))
        rows[n].append(LldpNeighbor(f"1/g{i + 1}", f"02:00:00:00:00:{i + 1:02x}", f"02:00:00:00:00:{i + 1:02x}",
                                    f"node{i + 1}"))
    found = discover({n: LldpTable(n, tuple(rows[n])) for n in sorted(names)})
    assert found.switches == names
    assert [(link["a"], link["b"]) for link in found.links] == \
        [("sw1", "sw2"), ("sw1", "sw12"), *((f"sw{i}", f"sw{i + 1}") for i in range(2, 12))]
    assert [h["name"] for h in found.hosts] == [f"node{i}" for i in range(1, 13)]
