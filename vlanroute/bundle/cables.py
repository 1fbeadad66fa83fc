"""Every physical cable of a plan, each with a stable label: the technician's view of
plan.json, written as OUTDIR/cabling.csv and the printable sheet (cabling.html).

Two kinds of cable: `inter-switch` (plan.json `cabling[]`: switch port to switch port, maybe
a LAG member at either end) and `host` (a host's port on its switch to the host's NIC).

A cable's label is derived from its two ends only, never from its row number, so adding or
removing other cables never renames it: a technician can print labels once and keep them.
It is 8 characters of a hash of the ends (40 bits); should two cables of one plan ever get
the same 8 characters, both take 12 (deterministic for that plan).
"""

from __future__ import annotations

import base64
import csv
import hashlib
import io
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:      # annotations only: Cable reaches the emulation in the VM without pydantic
    from vlanroute.bundle.document import PlanDocument

CableKind = Literal["inter-switch", "host"]
INTER_SWITCH: CableKind = "inter-switch"
HOST: CableKind = "host"
# The legacy header (inter-switch cables only, no labels) is still read (bundle.reader).
LEGACY_HEADER = ["a", "a_port", "b", "b_port", "a_lag", "b_lag"]
HEADER = [*LEGACY_HEADER, "kind", "cable"]
DEFAULT_HOST_INTERFACE = "eth0"      # what the host script uses when the plan names none
LABEL_CHARS = 8


@dataclass(frozen=True)
class PlannedCable:
    kind: CableKind
    a: str                   # a switch
    a_port: str
    b: str                   # a switch (inter-switch) or a host
    b_port: str              # the far switch's port, or the host's interface
    a_lag: int | None = None
    b_lag: int | None = None
    label: str = ""

    def ends(self) -> tuple[tuple[str, str], tuple[str, str]]:
        return (self.a, self.a_port), (self.b, self.b_port)


@dataclass(frozen=True)
class Cable:
    """One row of a rendered cabling.csv, as bundle.reader reads it back."""
    row: int
    a: str
    a_port: str
    b: str
    b_port: str
    a_lag: int | None
    b_lag: int | None
    kind: str = INTER_SWITCH      # or HOST: `b` is a host, `b_port` its interface
    label: str = ""               # empty in a file of an older render

    def ends(self) -> tuple[tuple[str, str], tuple[str, str]]:
        return (self.a, self.a_port), (self.b, self.b_port)


def _digest(kind: str, a: tuple[str, str], b: tuple[str, str]) -> str:
    """base32 of sha256 over the ends, the two ends of an inter-switch cable in sorted
    order (so a cable written b-a gets the same label), upper case (A-Z, 2-7: no 0/O, 1/I
    to mix up on a printed label)."""
    ends = sorted((a, b)) if kind == INTER_SWITCH else [a, b]
    text = "\n".join(f"{name}\t{port}" for name, port in ends)
    return base64.b32encode(hashlib.sha256(text.encode()).digest()).decode().rstrip("=")


def label_cables(cables: list[PlannedCable]) -> list[PlannedCable]:
    """The same cables, each with its label (module docstring)."""
    digests = [_digest(c.kind, *c.ends()) for c in cables]
    short = Counter(d[:LABEL_CHARS] for d in digests)
    out = []
    for c, d in zip(cables, digests):
        n = LABEL_CHARS if short[d[:LABEL_CHARS]] == 1 else LABEL_CHARS + 4
        out.append(PlannedCable(c.kind, c.a, c.a_port, c.b, c.b_port, c.a_lag, c.b_lag,
                                label=f"{d[:n // 2]}-{d[n // 2:n]}"))
    return out


def planned_cables(doc: PlanDocument) -> list[PlannedCable]:
    """Inter-switch cables in plan order, then host cables in host-name order, labelled."""
    cables = [PlannedCable(INTER_SWITCH, c.a, c.a_port, c.b, c.b_port, c.a_lag, c.b_lag)
              for c in doc.cabling]
    cables += [PlannedCable(HOST, h.switch, h.port, name, h.interface or DEFAULT_HOST_INTERFACE)
               for name, h in sorted(doc.hosts.items())]
    return label_cables(cables)


def cabling_csv_text(cables: list[PlannedCable]) -> str:
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(HEADER)
    for c in cables:
        w.writerow([c.a, c.a_port, c.b, c.b_port, "" if c.a_lag is None else c.a_lag,
                    "" if c.b_lag is None else c.b_lag, c.kind, c.label])
    return buf.getvalue()
