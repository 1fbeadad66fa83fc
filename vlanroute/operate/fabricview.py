"""The failures of the published plan, from the port states that count (operate/debounce.py).

- A cable is down when either of its ends counts as down (a port that is down forwards
  nothing, whatever the other end says). A cable whose two switches could not be read is
  not known, and not taken as down: no evidence is no failure.
- A switch all of whose inter-switch cables are down is a failed **switch**: whether it is
  dead or only cut off, its hosts are lost to the fabric and every tree through it must be
  repaired. SSH reachability is not evidence of a dead switch (a management network problem
  is not a data-plane one); it is reported apart.
- Between two other switches, all cables of the pair down is a failed **pair**; some of
  them down is a loss of capacity only (a LAG that keeps a cable carries every VLAN still):
  the cables are listed, nothing is repaired for them, but a repaired bundle leaves them out
  of its cabling so that push's cabling check does not refuse it.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.failures import Failures
from vlanroute.natural import natsorted
from vlanroute.model.links import link

End = tuple[str, str]           # (switch, port)


@dataclass(frozen=True)
class Observed:
    failures: Failures
    unknown_cables: list[tuple[End, End]] = field(default_factory=list)   # neither end read

    @property
    def classes(self) -> set[str]:
        """The failure classes that change trees: `pair`, `switch`."""
        return ({"pair"} if self.failures.pairs else set()) | ({"switch"} if self.failures.switches else set())


def classify(doc: PlanDocument, down: Collection[End], unread: Collection[str]) -> Observed:
    """The plan's failures when the ends in `down` count as down and the switches in
    `unread` could not be read."""
    down = set(down)
    dead: dict[int, bool] = {}
    unknown = []
    for i, c in enumerate(doc.cabling):
        a, b = (c.a, c.a_port), (c.b, c.b_port)
        dead[i] = a in down or b in down
        if not dead[i] and c.a in unread and c.b in unread:
            unknown.append((a, b))
    per_switch: dict[str, list[bool]] = {}
    for i, c in enumerate(doc.cabling):
        per_switch.setdefault(c.a, []).append(dead[i])
        per_switch.setdefault(c.b, []).append(dead[i])
    switches = [s for s in natsorted(per_switch) if all(per_switch[s])]
    failed = set(switches)
    per_pair: dict[tuple[str, str], list[int]] = {}
    for i, c in enumerate(doc.cabling):
        if c.a not in failed and c.b not in failed:
            per_pair.setdefault(link(c.a, c.b), []).append(i)
    pairs = [p for p, idx in per_pair.items() if all(dead[i] for i in idx)]
    cables = [(doc.cabling[i].a, doc.cabling[i].a_port) for p, idx in per_pair.items() if p not in pairs
              for i in idx if dead[i]]
    return Observed(Failures(tuple(sorted(cables)), tuple(sorted(pairs)), tuple(switches)), unknown)
