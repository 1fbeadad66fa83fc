"""The throughput comparison (vlanroute/perf/table.py) as a bar chart for the report: one
group per traffic pattern, one bar per fabric, the effective rate relative to the first."""

from __future__ import annotations

from typing import Any

from matplotlib.figure import Figure

from vlanroute.pictures.draw import figure_bytes


def throughput_chart(tables: list[dict[str, Any]]) -> Figure:
    """Bars of `vs_first` (log scale) for every row of every pattern's table; none (and "-")
    where the first plan has no throughput in a pattern (one without flows: e.g. no
    neighbour pairs on three switches of one host each)."""
    labels = [r["label"] for r in tables[0]["rows"]]
    fig = Figure(figsize=(10, 4.2))
    ax = fig.add_subplot()
    width = 0.8 / len(labels)
    for i, label in enumerate(labels):
        got = [next(r["vs_first"] for r in t["rows"] if r["label"] == label) for t in tables]
        values = [float("nan") if v is None else v for v in got]
        xs = [g + (i - (len(labels) - 1) / 2) * width for g in range(len(tables))]
        bars = ax.bar(xs, values, width, label=label)
        ax.bar_label(bars, labels=["-" if v is None else f"{v:.1f}" for v in got], fontsize=6, rotation=90, padding=2)
    ax.set_xticks(range(len(tables)), [t["pattern"] for t in tables], fontsize=8)
    ax.set_yscale("log")
    ax.set_ylabel(f"effective rate, x {labels[0]}")
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1))
    ax.set_ylim(top=ax.get_ylim()[1] * 2)
    ax.grid(axis="y", which="both", alpha=0.3)
    fig.tight_layout()
    return fig


def chart_svg(tables: list[dict[str, Any]]) -> bytes:
    return figure_bytes(throughput_chart(tables), "svg")
