"""The technician's cabling sheet: OUTDIR/cabling.html, one printable page (no script, no
network) listing each switch's cables in port order, with the far end and the cable's label
(bundle.cables), one section per switch and a page break between switches when printed.

Every value goes through jinja2's autoescaping: switch, host and port names come from the
inventory.
"""

from __future__ import annotations

from dataclasses import dataclass

import jinja2

from vlanroute.bundle.cables import HOST, PlannedCable
from vlanroute.bundle.document import PlanDocument
from vlanroute.drivers import family_of
from vlanroute.model.platforms import Platform
from vlanroute.natural import natsorted
from vlanroute.resources import template_loader

SHEET_FILE = "cabling.html"


@dataclass(frozen=True)
class SheetRow:
    port: str
    label: str
    far: str
    kind: str
    lag: str


@dataclass(frozen=True)
class SheetSwitch:
    name: str
    platform: str
    mgmt: str
    rows: list[SheetRow]


def sheet_switches(doc: PlanDocument, cables: list[PlannedCable],
                   platforms: dict[str, Platform]) -> list[SheetSwitch]:
    """Each switch's cables, in the platform's panel order (every inter-switch cable twice)."""
    rows: dict[str, list[SheetRow]] = {name: [] for name in doc.switches}
    for c in cables:
        if c.kind == HOST:
            rows[c.a].append(SheetRow(c.a_port, c.label, f"host {c.b} {c.b_port}", "host", ""))
            continue
        for here, port, lag, there, far_port, far_lag in ((c.a, c.a_port, c.a_lag, c.b, c.b_port, c.b_lag),
                                                           (c.b, c.b_port, c.b_lag, c.a, c.a_port, c.a_lag)):
            lag_text = "" if lag is None else family_of(platforms[here]).lag_label(lag)
            if lag is not None and far_lag is not None:
                lag_text += f" to {there} {family_of(platforms[there]).lag_label(far_lag)}"
            rows[here].append(SheetRow(port, c.label, f"{there} {far_port}", "inter-switch", lag_text))
    out = []
    for name in natsorted(doc.switches):          # sw2 before sw10, as everywhere people read names
        plat = platforms[name]
        key = lambda r: (plat.port_index(r.port) if plat.has_port(r.port) else len(plat.ports), r.port)  # noqa: E731
        out.append(SheetSwitch(name, plat.name, doc.switches[name].mgmt or "", sorted(rows[name], key=key)))
    return out


def sheet_html(doc: PlanDocument, cables: list[PlannedCable], platforms: dict[str, Platform]) -> str:
    env = jinja2.Environment(loader=template_loader(), autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True)
    switches = sheet_switches(doc, cables, platforms)
    return env.get_template("sheet/cabling.html.j2").render(
        plan=doc.name or "plan", switches=switches,
        inter_switch=sum(1 for c in cables if c.kind != HOST),
        host_cables=sum(1 for c in cables if c.kind == HOST))
