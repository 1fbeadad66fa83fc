"""Where the Jinja2 templates are: in the source tree this package was imported from, or
inside the installed package.

`pip install .` ships the top-level templates/ as the package `vlanroute.templates`.
Running from a checkout (`python -m pytest` puts the checkout's `vlanroute/` first on
sys.path), the checkout's own templates/ must win: an editable install elsewhere maps
`vlanroute.templates` to *its* checkout, which would render another tree's templates.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import jinja2


def template_loader() -> jinja2.BaseLoader:
    source_tree = Path(__file__).resolve().parent.parent / "templates"
    if (source_tree / "switch").is_dir() and (source_tree / "__init__.py").is_file():
        return jinja2.FileSystemLoader(str(source_tree))
    if importlib.util.find_spec("vlanroute.templates") is not None:
        return jinja2.PackageLoader("vlanroute.templates", ".")
    raise RuntimeError(f"vlanroute templates not found (looked for {source_tree} and the package)")
