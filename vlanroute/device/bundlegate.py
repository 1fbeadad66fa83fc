"""What push checks about OUTDIR before it connects anywhere, and again before the first
command: the bundle is read once (vlanroute.bundle.snapshot), must be exactly what render
writes for its plan.json (vlanroute.render.exact) and must verify (parse back, simulate);
and just before the first command OUTDIR on disk must still be that snapshot.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from vlanroute.bundle.document import PlanDocument
from vlanroute.bundle.snapshot import BundleSnapshot
from vlanroute.errors import UserError
from vlanroute.render.exact import check_snapshot
from vlanroute.verify.configs import verify_outdir

SHOWN = 10


@dataclass(frozen=True)
class CheckedBundle:
    snapshot: BundleSnapshot
    doc: PlanDocument
    digest: str

    def configs(self, switches: list[str]) -> dict[str, str]:
        """Each switch's rendered config as read in the snapshot: what push sends."""
        return {name: self.snapshot.text(f"switches/{name}.cfg") for name in switches}

    def require_unchanged(self, command: str = "push") -> None:
        """UserError if anything under OUTDIR differs from the snapshot now."""
        changed = self.snapshot.changes_on_disk()
        if changed:
            shown = ", ".join(changed[:SHOWN]) + (f" (and {len(changed) - SHOWN} more)" if len(changed) > SHOWN else "")
            raise UserError(f"{command} refuses to go on: OUTDIR changed after it was read and the "
                            f"changes were shown, so they are not what was confirmed: {shown}. "
                            "Nothing was sent to any switch",
                            file=str(self.snapshot.outdir),
                            fix=f"run `vlanroute {command} {self.snapshot.outdir}` again to see the new changes")


def _refuse(outdir: Path, command: str, what: str, problems: list[str], override: str | None) -> UserError:
    shown = "\n  ".join(problems[:SHOWN]) + (f"\n  ... and {len(problems) - SHOWN} more" if len(problems) > SHOWN else "")
    fix = f"render OUTDIR again (`vlanroute verify {outdir}` lists every problem)"
    if override:
        fix += f", or pass {override} if you changed it on purpose"
    return UserError(f"{command} refuses this bundle: {what}:\n  {shown}", file=str(outdir), fix=fix)


def read_bundle(outdir: Path) -> CheckedBundle:
    """Read OUTDIR once (plan.json validated); check_bundle checks it."""
    snap = BundleSnapshot.take(outdir)
    return CheckedBundle(snap, snap.plan(), snap.digest())


def check_bundle(bundle: CheckedBundle, command: str = "push", exact: bool = True,
                 override: str | None = "--skip-manifest-check") -> None:
    """UserError (exit 2) naming each foreign or missing line, or each verify violation.
    `exact` False (the override): the lines are not compared, nor verified."""
    outdir = bundle.snapshot.outdir
    if exact:
        report = check_snapshot(bundle.snapshot, bundle.doc)
        if not report.ok:
            raise _refuse(outdir, command, "it is not exactly what render writes for its plan.json",
                          report.problems, override)
        verified = verify_outdir(outdir, None, bundle.doc)
        if not verified.ok:
            raise _refuse(outdir, command, "it does not verify", verified.violations, None)
        bundle.require_unchanged(command)      # what verify read on disk is what was read
