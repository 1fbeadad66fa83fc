"""The result of pushing one switch, as push, the transaction path (device/transaction.py),
the results table, the JSON output and the exit code name it.

Only the first four mean success; the last two need a person (exit codes:
vlanroute.api.push_exit_code, docs/exit-codes.md). A module of its own because push.py
imports transaction.py, which must name these results too.
"""

from __future__ import annotations

APPLIED, APPLIED_UNSAVED, UNCHANGED, DRY_RUN = "applied", "applied-unsaved", "unchanged", "dry-run"
NOT_STARTED, SKIPPED, ROLLED_BACK, ROLLBACK_FAILED, SAVE_UNCERTAIN = (
    "not-started", "skipped", "rolled-back", "ROLLBACK-FAILED", "SAVE-UNCERTAIN")
# A switch whose change was split (vlanroute.transition): its removals applied, the rest not
# (the run stopped between its two steps). The fabric is in a state the transition proved
# loop-free; `push --resume` finishes it, `rollback` takes it back.
PARTLY_APPLIED = "partly-applied"
# Not a result a switch ends with: one step of a split change ended verified, more follow.
STEPPED = "stepped"
SUCCESS = (APPLIED, APPLIED_UNSAVED, UNCHANGED, DRY_RUN)
CHANGED = (APPLIED, APPLIED_UNSAVED, SAVE_UNCERTAIN)     # runs the new config now
NEEDS_A_PERSON = (ROLLBACK_FAILED, SAVE_UNCERTAIN)
