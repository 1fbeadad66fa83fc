"""Which switches push/audit talk to, read from OUTDIR/plan.json, and the loopback guard.

The management address and SSH port of each switch come from plan.json
(`switches.<sw>.mgmt`, `ssh_port`); credentials never do.

Loopback guard: while VLANROUTE_LOOPBACK_ONLY is set, or while pytest runs a test
(pytest sets PYTEST_CURRENT_TEST), every target must be a literal 127.0.0.0/8 address,
checked before any connection is opened. So the test suite and the benchmarks can never
reach a real switch, whatever plan they are given. Host names are refused under the
guard rather than resolved, because resolving them is already traffic.
"""

from __future__ import annotations

from dataclasses import dataclass
import ipaddress
import json
import os
from pathlib import Path
from typing import Any

from vlanroute.errors import UserError
from vlanroute.model.platforms import PLATFORMS, Platform

GUARD_ENV = "VLANROUTE_LOOPBACK_ONLY"


@dataclass(frozen=True)
class Target:
    name: str
    host: str
    port: int
    platform: Platform
    doc: dict[str, Any]              # plan.json switches.<name>
    config_path: Path                # OUTDIR/switches/<name>.cfg


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


def load_plan(outdir: Path) -> dict[str, Any]:
    path = outdir / "plan.json"
    try:
        doc = json.loads(path.read_text())
    except FileNotFoundError:
        raise UserError(f"{path} does not exist", file=str(outdir),
                        fix="render first: vlanroute render INVENTORY -o OUTDIR") from None
    except json.JSONDecodeError as exc:
        raise UserError(f"not valid JSON: {exc}", file=str(path),
                        fix="render the OUTDIR again") from None
    if not isinstance(doc, dict) or doc.get("format") != "vlanroute-plan/1":
        raise UserError("not a vlanroute-plan/1 document", file=str(path), field="format",
                        fix="render the OUTDIR again with this version of vlanroute")
    return doc


def select_targets(outdir: Path, plan: dict[str, Any], names: tuple[str, ...],
                   *, need_config: bool) -> list[Target]:
    switches: dict[str, Any] = plan.get("switches", {})
    unknown = [n for n in names if n not in switches]
    if unknown:
        raise UserError(f"unknown switch {', '.join(unknown)}", field="--switch",
                        fix="choose from: " + ", ".join(sorted(switches)))
    targets = []
    for name in (names or tuple(sorted(switches))):
        doc = switches[name]
        platform = PLATFORMS.get(doc.get("platform", ""))
        if platform is None:
            raise UserError(f"platform {doc.get('platform')!r} has no built-in descriptor",
                            file=str(outdir / "plan.json"), field=f"switches.{name}.platform",
                            fix="push supports: " + ", ".join(
                                n for n, p in sorted(PLATFORMS.items()) if p.netmiko_device_type))
        if platform.netmiko_device_type is None:
            raise UserError(f"{platform.name} is not managed over SSH (no netmiko device type)",
                            field=f"switches.{name}.platform",
                            fix="apply its config with the rendered script instead")
        if not doc.get("mgmt"):
            raise UserError(f"switch {name} has no management address",
                            file=str(outdir / "plan.json"), field=f"switches.{name}.mgmt",
                            fix=f"set switches.{name}.mgmt in the inventory and render again")
        config_path = outdir / "switches" / f"{name}.cfg"
        if need_config and not config_path.is_file():
            raise UserError(f"{config_path} does not exist", file=str(outdir),
                            fix="render the OUTDIR again")
        targets.append(Target(name=name, host=str(doc["mgmt"]), port=int(doc.get("ssh_port") or 22),
                              platform=platform, doc=doc, config_path=config_path))
    return targets
