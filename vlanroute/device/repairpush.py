"""What push and the cabling check read of a repaired bundle's repair.json (`vlanroute
repair`), within the limits of every bundle file: the failures it was made for, the cables
it routes around (a push counts them as active in every step of its transition: a dead cable
may come back at any moment; device/change.py), and what the hosts do once it is pushed.

The order of the push itself is not read from here: push plans its transition from what the
switches run (docs/push.md, "Transitions").
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from vlanroute.bundle.failures import Failures, parse_failures
from vlanroute.errors import UserError
from vlanroute.safeio.reading import BUNDLE_LIMIT, load_json, read_text_file

REPAIR_FILE = "repair.json"


FIX = "write the bundle again with `vlanroute repair`"


def _record(outdir: Path) -> dict[str, Any] | None:
    """OUTDIR/repair.json as JSON, or None when OUTDIR is no repair."""
    path = outdir / REPAIR_FILE
    if not os.path.lexists(path):           # anything else there (a FIFO, a link) is read, and refused
        return None
    # Within the limits of every bundle file (size, UTF-8, nesting: safeio.reading), so a
    # deeply nested repair.json is a message, not a RecursionError.
    try:
        data = load_json(read_text_file(path, limit=BUNDLE_LIMIT, what="repair record", fix=FIX), str(path))
    except ValueError as exc:
        raise UserError(f"not JSON: {exc}", file=str(path), fix=FIX) from None
    if not isinstance(data, dict):
        raise UserError("not a repair record (a JSON object)", file=str(path), fix=FIX)
    return data


def _strings(data: dict[str, Any], key: str, path: Path) -> list[str]:
    value = data.get(key)
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise UserError("not a list of names", file=str(path), field=key, fix=FIX)
    return value


def down_cables(outdir: Path) -> list[tuple[str, str, str, str]]:
    """The cables OUTDIR/repair.json routes around (`down_cables`), [] for a bundle that is
    no repair or was written before the record had them."""
    data = _record(outdir)
    rows = data.get("down_cables", []) if data is not None else []
    if not isinstance(rows, list):
        raise UserError("not a list of cables", file=str(outdir / REPAIR_FILE), field="down_cables", fix=FIX)
    out = []
    for row in rows:
        if not (isinstance(row, list) and len(row) == 4 and all(isinstance(x, str) for x in row)):
            raise UserError("a cable is not [switch, port, switch, port]", file=str(outdir / REPAIR_FILE),
                            field="down_cables", fix=FIX)
        out.append((row[0], row[1], row[2], row[3]))
    return out


def repaired_failures(outdir: Path) -> Failures | None:
    """The failures OUTDIR/repair.json was made for, or None when OUTDIR is no repair."""
    data = _record(outdir)
    if data is None:
        return None
    path = outdir / REPAIR_FILE
    failures = data.get("failures")
    if not isinstance(failures, dict):
        raise UserError("no failures record", file=str(path), field="failures", fix=FIX)
    lists = {k: _strings(failures, k, path) for k in ("cables", "pairs", "switches")}
    return parse_failures(lists["cables"], lists["pairs"], lists["switches"],
                          fields={k: f"failures.{k}" for k in lists}, file=str(path))


def relearn_note(outdir: Path) -> str | None:
    """What the hosts do once a repair is pushed (docs/failures.md, step 5), or None for a
    bundle that is no repair: the switches on a replacement link have not learned them."""
    data = _record(outdir)
    if data is None:
        return None
    vlans = data.get("affected_vlans")
    if not isinstance(vlans, list) or not vlans:
        return "hosts: the repair changed no VLAN tree: nothing to re-learn"
    script = outdir / "hosts" / "relearn.sh"
    shown = " ".join(str(v) for v in vlans)
    if not script.is_file():
        return f"hosts: the repair changed VLAN(s) {shown}, and the plan has no hosts: nothing to re-learn"
    return (f"hosts: re-learn now in VLAN(s) {shown}: run {script} on every host (it runs the host program "
            "with --vlans for those VLANs; its header gives the ClusterShell, pdsh and Ansible lines). Until "
            "then the switches on the new links flood frames to those hosts; the refresh job re-learns by "
            "itself within its interval (docs/failures.md)")
