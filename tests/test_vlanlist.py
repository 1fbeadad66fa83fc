"""VLAN id lists: the CLI text form and iproute2's `vid` arguments (vlanroute/vlanlist.py)."""

from __future__ import annotations

from hypothesis import given, strategies as st

from vlanroute.vlanlist import bridge_vids, format_vlan_list, parse_vlan_list, vlan_runs

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
