"""Defaults of `vlanroute draw` and `report`, apart from vlanroute.pictures.draw so that the CLI can
show them without importing matplotlib (about a second) on every vlanroute command."""

from __future__ import annotations

FORMATS = ("png", "svg")
DEFAULT_MAX_VLANS = 16        # per-VLAN pictures drawn unless --max-vlans / --vlans say otherwise
INDEX_FILE = "index.txt"      # what was drawn and what was left out; marks a draw directory
REPORT_MAX_VLANS = 8          # per-VLAN pictures inlined in the report (the overview shows every VLAN)
