"""Which switches push/audit talk to, read from OUTDIR/plan.json, and the loopback guard.

The management address and SSH port of each switch come from plan.json
(`switches.<sw>.mgmt`, `ssh_port`); credentials never do. A target map (`--targets FILE`
or VLANROUTE_TARGETS, written by `vlanroute lab up`) sends chosen switches elsewhere, e.g.
to emulated switches on 127.0.0.x, without touching plan.json:

    {"format": "vlanroute-targets/1", "plan": "seed-torus",
     "switches": {"sw1": {"host": "127.0.0.11", "port": 40311}, ...}}

Every address in it must be a literal IP address; a switch the plan has and the map lacks
is an error, so a run never mixes emulated and real switches by accident.

Loopback guard: while VLANROUTE_LOOPBACK_ONLY is set, or while pytest runs a test
(pytest sets PYTEST_CURRENT_TEST), every target must be a literal 127.0.0.0/8 address,
checked before any connection is opened. So the test suite and the benchmarks can never
reach a real switch, whatever plan they are given. Host names are refused under the
guard rather than resolved, because resolving them is already traffic.
"""

from __future__ import annotations

from dataclasses import dataclass
import ipaddress
import os
from pathlib import Path
from typing import Literal

from vlanroute.bundle.document import PlanDocument, SwitchDoc
from vlanroute.bundle.platforms import resolve_platforms
from vlanroute.drivers import family_of
from vlanroute.drivers.family import CliDialog, Family
from vlanroute.errors import UserError
from vlanroute.safeio.reading import load_json, read_text_file
from vlanroute.natural import natsorted
from vlanroute.model.platforms import PLATFORMS, Platform

GUARD_ENV = "VLANROUTE_LOOPBACK_ONLY"
TARGETS_ENV = "VLANROUTE_TARGETS"
TARGETS_FORMAT = "vlanroute-targets/1"


@dataclass(frozen=True)
class Target:
    name: str
    host: str
    port: int
    platform: Platform
    family: Family
    cli: CliDialog
    switch: SwitchDoc                # plan.json switches.<name>
    config_path: Path                # OUTDIR/switches/<name>.cfg


@dataclass(frozen=True)
class Selection:
    targets: list[Target]
    notes: list[str]                 # platforms guessed from their family (old plan.json)


@dataclass(frozen=True)
class TargetMap:
    path: Path
    plan: str | None
    switches: dict[str, tuple[str, int]]       # switch -> (IP address, TCP port)


def read_target_map(path: Path) -> TargetMap:
    """A target map file (module docstring), validated: addresses are IP literals."""
    where = str(path)
    if not os.path.lexists(path):
        raise UserError("no such target map", file=where,
                        fix=f"start the lab again (`vlanroute lab up OUTDIR`), or unset {TARGETS_ENV}")
    try:
        data = load_json(read_text_file(path, what="target map"), where)
    except ValueError as exc:
        raise UserError(f"cannot read the target map: {exc}", file=where,
                        fix=f"start the lab again (`vlanroute lab up OUTDIR`), or unset {TARGETS_ENV}") from None
    if not isinstance(data, dict) or data.get("format") != TARGETS_FORMAT:
        raise UserError(f"not a {TARGETS_FORMAT} file", file=where, field="format")
    switches: dict[str, tuple[str, int]] = {}
    entries = data.get("switches")
    if not isinstance(entries, dict):
        raise UserError("no switches", file=where, field="switches")
    for name, entry in entries.items():
        try:
            host = str(ipaddress.ip_address(entry["host"]))
            port = entry["port"]
            if not isinstance(port, int) or not 1 <= port <= 65535:
                raise ValueError(port)
        except (KeyError, TypeError, ValueError):
            raise UserError("needs an IP address `host` and a TCP `port`", file=where,
                            field=f"switches.{name}") from None
        switches[str(name)] = (host, port)
    plan = data.get("plan")
    return TargetMap(path, plan if isinstance(plan, str) else None, switches)


def loopback_guard_active() -> bool:
    return bool(os.environ.get(GUARD_ENV)) or "PYTEST_CURRENT_TEST" in os.environ


def check_loopback(targets: list[Target]) -> None:
    """Refuse the whole run, before connecting anywhere, if the guard is on and a target
    is not a literal loopback address."""
    if not loopback_guard_active():
        return
    bad = []
    for t in targets:
        try:
            ok = ipaddress.ip_address(t.host).is_loopback
        except ValueError:
            ok = False
        if not ok:
            bad.append(f"{t.name} ({t.host})")
    if bad:
        raise UserError("refusing to connect: the loopback guard is on "
                        f"({GUARD_ENV} is set or a test is running) and these targets are not "
                        f"127.0.0.0/8 addresses: {', '.join(bad)}",
                        field="switches.*.mgmt",
                        fix="tests and benchmarks must point every switch at an emulated one "
                            "on 127.0.0.x; unset the guard only on a real management host")


def select_targets(outdir: Path, doc: PlanDocument, names: tuple[str, ...],
                   *, action: Literal["push", "audit"], dry_run: bool = False,
                   target_map: TargetMap | None = None) -> Selection:
    """The switches to talk to, each with its platform resolved from plan.json (a derived
    platform works wherever its base platform's family works) and its family. Everything
    that would stop the run is refused here, before any connection is opened. `dry_run`:
    families that can only show the changes (push --dry-run) are accepted too."""
    plan_file = str(outdir / "plan.json")
    unknown = [n for n in names if n not in doc.switches]
    if unknown:
        raise UserError(f"unknown switch {', '.join(unknown)}", field="--switch",
                        fix="choose from: " + ", ".join(natsorted(doc.switches)))
    resolved = resolve_platforms(doc, source=plan_file)
    chosen = names or tuple(natsorted(doc.switches))
    if action == "push":
        def able(p: Platform) -> bool:
            caps = family_of(p).capabilities
            return caps.can_preview() if dry_run else caps.push
        bad = [f"{n} ({resolved.by_switch[n].family})" for n in chosen if not able(resolved.by_switch[n])]
        if bad:
            # Exactly the platforms push drives: built in, or derived in this plan.
            pushable = sorted(n for n, p in {**PLATFORMS, **resolved.used()}.items() if able(p))
            previewable = sorted(n for n, p in {**PLATFORMS, **resolved.used()}.items()
                                 if family_of(p).capabilities.can_preview() and not family_of(p).capabilities.push)
            extra = (f"; push --dry-run also reads: {', '.join(previewable)}"
                     if previewable and not dry_run else "")
            raise UserError(f"push cannot roll back these platform families yet: {', '.join(bad)}",
                            file=plan_file, field="switches.*.platform",
                            fix="apply their rendered configs by hand, or leave them out with "
                                "--switch; push supports: " + ", ".join(pushable) + extra)
    if target_map is not None:
        if target_map.plan is not None and doc.name is not None and target_map.plan != doc.name:
            raise UserError(f"the target map is for plan {target_map.plan!r}, not {doc.name!r}",
                            file=str(target_map.path),
                            fix=f"start a lab for this OUTDIR (`vlanroute lab up {outdir}`), or "
                                f"unset {TARGETS_ENV}")
        unmapped = [n for n in chosen if n not in target_map.switches]
        if unmapped:
            raise UserError(f"the target map has no address for {', '.join(unmapped)}",
                            file=str(target_map.path), field="switches",
                            fix=f"start a lab for this OUTDIR (`vlanroute lab up {outdir}`), or "
                                f"unset {TARGETS_ENV} to reach the plan's own addresses")
    targets = []
    for name in chosen:
        spec = doc.switches[name]
        platform = resolved.by_switch[name]
        family = family_of(platform)
        if family.cli is None:
            raise UserError(f"{platform.name} ({family.name}) is not managed over SSH",
                            file=plan_file, field=f"switches.{name}.platform",
                            fix="apply its config with the rendered script instead")
        if target_map is not None:
            host, port = target_map.switches[name]
        elif not spec.mgmt:
            raise UserError(f"switch {name} has no management address", file=plan_file,
                            field=f"switches.{name}.mgmt",
                            fix=f"set switches.{name}.mgmt in the inventory and render again")
        else:
            host, port = spec.mgmt, spec.ssh_port or 22
        config_path = outdir / "switches" / f"{name}.cfg"
        if action == "push" and not config_path.is_file():
            raise UserError(f"{config_path} does not exist", file=str(outdir),
                            fix="render the OUTDIR again")
        targets.append(Target(name=name, host=host, port=port,
                              platform=platform, family=family, cli=family.cli, switch=spec,
                              config_path=config_path))
    return Selection(targets, resolved.notes)
