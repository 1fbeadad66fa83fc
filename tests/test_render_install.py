"""`pip install .` (not editable) into a fresh virtual environment, then `vlanroute render`
and `vlanroute whatif` on the seed torus work from outside the source tree: the templates
ship in the package, and so does every subpackage (pyproject.toml lists them one by one,
and `vlanroute.operate` was once missing from that list: whatif and watch failed to import
in a non-editable install while every test, run from the source tree, passed)."""

from __future__ import annotations

import os
import shutil
import tomllib
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]
# The build backend (setuptools, wheel) comes from a local package index: tests make no
# network traffic. Without one the test is skipped rather than reaching out to PyPI.
LOCAL_INDEXES = [p for p in ("/opt/pypi/simple", "/opt/pypi-more/simple") if Path(p).is_dir()]


@pytest.mark.pip_install
@pytest.mark.timeout(300)
@pytest.mark.skipif(not LOCAL_INDEXES, reason="needs a local package index for setuptools/wheel")
def test_non_editable_install_renders_seed_torus(tmp_path: Path) -> None:
    # Build from a copy so that the shared working tree gets no build/ or egg-info litter.
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, src / name)
    if not (src / "README.md").exists():
        (src / "README.md").write_text("vlanroute\n")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "vlanroute", src / "vlanroute", ignore=ignore)
    shutil.copytree(ROOT / "templates", src / "templates", ignore=ignore)
    venv = tmp_path / "venv"
    # A venv without the system's site-packages. The runtime dependencies come from the
    # environment running this test (its site-packages as a plain path entry in a .pth file:
    # its own .pth files, e.g. an editable vlanroute's finder, are not processed), so no
    # download and --no-deps; tests/test_readme.py installs them for real. The build backend
    # comes from the local index, in pip's usual isolated build environment. vlanroute itself
    # comes from the venv's own, non-editable install, which is searched first.
    # --without-pip + `pip --python` saves the ensurepip step (about 9 s).
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = subprocess.run([str(venv / "bin" / "python"), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    deps = sorted({sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]})
    (Path(site) / "test-deps.pth").write_text("".join(f"{d}\n" for d in deps))
    pip = subprocess.run([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                          "install", "--no-deps",
                          "-q", "--index-url", f"file://{LOCAL_INDEXES[0]}",
                          *(f"--extra-index-url=file://{p}" for p in LOCAL_INDEXES[1:]), str(src)],
                         capture_output=True, text=True, timeout=240)
    assert pip.returncode == 0, pip.stderr
    work = tmp_path / "elsewhere"
    work.mkdir()
    shutil.copy2(ROOT / "inventories" / "seed-torus.yaml", work / "seed-torus.yaml")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH",)}
    where = subprocess.run([str(venv / "bin" / "python"), "-c",
                            "import vlanroute.templates, vlanroute; print(vlanroute.__file__); "
                            "print(vlanroute.templates.__file__)"],
                           cwd=work, env=env, capture_output=True, text=True, check=True).stdout.split()
    assert all(p.startswith(str(venv)) for p in where), where      # not the editable source tree
    run = subprocess.run([str(venv / "bin" / "vlanroute"), "render", "seed-torus.yaml", "-o", "out"],
                         cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert (work / "out" / "switches" / "sw1.cfg").read_text().startswith("! vlanroute seed-torus")
    assert len((work / "out" / "hosts" / "hosts.tsv").read_text().splitlines()) == 2 + 225
    assert (work / "out" / "hosts" / "vlanroute-host").read_text().startswith("#!/bin/sh")
    # every subpackage of the source tree imports from the install
    packages = _source_packages()
    imported = subprocess.run([str(venv / "bin" / "python"), "-c",
                               "import importlib, sys\n"
                               "for name in sys.argv[1:]:\n"
                               "    assert importlib.import_module(name).__file__.startswith(sys.prefix), name\n",
                               *packages], cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert imported.returncode == 0, imported.stderr
    whatif = subprocess.run([str(venv / "bin" / "vlanroute"), "whatif", "seed-torus.yaml", "--top", "3"],
                            cwd=work, env=env, capture_output=True, text=True, timeout=120)
    assert whatif.returncode == 0, whatif.stderr


def _source_packages() -> list[str]:
    """Every package of the source tree (a folder of vlanroute/ with an __init__.py)."""
    return sorted(".".join(p.parent.relative_to(ROOT).parts) for p in (ROOT / "vlanroute").rglob("__init__.py")
                  if "__pycache__" not in p.parts)


def test_pyproject_lists_every_package_of_the_source_tree() -> None:
    listed = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"]
    assert sorted(set(listed) - {"vlanroute.templates"}) == _source_packages()
