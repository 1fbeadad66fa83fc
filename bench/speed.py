"""Benchmark: CPU seconds of the default plan, of `whatif` and of `repair` (issue 40's targets:
the default plan at most 5 s of CPU on any fabric up to 64 switches and 30 s on the 32x32
torus with 16 hosts per switch; whatif at most 10 s on a 16x16 torus and 120 s on a 32x32).

Run: python bench/speed.py [--quick] [--no-flow-control] [--plan | --whatif | --repair |
     --reference] [NAME-SUBSTRING ...]
(--no-flow-control: every case with settings.flow_control=false, where nothing can deadlock and
the default takes the lightest plan outright.)

Every case runs in a fresh interpreter (nothing cached between cases) and prints the CPU
seconds of that process's work (imports excluded), which a shared machine inflates far less
than the wall clock. Columns:
- plan: `plan_from_file` of the inventory with no routing.algorithm (the default choice):
  the engine chosen, its max link load over the exact optimum (or the bound named),
  VLANs, deadlock-free, CPU seconds. 802.3x flow control is on in every row (the default,
  on every platform), so the default prefers a deadlock-free plan, but not one that
  carries more than 1.25 times the best plan's load (routing/choose.py); then it takes the
  best plan and warns. "df" says which: "df", or "--" with the best deadlock-free plan's
  load over the chosen one's ("-- x1.750": the 16x16 torus, where no deadlock-free engine
  comes within 1.25x; "-- none": none fits). The degraded tori's default plans are
  deadlock-free since 2026-11-30 (docs/routing-bounds.md);
- whatif: what `vlanroute whatif INVENTORY` runs but its output: the plan, every single
  pair and switch failure repaired (routing/whatif/failures.py) and classed, and the 200
  sampled double failures (seed 0) each classed and healed as the watcher heals it
  (bundle/guarantees.py `Fabric.price`): CPU seconds of the plan, of the singles, of the
  doubles per kind (pair+pair, pair+switch, switch+switch), and the total, the whole
  command (issue 40's target); "compiled": the pair failures, the dead switches' common
  trees and their exchanges ran compiled (routing/whatif/pairs_kernel.py and
  switches_kernel.py: numba
  installed, a plan of 20,000 tree links or more); the kernels' first compile (about 5 s)
  is cached on disk, so run the bench twice after installing or changing them;
- reference (printed first, and alone with --reference): the CPU seconds of a fixed workload
  that runs none of vlanroute's code, in a fresh interpreter: networkx's all-pairs hop counts
  on a 40x40 torus (Python), and scipy's HiGHS on the all-to-all max-load LP of a 7x7 torus
  (one commodity per source; its optimum is k (k^2 - 1) / 8 = 42), the solve alone. The 2-core
  machines this project is measured on have differed by 2.4x from one day to the next
  (docs/routing-bounds.md, 2026-12-03), so compare two runs' rows by their CPU over the
  reference's;
- repair: what `vlanroute repair OUTDIR --failed-pair A:B -o NEWDIR` runs on a rendered
  plan: the repair, the full re-plan it is compared with, and the new bundle rendered and
  verified (render is timed apart).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# The inventories of the repository name their engine: the default (no routing.algorithm)
# is what is measured, with their own settings (802.3x flow control on, as by default).
DEFAULT = ["routing.algorithm=null"]
BIG = ["platform=linux-bridge", "switches={}", "settings.learning.pool=10.0.0.0/8", "topology.links_per_pair=1"]
TORUS = "inventories/seed-torus.yaml"


def torus(dims: str, per: int) -> tuple[str, list[str]]:
    return TORUS, [f"topology.dims=[{dims}]", f"hosts={{per_switch: {per}}}", *BIG, *DEFAULT]


# (name, inventory or @fabric of tests/fabrics.py, --set overrides)
PLANS: list[tuple[str, str, list[str]]] = [
    ("seed tree", "inventories/seed-tree.yaml", DEFAULT),
    ("seed ring 8", "inventories/seed-ring.yaml", DEFAULT),
    ("seed mesh 4x2", "inventories/seed-mesh.yaml", DEFAULT),
    ("seed torus 4x2", TORUS, DEFAULT),
    ("seed complete 8", "inventories/seed-complete.yaml", DEFAULT),
    ("leaf-spine 8x4", "@leaf_spine(8, 4)", []),
    ("leaf-spine 16x4", "@leaf_spine(16, 4)", []),
    ("leaf-spine 16x8", "@leaf_spine(16, 8)", []),
    ("random 3-regular 24", "@random_regular(24, 3, seed=1)", []),
    ("random 3-regular 48 (seed 2)", "@random_regular(48, 3, seed=2)", []),
    ("random 4-regular 64 (seed 3)", "@random_regular(64, 4, seed=3)", []),
    # The fabrics of tests/test_acyclic_walks_again.py: the default's slowest below 64
    # switches, where it walks the channel orders again to come within 1.2x the optimum
    # (one order LP per move, about 15 ms each on 24 switches; routing/acyclic/engine.py)
    ("random 3-regular 22 (seed 5)", "@random_regular(22, 3, seed=5)", []),
    ("random 3-regular 24 (seed 8)", "@random_regular(24, 3, seed=8)", []),
    ("dragonfly 6x3", "@dragonfly(6, 3)", []),
    ("6x6 torus, 3 cables gone", "@degraded_torus(6, 3, seed=0)", []),
    ("8x8 torus, 6 cables gone", "@degraded_torus(8, 6, seed=1)", []),
    ("16x16 torus, 1 cable gone", "@degraded_torus(16, 1, seed=0)", []),    # a custom fabric of 256 switches
    ("dragonfly 6x4", "@dragonfly(6, 4)", []),
    ("dragonfly 9x4", "@dragonfly(9, 4)", []),
    ("torus 6x6", *torus("6,6", 4)),
    ("torus 7x7", *torus("7,7", 4)),
    ("torus 8x8", *torus("8,8", 4)),
    ("torus 4x4x4", *torus("4,4,4", 4)),
    ("torus 16x16", *torus("16,16", 4)),
    ("torus 32x32, 16 h/sw", *torus("32,32", 16)),
]
# The degraded 8x8 torus: its default plan is deadlock-free (acyclic), so every failure
# runs the repair's deadlock guard, which the tori's dimension-order plans barely use.
WHATIFS = [("torus 16x16", *torus("16,16", 4)), ("torus 32x32, 16 h/sw", *torus("32,32", 16)),
           ("8x8 torus, 6 cables gone", "@degraded_torus(8, 6, seed=1)", [])]
REPAIRS = [("leaf-spine 8x4", "@leaf_spine(8, 4)", [], "l0:s0"),
           ("torus 8x8", *torus("8,8", 4), "sw1:sw2"),
           ("torus 16x16", *torus("16,16", 4), "sw1:sw2"),
           ("torus 32x32, 16 h/sw", *torus("32,32", 16), "sw1:sw2")]
QUICK = {"seed torus 4x2", "leaf-spine 8x4", "random 3-regular 24", "torus 8x8", "torus 16x16"}

CHILD = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1] + "/tests")
from pathlib import Path
kind, inv, sets = sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
from vlanroute.plan.build import plan_from_file
from vlanroute.routing.whatif.failures import what_if
from vlanroute.bundle.repaired import repair_document
out = {}
c0 = time.process_time()
plan = plan_from_file(inv, sets)
out["plan"] = time.process_time() - c0
m = plan.metrics
out.update(engine=plan.routes.algorithm, ratio=m.load_over_optimum, kind=m.link_load_optimum_kind,
           vlans=m.vlan_count, df=m.deadlock_free, switches=m.switches, fc=plan.settings["flow_control"],
           choice=plan.choice or "")
if kind == "whatif":
    # What `vlanroute whatif INVENTORY` runs after the plan (commands/whatif.py), but output:
    # every single failure, then the 200 sampled double failures (seed 0), each healed.
    from vlanroute.bundle.guarantees import Fabric
    c0 = time.process_time()
    doc = plan.to_document()
    fab = Fabric.of(doc)
    rows = what_if(fab.trees, fab.cables, fab.hosts, fab.switches, fab.deadlock_free, fab.intact_loads(),
                   fab.switch_index())
    for r, failures in zip(rows, fab.singles(), strict=True):
        v = fab.classify(failures)
        v.pairs_cut = r.pairs_cut
        fab.price(v, (r.max_load, r.deadlock_free, r.deadlock_cycle))
    out["whatif"] = time.process_time() - c0
    out["failures"] = len(rows)
    from vlanroute.routing.whatif.failures import use_kernel
    out["compiled"] = use_kernel(fab.trees) and not fab.deadlock_free
    for f in fab.doubles(200, 0):
        c0 = time.process_time()
        v = fab.price(fab.classify(f))
        out[v.kind] = out.get(v.kind, 0.0) + time.process_time() - c0
elif kind == "repair":
    import tempfile
    from vlanroute.bundle.failures import parse_failures, check
    from vlanroute.bundle.reader import read_plan
    from vlanroute.render.write import RenderOptions, render_to_dir
    tmp = Path(tempfile.mkdtemp())
    render_to_dir(plan.to_document(), tmp / "out", RenderOptions())
    c0 = time.process_time()
    doc = read_plan(tmp / "out")
    failures = parse_failures(pairs=[sys.argv[5]])
    check(failures, doc)
    rep = repair_document(doc, failures)
    out["repair"] = time.process_time() - c0
    c0 = time.process_time()
    render_to_dir(rep.doc, tmp / "new", RenderOptions())
    out["render"] = time.process_time() - c0
    out["replan"] = rep.record["full_replan"]["algorithm"] if rep.record["full_replan"] else "-"
print(json.dumps(out))
"""

# The machine's reference workload (module docstring): nothing of vlanroute's.
REFERENCE = r"""
import json, time
import networkx as nx
import numpy as np
from scipy.optimize import linprog
from scipy.sparse import coo_matrix
c0 = time.process_time()
g = nx.grid_2d_graph(40, 40, periodic=True)
hops = sum(sum(d.values()) for _, d in nx.all_pairs_shortest_path_length(g))
python = time.process_time() - c0
k = 7
t = nx.convert_node_labels_to_integers(nx.grid_2d_graph(k, k, periodic=True))
arcs = [(u, v) for u, v in t.edges] + [(v, u) for u, v in t.edges]
n, m = t.number_of_nodes(), len(arcs)
rows, cols, vals, b = [], [], [], []
for s in range(n):                      # per source: out - in = n - 1 at s, in - out = 1 elsewhere
    for i, (u, v) in enumerate(arcs):
        rows += [s * n + u, s * n + v]
        cols += [s * m + i, s * m + i]
        vals += [-1.0, 1.0]
    b += [-(n - 1.0) if x == s else 1.0 for x in range(n)]
a_eq = coo_matrix((vals, (rows, cols)), shape=(n * n, n * m + 1)).tocsr()
a_ub = coo_matrix(([1.0] * (n * m) + [-1.0] * m,
                   ([i for _ in range(n) for i in range(m)] + list(range(m)),
                    list(range(n * m)) + [n * m] * m)), shape=(m, n * m + 1)).tocsr()
c = np.zeros(n * m + 1)
c[-1] = 1.0
c0 = time.process_time()                # the solve alone: building the matrix above is Python
res = linprog(c, A_ub=a_ub, b_ub=np.zeros(m), A_eq=a_eq, b_eq=np.array(b), bounds=(0, None), method="highs-ds")
lp = time.process_time() - c0
print(json.dumps({"python": python, "highs": lp, "hops": hops, "load": float(res.fun)}))
"""


def reference() -> dict[str, float]:
    """The reference workload's CPU seconds and results, in a fresh interpreter."""
    got = subprocess.run([sys.executable, "-c", REFERENCE], capture_output=True, text=True, check=True)
    return dict(json.loads(got.stdout))


def inventory(spec: str, tmp: Path) -> str:
    """An inventory file: a path of the repository, or a fabric of tests/fabrics.py written out."""
    if not spec.startswith("@"):
        return str(ROOT / spec)
    sys.path.insert(0, str(ROOT / "tests"))
    import fabrics
    import yaml

    topo, hosts = eval("fabrics." + spec[1:], {"fabrics": fabrics})   # noqa: S307 - the table above, not input
    links = [{"a": a, "b": b} for a, b in topo.simple().edges()]     # one cable per pair in those fabrics
    doc = {"name": "bench", "platform": "linux-bridge",
           "topology": {"kind": "custom", "switches": list(topo.switches), "links": links},
           "hosts": {"per_switch": {s: n for s, n in hosts.items()}},
           "settings": {"learning": {"pool": "10.0.0.0/8"}}}
    path = tmp / (spec[1:].split("(")[0] + ".yaml")
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return str(path)


def run(kind: str, spec: str, sets: list[str], extra: list[str]) -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp:
        inv = inventory(spec, Path(tmp))
        got = subprocess.run([sys.executable, "-c", CHILD, str(ROOT), kind, inv, json.dumps(sets), *extra],
                             capture_output=True, text=True, cwd=ROOT)
    if got.returncode != 0:
        return {"error": (got.stderr.strip().splitlines() or ["?"])[-1]}
    return dict(json.loads(got.stdout))


def deadlock(r: dict[str, object]) -> str:
    """'df', or why not: flow control off, or the best deadlock-free plan's load over the
    chosen one's (routing/choose.py names it in its reason), or none."""
    if r["df"]:
        return "df"
    if not r.get("fc"):
        return "-- fc off"
    got = re.search(r"deadlock-free plan \(\w+\) carries x([0-9.]+)", str(r.get("choice", "")))
    return f"-- x{got.group(1)}" if got else "-- none"


def quality(r: dict[str, object]) -> str:
    kind = "" if r["kind"] == "optimum" else f" ({r['kind']})"
    return f"{r['engine']:<8} {float(r['ratio']):>6.3f}{kind:<11} {int(r['vlans']):>5} {deadlock(r):>9}"  # type: ignore[arg-type]


FLAGS = {"--quick", "--no-flow-control", "--plan", "--whatif", "--repair", "--reference"}


def main() -> int:
    unknown = [a for a in sys.argv[1:] if a.startswith("-") and a not in FLAGS]
    if unknown:
        # a mistyped flag (or --help) must not start a run of many minutes
        usage = __doc__.split("\n\n")[1] if __doc__ else ""
        print(f"unknown option {unknown[0]}\n{usage}", file=sys.stderr)
        return 2
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quick = "--quick" in sys.argv
    off = ["settings.flow_control=false"] if "--no-flow-control" in sys.argv else []
    only = {k for k in ("plan", "whatif", "repair") if f"--{k}" in sys.argv} or {"plan", "whatif", "repair"}
    ref = reference()
    print(f"reference (no vlanroute code): Python {ref['python']:.2f} s, HiGHS {ref['highs']:.2f} s of CPU; "
          "compare runs on other machines by CPU over their sum\n", flush=True)
    if "--reference" in sys.argv:
        return 0

    def wanted(name: str) -> bool:
        return (not quick or name in QUICK) and (not args or any(a in name for a in args))

    if "plan" in only:
        print(f"{'default plan':<30} {'engine':<8} {'load/opt':>17} {'VLANs':>5} {'df':>9} {'CPU s':>7}")
        for name, spec, sets in PLANS:
            if wanted(name):
                r = run("plan", spec, [*sets, *off], [])
                print(f"{name:<30} " + (r["error"] if "error" in r else f"{quality(r)} {r['plan']:>7.2f}"),  # type: ignore[str-bytes-safe]
                      flush=True)
        print()
    if "whatif" in only:
        kinds = ("pair+pair", "pair+switch", "switch+switch")
        print(f"{'whatif':<30} {'engine':<8} {'load/opt':>17} {'VLANs':>5} {'df':>9} {'plan s':>7} "
              f"{'singles':>8} {'singles s':>9}" + "".join(f" {k + ' s':>15}" for k in kinds) + f" {'total s':>7}"
              f" {'compiled':>8}")
        for name, spec, sets in WHATIFS:
            if wanted(name):
                r = run("whatif", spec, [*sets, *off], [])
                more = [float(r.get(k, 0.0)) for k in kinds]  # type: ignore[arg-type]
                print(f"{name:<30} " + (r["error"] if "error" in r else  # type: ignore[str-bytes-safe]
                      f"{quality(r)} {r['plan']:>7.2f} {r['failures']:>8} {r['whatif']:>9.2f}"
                      + "".join(f" {x:>15.2f}" for x in more)
                      + f" {float(r['plan']) + float(r['whatif']) + sum(more):>7.2f}"  # type: ignore[arg-type]
                      + f" {'yes' if r.get('compiled') else 'no':>8}"), flush=True)
        print()
    if "repair" in only:
        print(f"{'repair (one failed pair)':<30} {'pair':<8} {'re-plan':<8} {'repair s':>8} {'render s':>8}")
        for name, spec, sets, pair in REPAIRS:
            if wanted(name):
                r = run("repair", spec, [*sets, *off], [pair])
                print(f"{name:<30} " + (r["error"] if "error" in r else  # type: ignore[str-bytes-safe]
                      f"{pair:<8} {r['replan']:<8} {r['repair']:>8.2f} {r['render']:>8.2f}"), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
