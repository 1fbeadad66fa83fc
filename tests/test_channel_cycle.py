"""The channel cycle a repair reports (routing/repair/guard.py `channel_cycle`, what `whatif` and
`repair` print when a deadlock-free plan cannot stay so) is a real cycle of the trees'
channel dependencies, and the same one under any hash seed: the dependencies are a set of
strings, and an output that followed their order differed from run to run."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from vlanroute.model.links import link
from vlanroute.routing.repair.guard import channel_cycle, tree_dependencies

# Four VLANs on a ring a-b-c-d, each a path of three links from its one sender: every
# channel a->b, b->c, c->d, d->a waits for the next one.
RING = ["a", "b", "c", "d"]
TREES = {i + 1: frozenset(link(RING[(i + j) % 4], RING[(i + j + 1) % 4]) for j in range(3)) for i in range(4)}
SENDERS = {i + 1: {RING[i]: 1} for i in range(4)}
HOSTS = dict.fromkeys(RING, 1)

SCRIPT = """
from tests.test_channel_cycle import HOSTS, SENDERS, TREES
from vlanroute.routing.repair.guard import channel_cycle
print(channel_cycle(TREES, SENDERS, HOSTS))
"""


def test_the_cycle_is_a_cycle_of_the_trees_dependencies() -> None:
    cycle = channel_cycle(TREES, SENDERS, HOSTS)
    deps = set().union(*(tree_dependencies(TREES[v], SENDERS[v], HOSTS) for v in TREES))
    assert len(cycle) >= 2
    for (p, q), (q2, r) in zip(cycle, cycle[1:] + cycle[:1]):
        assert q == q2 and (p, q, r) in deps
    assert channel_cycle({1: TREES[1]}, {1: SENDERS[1]}, HOSTS) == []


def test_the_cycle_is_the_same_under_any_hash_seed() -> None:
    out = set()
    for seed in ("0", "1", "2", "3"):
        run = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, check=True,
                             env={"PYTHONHASHSEED": seed, "PATH": ""}, cwd=Path(__file__).parents[1])
        out.add(run.stdout)
    assert len(out) == 1
