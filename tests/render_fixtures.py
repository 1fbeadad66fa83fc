"""A hand-written plan (docs/plan-format.md) for a 3-switch ring, used by the render tests
until/besides the planner's own output.

Ring sw1 - sw2 - sw3 - sw1, two hosts per switch, one VLAN per source switch (shortest-path
trees): VLAN 101 (hosts of sw1) uses sw1-sw2 and sw1-sw3; 102 uses sw1-sw2 and sw2-sw3;
103 uses sw1-sw3 and sw2-sw3. sw1-sw2 is a static LAG of two cables; port P23 of sw1 is
reserved. `port(n)` maps the abstract port number to the platform's port name.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from vlanroute.bundle.document import PlanDocument, plan_document

PORTS: dict[str, Callable[[int], str]] = {
    "powerconnect-6248": lambda n: f"1/g{n}",
    "powerconnect-8132": lambda n: f"Te1/0/{n}",
    "apresia-15000-64xl": lambda n: f"1/{n}",
    "linux-bridge": lambda n: f"p{n}",
}


def ring3_plan(platform: str = "powerconnect-6248", **settings: Any) -> dict[str, Any]:
    p = PORTS[platform]
    all_v = [101, 102, 103]

    def host(h: str, vid: int) -> dict[str, Any]:
        return {"role": "host", "host": h, "pvid": vid, "untagged": list(all_v), "tagged": []}

    def isl(nb: str, tagged: list[int], lag: int | None = None) -> dict[str, Any]:
        return {"role": "lag-member" if lag else "inter-switch", "neighbor": nb, "lag": lag,
                "pvid": None, "untagged": [], "tagged": tagged}

    doc: dict[str, Any] = {
        "format": "vlanroute-plan/2",
        "name": "ring3",
        "inventory": "tests/ring3.yaml",
        "topology": {"kind": "ring", "size": 3, "links_per_pair": 1},
        "routing": {"algorithm": "shortest"},
        "settings": {
            "aging_time": 1000000, "flow_control": True, "eee": False, "lag_hash": "src-dst-ip-port",
            "learning": {"pool": "10.250.0.0/16", "prefix_len": 24, "interval_s": 86400, "splay_s": 3600},
        },
        "vlans": [
            {"id": 101, "sources": ["sw1"], "switches": ["sw1", "sw2", "sw3"],
             "links": [["sw1", "sw2"], ["sw1", "sw3"]], "learning_subnet": "10.250.0.0/24"},
            {"id": 102, "sources": ["sw2"], "switches": ["sw1", "sw2", "sw3"],
             "links": [["sw1", "sw2"], ["sw2", "sw3"]], "learning_subnet": "10.250.1.0/24"},
            {"id": 103, "sources": ["sw3"], "switches": ["sw1", "sw2", "sw3"],
             "links": [["sw1", "sw3"], ["sw2", "sw3"]], "learning_subnet": "10.250.2.0/24"},
        ],
        "hosts": {},
        "switches": {
            "sw1": {"platform": platform, "mgmt": "192.0.2.11", "ssh_port": 22, "coord": [0],
                    "reserved_ports": [p(23)],
                    "ports": {p(1): host("node001", 101), p(2): host("node002", 101),
                              p(21): isl("sw2", [101, 102], 1), p(22): isl("sw2", [101, 102], 1),
                              p(24): isl("sw3", [101, 103])},
                    "lags": {"1": {"neighbor": "sw2", "members": [p(21), p(22)], "tagged": [101, 102]}}},
            "sw2": {"platform": platform, "mgmt": "192.0.2.12", "ssh_port": 22, "coord": [1],
                    "reserved_ports": [],
                    "ports": {p(1): host("node003", 102), p(2): host("node004", 102),
                              p(21): isl("sw1", [101, 102], 1), p(22): isl("sw1", [101, 102], 1),
                              p(24): isl("sw3", [102, 103])},
                    "lags": {"1": {"neighbor": "sw1", "members": [p(21), p(22)], "tagged": [101, 102]}}},
            "sw3": {"platform": platform, "mgmt": "192.0.2.13", "ssh_port": 22, "coord": [2],
                    "reserved_ports": [],
                    "ports": {p(1): host("node005", 103), p(2): host("node006", 103),
                              p(23): isl("sw1", [101, 103]), p(24): isl("sw2", [102, 103])},
                    "lags": {}},
        },
        "cabling": [
            {"a": "sw1", "a_port": p(21), "b": "sw2", "b_port": p(21), "a_lag": 1, "b_lag": 1},
            {"a": "sw1", "a_port": p(22), "b": "sw2", "b_port": p(22), "a_lag": 1, "b_lag": 1},
            {"a": "sw1", "a_port": p(24), "b": "sw3", "b_port": p(23), "a_lag": None, "b_lag": None},
            {"a": "sw2", "a_port": p(24), "b": "sw3", "b_port": p(24), "a_lag": None, "b_lag": None},
        ],
        "metrics": {},
        "warnings": [],
    }
    n = 0
    for sw, vid in (("sw1", 101), ("sw2", 102), ("sw3", 103)):
        for port_no in (1, 2):
            n += 1
            doc["hosts"][f"node{n:03d}"] = {
                "switch": sw, "port": p(port_no), "vlan": vid, "mac": None, "interface": "eth0",
                "index": n - 1,       # learning addresses 10.250.0.n, 10.250.1.n, 10.250.2.n by the rule
            }
    doc["settings"].update(settings)
    return copy.deepcopy(doc)


def document(doc: dict[str, Any]) -> PlanDocument:
    """A hand-written (or hand-edited) plan as the typed document render takes."""
    return plan_document(doc, "render_fixtures")
