"""What a command that shows or measures a plan reads: an inventory, which it plans, or a
rendered bundle (OUTDIR, or OUTDIR/plan.json with its manifest beside it), whose plan it
takes as render wrote it, checked against the manifest first.

A bundle is the plan as it will be pushed (or was): `report`, `draw`, `whatif` and
`analyze` on it show that plan without planning again, which on the hardest fabrics takes
tens of seconds of CPU each time (docs/routing-bounds.md)."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.manifest import MANIFEST_FILE, require_intact
from vlanroute.bundle.reader import PLAN_FILE, read_plan
from vlanroute.errors import UserError
from vlanroute.plan.build import Plan, plan_from_file
from vlanroute.safeio.paths import require_nameable


def bundle_dir(source: str) -> Path | None:
    """The bundle `source` names (a directory, or the plan.json of one with its manifest
    beside it), or None: an inventory. A lone plan.json is read as an inventory, whose
    loader says what the file is and which commands take it."""
    path = Path(source)
    require_nameable(path, "INVENTORY")
    if path.is_dir():
        return path
    if path.name == PLAN_FILE and (path.parent / MANIFEST_FILE).exists():
        return path.parent
    return None


def bundle_document(outdir: Path, source: str, command: str, sets: tuple[str, ...]) -> PlanDocument:
    """OUTDIR's plan.json, once its manifest says the bundle is as render wrote it (a
    command that shows a plan for a decision shows what would be pushed); --set is refused,
    since it changes an inventory and a bundle has none."""
    if sets:
        raise UserError(f"--set changes an inventory, and {source} is a rendered bundle", field="--set",
                        fix=f"run {command} on the inventory with --set, or render it with --set first and "
                            f"run {command} on the bundle")
    require_intact(outdir, command, None)
    return read_plan(outdir)


def require_outside(output: Path, option: str, sources: Iterable[str]) -> None:
    """Refuse an output written into a bundle the command reads (any of `sources`): a file
    render did not write makes the bundle differ from its manifest, and push, audit and
    verify then refuse it."""
    for source in sources:
        outdir = bundle_dir(source)
        if outdir is None:
            continue
        try:
            inside = output.resolve().is_relative_to(outdir.resolve())
        except OSError:
            return                         # the output's own checks name what is wrong with it
        if inside:
            raise UserError(f"{output} is inside the bundle {outdir}: a file render did not write there makes "
                            "push, audit and verify refuse the bundle", field=option,
                            fix="write it outside the bundle's directory")


def plan_or_bundle(source: str, sets: tuple[str, ...], command: str) -> Plan:
    """The plan of an inventory, or of a rendered bundle (bundle/asplan.py)."""
    outdir = bundle_dir(source)
    if outdir is None:
        return plan_from_file(source, sets)
    doc = bundle_document(outdir, source, command, sets)
    from vlanroute.bundle.asplan import plan_of
    return plan_of(doc, outdir / PLAN_FILE)
