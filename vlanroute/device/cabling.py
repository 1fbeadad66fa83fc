"""Compare the cables the switches see (LLDP) with the cables the plan wants (cabling.csv).

VLAN routing turns spanning tree off on inter-switch ports, so the configuration alone keeps
each VLAN loop-free, and it is right only for the planned cabling: two swapped inter-switch
cables put VLAN memberships on the wrong links (a loop nothing blocks, or a partition).

Each end of an inter-switch cable is checked from the switch it is plugged into: a switch
sends its own name (LLDP system name) and its interface name (Port ID), so every
neighbour row names the far switch and port. A host is recognised by its host name
(system name, first DNS label) or its MAC (chassis or Port ID, lldpd's default). A planned
cable is
- ok: the two ends see each other (from one side is enough);
- missing: neither end sees anything (both switches read);
- swapped: an end sees another port or device;
- unknown: neither end's switch could be read.
An observed cable between ports where the plan has none at either end is unexpected.
A host port with no LLDP neighbour is `no-lldp`, not a failure: hosts need not send LLDP.

The technician's fixes come from one walk over each group of wrong cables (planned and
observed cables alternate along it): for each observed cable, keep the end whose planned
partner is known (a host's end first: the plug moves at the switch) and move the other
end there ("move the cable on sw3 1/g47 to sw5 1/g48"); two moves into each other's port
are said as one swap ("swap the plugs in sw3 1/g47 and sw4 1/g47"). The moves of one
report are done together: unplug every end named, then plug each into its new port. A
planned cable that no move completes needs a cable ("connect ... to ..."); an observed
cable with no planned end is removed.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field

from vlanroute.bundle.cables import HOST, INTER_SWITCH
from vlanroute.bundle.reader import Cable
from vlanroute.device.lldp import LldpTable
from vlanroute.drivers.common import normalize_mac

OK, MISSING, SWAPPED, UNKNOWN, NO_LLDP, UNEXPECTED = (
    "ok", "missing", "swapped", "unknown", "no-lldp", "unexpected")
FAILED = (MISSING, SWAPPED, UNEXPECTED, UNKNOWN)

# A cable end: ("port", switch, port), ("host", name) or ("device", description).
End = tuple[str, ...]


def _port(switch: str, port: str) -> End:
    return ("port", switch, port)


def end_text(end: End) -> str:
    if end[0] == "port":
        return f"{end[1]} {end[2]}"
    if end[0] == "host":
        return f"host {end[1]}"
    return f"an unknown device ({end[1]})"


@dataclass
class CableStatus:
    kind: str                            # inter-switch | host
    label: str
    a: str
    a_port: str
    b: str
    b_port: str
    status: str
    seen_a: str = ""                     # what a's port sees ("" nothing, "?" not read)
    seen_b: str = ""                     # inter-switch: what b's port sees
    fixes: list[str] = field(default_factory=list)


@dataclass
class Unexpected:
    ends: tuple[str, str]
    fix: str
    # A cable of the published plan that a repair took out (repair.json's failures), back
    # again: not to be removed, but the sign to return to the published plan.
    returned: bool = False


# Why an observed cable is one a repair took out, or None (see check_cabling's `returned`).
Returned = Callable[[End, End], str | None]


@dataclass
class CablingReport:
    cables: list[CableStatus]
    unexpected: list[Unexpected]
    fixes: list[str]                     # every fix, in walk order, each once
    errors: dict[str, str]               # switch -> why its table was not read

    def inter_switch_problems(self) -> list[CableStatus]:
        """Planned inter-switch cables that disagree for sure (push refuses on these)."""
        return [c for c in self.cables if c.kind == INTER_SWITCH and c.status in (MISSING, SWAPPED)]

    def unexpected_inter_switch(self) -> list[Unexpected]:
        return [u for u in self.unexpected if not any(e.startswith("host ") for e in u.ends)]

    def unchecked_inter_switch(self, pushed: Collection[str]) -> list[CableStatus]:
        """Inter-switch cables of the `pushed` switches that neither end's LLDP table showed.
        Push refuses on these once every switch passed its pre-flight (a switch it cannot log
        in to stops it there anyway): spanning tree would go off on cables nobody checked."""
        return [c for c in self.cables if c.kind == INTER_SWITCH and c.status == UNKNOWN
                and (c.a in pushed or c.b in pushed)]

    @property
    def ok(self) -> bool:
        return not self.errors and not self.unexpected and all(c.status not in FAILED for c in self.cables)


def unchecked_refusal(unchecked: list[CableStatus]) -> str:
    """Why push refuses the cables of CablingReport.unchecked_inter_switch."""
    cables = ", ".join(f"{c.a} {c.a_port} - {c.b} {c.b_port}" + (f" ({c.label})" if c.label else "")
                       for c in unchecked)
    return (f"push refused before any change: {len(unchecked)} inter-switch cable(s) could not be "
            f"checked over LLDP, as neither end's table was read: {cables}. Spanning tree goes off "
            "on them. Make the tables readable (`vlanroute cabling check OUTDIR` says why they are "
            "not), or override with --skip-cabling-check")


class _Resolver:
    """LLDP row -> cable end, by the plan's switch and host names and host MACs."""

    def __init__(self, switches: Collection[str], hosts: Mapping[str, str | None],
                 port_names: Mapping[str, Callable[[str], str]]) -> None:
        self.switches = set(switches)
        self.port_names = port_names
        self.lower = {s.lower(): s for s in switches}
        self.hosts = {h.lower(): h for h in hosts}
        self.macs = {normalize_mac(m): h for h, m in hosts.items() if m}

    def _mac(self, text: str) -> str | None:
        digits = "".join(c for c in text if c not in ":-.")
        if len(digits) == 12 and all(c in "0123456789abcdefABCDEF" for c in digits):
            return self.macs.get(normalize_mac(text))
        return None

    def switch(self, name: str) -> str | None:
        if name in self.switches:
            return name
        for candidate in (name.lower(), name.split(".")[0].lower()):
            if candidate in self.lower:
                return self.lower[candidate]
        # A summary cut the name short and no detail gave it whole (Dell OS6 when the
        # per-port detail has no name; OS10 reads its detail, whose names are never cut).
        if name.endswith("..."):
            hits = [s for s in self.switches if s.startswith(name[:-3])]
            if len(hits) == 1:
                return hits[0]
        return None

    def end(self, row_name: str, port_id: str, chassis: str) -> End:
        sw = self.switch(row_name) if row_name else None
        if sw is not None:
            name = self.port_names.get(sw)
            return _port(sw, name(port_id) if name else port_id)
        host = self.hosts.get(row_name.split(".")[0].lower()) if row_name else None
        host = host or self._mac(chassis) or self._mac(port_id)
        if host is not None:
            return ("host", host)
        what = ", ".join(x for x in (f"name {row_name}" if row_name else "",
                                     f"chassis {chassis}" if chassis else "",
                                     f"port {port_id}" if port_id else "") if x)
        return ("device", what or "no LLDP identity")


def check_cabling(cables: list[Cable], tables: Mapping[str, LldpTable], switches: Collection[str],
                  hosts: Mapping[str, str | None],
                  port_names: Mapping[str, Callable[[str], str]] | None = None,
                  returned: Returned | None = None) -> CablingReport:
    """Planned `cables` (bundle.reader, inter-switch and host) against the LLDP `tables` of
    the switches that were read (a switch absent from `tables` was not asked). The tables'
    local ports are already the plan's names (each family's reader); a far switch's Port ID
    is turned into its plan name by `port_names[far switch]` (Family.lldp_port_name: EOS
    `Et1` is `Ethernet1`), as given where there is none. `returned(u, v)`: why an observed
    cable that `cables` lacks is one a repair took out (then it is not to be removed: the
    fix says to return to the published plan), or None."""
    resolve = _Resolver(switches, hosts, port_names or {})
    errors = {s: t.error for s, t in tables.items() if t.error is not None}
    read = {s for s, t in tables.items() if t.error is None}

    plan: dict[End, End] = {}
    label_of: dict[frozenset[End], Cable] = {}
    for c in cables:
        a = _port(c.a, c.a_port)
        b = _port(c.b, c.b_port) if c.kind == INTER_SWITCH else ("host", c.b)
        plan[a], plan[b] = b, a
        label_of[frozenset((a, b))] = c

    # Observed cables, from either end (a host or device end is only seen from its switch).
    seen: dict[End, set[End]] = defaultdict(set)
    for s in sorted(read):
        for nb in tables[s].neighbors:
            here = _port(s, nb.local_port)
            there = resolve.end(nb.system_name, nb.port_id, nb.chassis_id)
            if there[0] == "device":            # one node per port: two unknowns are not one
                there = (*there, s, nb.local_port)
            seen[here].add(there)
            seen[there].add(here)
    observed = {frozenset((u, v)) for u, vs in seen.items() for v in vs if u != v}
    planned = set(label_of)
    lag_ok = _lag_members_interchanged(cables, label_of, observed)
    lag_ports = _ends_of(lag_ok)
    observed = (observed - {e for e in observed if any(e <= ports for ports in lag_ports)}) | lag_ok
    wrong = observed - planned

    fixes, unexpected = _walk(plan, wrong, planned - observed, label_of, returned)

    def sees(end: End) -> str:
        if end[0] == "port" and end[1] not in read:
            return "?"
        return ", ".join(sorted(end_text(v) for v in seen.get(end, ())))

    statuses: list[CableStatus] = []
    for key, c in label_of.items():
        a = _port(c.a, c.a_port)
        b = _port(c.b, c.b_port) if c.kind == INTER_SWITCH else ("host", c.b)
        row = CableStatus(c.kind, c.label, c.a, c.a_port, c.b, c.b_port, OK,
                          seen_a=sees(a), seen_b=sees(b) if c.kind == INTER_SWITCH else "")
        touched = [f for f, ends in fixes if ends & {a, b}]
        if key in lag_ok or key in observed and not (seen.get(a, {b}) - {b}) and not (seen.get(b, {a}) - {a}):
            row.status = OK
        elif touched:
            row.status, row.fixes = SWAPPED, touched
        elif c.kind == HOST:
            row.status = NO_LLDP if a[1] in read else UNKNOWN
        elif a[1] in read or b[1] in read:      # a read end sees nothing on the port
            row.status, row.fixes = MISSING, [f"connect {c.a} {c.a_port} to {c.b} {c.b_port}"
                                              + (f" (cable {c.label})" if c.label else "")]
        else:
            row.status = UNKNOWN                # neither end was read
        statuses.append(row)
    statuses.sort(key=lambda r: (r.kind != INTER_SWITCH, r.a, r.a_port))
    all_fixes = [f for f, _ in fixes]
    all_fixes += [f for r in statuses if r.status == MISSING for f in r.fixes]
    return CablingReport(statuses, unexpected, list(dict.fromkeys(all_fixes)), errors)


def _ends_of(edges: set[frozenset[End]]) -> list[frozenset[End]]:
    """The ports of each LAG pair whose members were found interchanged (one set per pair)."""
    groups: list[set[End]] = []
    for e in edges:
        for g in groups:
            if g & e:
                g |= e
                break
        else:
            groups.append(set(e))
    return [frozenset(g) for g in groups]


def _lag_members_interchanged(cables: list[Cable], label_of: Mapping[frozenset[End], Cable],
                              observed: set[frozenset[End]]) -> set[frozenset[End]]:
    """Planned cables of a LAG whose members are cabled in another order: harmless, since
    a LAG's members carry the same VLANs. They count as ok when the observed cables join
    exactly the planned ports of the same two LAGs."""
    group: dict[End, tuple[str, int]] = {}
    for c in cables:
        if c.kind == INTER_SWITCH and c.a_lag is not None and c.b_lag is not None:
            group[_port(c.a, c.a_port)] = (c.a, c.a_lag)
            group[_port(c.b, c.b_port)] = (c.b, c.b_lag)
    between: dict[frozenset[tuple[str, int]], set[frozenset[End]]] = defaultdict(set)
    for key in label_of:
        u, v = tuple(key)
        if u in group and v in group:
            between[frozenset((group[u], group[v]))].add(key)
    ok: set[frozenset[End]] = set()
    for planned in between.values():
        ports = {x for e in planned for x in e}
        seen = {e for e in observed if e & ports}
        if seen != planned and all(e <= ports and len({group[x] for x in e}) == 2 for e in seen) \
                and {x for e in seen for x in e} == ports and len(seen) == len(planned):
            ok |= planned
    return ok


def _walk(plan: Mapping[End, End], wrong: set[frozenset[End]], unmet: set[frozenset[End]],
          label_of: Mapping[frozenset[End], Cable], returned: Returned | None = None
          ) -> tuple[list[tuple[str, frozenset[End]]], list[Unexpected]]:
    """Fixes for the wrong observed cables (module docstring): (text, ends it involves)."""
    adj: dict[End, list[tuple[End, str]]] = defaultdict(list)
    for e in wrong:
        u, v = tuple(e)
        adj[u].append((v, "seen"))
        adj[v].append((u, "seen"))
    for e in unmet:
        u, v = tuple(e)
        if u in adj or v in adj:          # only planned cables that touch a wrong one
            adj[u].append((v, "plan"))
            adj[v].append((u, "plan"))
    done: set[frozenset[End]] = set()
    fixes: list[tuple[str, frozenset[End]]] = []
    completed: set[frozenset[End]] = set()
    unexpected: list[Unexpected] = []
    moves: dict[int, tuple[End, End, str, End]] = {}     # fix index -> (from, to, label, kept end)
    # Paths first (from their lowest end), then cycles; one end of each wrong cable moves.
    starts = sorted((n for n in adj if len(adj[n]) == 1), key=_order) + sorted(adj, key=_order)
    for start in starts:
        node = start
        while True:
            step = next(((v, how) for v, how in sorted(adj[node], key=lambda x: _order(x[0]))
                         if frozenset((node, v)) not in done), None)
            if step is None:
                break
            nxt, how = step
            key = frozenset((node, nxt))
            done.add(key)
            if how == "seen":
                text = _fix(node, nxt, plan, label_of)
                if text is None:
                    ends = (end_text(node), end_text(nxt))
                    why = returned(node, nxt) if returned is not None else None
                    if why is not None:
                        unexpected.append(Unexpected(ends, _returned_fix(ends, why), returned=True))
                    else:
                        unexpected.append(Unexpected(ends, f"remove the cable between {ends[0]} and {ends[1]}"))
                else:
                    fixes.append((text[0], frozenset((node, nxt, text[1]))))
                    completed.add(frozenset((text[2], text[1])))
                    if text[3] is not None:
                        moves[len(fixes) - 1] = text[3]
            node = nxt
    for e in sorted(unmet, key=lambda e: sorted(map(_order, e))):
        u, v = sorted(e, key=_order)
        if (u in adj or v in adj) and e not in completed and u[0] == "port" and v[0] == "port":
            c = label_of[e]
            fixes.append((f"connect {end_text(u)} to {end_text(v)}" + (f" (cable {c.label})" if c.label else ""),
                          frozenset(e)))
    return _swaps(fixes, moves), unexpected


def _returned_fix(ends: tuple[str, str], why: str) -> str:
    return (f"the cable between {ends[0]} and {ends[1]} is a cable of the published plan that the repair "
            f"took out ({why}), and it is back: leave it plugged in (the repaired configs put no VLAN on it). "
            "Once every failed cable and switch is back, return to the published plan: `vlanroute push "
            "OUTDIR` with the bundle this repair was made from, then `vlanroute cabling check OUTDIR` "
            "(docs/failures.md)")


def _swaps(fixes: list[tuple[str, frozenset[End]]], moves: Mapping[int, tuple[End, End, str, End]]
           ) -> list[tuple[str, frozenset[End]]]:
    """Two moves into each other's port are one swap of two plugs: say so, in one fix.
    Swapping the two kept ends instead gives the same cables; when those are on one switch
    and the moving ends are not (two plugs swapped on one switch, the usual mistake), the
    technician swaps them there rather than carrying cable ends between two other switches."""
    out: list[tuple[str, frozenset[End]]] = []
    merged: set[int] = set()
    for i, (text, ends) in enumerate(fixes):
        if i in merged:
            continue
        pair = next((j for j, m in moves.items() if i in moves and j != i and j not in merged
                     and m[0] == moves[i][1] and m[1] == moves[i][0]), None)
        if pair is None:
            out.append((text, ends))
            continue
        merged.add(pair)
        (src, dst, la, kept_a), (lb, kept_b) = moves[i], moves[pair][2:]
        if _one_switch(kept_a, kept_b) and not _one_switch(src, dst):
            src, dst = sorted((kept_a, kept_b), key=_order)
        labels = ", ".join(x for x in (la, lb) if x)
        out.append((f"swap the plugs in {end_text(src)} and {end_text(dst)}"
                    + (f" (cables {labels})" if labels else ""), ends | fixes[pair][1]))
    return out


def _one_switch(u: End, v: End) -> bool:
    return u[0] == v[0] == "port" and u[1] == v[1]


def _order(end: End) -> tuple[str, ...]:
    return end


def _fix(u: End, v: End, plan: Mapping[End, End],
         label_of: Mapping[frozenset[End], Cable]
         ) -> tuple[str, End, End, tuple[End, End, str, End] | None] | None:
    """The move that turns the observed cable u-v into a planned one: keep u (if its planned
    partner is known) and move v's end, else keep v; None if neither end is planned.
    Returns (text, target end, kept end, the move (from, to, label, kept end) if a plug moves)."""
    order = ((u, v), (v, u))
    if u[0] == "port" and v[0] == "host":
        # Keep the host's end and move the plug on the switch: the technician stands at the
        # switch, and two hosts swapped there become one swap of two plugs.
        order = ((v, u), (u, v))
    for keep, move in order:
        target = plan.get(keep)
        if target is None or keep[0] != "port" and move[0] != "port":
            continue
        label = label_of[frozenset((keep, target))].label
        suffix = f" (cable {label})" if label else ""
        if move[0] == "port":
            return (f"move the cable on {end_text(move)} to {end_text(target)}{suffix}", target, keep,
                    (move, target, label, keep))
        if keep[0] == "port":
            what = "host " + move[1] if move[0] == "host" else end_text(move)
            return (f"unplug {what} from {end_text(keep)} and connect {end_text(keep)} to "
                    f"{end_text(target)}{suffix}", target, keep, None)
    return None
