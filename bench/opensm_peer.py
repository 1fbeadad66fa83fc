"""Benchmark: OpenSM's routing engines beside vlanroute's, on the same fabric, scored alike.

Run: python bench/opensm_peer.py [--markdown] [--fabric NAME]... [--engines a,b,...] [--timeout S]
                                 [--repeat N] [--ibroute] [--no-vlanroute] [--keep DIR]
     python bench/opensm_peer.py INVENTORY [--set KEY=VALUE]... [same options]

Needs (Debian): `apt-get install opensm ibsim-utils` (OpenSM 3.3.23 and the ibsim fabric
simulator with libumad2sim.so; infiniband-diags comes with opensm). It installs nothing: without them it
says so and exits 2. No kernel module and no root: ibsim is a user process, and OpenSM
reaches it through libumad2sim.so, preloaded, which turns libibumad's calls into messages
on ibsim's sockets (linux-rdma/ibsim README). Each run gets its own socket name
(IBSIM_SOCKNAME) and directory, so runs never meet.

For every fabric (the four of docs/routing-bounds.md, "OpenSM on the same fabrics", or an
inventory with --set overrides):
1. the fabric (switches, cables, parallel cables, hosts per switch as one-port HCAs) is
   written as an ibsim topology (bench/opensm_fabric.py);
2. for every OpenSM engine a fresh ibsim and a fresh OpenSM (`-R engine,no_fallback`, so an
   engine that cannot route the fabric fails visibly instead of handing over to minhop;
   `-s 0`; the LFT and SL2VL dumps under --dump_files_dir, log mask 0x43 with the ROUTING
   bit). Extra settings: root GUID files (-a) for updn and ftree: the switches without
   hosts where there are some (a leaf-spine's spines), else for updn the most central
   switch (vlanroute's updown root; OpenSM finds no root itself when every switch has
   hosts); a torus-2QoS.conf (radices and seed links from the grid's coordinates) for
   torus-2QoS on tori and meshes; -Q for the engines that use lanes (lash, dfsssp,
   torus-2QoS, and nue with 8 VLs; nue's default is one VL, deadlock-free without lanes);
3. the forwarding tables are read back and followed from every switch with hosts to every
   host: the all-to-all load of every cable (one unit per ordered host pair, vlanroute's
   model) over the exact LP optimum of vlanroute/routing/optimum.py, as `vlanroute plan`'s
   load_over_optimum; the channel dependency graph on one lane (a directed cable per
   channel), checked for a cycle here; for the engines run with -Q the SL of every host
   pair from OpenSM's SA (bench/opensm_sa.py) and each hop's VL from its SL-to-VL tables,
   and the dependency graph of (cable, VL) channels checked again;
4. vlanroute's engines (routing/registry.py) and the default plan (no routing.algorithm)
   plan the same fabric through `plan_from_file`, as `vlanroute plan` does.

Columns: load / opt; df 1 lane (yes: no cycle of channel dependencies with every packet
on one lane, what an Ethernet fabric under 802.3x PAUSE has); lanes (SLs/VLs the host
pairs use) and df lanes (no cycle of (cable, VL) channels); route ms: OpenSM's routing,
wall clock in its own log from "building routing with" to "tables configured" (its log is
on, so this is an upper bound; --repeat N keeps the least of N runs); cpu s: OpenSM's
process until SUBNET UP (discovery of the simulated fabric, routing and programming it;
10 ms ticks), vlanroute's whole plan (LP optimum, routing, packing, verification) in this
process. --ibroute also reads every switch's table back with infiniband-diags' ibroute and
checks OpenSM's dump against it.
"""

from __future__ import annotations

import argparse
import itertools
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import networkx as nx
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import opensm_fabric as F  # noqa: E402
from vlanroute.errors import PlanError, UserError  # noqa: E402

# Debian's libumad2sim0 (a dependency of ibsim-utils): /usr/lib/<multiarch triplet>/umad2sim/
UMAD2SIM = next(iter(sorted(Path("/usr/lib").glob("*/umad2sim/libumad2sim.so"))),
                Path("/usr/lib") / f"{os.uname().machine}-linux-gnu" / "umad2sim" / "libumad2sim.so")
INSTALL = "apt-get install opensm ibsim-utils"
TORUS = "inventories/seed-torus.yaml"
BIG = ["platform=linux-bridge", "switches={}", "settings.learning.pool=10.0.0.0/8"]


@dataclass(frozen=True)
class OsmEngine:
    label: str
    name: str                       # opensm -R
    qos: bool = False               # -Q: SL-to-VL tables programmed, path SLs read from the SA
    args: tuple[str, ...] = ()


OSM_ENGINES = [
    OsmEngine("minhop", "minhop"),
    OsmEngine("updn", "updn"),
    OsmEngine("dnup", "dnup"),
    OsmEngine("ftree", "ftree"),
    OsmEngine("lash", "lash", qos=True),
    OsmEngine("dor", "dor"),
    OsmEngine("torus-2QoS", "torus-2QoS", qos=True),
    OsmEngine("sssp", "sssp"),
    OsmEngine("dfsssp", "dfsssp", qos=True),
    OsmEngine("nue", "nue"),
    OsmEngine("nue 8 VLs", "nue", qos=True, args=("--nue_max_num_vls", "8")),
]


@dataclass
class Row:
    router: str
    ratio: float | None = None
    df_one: bool | None = None
    lanes: str = ""
    df_lanes: bool | None = None
    route_ms: float | None = None
    cpu_s: float | None = None
    note: str = ""


# --------------------------------------------------------------------------- fabrics


def leaf_spine_inventory(directory: Path, leaves: int = 8, spines: int = 4, per: int = 4) -> Path:
    """Every leaf cabled to every spine, hosts on the leaves (tests/fabrics.py's leaf_spine)."""
    doc = {"name": f"leaf-spine-{leaves}x{spines}", "platform": "linux-bridge",
           "topology": {"kind": "custom", "switches": [f"l{i}" for i in range(leaves)] + [f"s{j}" for j in range(spines)],
                        "links": [{"a": f"l{i}", "b": f"s{j}"} for i in range(leaves) for j in range(spines)]},
           "hosts": {"per_switch": {**{f"l{i}": per for i in range(leaves)}, **{f"s{j}": 0 for j in range(spines)}}},
           "settings": {"learning": {"pool": "10.0.0.0/8"}}}
    path = directory / "leaf-spine.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def random_regular_inventory(directory: Path, n: int = 24, degree: int = 3, seed: int = 1, per: int = 4) -> Path:
    """networkx's random regular graph (bench/quality.py's rr24: 3-regular, 24 switches, seed 1)."""
    g = nx.random_regular_graph(degree, n, seed=seed)
    doc = {"name": f"rr{n}", "platform": "linux-bridge",
           "topology": {"kind": "custom", "switches": [f"s{i}" for i in range(n)],
                        "links": [{"a": f"s{a}", "b": f"s{b}"} for a, b in sorted(g.edges)]},
           "hosts": {"per_switch": per}, "settings": {"learning": {"pool": "10.0.0.0/8"}}}
    path = directory / f"rr{n}.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def fabrics(directory: Path) -> dict[str, tuple[Path, list[str]]]:
    return {
        "seed-torus": (ROOT / TORUS, []),
        "torus-8x8": (ROOT / TORUS, ["topology.dims=[8,8]", "topology.links_per_pair=1", "hosts={per_switch: 4}", *BIG]),
        "leaf-spine": (leaf_spine_inventory(directory), []),
        "random-regular": (random_regular_inventory(directory), []),
    }


TITLES = {"seed-torus": "seed torus (inventories/seed-torus.yaml): 4x2, 2 cables per pair, 225 hosts",
          "torus-8x8": "8x8 torus, 4 hosts per switch",
          "leaf-spine": "leaf-spine, 8 leaves x 4 spines, 4 hosts per leaf",
          "random-regular": "random 3-regular graph, 24 switches (networkx seed 1), 4 hosts per switch"}


# --------------------------------------------------------------------------- OpenSM


def tool(name: str) -> str:
    """A program's path: on PATH, or in /usr/sbin, where Debian puts opensm and ibroute and
    where a user's PATH often does not reach."""
    return shutil.which(name) or shutil.which(name, path="/usr/sbin:/sbin") or name


def missing_tools() -> list[str]:
    missing = [t for t in ("opensm", "ibsim", "ibroute") if not os.path.isabs(tool(t))]
    if not UMAD2SIM.is_file():
        missing.append(str(UMAD2SIM))
    return missing


def torus_conf(fab: F.IbFabric, kind: str, dims: tuple[int, ...], coords: dict[str, tuple[int, ...] | None],
               hosts: dict[str, int]) -> str | None:
    """torus-2QoS.conf(5) for a 2D/3D torus or mesh: radices, and one seed at the origin
    (both directions for a radix-4 dimension, as the man page asks)."""
    if kind not in ("torus", "mesh") or not 2 <= len(dims) <= 3:
        return None
    at = {c: s for s, c in coords.items() if c is not None}
    radix = list(dims) + [1] * (3 - len(dims))
    lines = [f"{kind} {' '.join(map(str, radix))}"]
    origin = at[tuple(0 for _ in dims)]
    for d, k in enumerate(dims):
        plus = tuple(1 if i == d else 0 for i in range(len(dims)))
        lines.append(f"{'xyz'[d]}p_link {fab.switch_guid(origin):#x} {fab.switch_guid(at[plus]):#x}")
        if k == 4:
            minus = tuple(k - 1 if i == d else 0 for i in range(len(dims)))
            lines.append(f"{'xyz'[d]}m_link {fab.switch_guid(origin):#x} {fab.switch_guid(at[minus]):#x}")
    # the most parallel cables, and the host ports with the switch's port 0, fit one port group
    parallel = max(Counter((a, b) for (a, _), (b, _) in fab.links.items()).values(), default=1)
    lines.append(f"portgroup_max_ports {max(16, parallel, max(hosts.values(), default=0) + 1)}")
    return "\n".join(lines) + "\n"


@dataclass
class OsmRun:
    lfts: str = ""
    sl2vl: str = ""
    log: str = ""
    route_ms: float | None = None
    cpu_s: float | None = None
    error: str = ""


_STAMP = re.compile(r"^\w{3} [ \d]\d (\d\d):(\d\d):(\d\d) (\d{6}) ")


def _stamp(line: str) -> float | None:
    m = _STAMP.match(line)
    if not m:
        return None
    h, mi, s, us = (int(x) for x in m.groups())
    return h * 3600 + mi * 60 + s + us / 1e6


def routing_ms(log: str) -> float | None:
    """From "building routing with" to "tables configured on all switches" in OpenSM's log."""
    start = end = None
    for line in log.splitlines():
        if start is None and "building routing with" in line:
            start = _stamp(line)
        elif start is not None and "tables configured on all switches" in line:
            end = _stamp(line)
            break
    if start is None or end is None:
        return None
    return ((end - start) % 86400) * 1000


def _cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _first_error(log: str) -> str:
    """The engine's own words: its first error, after the reason it logged (INFO) while
    routing, if any (e.g. updn: "disabling UPDN algorithm, no root nodes were found")."""
    said, routing = "", False
    for line in log.splitlines():
        routing = routing or "building routing with" in line
        if " 0x01 -> " in line and "no_fallback" not in line:
            error = line.split(" 0x01 -> ", 1)[1].strip()
            return f"{said}; {error}" if said else error
        if routing and not said and " 0x02 -> " in line:
            said = line.split(" 0x02 -> ", 1)[1].strip()
    return said or "no routing"


_RUNS = itertools.count()


class Simulator:
    """ibsim on the fabric's topology file, in `workdir`, on a socket name of its own."""

    def __init__(self, netfile: Path, workdir: Path) -> None:
        self.workdir = workdir
        self.sock = f"vlr{os.getpid()}-{next(_RUNS)}"
        self.env = {**os.environ, "IBSIM_SOCKNAME": self.sock}
        self.out = open(workdir / "ibsim.out", "w")
        self.proc = subprocess.Popen([tool("ibsim"), "-s", "-n", str(netfile)], cwd=workdir, env=self.env,
                                     stdin=subprocess.DEVNULL, stdout=self.out, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 30
        while f"@{self.sock}:ctl" not in Path("/proc/net/unix").read_text():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.close()
                raise RuntimeError("ibsim did not start: " + (workdir / "ibsim.out").read_text()[-300:])
            time.sleep(0.05)

    def preload_env(self) -> dict[str, str]:
        return {**self.env, "LD_PRELOAD": str(UMAD2SIM), "OSM_TMP_DIR": str(self.workdir),
                "OSM_CACHE_DIR": str(self.workdir)}

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()


def read_switch_tables(lfts: F.Lfts, sim: Simulator, workdir: Path, timeout: float) -> F.Lfts:
    """Every switch's forwarding table as the switch itself holds it: infiniband-diags'
    ibroute (SubnGet(LinearForwardingTable) per block) through libumad2sim.so."""
    top = max(lfts.lid_guid)
    text = []
    for lid, guid in sorted(lfts.lid_guid.items()):
        if guid in lfts.tables:
            done = subprocess.run([tool("ibroute"), str(lid), "0", str(top)], capture_output=True, text=True, cwd=workdir,
                                  env=sim.preload_env(), timeout=timeout)
            if done.returncode != 0:
                raise RuntimeError(f"ibroute {lid}: {done.stderr.strip()[-200:]}")
            text.append(done.stdout)
    return F.parse_lfts("".join(text))


def dump_disagrees(dump: F.Lfts, switches: F.Lfts) -> str:
    """Where the switches' tables differ from the dump ("" if nowhere). ibroute (infiniband-
    diags 44) never prints the entry of LinearFdbTop itself, the highest LID, even when
    asked for it: that one entry per switch is left out of the comparison."""
    top = max(dump.lid_guid)
    for guid, table in dump.tables.items():
        held = switches.tables.get(guid)
        if held is None:
            return f"switch {guid:#x} not read"
        for lid, port in table.items():
            if held.get(lid, port if lid == top else None) != port:
                return f"switch {guid:#x} LID {lid}: port {held.get(lid)} on the switch, {port} in the dump"
        if set(held) - set(table):
            return f"switch {guid:#x} holds LIDs the dump lacks"
    return ""


def route_with_opensm(fab: F.IbFabric, netfile: Path, workdir: Path, engine: OsmEngine, extra: list[str],
                      timeout: float, read_back: bool = False, sls_wanted: bool = True,
                      ) -> tuple[OsmRun, F.Lfts | None, dict[tuple[str, str], int] | None]:
    """Run `engine` on a fresh simulator; for a -Q engine also ask the SA for every host pair's
    SL; with `read_back`, check OpenSM's dump against the tables the switches hold."""
    workdir.mkdir(parents=True)
    (workdir / "opensm.conf").write_text(f"per_module_logging_file {workdir / 'per-module-logging.conf'}\n")
    # VERBOSE for the unicast manager alone: its "building routing with" line starts the clock
    (workdir / "per-module-logging.conf").write_text("osm_ucast_mgr.c 0x47\n")
    run = OsmRun()
    sim = Simulator(netfile, workdir)
    osm: subprocess.Popen[bytes] | None = None
    try:
        args = [tool("opensm"), "-F", str(workdir / "opensm.conf"), "-s", "0", "-d", "2", "-f", str(workdir / "osm.log"),
                "-D", "0x43", "--dump_files_dir", str(workdir), "-R", f"{engine.name},no_fallback",
                *(["-Q"] if engine.qos else []), *engine.args, *extra]
        with open(workdir / "opensm.out", "w") as out:
            osm = subprocess.Popen(args, cwd=workdir, env=sim.preload_env(), stdin=subprocess.DEVNULL, stdout=out,
                                   stderr=subprocess.STDOUT)
        log_path = workdir / "osm.log"
        deadline = time.monotonic() + timeout
        while True:
            log = log_path.read_text(errors="replace") if log_path.exists() else ""
            if "SUBNET UP" in log:
                run.cpu_s = _cpu_seconds(osm.pid)
                break
            if "No routing engine able" in log or "Errors during initialization" in log:
                run.log, run.error = log, _first_error(log)
                return run, None, None
            if osm.poll() is not None:
                run.log, run.error = log, f"opensm exited ({osm.returncode}): {_first_error(log)}"
                return run, None, None
            if time.monotonic() > deadline:
                run.log, run.error = log, f"timeout: no SUBNET UP after {timeout:.0f} s"
                return run, None, None
            time.sleep(0.05)
        run.log = log
        run.route_ms = routing_ms(log)
        run.lfts = (workdir / "opensm-lfts.dump").read_text()
        lfts = F.parse_lfts(run.lfts)
        if read_back:
            wrong = dump_disagrees(lfts, read_switch_tables(lfts, sim, workdir, timeout))
            if wrong:
                run.error = f"the switches' tables (ibroute) differ from OpenSM's dump: {wrong}"
                return run, None, None
        sls: dict[tuple[str, str], int] | None = None
        if engine.qos and sls_wanted:
            run.sl2vl = (workdir / "opensm-sl2vl.dump").read_text()
            sls = _path_sls(fab, lfts, sim, workdir, timeout)
        return run, lfts, sls
    finally:
        if osm is not None and osm.poll() is None:
            osm.terminate()
            try:
                osm.wait(10)
            except subprocess.TimeoutExpired:
                osm.kill()
                osm.wait()
        sim.close()


def _path_sls(fab: F.IbFabric, lfts: F.Lfts, sim: Simulator, workdir: Path,
              timeout: float) -> dict[tuple[str, str], int]:
    lids = F.host_lids(fab, lfts)
    sm_lid = next(lid for lid, guid in lfts.lid_guid.items() if guid == fab.switch_guid(fab.switches[0]))
    hcas = [h for h, _, _ in fab.hcas]
    pairs = [(a, b) for a in hcas for b in hcas if a != b]
    text = "".join(f"{lids[a]} {lids[b]}\n" for a, b in pairs)
    done = subprocess.run([sys.executable, str(Path(__file__).resolve().parent / "opensm_sa.py"), str(sm_lid)],
                          input=text, capture_output=True, text=True, cwd=workdir, env=sim.preload_env(),
                          timeout=max(timeout, 60 + len(pairs) / 100))
    if done.returncode != 0:
        raise RuntimeError("SA queries failed: " + done.stderr.strip()[-300:])
    by_lid = {(int(a), int(b)): int(sl) for a, b, sl in (line.split() for line in done.stdout.splitlines())}
    return {(a, b): by_lid[(lids[a], lids[b])] for a, b in pairs}


def roots_of(g: nx.Graph, switches: list[str], hosts: dict[str, int]) -> dict[str, list[str]]:
    """Root switches for updn and ftree (-a): where some switches have no hosts, those of
    them farthest from the switches with hosts (a leaf-spine's spines, a fat tree's cores);
    else for updn the most central switch (least eccentricity, first in order: the root
    vlanroute's updown takes), because OpenSM's own root detection finds none when every
    switch has hosts ("no root nodes were found"), and ftree is left to find its own (it
    routes fat trees only). dnup ranks from the switches with hosts and reads no roots."""
    bare = [s for s in switches if not hosts[s]]
    if bare:
        # The top of the tree: the bare switches farthest from any switch with hosts (a
        # leaf-spine's spines, a fat tree's cores; its aggregation switches are no roots).
        far = nx.multi_source_dijkstra_path_length(g, [s for s in switches if hosts[s]])
        top = [s for s in bare if far.get(s, 0) == max(far.get(x, 0) for x in bare)]
        return {"updn": top, "ftree": top}
    ecc = nx.eccentricity(g)
    return {"updn": [min(switches, key=lambda s: (ecc[s], switches.index(s)))]}


def _least(a: float | None, b: float | None) -> float | None:
    return b if a is None else a if b is None else min(a, b)


def opensm_rows(fab: F.IbFabric, optimum: float, workdir: Path, conf: str | None, roots: dict[str, list[str]],
                engines: list[OsmEngine], timeout: float, read_back: bool = False, repeat: int = 1) -> list[Row]:
    """One row per engine; with `repeat` > 1 each engine routes that many times more (fresh
    simulator each time, no SA queries) and the times are the least seen: a busy machine
    only ever adds to a wall clock."""
    netfile = workdir / "fabric.net"
    netfile.write_text(F.topology_text(fab))
    extra: dict[str, list[str]] = {}
    for name, switches in roots.items():
        (workdir / f"{name}-roots.guids").write_text("".join(f"{fab.switch_guid(s):#018x}\n" for s in switches))
        extra[name] = ["-a", str(workdir / f"{name}-roots.guids")]
    if conf is not None:
        (workdir / "torus-2QoS.conf").write_text(conf)
        extra["torus-2QoS"] = ["--torus_config", str(workdir / "torus-2QoS.conf")]
    rows = []
    for k, engine in enumerate(engines):
        row = Row(f"OpenSM {engine.label}")
        rows.append(row)
        if engine.name == "torus-2QoS" and conf is None:
            row.note = "not run: torus-2QoS routes 2D/3D tori and meshes only"
            continue
        try:
            run, lfts, sls = route_with_opensm(fab, netfile, workdir / f"{k:02d}-{engine.name}", engine,
                                               extra.get(engine.name, []), timeout, read_back)
        except (RuntimeError, subprocess.TimeoutExpired) as exc:
            row.note = f"error: {exc}"[:160]
            continue
        row.route_ms, row.cpu_s = run.route_ms, run.cpu_s
        for again in range(1, repeat if lfts is not None else 1):
            try:
                more, _, _ = route_with_opensm(fab, netfile, workdir / f"{k:02d}-{engine.name}-{again}", engine,
                                               extra.get(engine.name, []), timeout, sls_wanted=False)
            except (RuntimeError, subprocess.TimeoutExpired):
                continue
            row.route_ms, row.cpu_s = _least(row.route_ms, more.route_ms), _least(row.cpu_s, more.cpu_s)
        if lfts is None:
            row.note = run.error[:160]
            continue
        try:
            paths = F.host_paths(fab, lfts)
        except F.RouteError as exc:
            row.note = f"broken tables: {exc}"
            continue
        loads = F.cable_loads(fab, paths)
        row.ratio = max(loads.values(), default=0.0) / optimum if optimum else 1.0
        row.df_one = F.is_acyclic(F.dependencies(fab, paths))
        if sls is not None:
            sl2vl = F.parse_sl2vl(run.sl2vl)
            n_sl, n_vl = F.lanes_used(fab, paths, sls, sl2vl)
            row.lanes = f"{n_sl} SL / {n_vl} VL"
            row.df_lanes = F.is_acyclic(F.dependencies(fab, paths, sls, sl2vl))
        else:
            row.lanes = "1"
            row.df_lanes = row.df_one
        used = re.search(r"(\w[\w-]*) tables configured on all switches", run.log)
        if used and used.group(1).lower() != engine.name.lower():
            row.note = f"routed by {used.group(1)}"
    return rows


# --------------------------------------------------------------------------- vlanroute


def vlanroute_rows(inventory: Path, sets: list[str]) -> list[Row]:
    from vlanroute.plan.build import plan_from_file
    from vlanroute.routing.registry import ENGINES

    rows = []
    for name in [*ENGINES, None]:
        row = Row(f"vlanroute {name}" if name else "vlanroute default plan")
        rows.append(row)
        c0 = time.process_time()
        try:
            plan = plan_from_file(inventory, [*sets, f"routing.algorithm={name or 'null'}"])
        except (UserError, PlanError) as exc:
            row.note = f"refused: {exc.message}"[:160]
            continue
        row.cpu_s = time.process_time() - c0
        m = plan.metrics
        row.ratio, row.df_one, row.df_lanes = m.load_over_optimum, m.deadlock_free, m.deadlock_free
        row.lanes = "1"
        row.note = f"{m.vlan_count} VLAN{'' if m.vlan_count == 1 else 's'}" + (f"; chose {plan.routes.algorithm}" if name is None else "")
    return rows


# --------------------------------------------------------------------------- the table


def _yes(x: bool | None) -> str:
    return "-" if x is None else "yes" if x else "no"


def print_table(title: str, optimum_text: str, rows: list[Row], markdown: bool) -> None:
    head = ["engine", "load / opt", "df 1 lane", "lanes", "df lanes", "route ms", "cpu s", "note"]
    cells = [[r.router, "-" if r.ratio is None else f"{r.ratio:.3f}", _yes(r.df_one), r.lanes or "-",
              _yes(r.df_lanes), "-" if r.route_ms is None else f"{r.route_ms:.1f}",
              "-" if r.cpu_s is None else f"{r.cpu_s:.2f}", r.note] for r in rows]
    print(f"{title}; {optimum_text}")
    if markdown:
        print()
        print("| " + " | ".join(head) + " |")
        print("|" + "|".join("---" for _ in head) + "|")
        for c in cells:
            print("| " + " | ".join(c) + " |")
    else:
        widths = [max(len(c[i]) for c in [head, *cells]) for i in range(len(head) - 1)]
        for c in [head, *cells]:
            print("  ".join(x.ljust(w) for x, w in zip(c, widths)) + "  " + c[-1])
    print()
    sys.stdout.flush()


def run_fabric(title: str, inventory: Path, sets: list[str], engines: list[OsmEngine], timeout: float,
               with_vlanroute: bool, workdir: Path, markdown: bool, read_back: bool = False,
               repeat: int = 1) -> list[Row]:
    from vlanroute.model.hosts import build_hosts
    from vlanroute.model.inventory import load_inventory
    from vlanroute.model.topology import build_topology
    from vlanroute.routing.optimum import optimum_bound

    inv = load_inventory(inventory, sets)
    topo = build_topology(inv)
    hosts = {s: 0 for s in topo.switches}
    for h in build_hosts(inv, topo):
        hosts[h.switch] += 1
    optimum = optimum_bound(topo, hosts)
    grid = topo.kind in ("torus", "mesh")
    fab = F.ib_fabric(topo.switches, list(topo.graph.edges()), hosts, topo.coords if grid else None,
                      topo.dims if grid else None)
    conf = torus_conf(fab, topo.kind, topo.dims, topo.coords, hosts) if grid and topo.dims else None
    rows = opensm_rows(fab, optimum.value, workdir, conf, roots_of(topo.simple(), topo.switches, hosts), engines,
                       timeout, read_back, repeat)
    if with_vlanroute:
        rows += vlanroute_rows(inventory, sets)
    optimum_text = (f"{len(topo.switches)} switches, {len(fab.links) // 2} cables, {sum(hosts.values())} hosts; "
                    f"{optimum.label} {optimum.value:g} (max load per cable)")
    print_table(title, optimum_text, rows, markdown)
    return rows


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("inventory", nargs="?", help="an inventory instead of the four fabrics of the docs")
    ap.add_argument("--set", dest="sets", action="append", default=[], metavar="KEY=VALUE")
    ap.add_argument("--fabric", action="append", choices=list(TITLES), help="only these of the four (repeatable)")
    ap.add_argument("--engines", help="only these OpenSM engines (labels, comma-separated)")
    ap.add_argument("--timeout", type=float, default=600, help="seconds for one OpenSM run to reach SUBNET UP")
    ap.add_argument("--no-vlanroute", action="store_true", help="OpenSM's rows only")
    ap.add_argument("--ibroute", action="store_true",
                    help="also read every switch's table back with ibroute and check it against OpenSM's dump")
    ap.add_argument("--repeat", type=int, default=1,
                    help="route with each OpenSM engine this many times, keep the least times (wall clock)")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--keep", type=Path, help="keep every run's files (topology, logs, dumps) here")
    a = ap.parse_args(argv)
    # a kill runs the finally blocks too: no ibsim or OpenSM is left behind
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    missing = missing_tools()
    if missing:
        print(f"missing: {', '.join(missing)}; on Debian: {INSTALL} (this bench installs nothing)", file=sys.stderr)
        return 2
    engines = OSM_ENGINES
    if a.engines:
        wanted = [x.strip() for x in a.engines.split(",")]
        unknown = [w for w in wanted if w not in {e.label for e in OSM_ENGINES}]
        if unknown:
            print(f"unknown engine {unknown[0]}: one of {', '.join(e.label for e in OSM_ENGINES)}", file=sys.stderr)
            return 2
        engines = [e for e in OSM_ENGINES if e.label in wanted]
    base = Path(tempfile.mkdtemp(prefix="opensm-peer-")) if a.keep is None else a.keep
    base.mkdir(parents=True, exist_ok=True)
    try:
        print(f"opensm: {_version()}; load average {' '.join(f'{x:.2f}' for x in os.getloadavg())}\n")
        if a.inventory:
            cases = {Path(a.inventory).stem: (Path(a.inventory), a.sets)}
            titles = {Path(a.inventory).stem: a.inventory + "".join(f" --set {s}" for s in a.sets)}
        else:
            all_cases = fabrics(base)
            cases = {k: v for k, v in all_cases.items() if not a.fabric or k in a.fabric}
            titles = TITLES
        for key, (inventory, sets) in cases.items():
            work = base / key
            work.mkdir(parents=True, exist_ok=True)
            run_fabric(titles[key], inventory, sets, engines, a.timeout, not a.no_vlanroute, work, a.markdown,
                       a.ibroute, a.repeat)
    finally:
        if a.keep is None:
            shutil.rmtree(base, ignore_errors=True)
    return 0


def _version() -> str:
    out = subprocess.run([tool("opensm"), "--version"], capture_output=True, text=True, timeout=30).stdout
    m = re.search(r"OpenSM [\d.]+", out)
    return m.group(0) if m else "unknown version"


if __name__ == "__main__":
    sys.exit(main())
