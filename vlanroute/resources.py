"""Where the Jinja2 templates are: inside the installed package, or in the source tree.

`pip install .` ships the top-level templates/ as the package `vlanroute.templates`.
Running from a checkout (`python -m pytest` puts the checkout's `vlanroute/` first on
sys.path) that package does not exist, so fall back to the checkout's templates/.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import jinja2


def template_loader() -> jinja2.BaseLoader:
    if importlib.util.find_spec("vlanroute.templates") is not None:
        return jinja2.PackageLoader("vlanroute.templates", ".")
    source_tree = Path(__file__).resolve().parent.parent / "templates"
    if not source_tree.is_dir():
        raise RuntimeError(f"vlanroute templates not found (looked for the package and {source_tree})")
    return jinja2.FileSystemLoader(str(source_tree))
