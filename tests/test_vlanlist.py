"""VLAN id lists: the CLI text form and iproute2's `vid` arguments (vlanroute/vlanlist.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, strategies as st

from vlanroute.cli import main
from vlanroute.vlanlist import VlanListError, bridge_vids, format_vlan_list, parse_vlan_list, vlan_runs

IDS = st.sets(st.integers(min_value=1, max_value=80), max_size=60)


@given(IDS)
def test_runs_cover_exactly_the_ids_and_are_maximal(ids: set[int]) -> None:
    runs = vlan_runs(ids)
    covered = [v for a, b in runs for v in range(a, b + 1)]
    assert covered == sorted(ids)                              # in order, each id once
    # maximal: two runs are never adjacent
    assert all(b + 1 < c for (_, b), (c, _) in zip(runs, runs[1:]))


@given(IDS)
def test_the_text_form_reads_back(ids: set[int]) -> None:
    text = format_vlan_list(ids)
    assert (parse_vlan_list(text) if ids else ()) == tuple(sorted(ids))


@given(IDS, st.integers(min_value=1, max_value=80))
def test_bridge_vids_are_what_iproute2_accepts(ids: set[int], exclude: int) -> None:
    """One id, or a range A-B with A < B (iproute2's bridge/vlan.c refuses A-A), covering
    the ids less `exclude`."""
    got: list[int] = []
    for arg in bridge_vids(ids, exclude):
        first, sep, last = arg.partition("-")
        assert first.isdigit() and (not sep or (last.isdigit() and int(last) > int(first)))
        got.extend(range(int(first), int(last or first) + 1))
    assert got == sorted(ids - {exclude})


def test_examples() -> None:
    assert format_vlan_list([110, 101, 102, 103]) == "101-103,110"
    assert bridge_vids([101, 102, 103, 110], 102) == ["101", "103", "110"]
    assert bridge_vids(range(2, 258), 101) == ["2-100", "102-257"]


@pytest.mark.parametrize("text", ["101-999999999", "4096", "1-4096", "101,5000"])
def test_an_id_beyond_12_bits_is_refused_before_the_range_is_built(text: str) -> None:
    # `draw --vlans 101-999999999` built a billion-element set and ran out of memory
    with pytest.raises(VlanListError, match="beyond 4095"):
        parse_vlan_list(text)
    assert parse_vlan_list("4094-4095") == (4094, 4095)     # reserved, but a list may name them


def test_draw_names_the_option_of_a_range_beyond_12_bits(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    inv = tmp_path / "t.yaml"
    inv.write_text("name: t\ntopology: {kind: ring, size: 3}\nhosts: {count: 3}\n")
    assert main(["draw", str(inv), "-o", str(tmp_path / "d"), "--vlans", "101-999999999"]) == 2
    assert "--vlans: bad VLAN list '101-999999999': 999999999 is beyond 4095" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()
