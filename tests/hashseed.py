"""Run a snippet of Python under several string hash seeds (PYTHONHASHSEED), each in a fresh
interpreter at the repository's root, and hand back what each printed: the tests that a
plan's trees, orders or entries do not follow the order Python happens to iterate a set of
names in (which changes with the seed) compare these outputs."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def outputs_under_seeds(code: str, seeds: Sequence[str]) -> list[str]:
    """What `code` printed under each seed, in that order; every run must succeed. The
    runs go side by side (one process each)."""
    runs = [subprocess.Popen([sys.executable, "-c", code], cwd=ROOT, stdout=subprocess.PIPE, text=True,
                             env={**os.environ, "PYTHONHASHSEED": seed}) for seed in seeds]
    outs = [p.communicate()[0] for p in runs]
    assert all(p.returncode == 0 for p in runs), "a run under another hash seed failed"
    return outs
