"""A better channel order for the acyclic engine's best plan, found with the order LP's prices.

The acyclic engine's plans are held by their channel order: negotiation and branch moves
(acyclic/negotiate.py, acyclic/polish.py) only re-route within it, and on larger random
graphs the order itself is poor (a random 3-regular graph of 48 switches: plan 2.031x the
optimum, and 2.010x is the best any splittable routing can do in its order,
routing/order_lp.py). This step changes the order.

- Order search: the order LP of the current order is solved; its duals price every turn
  the order forbids (routing/order_lp.py). For the best-priced turns, the move that would
  allow one (a channel placed just above or just below the other) is screened by the
  prices of the turns it allows minus the flow of the turns it forbids; the best move is
  solved and taken even when the LP gets worse (a tabu search: the channels moved last
  stay put, and every order below the best before it is kept), STEPS times or until its
  LPs took ITERATIONS simplex iterations. This is the pricing step of
  column generation over turns, with the order kept total so the routing stays acyclic;
  the search is bench/turn_order_dual.py's, which found the torus orders of
  docs/routing-bounds.md, with one move solved per step (1, 2, 4 and 8 measured: 1 went
  furthest for the same number of LPs).
- Trees: in each order kept, each source's tree grows over the channels in order, and a
  switch joins on the first channel that can extend the tree increasingly and carries at
  least SHARE of the LP's largest flow of that source into the switch. A switch left out
  takes its earliest-arrival path, and every switch on that path moves to its earliest
  entry, which keeps each subtree increasing (a lower entry allows more turns out). Then
  branch moves (acyclic/polish.py), which do most of the work: the rounded trees carried
  1.26 to 1.58 times the LP's load on four random graphs, the moved ones 1.06 to 1.14.
  The lightest of these plans is the refined one.

Measured (bench/irregular_kinds.py, load over the exact optimum, docs/routing-bounds.md):
random 3-regular graphs of 48 switches, seeds 0 to 4, from 1.781, 1.343, 2.031, 2.139 and
1.842 to 1.348, 1.056, 1.554, 1.542 and 1.448; of 24 switches, seeds 0 to 9, from 1.13-1.49
to 1.00-1.46; dragonflies of 5 to 8 groups of 4 from 1.375-1.5 to 1.188-1.375; 2 to 20 s
more CPU (2026-11-28: every improving order rounded, from 20 switches).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import numpy as np

from vlanroute.model.links import Arc
from vlanroute.model.topology import Topology
from vlanroute.routing.acyclic.polish import polish
from vlanroute.routing.optimum import optimum_bound
from vlanroute.routing.order_lp import OrderLP, OrderSolution, turns_of
from vlanroute.routing.trees import ParentMap, Share

# Where it runs (the LPs cost): custom fabrics of at least FROM switches whose order LP has at
# most VARIABLES variables (estimated: an order allows about half the turns) and whose plan
# carries more than ABOVE times the exact optimum. Measured per LP: 0.2-0.35 s on random
# 3-regular graphs of 48 switches (about 21,000 variables), 3.6-8 s on 4-regular ones of 64
# (57,000). From 20 switches above 1.1x (2026-11-28; was 40 and 1.3x): random 3-regular
# graphs of 24 switches, seeds 0 to 9, went from 1.13-1.49x to 1.00-1.46x the optimum for
# about 3 s more each; smaller fabrics stay out of it (the property tests' graphs of up
# to 12 switches would pay it hundreds of times).
FROM = 20
VARIABLES = 25_000
ABOVE = 1.1
STEPS = 100         # moves of the order at most (each solves CANDIDATES LPs)...
ITERATIONS = 250_000  # ...and simplex iterations of all its LPs at most: the same on every run
                      # (a time limit would make plans differ); 10,000-35,000 a second here, so
                      # 10-25 s (500,000 gave a dragonfly of 7 groups of 4 1.250 instead of
                      # 1.375, one of 8 x 4 the same 1.250 in 39 s instead of 23)
CANDIDATES = 1      # moves solved per step (1 to 8 measured: 1 went furthest for the same LPs)
SHARE = 0.3         # a tree enters a switch on a channel with at least this share of the most-used one's flow
EPS = 1e-9
TABU = 10           # channels moved last, not moved again


def refine_variables(topo: Topology, host_count: dict[str, int]) -> int:
    """The order LP's size, estimated: an order allows about half the turns."""
    sources = sum(1 for s in topo.switches if host_count.get(s, 0))
    return sources * (len(turns_of(topo)) // 2 + 2 * len(topo.arc_cables()))


def worth_refining(topo: Topology, host_count: dict[str, int], load: float) -> bool:
    """Whether a plan carrying `load` gets its order refined (FROM, VARIABLES, ABOVE)."""
    if topo.kind != "custom" or len(topo.switches) < FROM:
        return False
    if refine_variables(topo, host_count) > VARIABLES:
        return False
    return load > ABOVE * optimum_bound(topo, host_count).value


def order_walk(lp: OrderLP, rank: dict[Arc, int], steps: int = STEPS,
               candidates: int = CANDIDATES, iterations: int = ITERATIONS,
               moved: list[int] | None = None) -> Iterator[tuple[np.ndarray, OrderSolution]]:
    """A tabu walk over channel orders (one key per channel of `lp.arcs`) whose moves the
    duals price (module docstring): yields the start's (keys, LP solution) from `rank`, then
    every order whose LP is below all before it, as the walk finds them; `steps` moves, or
    fewer once its LPs took `iterations` simplex iterations. `moved`, if given, gets the
    number of moves taken before each order yielded (0 for the start)."""
    key = np.array([float(rank[a]) for a in lp.arcs])
    sol = lp.solve(key)
    assert sol is not None, "an order that a plan's routes increase in routes every pair"
    touching: list[list[int]] = [[] for _ in lp.arcs]
    for t, (i, j) in enumerate(zip(lp.t_in, lp.t_out)):
        touching[i].append(t)
        touching[j].append(t)
    best = sol.load
    if moved is not None:
        moved.append(0)
    yield key.copy(), sol
    tabu: list[int] = []
    work = sol.iterations
    for taken in range(1, steps + 1):
        if work >= iterations:
            break
        moves = _moves(lp, key, sol, touching, candidates, set(tabu))
        if not moves:
            break
        step: tuple[float, int, float, OrderSolution] | None = None
        for ch, value in moves:
            old = key[ch]
            key[ch] = value
            got = lp.solve(key)
            key[ch] = old
            if got is None:
                # The move strands a pair; the channel waits its turn on the tabu list
                # like a moved one (the walk once ended here, after a handful of steps).
                tabu = (tabu + [ch])[-TABU:]
                continue
            work += got.iterations
            if step is None or got.load < step[0]:
                step = (got.load, ch, value, got)
        if step is None:
            continue
        # The best move is taken even if it is worse (tabu search: the maximum sits on one
        # link while the moves relieve others); the tabu list keeps a channel from moving
        # straight back, and an order below the best before it is handed out.
        key[step[1]] = step[2]
        sol = step[3]
        tabu = (tabu + [step[1]])[-TABU:]
        if sol.load < best * (1 - EPS):
            best = sol.load
            if moved is not None:
                moved.append(taken)
            yield key.copy(), sol


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
        trees[src] = complete_by_earliest(topo, src, tree, earliest)
    return trees


def rounded_group_trees(topo: Topology, lp: OrderLP, rank: dict[Arc, int], sol: OrderSolution,
                        roots: dict[str, str], weights: dict[str, int]) -> dict[str, ParentMap] | None:
    """Routing below the switch: one tree per sender (a group of a switch's hosts,
    routing/spread.py `senders_of`), increasing in `rank`. The LP's flow of a source into a
    switch is shared among its senders as the senders' hosts share the source's: the
    channels into the switch, in the order, each cover a slice of the flow, and sender k of
    K enters on the channel whose slice holds the middle of its own, (k + 1/2) / K. A switch
    a sender's tree cannot enter there takes its earliest-arrival path (as
    `rounded_trees`). None if some source cannot reach every switch in the order."""
    in_order = sorted(range(len(lp.arcs)), key=lambda i: rank[lp.arcs[i]])
    row = {s: k for k, s in enumerate(lp.sources)}
    by_switch: dict[str, list[str]] = {}
    for key in sorted(roots, key=lambda k: int(k.rsplit("#", 1)[1])):
        by_switch.setdefault(roots[key], []).append(key)
    into: dict[str, list[int]] = {}
    for i in in_order:
        into.setdefault(lp.arcs[i][1], []).append(i)
    trees: dict[str, ParentMap] = {}
    for src, keys in by_switch.items():
        earliest = _grow(src, lp.arcs, in_order, rank, None)
        if len(earliest) < len(topo.switches) - 1:
            return None
        flow = sol.inflow[row[src]]
        total = sum(weights[k] for k in keys)
        done = 0
        for key in keys:
            middle = (done + weights[key] / 2) / total
            done += weights[key]
            pick: dict[str, int] = {}
            for v, chans in into.items():
                amount = [max(float(flow[i]), 0.0) for i in chans]
                whole = sum(amount)
                if whole <= EPS:
                    continue
                acc = 0.0
                for i, part in zip(chans, amount):
                    acc += part / whole
                    if acc >= middle - EPS:
                        pick[v] = i
                        break
            tree = _grow(src, lp.arcs, in_order, rank, lambda i, v: pick.get(v) == i)
            trees[key] = complete_by_earliest(topo, src, tree, earliest)
    return trees


def complete_by_earliest(topo: Topology, src: str, tree: ParentMap, earliest: ParentMap) -> ParentMap:
    """`tree` with every switch it left out on its earliest-arrival path (`earliest`, the
    tree `earliest_tree` grows), each switch on that path moved to its earliest entry: a
    lower entry allows more turns out, so every subtree still increases in the order."""
    for v in topo.switches:
        if v != src and v not in tree:
            x = v
            while x != src:
                tree[x] = earliest[x]
                x = earliest[x]
    return tree


def earliest_tree(src: str, arcs: list[Arc], rank: dict[Arc, int]) -> ParentMap:
    """src's earliest-arrival tree over `arcs`, which come in `rank` order."""
    return _grow(src, arcs, list(range(len(arcs))), rank, None)


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


Refined = tuple[float, dict[str, ParentMap], dict[Arc, int]]
Spread = tuple[float, dict[str, ParentMap], dict[str, tuple[Share, ...]], dict[Arc, int]]


def refined_split(topo: Topology, host_count: dict[str, int], rank: dict[Arc, int],
                  steps: int = STEPS, iterations: int = ITERATIONS,
                  max_vlans: int | None = None,
                  polish_work: float = float("inf"),
                  group_depth: int | None = None,
                  walked: list[dict[Arc, int]] | None = None) -> tuple[Refined | None, Spread | None]:
    """`refined_plan`'s best plan, and with `max_vlans` (routing below the switch allowed) the
    best plan whose switches' hosts are rounded onto several trees from the same LPs
    (`rounded_group_trees`, then branch moves of the senders), within `max_vlans` VLANs;
    (max load, parents, splits, order), None if no order gives one that fits. `polish_work`:
    the branch moves looked at per order, at most (acyclic/polish.py); `group_depth`: the
    senders' ejection chains (None: routing/spread.py's DEPTH); `walked`, if given, gets
    every order the walk found (acyclic/columns.py assigns the hosts to trees in them)."""
    from vlanroute.routing.packing import pack
    from vlanroute.routing.spread import DEPTH, WORK, gathered, senders_of

    lp = OrderLP(topo, host_count)
    best: Refined | None = None
    split: Spread | None = None
    roots, weights = senders_of(host_count, list(topo.switches))
    index = {s: i for i, s in enumerate(topo.switches)}
    hosted = {s for s, n in host_count.items() if n}
    for key, sol in order_walk(lp, rank, steps, iterations=iterations):
        better = rank_of(lp, key)
        if walked is not None:
            walked.append(better)
        trees = rounded_trees(topo, lp, better, sol)
        if trees is None:
            continue
        load, moved = polish(topo, host_count, better, trees, max_work=polish_work)
        if best is None or load < best[0] * (1 - EPS):
            best = (load, moved, better)
        if max_vlans is None:
            continue
        groups = rounded_group_trees(topo, lp, better, sol, roots, weights)
        if groups is None:
            continue
        load, groups = polish(topo, host_count, better, groups, roots, weights,
                              depth=DEPTH if group_depth is None else group_depth,
                              max_work=min(WORK, polish_work))
        if split is not None and load >= split[0] * (1 - EPS):
            continue
        parents, splits = gathered(groups, roots, weights, list(topo.switches), moved)
        if len(pack(parents, hosted, index, splits)) <= max_vlans:
            split = (load, parents, splits, better)
    return best, split


def refined_plan(topo: Topology, host_count: dict[str, int], rank: dict[Arc, int],
                 steps: int = STEPS, iterations: int = ITERATIONS) -> tuple[float, dict[str, ParentMap], dict[Arc, int]] | None:
    """(max load per cable, trees, their channel order): trees rounded from the LP of every
    order the walk from `rank` found below the ones before it (order_walk), polished
    (acyclic/polish.py), the one that carries least; None if each of those orders leaves a
    switch without hosts unreachable from some source. Every improving order is rounded,
    not only the last: a lower LP does not promise lighter trees (random 3-regular graphs
    of 48 switches, seed 4: the walk's best order, 1.26x the optimum, rounded to 1.68x; an
    earlier one gave 1.45x)."""
    lp = OrderLP(topo, host_count)
    best: tuple[float, dict[str, ParentMap], dict[Arc, int]] | None = None
    for key, sol in order_walk(lp, rank, steps, iterations=iterations):
        better = rank_of(lp, key)
        trees = rounded_trees(topo, lp, better, sol)
        if trees is None:
            continue
        load, moved = polish(topo, host_count, better, trees)
        if best is None or load < best[0] * (1 - EPS):
            best = (load, moved, better)
    return best


def rank_of(lp: OrderLP, key: np.ndarray) -> dict[Arc, int]:
    """The channel order of one key per channel of `lp.arcs` as ranks 0, 1, ... (ties by
    channel index)."""
    order = sorted(range(len(lp.arcs)), key=lambda i: (key[i], i))
    return {lp.arcs[i]: k for k, i in enumerate(order)}
