"""JSON Schemas of every command's `--json` output (docs/json.md), one file per command.

The files are data shipped in the package, so a script can validate what it reads with any
JSON Schema library: `json.loads(vlanroute.schemas.text("push"))`.
"""

from __future__ import annotations

from importlib import resources
import json
from typing import Any

COMMANDS = ("plan", "algorithms", "analyze", "render", "verify", "push", "audit", "draw",
            "report", "emulate", "emulate-traffic", "lab", "import", "error", "cabling-check", "discover", "save", "rollback", "repair", "whatif",
            "export-nautobot", "watch")


def text(command: str) -> str:
    if command not in COMMANDS:
        raise KeyError(f"no schema for {command!r}; known: {', '.join(COMMANDS)}")
    return resources.files(__package__).joinpath(f"{command}.json").read_text()


def load(command: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(text(command))
    return data
