"""`analyze` and `algorithms` print tables as wide as the terminal ($COLUMNS here), not a
fixed 240 or 120 columns; into a pipe without $COLUMNS they keep their full width."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _run(args: list[str], columns: str | None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    if columns is not None:
        env["COLUMNS"] = columns
    r = subprocess.run([sys.executable, "-m", "vlanroute.cli", *args], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert r.returncode == 0, r.stderr
    return r.stdout


@pytest.mark.parametrize("args", [["algorithms"], ["analyze", "inventories/seed-ring.yaml"]])
def test_tables_fit_80_columns(args: list[str]) -> None:
    out = _run(args, "80")
    assert out.strip()
    assert max(len(line) for line in out.splitlines()) <= 80


def test_a_pipe_without_columns_keeps_the_full_table() -> None:
    out = _run(["algorithms"], None)
    assert max(len(line) for line in out.splitlines()) > 80
