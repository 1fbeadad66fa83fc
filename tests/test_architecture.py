"""The architecture as docs/architecture.md describes it.

- The worked example: a toy routing engine and a toy switch family, registered from here
  (nothing in vlanroute/ changes), plan, render and verify through the real commands.
  The code blocks of the example in docs/architecture.md are copied from this file, and a
  test keeps them identical.
- The stages: every import goes to an earlier stage (the folder order below) or to the
  top-level helpers, except the few listed and documented there, and no module imports
  itself back through others (no loop).
"""

from __future__ import annotations

import ast
import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import pytest

from plancheck import check_plan, route_lengths
from vlanroute.cli import main
from vlanroute.drivers import FAMILIES
from vlanroute.drivers.common import parse_error, vlan_ids
from vlanroute.drivers.family import Capabilities, Family
from vlanroute.errors import UserError
from vlanroute.model.bridge import SwitchConfig
from vlanroute.model.platforms import PLATFORMS, Platform
from vlanroute.model.topology import Topology
from vlanroute.routing.engine import Engine, Options, Routes
from vlanroute.routing.registry import ENGINES

ROOT = Path(__file__).resolve().parent.parent

# ------------------------------------------------------------------ step 1: the engine


@dataclass(frozen=True)
class OneTreeParams:
    root: str


@dataclass(frozen=True)
class OneTreeChoices:
    root: str

    def record(self) -> dict[str, object]:
        return {"root": self.root}              # plan.json: routing.root


class OneTreeEngine(Engine[OneTreeParams]):
    """Every route follows one breadth-first spanning tree: what a classic network with
    spanning tree on forwards over. Deadlock-free: on a tree a route climbs towards the
    root and then descends, never the reverse, so no channel waits on a cycle."""

    name = "one-tree"
    summary = "toy: every route on one breadth-first spanning tree"
    minimal = False                             # a ring's cut link is never used
    deadlock_free = True
    reads = frozenset({"root"})

    def params(self, topo: Topology, options: Options) -> OneTreeParams:
        root = options.root or topo.switches[0]
        if root not in topo.switches:
            raise UserError(f"routing.root '{root}' is not a switch", field="routing.root",
                            fix="name one of the topology's switches")
        return OneTreeParams(root)

    def route(self, topo: Topology, host_count: dict[str, int], params: OneTreeParams) -> Routes:
        tree = nx.bfs_tree(topo.simple(), params.root, sort_neighbors=lambda ns: sorted(ns, key=topo.index))
        links = tree.to_undirected()
        parents = {src: dict(nx.bfs_predecessors(links, src)) for src in topo.switches}
        return Routes(self.name, parents, OneTreeChoices(params.root))

# ------------------------------------------------------------------ step 2: the family


TOY_TEMPLATE = """\
# toy-set {{ switch }} ({{ platform.name }})
{% for v in vlans %}
set vlan {{ v }}
{% endfor %}
{% for lag in lags %}
set lag {{ lag.id }} members {{ lag.members | join(',') }} tagged {{ lag.tagged_list or 'none' }} hash {{ settings.lag_hash_mode }}
{% endfor %}
{% for link in links %}
set port {{ link.port }} tagged {{ link.tagged_list or 'none' }}
{% endfor %}
{% for hp in host_ports %}
set port {{ hp.port }} pvid {{ hp.pvid }} untagged {{ hp.untagged_list }}
{% endfor %}
set aging {{ settings.aging_time }}
"""


class ToySetFamily(Family):
    """One `set` line per fact. A port left unmentioned stays in the 802.1Q factory
    state (untagged in VLAN 1); this switch has no spanning tree."""

    name = "toy-set"
    title = "Toy set-CLI"
    capabilities = Capabilities(host_untagged_in_many_vlans=True, eee=False,
                                lag_hash_modes={"src-dst-ip-port": "l34"})
    unconfirmed = ("every command (a toy)",)

    def __init__(self, template_dir: Path) -> None:
        self.template_dir = template_dir

    def lag_label(self, lag_id: int) -> str:
        return f"bundle{lag_id}"

    @staticmethod
    def _vlans(text: str) -> set[int]:
        return set() if text == "none" else vlan_ids(text)

    def parse(self, text: str, *, switch: str, platform: Platform, source: str = "") -> SwitchConfig:
        cfg = SwitchConfig.with_defaults(name=switch, family=self.name, platform=platform.name,
                                         ports=platform.ports, aging_time=platform.aging_default,
                                         source=source)
        cfg.stp_global_enabled = False
        for lineno, line in enumerate(text.splitlines(), start=1):
            w = line.split()
            if not w or w[0] == "#":
                continue
            if w[:2] == ["set", "vlan"] and len(w) == 3:
                cfg.vlans.add(int(w[2]))
            elif w[:2] == ["set", "aging"] and len(w) == 3:
                cfg.aging_time = int(w[2])
            elif w[:2] == ["set", "lag"] and len(w) == 9 and w[3] == "members" and w[5] == "tagged" \
                    and w[7] == "hash":
                lag = cfg.add_lag(int(w[2]), self.lag_label(int(w[2])))
                lag.untagged, lag.tagged, lag.hash_mode = set(), self._vlans(w[6]), w[8]
                for member in w[4].split(","):
                    cfg.ports[member].lag = int(w[2])
                    cfg.touched.add(member)
                    lag.members.append(member)
            elif w[:2] == ["set", "port"] and len(w) == 5 and w[3] == "tagged" and w[2] in cfg.ports:
                port = cfg.ports[w[2]]
                port.untagged, port.tagged = set(), self._vlans(w[4])
                cfg.touched.add(w[2])
            elif w[:2] == ["set", "port"] and len(w) == 7 and w[3] == "pvid" and w[5] == "untagged" \
                    and w[2] in cfg.ports:
                port = cfg.ports[w[2]]
                port.pvid, port.untagged = int(w[4]), vlan_ids(w[6])
                cfg.touched.add(w[2])
            else:
                raise parse_error(source, lineno, line, "unsupported toy-set command")
        return cfg

# ------------------------------------------------------------------ step 3: a platform


TOY_PLATFORM = Platform(
    name="toy-8", family="toy-set", description="toy switch, 8 ports", ports=tuple(f"e{i}" for i in range(1, 9)),
    max_vlans=16, vid_min=2, vid_max=4094, mac_capacity=1024, aging_min=10, aging_max=3600,
    aging_default=300, max_lags=2, max_lag_members=2)

# ------------------------------------------------------------------ step 4: register, then use


@pytest.fixture
def toys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Registers the toy engine, family and platform, and writes an inventory that uses them."""
    templates = tmp_path / "toy-templates"
    (templates / "switch").mkdir(parents=True)
    (templates / "switch" / "toy-set.j2").write_text(TOY_TEMPLATE)
    monkeypatch.setitem(ENGINES, "one-tree", OneTreeEngine())
    monkeypatch.setitem(FAMILIES, "toy-set", ToySetFamily(templates))
    monkeypatch.setitem(PLATFORMS, "toy-8", TOY_PLATFORM)
    inventory = tmp_path / "toyring.yaml"
    inventory.write_text("name: toyring\nplatform: toy-8\ntopology: {kind: ring, size: 4, links_per_pair: 2}\n"
                         "hosts: {per_switch: 2}\nrouting: {algorithm: one-tree, root: sw2}\n")
    return inventory


def test_a_toy_engine_and_family_plan_render_and_verify(toys: Path, tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    assert main(["algorithms"]) == 0
    assert "one-tree" in capsys.readouterr().out
    assert main(["plan", str(toys)]) == 0
    assert main(["render", str(toys), "-o", str(out)]) == 0      # renders, parses back, simulates
    assert "Toy set-CLI syntax that no public source confirms" in capsys.readouterr().err
    assert main(["verify", str(out)]) == 0
    assert "56 of 56 ordered host pairs" in capsys.readouterr().out

    # Checked apart from vlanroute's own checks: the plan is VLAN routing on the ring
    # (tests/plancheck.py), with every route on the tree rooted at sw2.
    plan = json.loads((out / "plan.json").read_text())
    assert plan["routing"]["algorithm"] == "one-tree" and plan["routing"]["root"] == "sw2"
    check_plan(plan, nx.relabel_nodes(nx.cycle_graph(4), lambda i: f"sw{i + 1}"))
    # Breadth-first from sw2 on the ring sw1-sw2-sw3-sw4-sw1: sw2-sw1, sw2-sw3, then sw1-sw4;
    # the link sw3-sw4 is cut, so sw3 reaches sw4 in 3 hops and every source shares one tree.
    assert len(plan["vlans"]) == 1
    assert sorted(map(sorted, plan["vlans"][0]["links"])) == [["sw1", "sw2"], ["sw1", "sw4"], ["sw2", "sw3"]]
    assert route_lengths(plan)[("sw3", "sw4")] == 3
    assert plan["metrics"]["deadlock_free"] is True and plan["metrics"]["non_minimal_routes"] > 0

    # The configs are the toy's own syntax, and verify reads them with the toy's parser:
    # tagging the routing VLAN on both ends of the cut cable sw3-sw4 closes the ring.
    assert (out / "switches" / "sw1.cfg").read_text().startswith("# toy-set sw1 (toy-8)\nset vlan 101\n")
    for switch in ("sw3", "sw4"):
        cfg = out / "switches" / f"{switch}.cfg"
        cfg.write_text(re.sub(r"^(set lag \d members \S+ tagged )none( hash l34)$", r"\g<1>101\2", cfg.read_text(),
                              flags=re.M))
    assert main(["verify", str(out)]) != 0
    err = capsys.readouterr().err
    assert "VLAN 101 has a loop: " in err and "not in the plan's tree of VLAN 101: sw3 bundle2 - sw4 bundle2" in err

def test_the_toy_engines_settings_error_names_the_field(toys: Path, capsys: pytest.CaptureFixture[str]) -> None:
    toys.write_text(toys.read_text().replace("root: sw2", "root: sw9"))
    assert main(["plan", str(toys)]) == 2
    err = capsys.readouterr().err
    assert "routing.root" in err and "'sw9' is not a switch" in err and str(toys) in err


def test_the_worked_example_in_the_docs_is_this_code() -> None:
    """docs/architecture.md quotes the toy engine and family; the quotes must be this file's code."""
    doc = (ROOT / "docs" / "architecture.md").read_text()
    example = doc.split("## Worked example", 1)[1]
    blocks = re.findall(r"```python\n(.*?)```", example, re.S)
    assert len(blocks) >= 4
    here = Path(__file__).read_text()
    for block in blocks:
        assert block in here, block[:200]


# ------------------------------------------------------------------ the stages and their imports

# docs/architecture.md, "The stages": a module may import from its own stage, an earlier
# one, or the top-level helpers (errors, names, vlanlist, resources, atomic_dir, exitcodes).
# `api` (vlanroute.api, the Python front door) and `nornir_task` are single modules: the
# commands are thin layers over the API. `schemas` holds the JSON Schema files (data).
STAGES = ["model", "routing", "plan", "perf", "bundle", "drivers", "verify", "render", "transition", "device",
          "integrations", "emulate",
          "pictures", "hostside", "lab", "api", "nornir_task", "operate", "commands", "cli"]
MODULE_STAGES = {"api", "nornir_task", "cli"}
DATA_PACKAGES = {"schemas"}
HELPER_PACKAGES = {"safeio"}        # top-level helpers grouped in a package, below every stage
# The imports of a later stage that docs/architecture.md documents as decisions:
# (importing module or stage prefix, imported module) -> must it be lazy (inside a function)?
ALLOWED_LATER = {
    ("vlanroute.plan.", "vlanroute.drivers"): False,               # family capabilities
    ("vlanroute.plan.", "vlanroute.drivers.family"): False,
    ("vlanroute.plan.", "vlanroute.bundle.document"): False,       # Plan.to_document()
    ("vlanroute.render.", "vlanroute.hostside.table"): False,      # the host tables' format
    ("vlanroute.verify.", "vlanroute.hostside.table"): False,
    ("vlanroute.emulate.relearn", "vlanroute.hostside.broadcast"): False,   # the learning frame
}


@dataclass(frozen=True)
class Import:
    module: str          # the importing module
    target: str          # the vlanroute module imported
    line: int
    lazy: bool           # inside a function: runs when called, not when the module loads
    type_only: bool      # under `if TYPE_CHECKING:`: never runs


def _modules() -> dict[str, Path]:
    mods = {}
    for path in sorted((ROOT / "vlanroute").rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        mods[".".join(parts)] = path
    return mods


def _imports(mods: dict[str, Path]) -> list[Import]:
    found = []
    for module, path in mods.items():
        tree = ast.parse(path.read_text())
        lazy_nodes = {id(n) for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.AsyncFunctionDef))
                      for n in ast.walk(f)}
        type_nodes = {id(n) for f in ast.walk(tree)
                      if isinstance(f, ast.If) and "TYPE_CHECKING" in ast.unparse(f.test) for n in ast.walk(f)}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:          # relative: resolve against the importing package
                    package = module.split(".")[:len(module.split(".")) - node.level + (path.name == "__init__.py")]
                    base = ".".join(package + ([node.module] if node.module else []))
                # `from package import module` imports the module (its package loads first,
                # as for every submodule); `from module import name` imports the module.
                names = [f"{base}.{a.name}" if f"{base}.{a.name}" in mods else base for a in node.names]
            else:
                continue
            for name in names:
                while name not in mods and "." in name:
                    name = name.rsplit(".", 1)[0]
                if name in mods and name != module and name.startswith("vlanroute"):
                    found.append(Import(module, name, node.lineno, id(node) in lazy_nodes, id(node) in type_nodes))
    return sorted(set(found), key=lambda i: (i.module, i.line, i.target))


def _stage(module: str) -> int:
    """The position of a module's stage; -1 for the top-level helpers (below every stage)."""
    parts = module.split(".")
    return STAGES.index(parts[1]) if len(parts) > 1 and parts[1] in STAGES else -1


@functools.cache
def imports() -> tuple[Import, ...]:
    """Every vlanroute import, parsed when a test first asks: not at module level, where each
    xdist worker would parse the whole package while collecting (about 5 s each)."""
    return tuple(_imports(_modules()))


def test_every_stage_is_a_folder_and_the_folders_are_the_stages() -> None:
    folders = {p.name for p in (ROOT / "vlanroute").iterdir() if (p / "__init__.py").is_file()}
    assert folders == set(STAGES) - MODULE_STAGES | DATA_PACKAGES | HELPER_PACKAGES
    top = sorted(p.stem for p in (ROOT / "vlanroute").glob("*.py") if p.stem != "__init__")
    assert len(top) <= 10, top


def test_no_import_goes_to_a_later_stage_except_the_documented_ones() -> None:
    later = []
    for imp in imports():
        if _stage(imp.target) <= _stage(imp.module) or _stage(imp.target) == -1:
            continue
        allowed = [lazy for (who, target), lazy in ALLOWED_LATER.items()
                   if target == imp.target and (imp.module == who or (who.endswith(".") and imp.module.startswith(who)))]
        if not allowed or (allowed[0] and not imp.lazy):
            later.append(f"{imp.module}:{imp.line} imports {imp.target}")
    assert not later


def test_the_documented_exceptions_are_still_needed() -> None:
    """An exception nobody uses any more is removed from the list (and from the docs)."""
    for (who, target) in ALLOWED_LATER:
        assert any(i.target == target and (i.module == who or i.module.startswith(who)) for i in imports()), (who, target)


def test_the_top_level_helpers_import_no_stage() -> None:
    assert [i for i in imports() if _stage(i.module) == -1 and _stage(i.target) >= 0
            and i.module.split(".")[1] not in MODULE_STAGES] == []


# Imports inside a function that close a loop, documented in docs/architecture.md: none
# (routing.algorithm is checked against the registry when planning, not by the inventory).
LOOPS_ALLOWED_LAZY: set[tuple[str, str]] = set()


def _loops(lazy: bool) -> list[list[str]]:
    graph = nx.DiGraph()
    graph.add_nodes_from(_modules())
    graph.add_edges_from((i.module, i.target) for i in imports()
                         if not i.type_only and (lazy or not i.lazy)
                         and (i.module, i.target) not in LOOPS_ALLOWED_LAZY)
    return list(nx.simple_cycles(graph))[:3]


def test_no_import_loops() -> None:
    """No module reaches itself through the imports that run when modules load."""
    assert _loops(lazy=False) == []


def test_no_import_loops_hidden_inside_functions() -> None:
    """Nor through imports inside functions (which run when called, so Python never sees
    the loop): moving an import into a function hides a loop, it does not remove it. Only
    the documented one is allowed, and it must stay inside its function. Imports under
    `if TYPE_CHECKING:` never run and are left out."""
    assert _loops(lazy=True) == []
    for module, target in LOOPS_ALLOWED_LAZY:
        assert [i.lazy for i in imports() if (i.module, i.target) == (module, target)] == [True]

