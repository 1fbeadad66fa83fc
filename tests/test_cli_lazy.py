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


def test_the_emulated_hosts_learn_command_runs_lean() -> None:
    """What the emulation passes to the host scripts as VLANROUTE (emulate/run.py): the learn
    command run as a module, without `site`, the CLI or the planning stack."""
    from vlanroute.emulate.run import lean_python
    python, env = lean_python()
    code = ("import runpy, sys\nsys.argv = ['learn', 'learn', '--help']\n"
            "try:\n    runpy.run_module('vlanroute.commands.learn', run_name='__main__')\n"
            "except SystemExit as exc:\n    rc = exc.code\n"
            "print(rc, sorted(m for m in ('vlanroute.cli', 'networkx', 'pydantic', 'matplotlib', 'netmiko')"
            " if m in sys.modules))")
    out = subprocess.run([*python, "-c", code], capture_output=True, text=True, env=env, check=True).stdout
    assert "Send one learning broadcast per VLAN id" in out
    assert out.strip().splitlines()[-1] == "0 []"
