"""What the failure scenario of `vlanroute emulate` must observe, computed from the bundles
alone (no kernel): which ordered host pairs a dead neighbour pair or a dead switch cuts, and
the linux-bridge commands that turn the running bundle into its repair, in a loop-free order.

A pair (a, b) is cut when the tree path of VLAN(a) (the PVID of a's port: the VLAN a's
frames travel in) from a's switch to b's switch crosses the dead pair, or, for a dead
switch, when that path passes through it (which includes every pair with a host on it).
The repair delta is read from the two bundles' plan.json (the VLANs each inter-switch
bridge port carries); host ports and hosts never change in a repair (`vlanroute repair`),
except that the hosts of a dead switch are dropped, and a delta that would touch them
otherwise is refused.
"""

from __future__ import annotations

import dataclasses
import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from vlanroute.emulate.spec import Counts, EmulationSpec
from vlanroute.errors import UserError
from vlanroute.names import NAME_PATTERN
from vlanroute.safeio.reading import BUNDLE_LIMIT, load_json, read_text_file

_NAME = re.compile(NAME_PATTERN)


@dataclass(frozen=True)
class BridgeStep:
    """One `bridge vlan {del|add} dev PORT vid VLAN` in one switch's namespace."""
    switch: str
    verb: Literal["del", "add"]
    port: str               # the bridge port: the bond of a LAG, or the cable's port
    vlan: int

    def command(self) -> str:
        return f"vlan {self.verb} dev {self.port} vid {self.vlan}"


@dataclass(frozen=True)
class Failure:
    """What dies in the scenario: every cable of one neighbour pair, or one whole switch."""
    pair: tuple[str, str] | None = None
    switch: str | None = None

    def label(self) -> str:
        return f"fail {self.pair[0]}-{self.pair[1]}" if self.pair else f"stop {self.switch}"

    def dead(self) -> frozenset[str]:
        return frozenset({self.switch}) if self.switch else frozenset()

    def pairs(self, spec: EmulationSpec) -> list[tuple[str, str]]:
        """The neighbour pairs whose cables go down."""
        return [self.pair] if self.pair else switch_pairs(spec, str(self.switch))

    def check(self, spec: EmulationSpec) -> None:
        check_pair(spec, self.pair) if self.pair else check_switch(spec, str(self.switch))

    def cut_pairs(self, spec: EmulationSpec) -> set[tuple[str, str]]:
        return cut_pairs(spec, self.pair) if self.pair else cut_pairs_switch(spec, str(self.switch))

    def broken_vlans(self, spec: EmulationSpec) -> list[int]:
        return broken_vlans(spec, self.pair) if self.pair else broken_vlans_switch(spec, str(self.switch))


def parse_pair(text: str) -> tuple[str, str]:
    """`sw1:sw2` -> ("sw1", "sw2"), both strict switch names."""
    parts = text.split(":")
    if len(parts) != 2 or not all(_NAME.match(p) for p in parts) or parts[0] == parts[1]:
        raise UserError(f"'{text}' is not a neighbour pair", field="--fail-pair",
                        fix="write two different switch names separated by a colon: sw1:sw2")
    return parts[0], parts[1]


def parse_switch(text: str) -> str:
    """`sw1` -> "sw1", a strict switch name."""
    if not _NAME.match(text):
        raise UserError(f"'{text}' is not a switch name", field="--fail-switch",
                        fix="name one switch of the plan, e.g. sw1")
    return text


def check_switch(spec: EmulationSpec, switch: str) -> None:
    if switch not in spec.switches:
        raise UserError(f"{switch} is not a switch of {spec.outdir / 'plan.json'}", field="--fail-switch",
                        fix="name one of: " + " ".join(spec.switches))


def switch_pairs(spec: EmulationSpec, switch: str) -> list[tuple[str, str]]:
    """The neighbour pairs a dead switch takes down with it."""
    return sorted((switch, n) for s, n in spec.uplinks if s == switch)


def cut_pairs_switch(spec: EmulationSpec, switch: str) -> set[tuple[str, str]]:
    """Ordered host pairs (a, b) whose frames pass through the dead switch before the
    repair: every pair with a host on it, and every pair whose VLAN path crosses it."""
    out: set[tuple[str, str]] = set()
    for a, ha in spec.hosts.items():
        for b, hb in spec.hosts.items():
            if a != b and switch in spec.path(ha.vlan, ha.switch, hb.switch):
                out.add((a, b))
    return out


def broken_vlans_switch(spec: EmulationSpec, switch: str) -> list[int]:
    """VLANs whose tree uses a link of the dead switch."""
    return sorted(v for v, adj in spec.tree.items() if adj.get(switch))


def check_pair(spec: EmulationSpec, pair: tuple[str, str]) -> None:
    a, b = pair
    if (a, b) not in spec.uplinks:
        raise UserError(f"{a} and {b} are not neighbours in {spec.outdir / 'cabling.csv'}", field="--fail-pair",
                        fix="name two switches that a cable joins (cabling.csv)")


def crosses(path: list[str], pair: tuple[str, str]) -> bool:
    return any({s, n} == set(pair) for s, n in itertools.pairwise(path))


def cut_pairs(spec: EmulationSpec, pair: tuple[str, str]) -> set[tuple[str, str]]:
    """Ordered host pairs (a, b) whose frames cross the dead pair before the repair."""
    out: set[tuple[str, str]] = set()
    hosts = spec.hosts
    for a, ha in hosts.items():
        for b, hb in hosts.items():
            if a != b and crosses(spec.path(ha.vlan, ha.switch, hb.switch), pair):
                out.add((a, b))
    return out


def cut_tx(spec: EmulationSpec, failure: Failure, pairs: list[tuple[str, str]],
           frames_per_pair: int) -> Counts:
    """What `EmulationSpec.expected_tx` counts (frames each uplink sends, each host port sends
    and receives), for unicast `pairs` while the failure lasts, before the repair.

    A frame travels its VLAN's tree path up to the last switch before the dead part. That
    switch learned the destination on a port that went down, and a bridge flushes what it
    learned on a port that goes down (the cut check sees it), so it floods the frame as
    unknown unicast: to its other ports in the VLAN that are up, that is its other tree links
    (where each neighbour drops it, since in a tree its entry points back) and every host port
    (a member of every routing VLAN, vlanroute.model.bridge.host_port_membership) but the
    sender's. A dead switch's hosts send nothing into the fabric and receive nothing.
    Pacing the traffic without this flood overran the emulation's rate limits near the cut.
    """
    dead_links = {frozenset(p) for p in failure.pairs(spec)}
    dead = failure.dead()
    uplink_tx: dict[tuple[str, str], int] = {key: 0 for key in spec.uplinks}
    host_tx: dict[str, int] = {h: 0 for h in spec.hosts}
    host_rx: dict[str, int] = {h: 0 for h in spec.hosts}
    on_switch: dict[str, list[str]] = {}
    for h, hh in spec.hosts.items():
        on_switch.setdefault(hh.switch, []).append(h)
    # (VLAN, source switch, destination switch) -> (links crossed, the flooding switch or
    # None): a few hundred routes for the seed's 50,400 pairs (this runs in the VM, per step).
    routes: dict[tuple[int, str, str], tuple[list[tuple[str, str]], str | None]] = {}

    def route(vlan: int, src: str, dst: str) -> tuple[list[tuple[str, str]], str | None]:
        hops = spec.path(vlan, src, dst)
        links: list[tuple[str, str]] = []
        for i, (x, y) in enumerate(itertools.pairwise(hops)):
            if y in dead or frozenset((x, y)) in dead_links:
                came = hops[i - 1] if i else None
                links += [(x, n) for n in sorted(spec.tree[vlan].get(x, ()))
                          if n != came and n not in dead and frozenset((x, n)) not in dead_links]
                return links, x
            links.append((x, y))
        return links, None

    floods: dict[str, int] = {}
    for a, b in pairs:
        ha, hb = spec.hosts[a], spec.hosts[b]
        if ha.switch in dead:
            continue
        key = (ha.vlan, ha.switch, hb.switch)
        if key not in routes:
            routes[key] = route(*key)
        links, flooder = routes[key]
        host_rx[a] += frames_per_pair
        for link in links:
            uplink_tx[link] += frames_per_pair
        if flooder is None:
            host_tx[b] += frames_per_pair
        else:
            floods[flooder] = floods.get(flooder, 0) + frames_per_pair
            if flooder == ha.switch:          # not back out of the port it came in on
                host_tx[a] -= frames_per_pair
    for x, n in floods.items():
        for h in on_switch.get(x, ()):
            host_tx[h] += n
    return uplink_tx, host_tx, host_rx


def broken_vlans(spec: EmulationSpec, pair: tuple[str, str]) -> list[int]:
    """VLANs whose tree uses the dead pair."""
    a, b = pair
    return sorted(v for v, adj in spec.tree.items() if b in adj.get(a, ()))


def _bridge_port(spec: EmulationSpec, switch: str, neighbor: str) -> str:
    up = spec.uplinks[(switch, neighbor)]
    return up.lag_name or up.members[0]


def _tree_links(spec: EmulationSpec, vlan: int) -> set[tuple[str, str]]:
    return {(s, n) for s, ns in spec.tree.get(vlan, {}).items() for n in ns}


def repair_delta(old: EmulationSpec, new: EmulationSpec, order: list[str] | None = None,
                 dead: frozenset[str] = frozenset()) -> list[BridgeStep]:
    """The linux-bridge commands from `old` to `new`: per VLAN, first the VLAN taken off both
    ends of every link its tree no longer uses, then put on both ends of every new link.
    Within a VLAN the removals leave a forest and each addition joins two of its trees, so
    no state in between has a loop (a link carries the VLAN once both ends have it).
    With `order` (repair.json's push_order): switch by switch in that order, each switch's
    additions before its removals (the order repair.json records; push and the emulation plan
    their own transition: emulate/transition.py).
    `dead` switches get no command (nothing reaches them); `new` must have dropped exactly
    them and their hosts."""
    lost = {h for h, hh in old.hosts.items() if hh.switch in dead}
    if set(new.switches) != set(old.switches) - dead:
        raise UserError("the repaired bundle has other switches than the running one"
                        + (f" without {', '.join(sorted(dead))}" if dead else ""),
                        file=str(new.outdir / "plan.json"),
                        fix="give the bundle `vlanroute repair` wrote for this failure")
    # The plan's own MAC (doc), not the emulation's: a MAC the plan leaves open is numbered
    # by the host's rank, which shifts when a dead switch's hosts are dropped.
    if set(old.hosts) - lost != set(new.hosts) or any(
            (old.hosts[h].switch, old.hosts[h].port, old.hosts[h].vlan, old.plan_macs[h])
            != (new.hosts[h].switch, new.hosts[h].port, new.hosts[h].vlan, new.plan_macs[h])
            for h in new.hosts):
        raise UserError("the repaired bundle changes hosts (their switch, port, VLAN or MAC)",
                        file=str(new.outdir / "plan.json"),
                        fix="give the bundle `vlanroute repair` wrote from this one")
    if set(old.vlan_ids) != set(new.vlan_ids):
        raise UserError("the repaired bundle has other VLANs than the running one",
                        file=str(new.outdir / "plan.json"), fix="give the bundle `vlanroute repair` wrote")
    steps: list[BridgeStep] = []
    for vlan in sorted(old.vlan_ids):
        before, after = _tree_links(old, vlan), _tree_links(new, vlan)
        for verb, links in (("del", before - after), ("add", after - before)):
            for s, n in sorted(links):
                if s in dead:
                    continue
                spec = old if verb == "del" else new
                steps.append(BridgeStep(s, verb, _bridge_port(spec, s, n), vlan))   # type: ignore[arg-type]
    if order is not None:
        rank = {s: i for i, s in enumerate(order)}
        steps.sort(key=lambda st: (rank.get(st.switch, len(rank)), st.verb != "add"))
    return steps


def repair_record(newdir: Path) -> dict[str, Any] | None:
    """NEWDIR/repair.json (`vlanroute repair`), or None for a bundle made otherwise."""
    path = newdir / "repair.json"
    if not path.is_file():
        return None
    try:
        data = load_json(read_text_file(path, limit=BUNDLE_LIMIT, what="repair record"), str(path))
    except ValueError as exc:
        raise UserError(f"unreadable: {exc}", file=str(path), fix="write it again with `vlanroute repair`") from None
    order = data.get("push_order") if isinstance(data, dict) else None
    vlans = data.get("affected_vlans") if isinstance(data, dict) else None
    if not (isinstance(order, list) and all(isinstance(s, str) for s in order)
            and isinstance(vlans, list) and all(isinstance(v, int) for v in vlans)):
        raise UserError("push_order or affected_vlans missing or malformed", file=str(path),
                        fix="write it again with `vlanroute repair`")
    return data


def require_repair_of(failure: Failure, outdir: Path, newdir: Path) -> None:
    """NEWDIR must be the bundle `vlanroute repair` wrote from OUTDIR's plan for exactly
    this failure: not OUTDIR itself, nor a bundle without repair.json, nor the repair of
    another failure (the scenario would cut one pair and "repair" another, and report what
    it saw as the repair's fault). The failures are compared by what they take down (the
    cables and switches of OUTDIR's plan), so a pair named as its cables matches too."""
    from vlanroute.bundle.failures import Failures, dead_cables, parse_failures
    from vlanroute.bundle.reader import read_plan
    from vlanroute.model.links import link
    fix = (f"give the bundle `vlanroute repair {outdir} --failed-"
           + (f"pair {failure.pair[0]}:{failure.pair[1]}" if failure.pair else f"switch {failure.switch}")
           + " -o NEWDIR` wrote")
    if newdir.resolve() == outdir.resolve():
        raise UserError("is the running bundle itself, not its repair", file=str(newdir), field="--repair", fix=fix)
    record = repair_record(newdir)
    if record is None:
        raise UserError("has no repair.json: it is not a bundle `vlanroute repair` wrote", file=str(newdir),
                        field="--repair", fix=fix)
    doc = read_plan(outdir)
    where = str(newdir / "repair.json")
    if record.get("plan") != doc.name:
        raise UserError("is the repair of another plan than the running bundle's", file=where, field="plan", fix=fix)
    got = record.get("failures")
    lists = {k: got.get(k, []) if isinstance(got, dict) else None for k in ("cables", "pairs", "switches")}
    if not all(isinstance(v, list) and all(isinstance(x, str) for x in v) for v in lists.values()):
        raise UserError("failures missing or malformed", file=where, field="failures", fix=fix)
    try:
        theirs = parse_failures(lists["cables"] or [], lists["pairs"] or [], lists["switches"] or [])
    except UserError:
        raise UserError("failures malformed", file=where, field="failures", fix=fix) from None
    mine = Failures(pairs=(link(*failure.pair),)) if failure.pair else Failures(switches=(str(failure.switch),))
    if (dead_cables(theirs, doc) != dead_cables(mine, doc) or set(theirs.switches) != set(mine.switches)):
        raise UserError(f"is the repair of another failure ({theirs.describe()}), not of "
                        f"{mine.describe()}", file=where, field="failures", fix=fix)


def keep_running_hosts(running: EmulationSpec, repaired: EmulationSpec) -> EmulationSpec:
    """The repaired spec with the running one's hosts (same names, ports and VLANs, checked by
    repair_delta): their emulated MACs and plain addresses must not change mid-run."""
    return dataclasses.replace(repaired, hosts={h: running.hosts[h] for h in repaired.hosts}, _paths={})
