"""The one exception type for mistakes a user can fix.

The CLI turns it into a message and a non-zero exit code, never a traceback.
"""

from __future__ import annotations


class UserError(Exception):
    """A mistake in the user's input: names the file, the field, what is wrong and the fix."""

    def __init__(self, message: str, *, file: str | None = None, field: str | None = None,
                 fix: str | None = None, exit_code: int = 2) -> None:   # 2 = ExitCode.USAGE
        self.message = message
        self.file = file
        self.field = field
        self.fix = fix
        self.exit_code = exit_code
        super().__init__(self.render())

    def render(self) -> str:
        where = ": ".join(p for p in (self.file, self.field) if p)
        text = f"{where}: {self.message}" if where else self.message
        if self.fix:
            text += f"\n  fix: {self.fix}"
        return text


class PlanError(UserError):
    """The inventory is valid on its own but no safe plan exists for it (limits, connectivity)."""


class VerificationError(Exception):
    """A plan or a rendered config failed verification. This is a bug or a tampered file."""

    def __init__(self, violations: list[str]) -> None:
        self.violations = violations
        shown = "\n  ".join(violations[:10])
        more = f"\n  ... and {len(violations) - 10} more" if len(violations) > 10 else ""
        super().__init__(f"verification failed ({len(violations)} violations):\n  {shown}{more}")
