"""`python -m vlanroute.emulate.hostlearn ...` = `vlanroute learn ...` without importing the
whole CLI (see `lean_main`): the emulation passes it to the host scripts as VLANROUTE, so
each emulated host runs the very same learn command, seconds faster under QEMU TCG."""

from __future__ import annotations

import sys

from vlanroute.commands.runner import lean_main
from vlanroute.commands.learn import command as learn_command

if __name__ == "__main__":
    # The host script calls `$VLANROUTE learn --interface ...`: drop the sub-command word.
    args = sys.argv[1:]
    if args[:1] == ["learn"]:
        args = args[1:]
    sys.exit(lean_main(learn_command, args))
