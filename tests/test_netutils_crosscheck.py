"""netutils (Network to Code) as an independent check of the project's VLAN lists, port
ranges and MAC forms, and a record of why the project keeps its own code for them
(docs/architecture.md, "Libraries and the project's own readers"):

- VLAN lists: netutils writes the same text as `format_vlan_list` when asked for ranges
  of two and one unbounded line, but it refuses ids outside 1-4094 (the project names
  such ids in error messages) and its reader `vlanconfig_to_list` is lax ("1-" reads as
  [1], "101 - 103" as [101, 103]) where `parse_vlan_list` must refuse a switch's malformed
  list.
- Port ranges: `interface_range_compress` sorts the ports and shortens the last end
  (`1/g1-3`); the project's lists keep panel order and write both ends in full, the way
  the PowerConnect CLI writes `interface range ethernet 1/g1-1/g48`.
- MACs: `is_valid_mac` also takes `00.13.c6.01.53.a7` and `0013:c601:53a7`, which the
  inventory refuses (tests/test_hosts_input.py); on the forms both accept, both give the
  same address.
"""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from vlanroute.model.inventory import normalise_mac
from vlanroute.model.portlist import format_port_list, parse_port_list
from vlanroute.vlanlist import VlanListError, format_vlan_list, parse_vlan_list

nu_vlan = pytest.importorskip("netutils.vlan")
nu_mac = pytest.importorskip("netutils.mac")
nu_iface = pytest.importorskip("netutils.interface")

ONE_LINE = 1_000_000          # netutils splits long lists into lines; vlanroute never does

vlan_sets = st.sets(st.integers(1, 4094), min_size=1, max_size=200)


def _netutils_text(ids: set[int]) -> str:
    lines = nu_vlan.vlanlist_to_config(sorted(ids), first_line_len=ONE_LINE, other_line_len=ONE_LINE,
                                       min_grouping_size=2)
    assert len(lines) == 1
    return str(lines[0])


@given(vlan_sets)
def test_format_vlan_list_writes_what_netutils_writes(ids: set[int]) -> None:
    assert format_vlan_list(ids) == _netutils_text(ids)


@given(vlan_sets)
def test_parse_vlan_list_reads_what_netutils_reads(ids: set[int]) -> None:
    text = _netutils_text(ids)
    assert list(parse_vlan_list(text)) == sorted(nu_vlan.vlanconfig_to_list(text)) == sorted(ids)


def test_a_pair_is_a_range_in_both() -> None:
    assert format_vlan_list([110, 111]) == _netutils_text({110, 111}) == "110-111"


@pytest.mark.parametrize("text, netutils_reads", [("1-", [1]), ("101 - 103", [101, 103])])
def test_netutils_reads_malformed_lists_that_vlanroute_refuses(text: str, netutils_reads: list[int]) -> None:
    assert nu_vlan.vlanconfig_to_list(text) == netutils_reads
    with pytest.raises(VlanListError):
        parse_vlan_list(text)


def test_netutils_refuses_ids_vlanroute_names_in_messages() -> None:
    assert format_vlan_list([5000]) == "5000"
    with pytest.raises(ValueError):
        nu_vlan.vlanlist_to_config([5000])


def test_port_ranges_netutils_sorts_and_shortens() -> None:
    ports = ("1/xg1", "1/g1", "1/g2", "1/g3")
    assert format_port_list(ports) == "1/xg1,1/g1-1/g3"
    assert parse_port_list(format_port_list(ports)) == ports
    assert nu_iface.interface_range_compress(list(ports)) == ["1/g1-3", "1/xg1"]
    # and its expansion does not read the full-ends form at all
    assert nu_iface.interface_range_expansion("1/g1-1/g3") == ["1/g1-1/g3"]


macs = st.integers(0, 2**48 - 1).filter(lambda m: m != 0 and not (m >> 40) & 1)


@given(macs, st.sampled_from(["MAC_COLON_TWO", "MAC_DASH_TWO", "MAC_DOT_FOUR", "MAC_NO_SPECIAL"]),
       st.booleans())
def test_normalise_mac_agrees_with_netutils(value: int, form: str, upper: bool) -> None:
    written = nu_mac.mac_to_format(f"{value:012x}", form)
    written = written.upper() if upper else written
    assert nu_mac.is_valid_mac(written)
    assert normalise_mac(written) == nu_mac.mac_to_format(written, "MAC_COLON_TWO").lower()


@pytest.mark.parametrize("written", ["00.13.c6.01.53.a7", "0013:c601:53a7", "0013-c601-53a7"])
def test_netutils_takes_mac_forms_the_inventory_refuses(written: str) -> None:
    assert nu_mac.is_valid_mac(written)
    with pytest.raises(ValueError, match="not a MAC"):
        normalise_mac(written)
