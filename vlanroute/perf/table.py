"""The throughput comparison of several plans: one table per pattern, each plan's VLAN
routing next to the spanning tree on its own cables and the first plan (the baseline the
user lists first, Tree(1link) in the seed's comparison)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from vlanroute.perf.evaluate import Result
from vlanroute.perf.planfabric import Comparison, Fabrics, compare


@dataclass(frozen=True)
class Options:
    patterns: tuple[str, ...] = ("all-to-all", "permutation", "neighbour", "bisection")
    seeds: tuple[int, ...] = (1, 2, 3)
    exchange_bytes: float = 1e6


def effective(r: Result, exchange_bytes: float) -> float:
    """Gb/s over the whole exchange: every flow's bytes divided by the time the last one
    needs. For all-to-all this is what a collective sees (it ends with its slowest flow);
    the max-min aggregate counts fast local flows that finish early."""
    return r.flows * exchange_bytes * 8 / 1e9 / r.exchange if r.exchange > 0 else 0.0


def _row(label: str, cables: int, r: Result, stp: Result | None, first: float, exchange_bytes: float) -> dict[str, Any]:
    eff = effective(r, exchange_bytes)
    return {"label": label, "cables": cables, "flows": r.flows, "aggregate_gbps": round(r.aggregate, 4),
            "slowest_mbps": round(r.slowest * 1000, 4), "exchange_s": round(r.exchange, 6),
            "effective_gbps": round(eff, 4), "vs_first": round(eff / first, 4) if first else None,
            "vs_stp": _ratio(eff, effective(stp, exchange_bytes)) if stp is not None else None,
            "bottlenecks": ["->".join(a) for a in r.bottlenecks]}


def _ratio(a: float, b: float) -> float | None:
    """a / b rounded, or None when b has no throughput (a pattern without flows)."""
    return round(a / b, 4) if b > 0 else None


def pattern_tables(plans: Sequence[tuple[str, Fabrics]], options: Options) -> list[dict[str, Any]]:
    """One table per pattern: {pattern, rows}; a row per plan, then the first plan's
    spanning tree and the big switch (the same hosts on one non-blocking switch)."""
    out = []
    for pattern in options.patterns:
        got: list[tuple[str, Fabrics, Comparison]] = [
            (label, f, compare(f, pattern, seeds=options.seeds, exchange_bytes=options.exchange_bytes))
            for label, f in plans]
        if not got:
            continue
        first = effective(got[0][2].vlan, options.exchange_bytes)
        rows = [_row(label, f.vlan.cables, c.vlan, c.stp, first, options.exchange_bytes) for label, f, c in got]
        label, f, c = got[0]
        rows.append(_row(f"{label}: {f.stp.label}", f.stp.cables, c.stp, None, first, options.exchange_bytes))
        rows.append(_row(f.big.label, 0, c.big, None, first, options.exchange_bytes))
        out.append({"pattern": got[0][2].pattern, "rows": rows})
    return out
