"""Failures as the live fabric shows them: from a cabling check, and from port link state.

- A cabling check (device/cabling.py) reports a planned inter-switch cable as `missing`
  when neither end sees the other over LLDP: that cable is down. A cable `swapped` is a
  cabling mistake, not a failure (the fix is the technician's), and a switch whose table
  could not be read may be dead or only unreachable: neither is made a failure here, and
  both are returned as notes for the operator to decide (`--failed-switch`).
- Link state (`show interfaces status` and the like, parsed per family): an inter-switch
  port reported down is a failed cable; a switch that reports nothing is left to the
  operator, as above.

A pair is failed only when all its cables are: bundle/failures.py derives it.
"""

from __future__ import annotations

from collections.abc import Mapping

from vlanroute.bundle.cables import INTER_SWITCH
from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.failures import Failures
from vlanroute.device.cabling import MISSING, SWAPPED, CablingReport


def from_cabling(report: CablingReport) -> tuple[Failures, list[str]]:
    """The missing inter-switch cables as failed cables (by their a end), and notes."""
    cables = tuple((c.a, c.a_port) for c in report.cables if c.kind == INTER_SWITCH and c.status == MISSING)
    notes = [f"cable {c.a} {c.a_port} - {c.b} {c.b_port} is swapped, not down: fix the cabling "
             "(vlanroute cabling check OUTDIR)" for c in report.cables
             if c.kind == INTER_SWITCH and c.status == SWAPPED]
    notes += [f"switch {sw} could not be read ({why}); if it is dead, add --failed-switch {sw}"
              for sw, why in sorted(report.errors.items())]
    return Failures(cables=cables), notes


def from_link_state(doc: PlanDocument, up: Mapping[str, Mapping[str, bool]]) -> tuple[Failures, list[str]]:
    """Failed cables from each switch's port link state (switch -> port -> up); a switch
    missing from `up` is named in the notes, not failed."""
    cables = []
    notes = []
    for sw, spec in doc.switches.items():
        state = up.get(sw)
        if state is None:
            notes.append(f"switch {sw} reported no link state; if it is dead, add --failed-switch {sw}")
            continue
        for port, p in spec.ports.items():
            if p.role != "host" and state.get(port) is False:
                cables.append((sw, port))
    return Failures(cables=tuple(cables)), notes
