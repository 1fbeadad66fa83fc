"""`python -m vlanroute.emulate.hostlearn ...` = `vlanroute learn ...` without importing the
whole CLI (see `run_command`): the emulation passes it to the host scripts as VLANROUTE, so
each emulated host runs the very same learn command, seconds faster under QEMU TCG."""

from __future__ import annotations

import sys

from vlanroute.commands.runner import run_command
from vlanroute.commands.learn import command as learn_command

if __name__ == "__main__":
    # The host script calls `$VLANROUTE learn --interface ...`: drop the sub-command word.
    args = sys.argv[1:]
    if args[:1] == ["learn"]:
        args = args[1:]
    sys.exit(run_command(learn_command, args))
