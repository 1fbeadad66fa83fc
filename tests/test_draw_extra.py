"""matplotlib, numpy and Pillow are the `draw` extra: only `vlanroute draw` and `report`
use them, and without them those two say which extra to install (one line, exit 2)
while the other commands work. Checked in a fresh interpreter whose import system
refuses matplotlib, as if it were not installed."""

from __future__ import annotations

import subprocess
import tomllib
from pathlib import Path

import pytest

from import_blocker import run_without

ROOT = Path(__file__).resolve().parent.parent
SEED = str(ROOT / "inventories" / "seed-ring.yaml")

def run_without_matplotlib(code: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return run_without("matplotlib", code, cwd)


@pytest.mark.parametrize("argv", [["draw", SEED, "-o", "pics"], ["report", SEED, "-o", "report.html"]])
def test_draw_and_report_name_the_extra(tmp_path: Path, argv: list[str]) -> None:
    r = run_without_matplotlib(f"from vlanroute.cli import main\nsys.exit(main({argv!r}))\n", tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "Traceback" not in r.stderr
    assert f"vlanroute {argv[0]} needs the 'draw' extra (matplotlib not installed)" in r.stderr
    assert "pip install 'vlanroute[draw]'" in r.stderr
    assert not (tmp_path / argv[-1]).exists()


def test_render_runs_without_matplotlib(tmp_path: Path) -> None:
    code = ("from vlanroute.cli import main\n"
            f"rc = main(['render', {SEED!r}, '-o', 'out'])\n"
            "assert 'matplotlib' not in sys.modules\n"
            "sys.exit(rc)\n")
    r = run_without_matplotlib(code, tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr


def test_the_drawing_stack_is_the_draw_extra_and_the_test_extra_includes_it() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    core = " ".join(project["dependencies"])
    assert "matplotlib" not in core and "pillow" not in core
    extras = project["optional-dependencies"]
    assert any(d.startswith("matplotlib") for d in extras["draw"])
    assert "vlanroute[draw]" in extras["test"]
