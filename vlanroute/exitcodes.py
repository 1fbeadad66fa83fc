"""Exit codes, the same for every command (documented in docs/exit-codes.md).

Scripts and schedulers branch on these, so a code never changes meaning between commands.
"""

from __future__ import annotations

from enum import IntEnum


class ExitCode(IntEnum):
    OK = 0
    FAILED_CHECK = 1      # the command ran and found a problem (verify, audit, cabling, emulate)
    USAGE = 2             # a usage or input error: bad option, bad inventory, refused plan
    PARTIAL = 3           # some switches changed and some did not (or their state is uncertain)
    ROLLBACK_FAILED = 4   # a rollback was needed and did not complete: the fabric needs a human
    INTERRUPTED = 130     # Ctrl-C (128 + SIGINT), as shells report it
    BROKEN_PIPE = 141     # the reader of stdout went away (128 + SIGPIPE), e.g. `| head -1`
