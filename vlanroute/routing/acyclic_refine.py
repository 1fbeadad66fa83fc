"""A better channel order for the acyclic engine's best plan, found with the order LP's prices.

The acyclic engine's plans are held by their channel order: negotiation and branch moves
(acyclic_negotiate.py, acyclic_polish.py) only re-route within it, and on larger random
graphs the order itself is poor (a random 3-regular graph of 48 switches: plan 2.031x the
optimum, and 2.010x is the best any splittable routing can do in its order,
routing/order_lp.py). This step changes the order.

- Order search: the order LP of the current order is solved; its duals price every turn
  the order forbids (routing/order_lp.py). For the best-priced turns, the move that would
  allow one (a channel placed just above or just below the other) is screened by the
  prices of the turns it allows minus the flow of the turns it forbids; the best move is
  solved and taken even when the LP gets worse (a tabu search: the channels moved last
  stay put, and the best order seen is kept), STEPS times. This is the pricing step of
  column generation over turns, with the order kept total so the routing stays acyclic;
  the search is bench/turn_order_dual.py's, which found the torus orders of
  docs/routing-bounds.md, with one move solved per step (1, 2, 4 and 8 measured: 1 went
  furthest for the same number of LPs).
- Trees: in the final order, each source's tree grows over the channels in order, and a
  switch joins on the first channel that can extend the tree increasingly and carries at
  least SHARE of the LP's largest flow of that source into the switch. A switch left out
  takes its earliest-arrival path, and every switch on that path moves to its earliest
  entry, which keeps each subtree increasing (a lower entry allows more turns out). Then
  branch moves (acyclic_polish.py), which do most of the work: the rounded trees carried
  1.26 to 1.58 times the LP's load on four random graphs, the moved ones 1.06 to 1.14.

Measured (bench/irregular_kinds.py, load over the exact optimum, docs/routing-bounds.md):
random 3-regular graphs of 48 switches, seeds 0 to 4, from 1.781, 1.343, 2.031, 2.139 and
1.842 to 1.406, 1.056, 1.569, 1.542 and 1.486, for 12 to 43 s more CPU.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic_polish import polish
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.order_lp import OrderLP, OrderSolution, turns_of
from vlanroute.routing.trees import Arc, ParentMap

# Where it runs (the LPs cost): custom fabrics of at least FROM switches whose order LP has at
# most VARIABLES variables (estimated: an order allows about half the turns) and whose plan
# carries more than ABOVE times the exact optimum. Measured per LP: 0.2-0.35 s on random
# 3-regular graphs of 48 switches (about 21,000 variables), 3.6-8 s on 4-regular ones of 64
# (57,000); below 1.3x (tori with cables gone, 1.20x and 1.23x) the search found nothing.
FROM = 40
VARIABLES = 25_000
ABOVE = 1.3
STEPS = 100         # moves of the order at most (each solves CANDIDATES LPs)
CANDIDATES = 1      # moves solved per step (1 to 8 measured: 1 went furthest for the same LPs)
SHARE = 0.3         # a tree enters a switch on a channel with at least this share of the most-used one's flow
EPS = 1e-9
TABU = 10           # channels moved last, not moved again


def worth_refining(topo: Topology, host_count: dict[str, int], load: float) -> bool:
    """Whether a plan carrying `load` gets its order refined (FROM, VARIABLES, ABOVE)."""
    if topo.kind != "custom" or len(topo.switches) < FROM:
        return False
    sources = sum(1 for s in topo.switches if host_count.get(s, 0))
    if sources * (len(turns_of(topo)) // 2 + 2 * len(topo.arc_cables())) > VARIABLES:
        return False
    return load > ABOVE * optimum_bound(topo, host_count).value


def refine_order(lp: OrderLP, rank: dict[Arc, int], steps: int = STEPS,
                 candidates: int = CANDIDATES) -> tuple[np.ndarray, OrderSolution]:
    """A channel order (one key per channel of `lp.arcs`) whose LP load is at most that of
    `rank`, and its LP solution: the best order of a tabu walk whose moves the duals price
    (module docstring)."""
    key = np.array([float(rank[a]) for a in lp.arcs])
    sol = lp.solve(key)
    assert sol is not None, "an order that a plan's routes increase in routes every pair"
    touching: list[list[int]] = [[] for _ in lp.arcs]
    for t, (i, j) in enumerate(zip(lp.t_in, lp.t_out)):
        touching[i].append(t)
        touching[j].append(t)
    best_key, best_sol = key.copy(), sol
    tabu: list[int] = []
    for _ in range(steps):
        step: tuple[float, int, float, OrderSolution] | None = None
        for ch, value in _moves(lp, key, sol, touching, candidates, set(tabu)):
            old = key[ch]
            key[ch] = value
            got = lp.solve(key)
            key[ch] = old
            if got is not None and (step is None or got.load < step[0]):
                step = (got.load, ch, value, got)
        if step is None:
            break
        # The best move is taken even if it is worse (tabu search: the maximum sits on one
        # link while the moves relieve others); the tabu list keeps a channel from moving
        # straight back, and the best order seen is kept.
        key[step[1]] = step[2]
        sol = step[3]
        tabu = (tabu + [step[1]])[-TABU:]
        if sol.load < best_sol.load * (1 - EPS):
            best_key, best_sol = key.copy(), sol
    key, sol = best_key, best_sol
    return key, sol


def _moves(lp: OrderLP, key: np.ndarray, sol: OrderSolution, touching: list[list[int]],
           candidates: int, tabu: set[int]) -> list[tuple[int, float]]:
    """The most promising (channel, new key) moves: each allows one of the best-priced
    forbidden turns a -> b by putting b just above a or a just below b; screened by the
    prices of the forbidden turns it allows minus the flow of the allowed turns it forbids."""
    srt = np.sort(key)
    scored: list[tuple[float, int, int, float]] = []
    for t in np.argsort(-sol.gain, kind="stable")[: (candidates + len(tabu)) * 4]:
        if sol.gain[t] <= EPS:
            break
        a, b = int(lp.t_in[t]), int(lp.t_out[t])
        i = int(np.searchsorted(srt, key[a], side="right"))
        up = (key[a] + (srt[i] if i < len(srt) else key[a] + 2.0)) / 2
        j = int(np.searchsorted(srt, key[b], side="left"))
        down = (key[b] + (srt[j - 1] if j > 0 else key[b] - 2.0)) / 2
        for ch, value in ((b, up), (a, down)):
            lo, hi = min(key[ch], value), max(key[ch], value)
            score = 0.0
            for u in touching[ch]:
                other = lp.t_out[u] if lp.t_in[u] == ch else lp.t_in[u]
                if lo < key[other] < hi:                 # this turn flips
                    score += sol.gain[u] if sol.turn_flow[u] <= EPS else -sol.turn_flow[u]
            scored.append((-score, ch, len(scored), value))
    scored.sort()
    seen = set(tabu)
    moves: list[tuple[int, float]] = []
    for _, ch, _, value in scored:
        if ch not in seen:
            seen.add(ch)
            moves.append((ch, value))
        if len(moves) == candidates:
            break
    return moves


def rounded_trees(topo: Topology, lp: OrderLP, rank: dict[Arc, int],
                  sol: OrderSolution) -> dict[str, ParentMap] | None:
    """One tree per switch, increasing in `rank`, entering each switch where the LP's flow of
    its source mostly does (module docstring); sources without hosts: earliest arrival.
    None if some source cannot reach every switch in the order (the LP asks only for the
    switches with hosts)."""
    in_order = sorted(range(len(lp.arcs)), key=lambda i: rank[lp.arcs[i]])
    row = {s: k for k, s in enumerate(lp.sources)}
    trees: dict[str, ParentMap] = {}
    for src in topo.switches:
        earliest = _grow(src, lp.arcs, in_order, rank, None)
        if len(earliest) < len(topo.switches) - 1:
            return None
        if src not in row:
            trees[src] = earliest
            continue
        flow = sol.inflow[row[src]]
        most: dict[str, float] = {}
        for i, (_, v) in enumerate(lp.arcs):
            most[v] = max(most.get(v, 0.0), float(flow[i]))
        tree = _grow(src, lp.arcs, in_order, rank, lambda i, v: bool(flow[i] >= SHARE * most[v] - EPS))
        for v in topo.switches:
            if v != src and v not in tree:
                x = v
                while x != src:                   # the earliest-arrival path, entries lowered
                    tree[x] = earliest[x]
                    x = earliest[x]
        trees[src] = tree
    return trees


def _grow(src: str, arcs: list[Arc], in_order: list[int], rank: dict[Arc, int],
          take: Callable[[int, str], bool] | None) -> ParentMap:
    """A tree grown over the channels in order: a channel u -> v joins when u is in the tree
    (entered lower) and v is not, and `take(i, v)` agrees (None: always, earliest arrival)."""
    entry = {src: -1}
    tree: ParentMap = {}
    for i in in_order:
        u, v = arcs[i]
        r = rank[arcs[i]]
        if v not in entry and u in entry and entry[u] < r and (take is None or take(i, v)):
            entry[v] = r
            tree[v] = u
    return tree


def refined_plan(topo: Topology, host_count: dict[str, int], rank: dict[Arc, int],
                 steps: int = STEPS) -> tuple[float, dict[str, ParentMap], dict[Arc, int]] | None:
    """(max load per cable, trees, their channel order): the order refined from `rank`, trees
    rounded from its LP and polished (acyclic_polish.py); None if the refined order leaves
    a switch without hosts unreachable from some source."""
    lp = OrderLP(topo, host_count)
    key, sol = refine_order(lp, rank, steps)
    order = sorted(range(len(lp.arcs)), key=lambda i: (key[i], i))
    better = {lp.arcs[i]: k for k, i in enumerate(order)}
    trees = rounded_trees(topo, lp, better, sol)
    if trees is None:
        return None
    load, moved = polish(topo, host_count, better, trees)
    return load, moved, better
