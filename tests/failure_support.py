"""A repaired bundle made by hand, independent of `vlanroute repair`, for the failure tests:
every VLAN tree that uses the dead pair loses that link and gains the first cabled link (in
name order) that joins its two halves again; hosts, host ports and every other tree stay as
they are. Rendered and verified like any bundle."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vlanroute.bundle.document import plan_document
from vlanroute.render.write import RenderOptions, render_to_dir


def _component(links: set[frozenset[str]], start: str) -> set[str]:
    seen, todo = {start}, [start]
    while todo:
        s = todo.pop()
        for link in links:
            if s in link:
                (n,) = link - {s}
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
    return seen


def hand_repair(outdir: Path, newdir: Path, pair: tuple[str, str]) -> dict[int, tuple[str, str]]:
    """Write the repaired bundle; return VLAN -> the replacement link."""
    doc: dict[str, Any] = json.loads((outdir / "plan.json").read_text())
    dead = frozenset(pair)
    neighbours = {frozenset((c["a"], c["b"])) for c in doc["cabling"]} - {dead}
    added: dict[int, tuple[str, str]] = {}
    for vlan in doc["vlans"]:
        links = {frozenset(link) for link in vlan["links"]}
        if dead not in links:
            continue
        links.discard(dead)
        side = _component(links, pair[0])
        joining = sorted(tuple(sorted(link)) for link in neighbours
                         if len(link & side) == 1 and link not in links)
        a, b = joining[0]
        links.add(frozenset((a, b)))
        vlan["links"] = sorted(sorted(link) for link in links)
        added[vlan["id"]] = (a, b)
    # The VLANs each inter-switch port (and LAG) carries: those whose tree uses its link.
    uses: dict[frozenset[str], list[int]] = {}
    for vlan in doc["vlans"]:
        for link in vlan["links"]:
            uses.setdefault(frozenset(link), []).append(vlan["id"])
    for sw, spec in doc["switches"].items():
        for port in spec["ports"].values():
            if port["role"] != "host":
                port["tagged"] = sorted(uses.get(frozenset((sw, port["neighbor"])), []))
        for lag in spec.get("lags", {}).values():
            lag["tagged"] = sorted(uses.get(frozenset((sw, lag["neighbor"])), []))
    result = render_to_dir(plan_document(doc, str(outdir / "plan.json")), newdir,
                           RenderOptions(verify=True))
    assert result.verified
    return added
