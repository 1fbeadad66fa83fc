"""`vlanroute learn` runs from cron on every host: it must not import the planning or SSH stack."""

from __future__ import annotations

import subprocess
import sys


def test_learn_imports_no_heavy_modules() -> None:
    code = ("import sys\nfrom vlanroute.cli import main\nrc = main(['learn', '--help'])\n"
            "print(rc, sorted(m for m in ('netmiko', 'paramiko', 'networkx', 'pydantic', 'matplotlib', 'asyncssh')"
            " if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "0 []"


def test_help_lists_every_command() -> None:
    from vlanroute.cli import COMMAND_MODULES
    out = subprocess.run([sys.executable, "-m", "vlanroute.cli", "--help"], capture_output=True, text=True).stdout
    for name in COMMAND_MODULES:
        assert f"  {name} " in out
