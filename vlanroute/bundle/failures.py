"""Failed cables, neighbour pairs and switches: read, checked against a plan, and applied.

Three ways to name a failure, on the command line or in a `failures:` section (of the
inventory, or of a file of its own):

    failures:
      cables: ["sw1:1/g47"]       # one cable, by either end: switch:port
      pairs: ["sw1:sw2"]          # every cable between two neighbours (the whole LAG)
      switches: [sw3]             # the switch and every cable on it

Each is checked strictly against the plan: an unknown switch, a port that is not an
inter-switch port of it, two switches that are not neighbours are errors naming the field.
A pair that keeps at least one live cable is not a failed pair: its links stay, and its
load is spread over the cables left (`Degraded.cables`).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from vlanroute.bundle.document import PlanDocument
from vlanroute.errors import UserError
from vlanroute.exitcodes import ExitCode
from vlanroute.natural import natural_key
from vlanroute.model.links import Link, link
from vlanroute.routing.repair.model import Degraded
from vlanroute.safeio.reading import load_yaml_limited, read_text_file

KINDS = ("cables", "pairs", "switches")


@dataclass(frozen=True)
class Failures:
    cables: tuple[tuple[str, str], ...] = ()      # (switch, port)
    pairs: tuple[Link, ...] = ()
    switches: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.cables or self.pairs or self.switches)

    def merged(self, other: Failures) -> Failures:
        return Failures(tuple(dict.fromkeys(self.cables + other.cables)),
                        tuple(dict.fromkeys(self.pairs + other.pairs)),
                        tuple(dict.fromkeys(self.switches + other.switches)))

    def to_json(self) -> dict[str, list[str]]:
        return {"cables": [f"{s}:{p}" for s, p in self.cables],
                "pairs": [f"{a}:{b}" for a, b in self.pairs],
                "switches": list(self.switches)}

    def describe(self) -> str:
        parts = [f"cable {s} {p}" for s, p in self.cables] + [f"pair {a}-{b}" for a, b in self.pairs] + \
                [f"switch {s}" for s in self.switches]
        return ", ".join(parts) or "none"


def _bad(message: str, field: str, fix: str, file: str | None = None) -> UserError:
    return UserError(message, file=file, field=field, fix=fix, exit_code=int(ExitCode.USAGE))


def parse_failures(cables: Iterable[str] = (), pairs: Iterable[str] = (), switches: Iterable[str] = (),
                   *, fields: Mapping[str, str] | None = None, file: str | None = None) -> Failures:
    """Failures from `switch:port`, `a:b` and switch-name strings (syntax only; `check`
    compares them with a plan). `fields` names each kind's field in messages."""
    names = dict(fields or {"cables": "--failed-cable", "pairs": "--failed-pair", "switches": "--failed-switch"})
    out_cables = []
    for i, text in enumerate(cables):
        sw, sep, port = str(text).partition(":")
        if not sep or not sw or not port:
            raise _bad(f"{text!r} is not switch:port", names["cables"] + (f"[{i}]" if file else ""),
                       "name a cable by one of its ends, e.g. sw1:1/g47", file)
        out_cables.append((sw, port))
    out_pairs = []
    for i, text in enumerate(pairs):
        a, sep, b = str(text).partition(":")
        if not sep or not a or not b or a == b:
            raise _bad(f"{text!r} is not two switches a:b", names["pairs"] + (f"[{i}]" if file else ""),
                       "name two neighbour switches, e.g. sw1:sw2", file)
        out_pairs.append(link(a, b))
    return Failures(tuple(out_cables), tuple(out_pairs), tuple(str(s) for s in switches))


def read_failures_file(path: Path) -> Failures:
    """The `failures:` section of a YAML file (an inventory, or a file of its own)."""
    # Within the limits of every file vlanroute reads (safeio.reading): a regular file, its
    # size, UTF-8, nesting depth and YAML aliases; never quoted.
    try:
        text = read_text_file(path, what="failures file", field="--failures",
                              fix="give a YAML file with a `failures:` section")
        data = load_yaml_limited(yaml.SafeLoader, text, str(path), "--failures")
    except UserError as exc:
        raise _bad(exc.message, exc.field or "--failures", exc.fix or "give a readable YAML file", str(path)) from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" (line {mark.line + 1}, column {mark.column + 1})" if mark else ""
        raise _bad(f"not YAML{where}", "--failures", "fix the YAML syntax", str(path)) from None
    section = data.get("failures") if isinstance(data, dict) else None
    if section is None:
        raise _bad("no failures: section", "failures", "add `failures: {cables: [sw1:1/g47], pairs: [sw1:sw2], "
                   "switches: [sw3]}`", str(path))
    if not isinstance(section, dict) or set(section) - set(KINDS):
        extra = sorted(set(section) - set(KINDS)) if isinstance(section, dict) else []
        raise _bad(f"unknown key(s) {', '.join(map(str, extra))}" if extra else "not a mapping", "failures",
                   "use only cables, pairs and switches, each a list", str(path))
    lists: dict[str, list[str]] = {}
    for kind in KINDS:
        value = section.get(kind) or []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise _bad("not a list of strings", f"failures.{kind}", "write a YAML list, e.g. [sw1:sw2]", str(path))
        lists[kind] = value
    return parse_failures(lists["cables"], lists["pairs"], lists["switches"],
                          fields={k: f"failures.{k}" for k in KINDS}, file=str(path))


def check(failures: Failures, doc: PlanDocument, source: str | None = None) -> None:
    """Every failure names a switch, inter-switch port or neighbour pair of the plan."""
    def known(sw: str, field: str) -> None:
        if sw not in doc.switches:
            near = ", ".join(sorted(doc.switches, key=natural_key)[:8])
            raise _bad(f"switch {sw!r} is not in the plan", field, f"use a switch of the plan: {near} ...", source)
    for sw, port in failures.cables:
        known(sw, "--failed-cable")
        p = doc.switches[sw].ports.get(port)
        if p is None or p.role == "host":
            inter = sorted((n for n, q in doc.switches[sw].ports.items() if q.role != "host"), key=natural_key)
            what = "a host port" if p is not None else "not a port of the plan"
            raise _bad(f"{sw}:{port} is {what}, not an inter-switch cable", "--failed-cable",
                       f"name an inter-switch port of {sw}: {', '.join(inter)}", source)
    neighbours = _pair_cables(doc)
    for a, b in failures.pairs:
        known(a, "--failed-pair")
        known(b, "--failed-pair")
        if link(a, b) not in neighbours:
            near = sorted({y for x, y in neighbours if x == a} | {x for x, y in neighbours if y == a},
                          key=natural_key)
            raise _bad(f"{a} and {b} are not neighbours (no cable between them in the plan)", "--failed-pair",
                       f"name a neighbour of {a}: {', '.join(near)}", source)
    for sw in failures.switches:
        known(sw, "--failed-switch")


def _pair_cables(doc: PlanDocument) -> dict[Link, int]:
    out: dict[Link, int] = {}
    for c in doc.cabling:
        key = link(c.a, c.b)
        out[key] = out.get(key, 0) + 1
    return out


def dead_cables(failures: Failures, doc: PlanDocument) -> set[int]:
    """Indices into doc.cabling of the cables that are down."""
    ends = set(failures.cables)
    pairs = set(failures.pairs)
    dead = set(failures.switches)
    return {i for i, c in enumerate(doc.cabling)
            if (c.a, c.a_port) in ends or (c.b, c.b_port) in ends or link(c.a, c.b) in pairs
            or c.a in dead or c.b in dead}


def degraded(failures: Failures, doc: PlanDocument) -> Degraded:
    """The fabric after `failures`: live cables per pair, dead switches, hosts per live switch."""
    down = dead_cables(failures, doc)
    cables = {l: 0 for l in _pair_cables(doc)}
    for i, c in enumerate(doc.cabling):
        if i not in down:
            cables[link(c.a, c.b)] += 1
    hosts = {s: 0 for s in doc.switches if s not in failures.switches}
    for h in doc.hosts.values():
        if h.switch in hosts:
            hosts[h.switch] += 1
    return Degraded(cables, frozenset(failures.switches), hosts)


def lost_capacity(failures: Failures, doc: PlanDocument) -> list[dict[str, Any]]:
    """Pairs that lost some cables but not all: still links, with less capacity."""
    before = _pair_cables(doc)
    after = degraded(failures, doc).cables
    return [{"pair": f"{a}:{b}", "cables": before[(a, b)], "live": after[(a, b)]}
            for (a, b) in sorted(before) if 0 < after[(a, b)] < before[(a, b)]
            and a not in failures.switches and b not in failures.switches]
