"""Where the Jinja2 templates are: inside the installed package, or in the source tree.

`pip install .` ships the top-level templates/ as the package `vlanroute.templates`.
Running from a checkout (`python -m pytest` puts the checkout's `vlanroute/` first on
sys.path), the checkout's own templates/ come first: an editable install of another
checkout (a second git worktree, say) would otherwise map `vlanroute.templates` to that
checkout's templates and pair this code with someone else's templates.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import jinja2


def template_loader() -> jinja2.BaseLoader:
    checkout = Path(__file__).resolve().parent.parent
    source_tree = checkout / "templates"
    if (checkout / "pyproject.toml").is_file() and source_tree.is_dir():
        return jinja2.FileSystemLoader(str(source_tree))
    if importlib.util.find_spec("vlanroute.templates") is not None:
        return jinja2.PackageLoader("vlanroute.templates", ".")
    raise RuntimeError(f"vlanroute templates not found (looked for {source_tree} and the package)")
