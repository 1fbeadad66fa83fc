"""Which switches `push --resume` pushes again: those the last push did not finish.

Shared by `vlanroute push --resume` and the Python API's `push(..., resume=True)` (which
`vlanroute watch` uses to finish a change it started and was killed in the middle of).
"""

from __future__ import annotations

from pathlib import Path

from vlanroute.bundle.reader import PLAN_FILE
from vlanroute.device import journal as J
from vlanroute.device.journal import Journal, require_last_journal
from vlanroute.device.statedir import FabricState
from vlanroute.device.targets import Target
from vlanroute.errors import UserError


def resume_selection(state: FabricState, outdir: Path, plan_name: str | None,
                     targets: list[Target], plan_sha: str) -> tuple[Journal, list[Target], frozenset[str]]:
    """The switches the last push did not finish: not applied (saved or, with --no-save,
    left unsaved) and not unchanged; and of those, the ones it had applied and verified but
    whose save did not end (`applied`, `saving`, SAVE-UNCERTAIN: their startup config may
    still be the old one), which the resumed push saves if their running config is still as
    rendered. Refused when plan.json changed since that push."""
    journal, view = require_last_journal(state, outdir, plan_name, "push --resume")
    if view.header.get("plan_sha256") != plan_sha:
        raise UserError("plan.json changed since the push being resumed", file=str(outdir / PLAN_FILE),
                        fix="push the new plan with a plain `vlanroute push` (or roll back first)")
    saving = bool(view.header.get("save", True))
    done = {J.SAVED, J.UNCHANGED} | ({J.APPLIED} if not saving else set())
    finished = {name for name, h in view.switches.items() if h.state in done}
    in_journal = set(view.switches)
    resave = frozenset(name for name, h in view.switches.items()
                       if saving and h.state in (J.APPLIED, J.SAVING, J.SAVE_UNCERTAIN))
    return journal, [t for t in targets if t.name in in_journal and t.name not in finished], resave
