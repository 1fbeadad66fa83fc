"""Whether a fabric looks the same from every switch (a translation-symmetric grid).

A generated torus, ring, hyper-crossbar or complete graph with its coordinates is
translation-symmetric when every unit translation (one coordinate shifted by one, modulo
its dimension) maps switches onto switches and every directed pair onto a pair with the
same cables, and every switch has the same hosts. Then nothing but tie-breaks tells one
switch from another, and the exact optimum needs one source's flow (routing/optimum.py).
A torus with a failed cable, or unequal hosts, is not.
"""

from __future__ import annotations

from vlanroute.model.topology import Topology


def translation_symmetric(topo: Topology, host_count: dict[str, int]) -> bool:
    """Whether every unit translation maps the fabric, its cables and its hosts onto
    themselves (module docstring); False without coordinates."""
    if topo.dims is None or any(c is None for c in topo.coords.values()):
        return False
    counts = {host_count.get(s, 0) for s in topo.switches}
    if len(counts) != 1 or 0 in counts:
        return False
    dims = topo.dims
    at = {c: s for s, c in topo.coords.items() if c is not None}
    if len(at) != len(topo.switches):
        return False
    arcs = topo.arc_cables()

    def shift(s: str, d: int) -> str:
        c = topo.coords[s]
        assert c is not None
        return at[c[:d] + ((c[d] + 1) % dims[d],) + c[d + 1:]]

    return all(arcs.get((shift(a, d), shift(b, d))) == n for d in range(len(dims)) for (a, b), n in arcs.items())
