"""The table of routing engines: `routing.algorithm` in an inventory names one of these.

Adding an engine: write a module with an `Engine` subclass (routing/engine.py) and add its
instance here. The inventory check, `vlanroute algorithms` and the plan all read this
table; nothing else needs to know the engine's name (docs/architecture.md has a worked
example, docs/architecture-engines.md the details).
"""

from __future__ import annotations

from typing import Any

from vlanroute.model.topology import Topology
from vlanroute.routing.budget import BUDGET
from vlanroute.routing.dor import DOR
from vlanroute.routing.engine import Engine
from vlanroute.routing.shortest import SHORTEST
from vlanroute.routing.turns import TURNS
from vlanroute.routing.updown import UPDOWN
from vlanroute.routing.acyclic.engine import ACYCLIC

ENGINES: dict[str, Engine[Any]] = {e.name: e for e in (DOR, SHORTEST, UPDOWN, TURNS, ACYCLIC, BUDGET)}

# The engine a plan whose routes can deadlock under 802.3x PAUSE recommends (plan/build.py):
# deadlock-free on every topology, and of those the one that balances the load best
# (on tori about 2 times the distance bound where up*/down* reaches 5 to 14: bench/quality.py).
DEADLOCK_FREE_ADVICE: Engine[Any] = TURNS


def default_engine(topo: Topology) -> Engine[Any]:
    """Without routing.algorithm: the first minimal engine of the table that accepts the
    topology (dor on grids, trees and complete graphs; shortest on a custom topology)."""
    return next(e for e in ENGINES.values() if e.minimal and e.refuses(topo) is None)
