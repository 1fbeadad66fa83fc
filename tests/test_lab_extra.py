"""asyncssh (the SSH server of the emulated switches in vlanroute.lab) is the `lab` extra:
a plain `pip install .` must give a working vlanroute without it, and importing
vlanroute.lab without it must say which extra to install.

Each check runs in a fresh interpreter whose import system refuses asyncssh, as if it
were not installed (it is installed here: the `test` extra includes `lab`)."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

from import_blocker import run_without

ROOT = Path(__file__).resolve().parent.parent


def run_without_asyncssh(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_without("asyncssh", code, cwd)


def core_modules() -> list[str]:
    """Every module of the package except vlanroute.lab."""
    names = []
    for path in sorted((ROOT / "vlanroute").rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if parts[:2] != ("vlanroute", "lab"):
            names.append(".".join(parts))
    return names


def test_the_blocker_really_blocks_asyncssh() -> None:
    r = run_without_asyncssh("import asyncssh", ROOT)
    assert r.returncode != 0 and "No module named 'asyncssh'" in r.stderr


def test_every_core_module_imports_without_asyncssh() -> None:
    modules = core_modules()
    assert "vlanroute.cli" in modules and "vlanroute.device.push" in modules
    code = ("import importlib\n"
            f"for name in {modules!r}:\n"
            "    importlib.import_module(name)\n"
            "print('asyncssh' in sys.modules, any(m.startswith('vlanroute.lab') for m in sys.modules))\n")
    r = run_without_asyncssh(code, ROOT)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "False"]


def test_render_and_verify_run_without_asyncssh(tmp_path: Path) -> None:
    out = tmp_path / "out"
    code = ("from vlanroute.cli import main\n"
            f"rc = main(['render', {str(ROOT / 'inventories' / 'seed-ring.yaml')!r}, '-o', {str(out)!r}])\n"
            f"rc = rc or main(['verify', {str(out)!r}])\n"
            "sys.exit(rc)\n")
    r = run_without_asyncssh(code, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (out / "switches" / "sw1.cfg").is_file()


def test_importing_the_lab_without_asyncssh_names_the_extra() -> None:
    r = run_without_asyncssh("import vlanroute.lab", ROOT)
    assert r.returncode != 0
    assert 'pip install "vlanroute[lab]"' in r.stderr.strip().splitlines()[-1]


def test_asyncssh_is_in_the_lab_extra_only_and_the_test_extra_includes_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    assert not any(d.startswith("asyncssh") for d in project["dependencies"])
    extras = project["optional-dependencies"]
    assert any(d.startswith("asyncssh") for d in extras["lab"])
    assert "vlanroute[lab]" in extras["test"]


def test_lab_up_without_asyncssh_says_which_extra_to_install(tmp_path: Path) -> None:
    code = ("from vlanroute.cli import main\n"
            f"sys.exit(main(['lab', 'up', {str(tmp_path / 'out')!r}]))\n")
    r = run_without_asyncssh(code, ROOT)
    assert r.returncode == 2
    assert 'the emulated switches need asyncssh' in r.stderr and 'pip install "vlanroute[lab]"' in r.stderr
