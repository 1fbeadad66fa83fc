"""Pictures of a plan: the physical topology, each VLAN's tree, the all-to-all link load.

Used by `vlanroute draw` (files in a directory) and `vlanroute report` (inlined in HTML).
matplotlib's object API with the Agg canvas only: no pyplot state, no display needed.

Large fabrics stay readable by leaving things out and saying so: switch names are dropped
above LABEL_LIMIT switches (grid coordinates on the axes instead), cable counts above
COUNT_LABEL_LIMIT neighbour pairs (stated in the title when every pair has the same
count), and only the first `max_vlans` VLANs get a picture of their own; every VLAN is
always in the small-multiples overview.
"""

from __future__ import annotations

import io
import math
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

import matplotlib

matplotlib.use("Agg")   # before anything else of matplotlib's is imported: no display needed

from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: E402
from matplotlib.cm import ScalarMappable  # noqa: E402
from matplotlib.collections import LineCollection  # noqa: E402
from matplotlib.colors import Normalize  # noqa: E402
from matplotlib.axes import Axes  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.lines import Line2D  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402  (comes with matplotlib)

from vlanroute.atomic_dir import publish_dir  # noqa: E402
from vlanroute.errors import UserError, disk_error  # noqa: E402
from vlanroute.pictures.layout import Layout, compute_layout, pair  # noqa: E402
from vlanroute.pictures.options import DEFAULT_MAX_VLANS, FORMATS, INDEX_FILE  # noqa: E402
from vlanroute.plan.build import Plan  # noqa: E402
from vlanroute.vlanlist import VlanListError, format_vlan_list, parse_vlan_list  # noqa: E402
from vlanroute.plan.vlans import RoutingVlan  # noqa: E402
from vlanroute.safeio.paths import require_nameable, require_parent_dir  # noqa: E402

LABEL_LIMIT = 64              # above this many switches, names are left out of the pictures
COUNT_LABEL_LIMIT = 100       # above this many neighbour pairs, per-edge cable counts are left out
OVERVIEW_LIMIT = 400          # panels in the small-multiples overview
INDEX_HEADER = "vlanroute draw"

TREE = "#1f6fb4"
SOURCE = "#f28e2b"
GREY = "#c8c8c8"
FADED = "#eeeeee"


@dataclass
class Picture:
    name: str                         # file stem, e.g. "topology" or "vlans/vlan-101"
    caption: str
    make: Callable[[], Figure]        # built on demand: 256 figures at once would not fit in memory


@dataclass
class Selection:
    pictures: list[Picture]
    left_out: list[str] = field(default_factory=list)   # plain statements of what is not drawn


def select_pictures(plan: Plan, max_vlans: int = DEFAULT_MAX_VLANS, vlan_ids: str | None = None) -> Selection:
    """The pictures to draw for a plan. max_vlans 0 means every VLAN; vlan_ids ('101,105-110')
    picks VLANs by id instead of the first max_vlans."""
    if max_vlans < 0:
        raise UserError(f"--max-vlans must be 0 (all) or more, not {max_vlans}", field="--max-vlans")
    layout = compute_layout(plan.topology)
    by_id = {v.id: v for v in plan.vlans}
    if vlan_ids is not None:
        try:
            wanted = parse_vlan_list(vlan_ids.strip())
        except VlanListError as exc:
            raise UserError(str(exc), field="--vlans", fix="give VLAN ids like 101,105-110 (no spaces)") from None
        unknown = [i for i in wanted if i not in by_id]
        if unknown:
            raise UserError(f"the plan has no VLAN {format_vlan_list(unknown)}", field="--vlans",
                            fix=f"the plan's VLANs are {format_vlan_list(by_id)}")
        chosen = [by_id[i] for i in wanted]
    else:
        chosen = plan.vlans if max_vlans == 0 else plan.vlans[:max_vlans]

    m = plan.metrics
    pics = [
        Picture("topology", f"Physical topology: {m.switches} switches, {m.inter_switch_links} inter-switch cables",
                lambda: topology_figure(plan, layout)),
        Picture("link-load", "All-to-all load per cable relative to the lower bound",
                lambda: link_load_figure(plan, layout)),
        Picture("failure-cut", "Host pairs each neighbour pair's failure would cut before a repair (vlanroute whatif)",
                lambda: failure_cut_figure(plan, layout)),
        Picture("vlans-overview", f"All {min(len(plan.vlans), OVERVIEW_LIMIT)} VLAN trees side by side",
                lambda: overview_figure(plan, layout)),
    ]
    for v in chosen:
        pics.append(Picture(f"vlans/vlan-{v.id}", f"VLAN {v.id}: sources {_names(v.sources, 6)}",
                            partial(vlan_figure, plan, layout, v)))

    left_out = []
    chosen_ids = {v.id for v in chosen}
    rest = [v.id for v in plan.vlans if v.id not in chosen_ids]
    if rest:
        left_out.append(f"per-VLAN pictures of {len(rest)} of {len(plan.vlans)} VLANs ({format_vlan_list(rest)}): "
                        "every VLAN is in vlans-overview; draw more with --max-vlans N (0 = all) or --vlans LIST")
    if len(plan.vlans) > OVERVIEW_LIMIT:
        left_out.append(f"the overview shows the first {OVERVIEW_LIMIT} of {len(plan.vlans)} VLANs")
    if m.switches > LABEL_LIMIT:
        left_out.append(f"switch names (more than {LABEL_LIMIT} switches)"
                        + ("; the axes give grid coordinates" if layout.axis_names else ""))
    if len(layout.cables) > COUNT_LABEL_LIMIT and len(set(layout.cables.values())) > 1:
        left_out.append(f"per-edge cable counts (more than {COUNT_LABEL_LIMIT} neighbour pairs); "
                        "line width shows the count instead")
    return Selection(pics, left_out)


# --- the pictures -------------------------------------------------------------------------

def topology_figure(plan: Plan, layout: Layout) -> Figure:
    fig, ax = _canvas(layout)
    counts = layout.cables
    uniform = len(set(counts.values())) == 1
    widths = [_edge_width(layout) * (1 if uniform else 0.6 + 0.5 * counts[p]) for p in layout.edges]
    ax.add_collection(LineCollection(list(layout.edges.values()), colors="#555555", linewidths=widths, zorder=1))
    if len(counts) <= COUNT_LABEL_LIMIT:
        for p, line in layout.edges.items():
            x, y = _midpoint(line)
            ax.text(x, y, str(counts[p]), fontsize=7, ha="center", va="center", color="#333333", zorder=2,
                    bbox=dict(boxstyle="round,pad=0.15", fc="white", ec="none"))
    _nodes(ax, plan, layout, face={s: "white" for s in plan.topology.switches})
    t = plan.topology
    shape = f" {'x'.join(map(str, t.dims))}" if t.dims else ""
    per_pair = (f"{next(iter(counts.values()))} cable(s) per neighbour pair" if uniform
                else "numbers: cables per neighbour pair")
    if len(counts) <= COUNT_LABEL_LIMIT and uniform:
        per_pair += " (numbers on the edges)"
    _title(fig, ax, f"{plan.name}: {t.kind}{shape}, {len(t.switches)} switches, "
                    f"{plan.metrics.inter_switch_links} inter-switch cables", f"{per_pair}; {layout.note}")
    return fig


def vlan_figure(plan: Plan, layout: Layout, vlan: RoutingVlan) -> Figure:
    fig, ax = _canvas(layout)
    w = _edge_width(layout)
    ax.add_collection(LineCollection(list(layout.edges.values()), colors=GREY, linewidths=w * 0.6, zorder=1))
    tree = [layout.edges[pair(plan.topology, a, b)] for a, b in vlan.links]
    ax.add_collection(LineCollection(tree, colors=TREE, linewidths=w * 2.2, zorder=2))
    sources = set(vlan.sources)
    face = {s: SOURCE if s in sources else ("white" if s in vlan.switches else FADED)
            for s in plan.topology.switches}
    edge = {s: "#333333" if s in vlan.switches else "#aaaaaa" for s in plan.topology.switches}
    _nodes(ax, plan, layout, face=face, edge=edge)
    handles = [Line2D([], [], color=TREE, lw=3, label=f"tree link ({len(vlan.links)})"),
               Line2D([], [], color=GREY, lw=1.5, label="other cables"),
               Line2D([], [], marker="s", ls="", mfc=SOURCE, mec="#333333", ms=9,
                      label=f"source: its hosts send in VLAN {vlan.id} ({len(sources)})"),
               Line2D([], [], marker="s", ls="", mfc="white", mec="#333333", ms=9, label="transit / receiving switch")]
    if len(vlan.switches) < len(plan.topology.switches):
        handles.append(Line2D([], [], marker="s", ls="", mfc=FADED, mec="#aaaaaa", ms=9, label="not in this VLAN"))
    fig.legend(handles=handles, loc="lower center", ncol=3, fontsize=8, frameon=False)
    _title(fig, ax, f"VLAN {vlan.id}: a tree of {len(vlan.links)} links over {len(vlan.switches)} switches",
           f"sources: {_names(vlan.sources, 12)}", legend=True)
    return fig


def link_load_figure(plan: Plan, layout: Layout) -> Figure:
    """Each cable drawn in two halves: the half at switch A is coloured by the load A sends
    over one cable of that pair, so both directions of every cable are visible."""
    m = plan.metrics
    lower = m.link_load_lower_bound or 1.0
    top = max(1.25, m.max_link_load / lower * 1.05)
    norm = Normalize(0.0, top)
    cmap = matplotlib.colormaps["viridis"]
    fig, ax = _canvas(layout, colorbar=True)
    used, ratios, unused = [], [], []
    for (a, b), line in layout.edges.items():
        first, second = _halves(line)
        for half, load in ((first, m.link_loads.get((a, b), 0.0)), (second, m.link_loads.get((b, a), 0.0))):
            if load > 0:
                used.append(half)
                ratios.append(load / lower)
            else:
                unused.append(half)
    w = _edge_width(layout) * 1.8
    ax.add_collection(LineCollection(unused, colors=GREY, linewidths=w * 0.5, linestyles="dotted", zorder=1))
    ax.add_collection(LineCollection(used, array=np.array(ratios), cmap=cmap, norm=norm, linewidths=w, zorder=2))
    _nodes(ax, plan, layout, face={s: "white" for s in plan.topology.switches})
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.8, pad=0.02)
    bar.set_label("load per cable and direction / lower bound")
    bar.ax.axhline(1.0, color="red", lw=1.5)
    bar.ax.text(-0.3, 1.0, "lower bound", color="red", fontsize=7, ha="right", va="center",
                transform=bar.ax.get_yaxis_transform())
    handles = [Line2D([], [], color=GREY, lw=1.5, ls=":", label="no traffic in that direction")]
    fig.legend(handles=handles, loc="lower center", fontsize=8, frameon=False)
    ratio = m.max_link_load / lower if m.link_load_lower_bound else 1.0
    _title(fig, ax, f"{plan.name}: all-to-all link load (one unit per ordered host pair)",
           f"max {m.max_link_load:g} per cable = x{ratio:.3f} the lower bound {m.link_load_lower_bound:g}; "
           "each half of a cable: the direction leaving the switch at that end", legend=True)
    return fig


def failure_cut_figure(plan: Plan, layout: Layout) -> Figure:
    """Each neighbour pair coloured by the ordered host pairs its failure (every cable of
    it) would cut before a repair (routing/whatif/failures.py pair_cuts; docs/failures.md)."""
    from vlanroute.model.links import link
    from vlanroute.routing.repair.model import Tree
    from vlanroute.routing.whatif.failures import pair_cuts

    hosts = {s: 0 for s in plan.topology.switches}
    for h in plan.hosts:
        hosts[h.switch] += 1
    trees = [Tree(v.id, tuple(v.sources), frozenset(link(a, b) for a, b in v.links)) for v in plan.vlans]
    cuts = pair_cuts(trees, hosts)
    total = sum(hosts.values())
    top = max(max(cuts.values(), default=0), 1)
    norm = Normalize(0.0, top)
    cmap = matplotlib.colormaps["plasma"]
    fig, ax = _canvas(layout, colorbar=True)
    cut_lines, values, spare = [], [], []
    for (a, b), line in layout.edges.items():
        n = cuts.get(link(a, b), 0)
        if n:
            cut_lines.append(line)
            values.append(n)
        else:
            spare.append(line)
    w = _edge_width(layout) * 1.8
    ax.add_collection(LineCollection(spare, colors=GREY, linewidths=w * 0.5, linestyles="dotted", zorder=1))
    ax.add_collection(LineCollection(cut_lines, array=np.array(values, dtype=float), cmap=cmap, norm=norm,
                                     linewidths=w, zorder=2))
    _nodes(ax, plan, layout, face={s: "white" for s in plan.topology.switches})
    bar = fig.colorbar(ScalarMappable(norm=norm, cmap=cmap), ax=ax, shrink=0.8, pad=0.02)
    bar.set_label("ordered host pairs cut if every cable of the pair fails")
    handles = [Line2D([], [], color=GREY, lw=1.5, ls=":", label="in no VLAN tree: its failure cuts nothing")]
    fig.legend(handles=handles, loc="lower center", fontsize=8, frameon=False)
    worst = max(cuts.items(), key=lambda kv: kv[1], default=None)
    note = (f"worst: {worst[0][0]}-{worst[0][1]} cuts {worst[1]} of {total * (total - 1)} ordered host pairs; "
            "vlanroute repair joins the trees again, vlanroute whatif gives every figure") if worst else "no pair cuts anything"
    _title(fig, ax, f"{plan.name}: what one dead neighbour pair would cut", note, legend=True)
    return fig


def overview_figure(plan: Plan, layout: Layout) -> Figure:
    """Small multiples: every VLAN's tree (blue) and sources (orange) in one axes, with no
    grey background, so even 256 trees of 255 links draw quickly."""
    vlans = plan.vlans[:OVERVIEW_LIMIT]
    n = len(vlans)
    cols = max(1, math.ceil(math.sqrt(n)))
    rows = math.ceil(n / cols)
    xmin, xmax, ymin, ymax = layout.extent
    scale = 1.0 / max(xmax - xmin, ymax - ymin, 1e-9)
    pw, ph = (xmax - xmin) * scale, (ymax - ymin) * scale
    pitch_x, pitch_y = pw + 0.25, ph + 0.3
    panel_in = min(3.0, max(0.75, 12.0 / cols))
    xlim = (-0.1, cols * pitch_x - 0.15)
    ylim = (-(rows - 1) * pitch_y - ph - 0.1, 0.22)
    # the axes get exactly the data's aspect ratio, so no empty band appears around the panels
    axes_w, axes_h = (xlim[1] - xlim[0]) * panel_in, (ylim[1] - ylim[0]) * panel_in
    title_in = 0.5
    fig = Figure(figsize=(axes_w, axes_h + title_in), dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_axes((0.0, 0.0, 1.0, axes_h / (axes_h + title_in)))
    ax.set_axis_off()
    labels = len(plan.topology.switches) <= 16
    names = plan.topology.switches
    xy = np.array([layout.pos[s] for s in names])
    lines: list[np.ndarray] = []
    src_pts: list[np.ndarray] = []
    all_pts: list[np.ndarray] = []
    small = len(names) > LABEL_LIMIT
    for k, v in enumerate(vlans):
        ox, oy = (k % cols) * pitch_x, -(k // cols) * pitch_y

        def place(pts: np.ndarray, ox: float = ox, oy: float = oy) -> np.ndarray:
            return (pts - (xmin, ymax)) * scale + (ox, oy)

        lines.extend(place(layout.edges[pair(plan.topology, a, b)]) for a, b in v.links)
        all_pts.append(place(xy))
        src_pts.append(place(np.array([layout.pos[s] for s in v.sources])))
        ax.text(ox + pw / 2, oy + 0.06, f"VLAN {v.id}", ha="center", va="bottom", fontsize=7 if small else 9)
        if labels:
            for s, (x, y) in zip(plan.topology.switches, place(xy)):
                ax.text(x + 0.02, y + 0.02, s, fontsize=6, color="#666666", ha="left", va="bottom")
    ax.add_collection(LineCollection(lines, colors=TREE, linewidths=0.5 if small else 1.5, zorder=1))
    dots = np.concatenate(all_pts)
    ax.scatter(dots[:, 0], dots[:, 1], s=0.5 if small else 12, c="#999999", zorder=2, linewidths=0)
    srcs = np.concatenate(src_pts)
    ax.scatter(srcs[:, 0], srcs[:, 1], s=6 if small else 40, c=SOURCE, zorder=3, edgecolors="#333333",
               linewidths=0.3)
    ax.set_xlim(*xlim)
    ax.set_ylim(*ylim)
    ax.set_aspect("equal")
    more = f" (first {n} of {len(plan.vlans)})" if len(plan.vlans) > n else ""
    fig.suptitle(f"{plan.name}: the tree of every VLAN{more}; orange = its sources", fontsize=11)
    return fig


# --- shared drawing helpers ------------------------------------------------------------------

def _canvas(layout: Layout, colorbar: bool = False) -> tuple[Figure, Axes]:
    xmin, xmax, ymin, ymax = layout.extent
    w, h = max(xmax - xmin, 1.0), max(ymax - ymin, 1.0)
    per_unit = min(1.8, max(0.4, 10.0 / max(w, h)))
    fig = Figure(figsize=(min(14.0, w * per_unit + 2.0 + (1.5 if colorbar else 0)), min(14.0, h * per_unit + 2.4)),
                 dpi=100)
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    pad = 0.6
    ax.set_xlim(xmin - pad, xmax + pad)
    ax.set_ylim(ymin - pad, ymax + pad)
    ax.set_aspect("equal")
    big = len(layout.pos) > LABEL_LIMIT
    if layout.grid and big and layout.axis_names is not None:
        xs = sorted({p[0] for p in layout.pos.values()})
        ys = sorted({p[1] for p in layout.pos.values()})
        ax.set_xticks(xs, [f"{x:g}" for x in xs], fontsize=6)
        ax.set_yticks(ys, [f"{-y:g}" for y in ys], fontsize=6)
        ax.set_xlabel(layout.axis_names[0])
        ax.set_ylabel(layout.axis_names[1])
        for s in ax.spines.values():
            s.set_visible(False)
        ax.tick_params(length=0)
    else:
        ax.set_axis_off()
    return fig, ax


def _title(fig: Figure, ax: object, title: str, note: str, legend: bool = False) -> None:
    fig.suptitle(title, fontsize=11)
    ax.set_title(note, fontsize=8, color="#444444", wrap=True)   # type: ignore[attr-defined]
    fig.tight_layout(rect=(0, 0.07 if legend else 0, 1, 0.97))


def _nodes(ax: object, plan: Plan, layout: Layout, face: dict[str, str], edge: dict[str, str] | None = None) -> None:
    names = plan.topology.switches
    edge = edge or {s: "#333333" for s in names}
    if len(names) <= LABEL_LIMIT:
        fs = 8 if len(names) <= 16 else 6
        for s in names:
            x, y = layout.pos[s]
            ax.text(x, y, s, ha="center", va="center", fontsize=fs, zorder=4,   # type: ignore[attr-defined]
                    color="#999999" if face[s] == FADED else "black",
                    bbox=dict(boxstyle="round,pad=0.3", fc=face[s], ec=edge[s], lw=1.0))
    else:
        xy = np.array([layout.pos[s] for s in names])
        ax.scatter(xy[:, 0], xy[:, 1], s=14, c=[face[s] for s in names],   # type: ignore[attr-defined]
                   edgecolors=[edge[s] for s in names], linewidths=0.5, zorder=4)


def _edge_width(layout: Layout) -> float:
    return 1.6 if len(layout.pos) <= LABEL_LIMIT else 0.5


def _midpoint(line: np.ndarray) -> tuple[float, float]:
    first, _ = _halves(line)
    return float(first[-1][0]), float(first[-1][1])


def _halves(line: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Split a polyline at half its length."""
    seg = np.hypot(*np.diff(line, axis=0).T)
    cum = np.concatenate([[0.0], np.cumsum(seg)])
    half = cum[-1] / 2
    i = int(np.searchsorted(cum, half, side="right")) - 1
    i = min(i, len(seg) - 1)
    t = (half - cum[i]) / seg[i] if seg[i] else 0.0
    mid = line[i] + t * (line[i + 1] - line[i])
    return np.vstack([line[: i + 1], mid]), np.vstack([mid, line[i + 1:]])


def _names(names: list[str], limit: int) -> str:
    if len(names) <= limit:
        return ", ".join(names)
    return ", ".join(names[:limit]) + f", ... ({len(names)} in all)"


# --- files ------------------------------------------------------------------------------------

def figure_bytes(fig: Figure, fmt: str) -> bytes:
    buf = io.BytesIO()
    # metadata without a date, so the same plan gives the same bytes
    meta = {"Date": None} if fmt == "svg" else {"Software": "vlanroute"}
    # a fixed salt makes the SVG's element ids the same every run
    with matplotlib.rc_context({"svg.hashsalt": "vlanroute"}):
        fig.savefig(buf, format=fmt, metadata=meta)
    if fmt != "png":
        return buf.getvalue()
    # Line drawings need no more than 256 colours: a palette PNG is a third of the size,
    # which matters for a 256-switch fabric and for the report that inlines them all.
    with Image.open(io.BytesIO(buf.getvalue())) as im:
        pal = im.convert("RGB").quantize(colors=256, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE)
    out = io.BytesIO()
    pal.save(out, format="PNG", optimize=True)
    return out.getvalue()


@dataclass
class DrawResult:
    outdir: Path
    files: list[str]
    left_out: list[str]


def draw_to_dir(plan: Plan, outdir: Path, fmt: str = "png", max_vlans: int = DEFAULT_MAX_VLANS,
                vlan_ids: str | None = None) -> DrawResult:
    """Draw every picture into a new directory, then put it in place of OUTDIR in one rename:
    an error leaves OUTDIR as it was, never half-drawn."""
    if fmt not in FORMATS:
        raise UserError(f"unknown format '{fmt}'", field="--format", fix="use png or svg")
    outdir = Path(outdir)
    _check_outdir(outdir)
    selection = select_pictures(plan, max_vlans, vlan_ids)
    require_parent_dir(outdir, "-o/--outdir")
    try:
        tmp = Path(tempfile.mkdtemp(dir=outdir.parent, prefix=f".{outdir.name}.tmp-"))
    except OSError as exc:
        raise disk_error(exc, outdir.parent) from None
    files = []
    try:
        for pic, data in _rendered(selection, fmt):
            rel = f"{pic.name}.{fmt}"
            (tmp / rel).parent.mkdir(parents=True, exist_ok=True)
            (tmp / rel).write_bytes(data)
            files.append(rel)
        (tmp / INDEX_FILE).write_text(index_text(plan, selection, fmt))
        os.chmod(tmp, 0o755)        # mkdtemp makes it 0700
        publish_dir(tmp, outdir)
    except OSError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise disk_error(exc, outdir) from None
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return DrawResult(outdir, files, selection.left_out)


def _rendered(selection: Selection, fmt: str) -> Iterator[tuple[Picture, bytes]]:
    for pic in selection.pictures:
        fig = pic.make()
        yield pic, figure_bytes(fig, fmt)
        fig.clear()


def index_text(plan: Plan, selection: Selection, fmt: str) -> str:
    lines = [f"{INDEX_HEADER}: {plan.name} ({plan.metrics.switches} switches, {plan.metrics.vlan_count} VLANs)", ""]
    lines += [f"{p.name}.{fmt}  {p.caption}" for p in selection.pictures]
    if selection.left_out:
        lines += ["", "left out:"] + [f"- {s}" for s in selection.left_out]
    return "\n".join(lines) + "\n"


def _check_outdir(outdir: Path) -> None:
    """Replace only an earlier draw directory (it has index.txt starting 'vlanroute draw')."""
    require_nameable(outdir, "-o/--outdir")
    if outdir.is_symlink():
        raise UserError(f"{outdir} is a symbolic link", field="-o/--outdir", fix="give the real directory path")
    if not outdir.exists():
        return
    if not outdir.is_dir():
        raise UserError(f"{outdir} exists and is not a directory", field="-o/--outdir",
                        fix="choose a new directory name")
    index = outdir / INDEX_FILE
    ours = index.is_file() and index.read_text(errors="replace").startswith(INDEX_HEADER)
    if any(outdir.iterdir()) and not ours:
        raise UserError(f"{outdir} is not empty and is not an earlier `vlanroute draw` directory "
                        f"(no {INDEX_FILE}); refusing to replace it", field="-o/--outdir",
                        fix="choose a new or empty directory")
