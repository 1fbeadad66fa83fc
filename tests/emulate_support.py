"""Helpers for the emulation tests (tests/test_emulate*.py): an inventory planned and
rendered the way `vlanroute render` does it, verified before the emulation sees it."""

from __future__ import annotations

from pathlib import Path

from vlanroute.plan.build import plan_from_file
from vlanroute.render.write import RenderOptions, render_to_dir


def render(inventory: Path | str, outdir: Path, *sets: str, learning_method: str | None = None) -> Path:
    plan = plan_from_file(str(inventory), sets)
    # verify=True: the rendered linux-bridge scripts are parsed back and simulated first.
    result = render_to_dir(plan.to_document(), outdir,
                           RenderOptions(learning_method=learning_method, verify=True))
    assert result.verified
    return outdir
