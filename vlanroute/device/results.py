"""The result of pushing one switch, as push, the transaction path (device/transaction.py),
the results table, the JSON output and the exit code name it.

Only the first four mean success; the last two need a person (exit codes:
vlanroute.api.push_exit_code, docs/exit-codes.md). A module of its own because push.py
imports transaction.py, which must name these results and types too.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from vlanroute.model.bridge import SwitchConfig

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


@dataclass
class Prepared:
    running_text: str
    running: SwitchConfig
    predicted: SwitchConfig
    commands: list[str]
    diff: list[str]


@dataclass
class SwitchResult:
    switch: str
    result: str
    commands_sent: int = 0
    seconds: float = 0.0
    backup: Path | None = None
    message: str = ""
    diff: list[str] = field(default_factory=list)
    running_canonical: list[str] = field(default_factory=list)
    switch_diff: list[str] = field(default_factory=list)   # the switch's own diff (transaction)
    commands: list[str] = field(default_factory=list)     # what is (or would be) sent, in order
    # The preview's computed change (the transition is planned from it), and the running
    # config known when this result ended (what the fabric's history records of the switch).
    prep: Prepared | None = field(default=None, repr=False, compare=False)
    final_text: str | None = field(default=None, repr=False, compare=False)

    def to_json(self) -> dict[str, object]:
        """The record of `push --json` (docs/json.md, vlanroute/schemas/push.json)."""
        return {"switch": self.switch, "result": self.result, "commands_sent": self.commands_sent,
                "seconds": round(self.seconds, 3), "backup": str(self.backup) if self.backup else None,
                "message": self.message, "diff": self.diff, "commands": self.commands,
                "switch_diff": self.switch_diff}


class PushUI:
    """What the push reports while it runs; the CLI shows it with rich, tests may record it."""

    def begin(self, switch: str) -> None: ...
    def total(self, switch: str, commands: int) -> None: ...
    def status(self, switch: str, text: str) -> None: ...
    def advance(self, switch: str) -> None: ...
    def done(self, result: SwitchResult) -> None: ...
